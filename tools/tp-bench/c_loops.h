/* The plain C loops tp-bench measures as baselines. c_loops.c is compiled
 * on its own with the flags CMake gives it (-O3, and -mavx2 -mfma on x86-64
 * where the compiler takes them), whatever the build type. */
#ifndef TP_BENCH_C_LOOPS_H
#define TP_BENCH_C_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

/* The loops' flags in words ("-O3 -mavx2 -mfma"), set by CMake. */
extern const char bench_c_loops_flags[];

/* False when c_loops.c was built for AVX2/FMA and this CPU lacks them. */
bool bench_c_loops_runnable(void);

void bench_c_tanh_affine(const float *x, float *y, int64_t n); /* y = tanh(2x + 1) * x */
void bench_c_add(const float *a, const float *b, float *y, int64_t n);
void bench_c_triad(float *a, const float *b, const float *c, int64_t n); /* a = b + 3c */

#endif
