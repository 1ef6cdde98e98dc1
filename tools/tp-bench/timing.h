/* Clock and order statistics for tp-bench. */
#ifndef TP_BENCH_TIMING_H
#define TP_BENCH_TIMING_H

double bench_now(void); /* seconds, CLOCK_MONOTONIC */
/* CPU seconds of every thread of the process: on a loaded machine, work per
 * CPU second still compares kernels where wall time mostly measures the
 * scheduler. */
double bench_cpu_now(void);

/* The median of `times` (sorted in place); -1 when n < 1. */
double bench_median(double *times, int n);

/* The lowest, median and highest of `values` (n >= 1; left unsorted). */
void bench_range(const double *values, int n, double *lo, double *mid, double *hi);

#endif
