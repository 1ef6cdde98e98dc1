/* tp-bench --kernels: the packed matmul's micro-kernel families against
 * OpenBLAS, and softmax against the two-thread memory bandwidth bound, each
 * in interleaved rounds of one run (kernel_cases.c). */
#ifndef TP_BENCH_KERNEL_CASES_H
#define TP_BENCH_KERNEL_CASES_H

/* Runs every kernel case (or those named in `only`, comma-separated) with
 * `reps` timed calls per round and `rounds` rounds; prints a table, or one
 * JSON object per line. Returns the process exit status. */
int bench_kernel_cases(const char *only, int reps, int rounds, int threads, int json);

#endif
