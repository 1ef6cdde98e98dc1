/* The C-loop baselines (see c_loops.h). No attributes or intrinsics: the
 * optimisation, target and OpenMP flags come from CMake for this file alone,
 * so the loops build with every compiler and on every architecture, and
 * what the compiler makes of a plain loop is what is measured. Each thread
 * takes one contiguous block (schedule(static)), as stax's pool does. */
#include "c_loops.h"

#include <math.h>

#ifndef TP_BENCH_C_LOOPS_FLAGS
#define TP_BENCH_C_LOOPS_FLAGS "(the build's flags)"
#endif

const char bench_c_loops_flags[] = TP_BENCH_C_LOOPS_FLAGS;

bool bench_c_loops_threaded(void) {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

void bench_c_tanh_affine(const float *x, float *y, int64_t n, int threads) {
    (void)threads;
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i] * 2.0f + 1.0f) * x[i];
}

void bench_c_add(const float *a, const float *b, float *y, int64_t n, int threads) {
    (void)threads;
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

void bench_c_triad(float *a, const float *b, const float *c, int64_t n, int threads) {
    (void)threads;
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
}
