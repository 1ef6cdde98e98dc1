/* The in-process baselines: OpenBLAS cblas_sgemm and cblas_sgemv (dlopen'd
 * libopenblas.so.0) for the sgemm and gemv cases, the C loops (c_loops.c) for the
 * pointwise cases, and the STREAM triad. Each timing function runs `reps`
 * timed repetitions and returns their median in seconds (< 0: n/a). */
#ifndef TP_BENCH_BASELINES_H
#define TP_BENCH_BASELINES_H

#include "cases.h"

/* Whether libopenblas.so.0 with cblas_sgemm and cblas_sgemv can be loaded. */
bool baseline_openblas_available(void);
/* cblas_sgemm for a BENCH_SGEMM case, cblas_sgemv for a BENCH_GEMV case, on
 * `threads` threads (openblas_set_num_threads). */
double baseline_openblas_median(const bench_case *c, tp_tensor **inputs, int reps, int threads);

/* The C loop for a BENCH_POINTWISE_C case on `threads` threads. */
double baseline_c_loop_median(const bench_case *c, tp_tensor **inputs, int reps, int threads);

/* STREAM triad over 16M floats on `threads` threads: the best of `reps`
 * runs, in bytes per second (three streams). */
double baseline_triad_bandwidth(int reps, int threads);

#endif
