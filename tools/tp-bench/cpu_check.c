/* Whether this CPU runs the C-loop baselines: c_loops.c is built with
 * -march=native, for the build machine's CPU. CMake passes the widest x86
 * vector extension that target has (TP_BENCH_C_LOOPS_NEED_AVX512 or
 * TP_BENCH_C_LOOPS_NEED_AVX2); this file is built with the build's ordinary
 * flags so the check itself runs everywhere. */
#include "c_loops.h"

bool bench_c_loops_runnable(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#if defined(TP_BENCH_C_LOOPS_NEED_AVX512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#elif defined(TP_BENCH_C_LOOPS_NEED_AVX2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#endif
    return true;
}
