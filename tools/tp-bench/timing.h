/* Clock and order statistics for tp-bench. */
#ifndef TP_BENCH_TIMING_H
#define TP_BENCH_TIMING_H

double bench_now(void); /* seconds, CLOCK_MONOTONIC */

/* The median of `times` (sorted in place); -1 when n < 1. */
double bench_median(double *times, int n);

#endif
