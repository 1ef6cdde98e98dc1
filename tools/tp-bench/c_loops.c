/* The C-loop baselines (see c_loops.h). No attributes: the optimisation and
 * target flags come from CMake for this file alone, so the loops build with
 * every compiler and on every architecture. */
#include "c_loops.h"

#include <math.h>

#ifndef TP_BENCH_C_LOOPS_FLAGS
#define TP_BENCH_C_LOOPS_FLAGS "(the build's flags)"
#endif

const char bench_c_loops_flags[] = TP_BENCH_C_LOOPS_FLAGS;

void bench_c_tanh_affine(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i] * 2.0f + 1.0f) * x[i];
}

void bench_c_add(const float *a, const float *b, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

void bench_c_triad(float *a, const float *b, const float *c, int64_t n) {
    for (int64_t i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
}
