/* Whether this CPU runs the C-loop baselines: c_loops.c may be built for
 * AVX2/FMA (TP_BENCH_C_LOOPS_NEED_AVX2, set by CMake); this file is built
 * with the build's ordinary flags so the check itself runs everywhere. */
#include "c_loops.h"

bool bench_c_loops_runnable(void) {
#if defined(TP_BENCH_C_LOOPS_NEED_AVX2) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return true;
#endif
}
