/* The in-process baselines (see baselines.h). */
#define _GNU_SOURCE
#include "baselines.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "c_loops.h"
#include "timing.h"

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);

static void (*openblas_set_threads)(int);
static sgemv_fn openblas_sgemv_symbol;

static sgemm_fn openblas_sgemm(void) {
    static sgemm_fn sgemm;
    static bool tried;
    if (!tried) {
        tried = true;
        void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
        sgemm = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
        if (lib) openblas_set_threads = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
        if (lib) openblas_sgemv_symbol = (sgemv_fn)dlsym(lib, "cblas_sgemv");
    }
    return sgemm;
}

bool baseline_openblas_available(void) {
    return openblas_sgemm() != NULL && openblas_sgemv_symbol != NULL;
}

/* y [h] = x [f] @ w [f, h]: row-major w read transposed (y = w^T x). */
static double openblas_gemv_median(const bench_case *c, tp_tensor **inputs, int reps) {
    int f = (int)c->f, h = (int)c->h;
    const float *x = tp_tensor_data(inputs[0]), *w = tp_tensor_data(inputs[1]);
    float *y = calloc((size_t)h, sizeof(float));
    double *times = calloc((size_t)reps, sizeof *times);
    if (!y || !times) return free(y), free(times), -1;
    for (int r = -1; r < reps; r++) { /* one warm-up */
        double t0 = bench_now();
        openblas_sgemv_symbol(101, 112, f, h, 1.0f, w, h, x, 1, 0.0f, y, 1); /* row-major, trans */
        if (r >= 0) times[r] = bench_now() - t0;
    }
    double median = bench_median(times, reps);
    free(times), free(y);
    return median;
}

double baseline_openblas_median(const bench_case *c, tp_tensor **inputs, int reps, int threads) {
    sgemm_fn sgemm = openblas_sgemm();
    if (!sgemm) return -1;
    /* on stax's thread count, like every other contender */
    if (openblas_set_threads && threads > 0) openblas_set_threads(threads);
    if (c->kind == BENCH_GEMV) return openblas_gemv_median(c, inputs, reps);
    int n = (int)c->b;
    const float *a = tp_tensor_data(inputs[0]), *b = tp_tensor_data(inputs[1]);
    float *out = calloc((size_t)n * (size_t)n, sizeof(float));
    double *times = calloc((size_t)reps, sizeof *times);
    if (!out || !times) return free(out), free(times), -1;
    for (int r = -1; r < reps; r++) { /* one warm-up */
        double t0 = bench_now();
        sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, out, n); /* row-major, no trans */
        if (r >= 0) times[r] = bench_now() - t0;
    }
    double median = bench_median(times, reps);
    free(times), free(out);
    return median;
}

double baseline_c_loop_median(const bench_case *c, tp_tensor **inputs, int reps, int threads) {
    int64_t n = c->b;
    float *y = aligned_alloc(64, (size_t)n * sizeof(float));
    double *times = calloc((size_t)reps, sizeof *times);
    if (!y || !times) return free(y), free(times), -1;
    bool tanh_affine = !strcmp(c->name, "tanh-affine");
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now();
        if (tanh_affine)
            bench_c_tanh_affine(tp_tensor_data(inputs[0]), y, n, threads);
        else
            bench_c_add(tp_tensor_data(inputs[0]), tp_tensor_data(inputs[1]), y, n, threads);
        if (r >= 0) times[r] = bench_now() - t0;
    }
    double median = bench_median(times, reps);
    free(times), free(y);
    return median;
}

double baseline_triad_bandwidth(int reps, int threads) {
    int64_t n = 16 << 20;
    float *a = aligned_alloc(64, (size_t)n * 4), *b = aligned_alloc(64, (size_t)n * 4),
          *c = aligned_alloc(64, (size_t)n * 4);
    if (!a || !b || !c) return free(a), free(b), free(c), -1;
    /* first touch on the threads that use each block, as the loop splits it */
    bench_c_triad(a, b, c, n, threads);
    for (int64_t i = 0; i < n; i++) b[i] = 1, c[i] = 2;
    double best = 1e30;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = bench_now();
        bench_c_triad(a, b, c, n, threads);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 3.0 * 4.0 * (double)n / best;
}
