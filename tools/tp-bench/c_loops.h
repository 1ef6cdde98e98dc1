/* The plain C loops tp-bench measures as baselines. c_loops.c is compiled
 * on its own with the flags CMake gives it (-O3 -march=native -ffast-math,
 * so glibc's libmvec supplies vector tanhf, and -fopenmp where the compiler
 * has OpenMP), whatever the build type; each loop is split over `threads`
 * threads, the count stax runs with, so the comparison is like for like. */
#ifndef TP_BENCH_C_LOOPS_H
#define TP_BENCH_C_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

/* The loops' flags in words ("-O3 -march=native -ffast-math -fopenmp"), set
 * by CMake. */
extern const char bench_c_loops_flags[];

/* False when c_loops.c was built for instructions this CPU lacks (it is
 * built for the build machine's CPU). */
bool bench_c_loops_runnable(void);

/* Whether the loops really run on `threads` threads (false: built without
 * OpenMP, one thread whatever `threads` says). */
bool bench_c_loops_threaded(void);

void bench_c_tanh_affine(const float *x, float *y, int64_t n, int threads); /* y = tanh(2x+1)*x */
void bench_c_add(const float *a, const float *b, float *y, int64_t n, int threads);
void bench_c_triad(float *a, const float *b, const float *c, int64_t n, int threads); /* a = b+3c */

#endif
