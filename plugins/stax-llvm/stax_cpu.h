/* stax-llvm — what the host CPU can run, for the C side of the plugin (the
 * generated code asks LLVM instead): each feature read from CPUID, with the
 * OS's XGETBV for the register state it needs, once per process. Internal. */
#ifndef STAX_CPU_H
#define STAX_CPU_H

#include <stdbool.h>

#if defined(__x86_64__) && defined(__GNUC__)
/* The functions below exist, and code may use `target` attributes with
 * the intrinsics of <immintrin.h> behind them. */
#define STAX_CPU_X86 1
#endif

/* AVX and F16C, with the YMM state enabled. */
bool stax_cpu_has_f16c(void);

/* AVX-512 F, with the ZMM and mask state enabled. */
bool stax_cpu_has_avx512f(void);

#endif
