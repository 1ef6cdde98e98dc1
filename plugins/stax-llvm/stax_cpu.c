/* stax-llvm — the host CPU's features for the C side of the plugin
 * (stax_cpu.h). __builtin_cpu_supports is gcc's (clang 14 lacks parts of
 * it), so the bits come from CPUID and XGETBV directly. */
#include "stax_cpu.h"

#ifdef STAX_CPU_X86
#include <cpuid.h>
#include <stdatomic.h>

/* XCR0: the register state the OS saves (bit 1 XMM, 2 YMM, 5-7 the
 * AVX-512 mask and ZMM halves). */
static unsigned os_saved_state(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return lo;
}

static bool detect_f16c(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const unsigned avx = 1u << 28, f16c = 1u << 29;
    return (ecx & (avx | f16c)) == (avx | f16c) && (os_saved_state() & 6u) == 6u;
}

static bool detect_avx512f(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & (1u << 16))) return false;
    return (os_saved_state() & 0xE6u) == 0xE6u;
}

/* -1: not yet asked; else the answer. */
static bool known(_Atomic int *cache, bool (*detect)(void)) {
    int value = atomic_load_explicit(cache, memory_order_relaxed);
    if (value < 0) {
        value = detect();
        atomic_store_explicit(cache, value, memory_order_relaxed);
    }
    return value;
}

bool stax_cpu_has_f16c(void) {
    static _Atomic int cache = -1;
    return known(&cache, detect_f16c);
}

bool stax_cpu_has_avx512f(void) {
    static _Atomic int cache = -1;
    return known(&cache, detect_avx512f);
}
#else
bool stax_cpu_has_f16c(void) {
    return false;
}

bool stax_cpu_has_avx512f(void) {
    return false;
}
#endif
