/* stax-llvm — widening runs of f16/bf16 elements to f32 on the C side
 * (stax_storage_float.h): what the packed matmul's packing calls per row of
 * A or B. Owns only that loop and its F16C fast path. */
#include "stax_storage_float.h"

#include <stdbool.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#define STAX_HAVE_F16C_PATH 1
#endif

#ifdef STAX_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) static void f16_run_to_f32_f16c(const uint16_t *in, float *out,
                                                                    int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    for (; i < n; i++) out[i] = stax_f16_to_f32(in[i]);
}

/* AVX and F16C from CPUID leaf 1, and the OS saving YMM state (XGETBV), once
 * per process: __builtin_cpu_supports("f16c") is gcc's, clang 14 lacks it. */
static bool detect_f16c(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const unsigned osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
    if ((ecx & (osxsave | avx | f16c)) != (osxsave | avx | f16c)) return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6u) == 6u; /* XMM and YMM state enabled */
}

static bool cpu_has_f16c(void) {
    static _Atomic int known = -1; /* -1: not yet asked */
    int value = atomic_load_explicit(&known, memory_order_relaxed);
    if (value < 0) {
        value = detect_f16c();
        atomic_store_explicit(&known, value, memory_order_relaxed);
    }
    return value;
}
#endif

void stax_storage_floats_to_f32(int32_t dtype, const uint16_t *in, int64_t stride, float *out,
                                int64_t n) {
    if (dtype == TP_PLUGIN_BF16) {
        for (int64_t i = 0; i < n; i++) out[i] = stax_bf16_to_f32(in[i * stride]);
        return;
    }
#ifdef STAX_HAVE_F16C_PATH
    if (stride == 1 && cpu_has_f16c()) {
        f16_run_to_f32_f16c(in, out, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i] = stax_f16_to_f32(in[i * stride]);
}
