/* Clock and order statistics for tp-bench (see timing.h). */
#include "timing.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *times, int n) {
    if (n < 1) return -1;
    qsort(times, (size_t)n, sizeof *times, compare_double);
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

void bench_range(const double *values, int n, double *lo, double *mid, double *hi) {
    double *sorted = malloc(sizeof *sorted * (size_t)n);
    if (!sorted) {
        *lo = *mid = *hi = values[0];
        return;
    }
    memcpy(sorted, values, sizeof *sorted * (size_t)n);
    *mid = bench_median(sorted, n); /* sorts */
    *lo = sorted[0], *hi = sorted[n - 1];
    free(sorted);
}
