/* tp-bench — which kernels OpenBLAS runs on this CPU (openblas_core.c). */
#ifndef TP_BENCH_OPENBLAS_CORE_H
#define TP_BENCH_OPENBLAS_CORE_H

#include <stdbool.h>

/* The OpenBLAS core (OPENBLAS_CORETYPE name) that a host with these
 * /proc/cpuinfo `flags` should run in place of `picked`, the core OpenBLAS
 * chose itself: NULL when `picked` already uses the widest vector extension
 * the host has, or is a core this table does not know (never second-guessed).
 * A release of OpenBLAS older than the CPU falls back to Prescott (SSE3). */
const char *bench_openblas_better_core(const char *picked, const char *cpu_flags);

/* Before anything else loads OpenBLAS: when OPENBLAS_CORETYPE is unset and
 * OpenBLAS picks a core that bench_openblas_better_core improves on, sets
 * OPENBLAS_CORETYPE and starts tp-bench again with the same argv (OpenBLAS
 * reads the variable once, when it is loaded). Returns only when nothing is
 * to be changed or the restart failed (then says so on stderr). */
void bench_openblas_choose_core(char **argv);

/* One line (or, with json, one JSON object) saying which OpenBLAS kernels the
 * baselines run, and whether tp-bench chose them. Nothing without OpenBLAS. */
void bench_openblas_print_core(bool json);

#endif
