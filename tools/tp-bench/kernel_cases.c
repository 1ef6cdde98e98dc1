/* tp-bench --kernels (see kernel_cases.h). Matmul cases run stax once per
 * micro-kernel family the CPU can run natively (STAX_GEMM_KERNEL=avx512,
 * avx2, and legacy: the older 6x16 pair) and OpenBLAS's cblas_sgemm on the
 * same thread count, interleaved: every round times each of them in turn,
 * so a load that comes and goes on the machine shows as a range instead of
 * favouring one side. stax's output is checked against OpenBLAS's. Softmax
 * 4096 x 4096 is timed between two-thread STREAM triads (two reads and one
 * write per element, softmax's own traffic) and reported as a fraction of
 * that bound. */
#define _GNU_SOURCE
#include "kernel_cases.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "tensorplay/tensorplay.h"
#include "timing.h"

#define MAX_ROUNDS 64

/* ---- matmul cases ---- */

typedef struct gemm_case {
    const char *name;
    int64_t batch, m, k, n;
    bool b_transposed; /* B stored [n, k] and transposed in the graph */
} gemm_case;

static const gemm_case gemm_cases[] = {
    {"sgemm-1024", 1, 1024, 1024, 1024, false}, {"sgemm-2048", 1, 2048, 2048, 2048, false},
    {"sgemm-1000", 1, 1000, 1000, 1000, false}, /* edges in every direction */
    {"mm-bt-1024", 1, 1024, 1024, 1024, true},  /* x @ w.T */
    {"mm-m8", 1, 8, 1024, 1024, false},         /* few rows */
    {"attn-scores", 32, 128, 64, 128, true},    /* Q @ K^T, batch 8 x 4 heads */
    {"attn-values", 32, 128, 128, 64, false},   /* P @ V */
};

static tp_graph *gemm_graph(const gemm_case *c) {
    tp_graph *g = NULL;
    tp_graph_create("kernels", &g);
    bool batched = c->batch > 1;
    tp_type a = {.dtype = TP_F32, .ndim = batched ? 3 : 2};
    tp_type b = a;
    int o = batched ? 1 : 0;
    if (batched) a.dims[0] = b.dims[0] = c->batch;
    a.dims[o] = c->m, a.dims[o + 1] = c->k;
    b.dims[o] = c->b_transposed ? c->n : c->k;
    b.dims[o + 1] = c->b_transposed ? c->k : c->n;
    tp_value_id in[2], y;
    tp_graph_add_input(g, "a", &a, &in[0]);
    tp_graph_add_input(g, "b", &b, &in[1]);
    if (c->b_transposed) {
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.dim0 = o, attrs.dim1 = o + 1;
        tp_value_id bt;
        if (tp_graph_add_node(g, "transpose", &in[1], 1, &attrs, "bt", &bt) != TP_OK) {
            tp_graph_destroy(g);
            return NULL;
        }
        in[1] = bt;
    }
    if (tp_graph_add_node(g, "matmul", in, 2, NULL, "y", &y) != TP_OK ||
        tp_graph_set_outputs(g, &y, 1) != TP_OK) {
        tp_graph_destroy(g);
        return NULL;
    }
    return g;
}

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

typedef struct openblas {
    sgemm_fn sgemm;
} openblas;

static openblas open_openblas(int threads) {
    openblas blas = {NULL};
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return blas;
    blas.sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
    void (*set_threads)(int) = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
    if (set_threads) set_threads(threads);
    return blas;
}

static void openblas_call(const openblas *blas, const gemm_case *c, const float *a, const float *b,
                          float *y) {
    int m = (int)c->m, n = (int)c->n, k = (int)c->k;
    for (int64_t i = 0; i < c->batch; i++)
        blas->sgemm(101, 111, c->b_transposed ? 112 : 111, m, n, k, 1.0f, a + i * m * k, k,
                    b + i * k * n, c->b_transposed ? k : n, 0.0f, y + i * m * n, n);
}

/* One contender: a stax executable or OpenBLAS. */
typedef struct contender {
    const char *label;
    tp_executable *exe; /* NULL: OpenBLAS */
    tp_tensor *output;
    double round_median[MAX_ROUNDS], round_cpu[MAX_ROUNDS]; /* seconds per call */
} contender;

/* One round of `reps` calls (after a warm-up call): the median wall time and
 * the median CPU time per call. */
static void time_calls(contender *who, const openblas *blas, const gemm_case *c, tp_tensor **inputs,
                       int reps, int round) {
    double times[256], cpu[256];
    if (reps > 256) reps = 256;
    const float *a = tp_tensor_data(inputs[0]), *b = tp_tensor_data(inputs[1]);
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now(), c0 = bench_cpu_now();
        if (who->exe)
            tp_executable_run(who->exe, inputs, 2, &who->output);
        else
            openblas_call(blas, c, a, b, tp_tensor_data_mut(who->output));
        if (r >= 0) times[r] = bench_now() - t0, cpu[r] = bench_cpu_now() - c0;
    }
    who->round_median[round] = bench_median(times, reps);
    who->round_cpu[round] = bench_median(cpu, reps);
}

static void random_fill(tp_tensor *t, uint64_t seed) {
    float *d = tp_tensor_data_mut(t);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        d[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

static tp_tensor *tensor_like(const tp_type *t) {
    tp_tensor *out = NULL;
    tp_tensor_create(t->dtype, t->ndim, t->dims, &out);
    return out;
}

static int run_gemm_case(const gemm_case *c, const openblas *blas, int reps, int rounds,
                         int threads, int json) {
    tp_graph *g = gemm_graph(c);
    if (!g) {
        fprintf(stderr, "tp-bench: %s: %s\n", c->name, tp_last_error());
        return 1;
    }
    tp_tensor *inputs[2];
    for (int i = 0; i < 2; i++) {
        inputs[i] = tensor_like(tp_graph_value_type(g, tp_graph_input(g, i)));
        random_fill(inputs[i], 1 + (uint64_t)i);
    }
    const tp_type *yt = tp_graph_value_type(g, tp_graph_output(g, 0));
    contender who[5];
    int count = 0;
    static const char *const families[] = {"avx512", "avx2", "legacy"};
    bool runnable[3] = {__builtin_cpu_supports("avx512f"),
                        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), true};
    tp_backend *stax = NULL;
    if (tp_backend_lookup("stax", &stax) != TP_OK) {
        fprintf(stderr, "tp-bench: %s\n", tp_last_error());
        return 1;
    }
    char option[32];
    snprintf(option, sizeof option, "threads=%d", threads);
    const char *options[1] = {option};
    for (int f = 0; f < 3; f++) {
        if (!runnable[f]) continue;
        setenv("STAX_GEMM_KERNEL", families[f], 1);
        contender *w = &who[count];
        memset(w, 0, sizeof *w);
        w->label = families[f];
        if (tp_backend_compile(stax, g, inputs, 2, options, 1, &w->exe) != TP_OK) {
            fprintf(stderr, "tp-bench: %s: %s\n", families[f], tp_last_error());
            continue;
        }
        count++;
    }
    unsetenv("STAX_GEMM_KERNEL");
    /* the host's family with the choices max-autotune measured (docs/stax.md) */
    const char *tuned_options[2] = {option, "mode=max-autotune"};
    contender *tuned = &who[count];
    memset(tuned, 0, sizeof *tuned);
    tuned->label = "autotuned";
    if (tp_backend_compile(stax, g, inputs, 2, tuned_options, 2, &tuned->exe) == TP_OK)
        count++;
    else
        fprintf(stderr, "tp-bench: max-autotune: %s\n", tp_last_error());
    if (blas->sgemm) {
        contender *w = &who[count++];
        memset(w, 0, sizeof *w);
        w->label = "openblas";
        w->output = tensor_like(yt);
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < count; i++) time_calls(&who[i], blas, c, inputs, reps, r);
    double flops = 2.0 * (double)c->batch * (double)c->m * (double)c->n * (double)c->k;
    const contender *reference = blas->sgemm ? &who[count - 1] : NULL;
    if (!json)
        printf("%s (batch %lld, m %lld, k %lld, n %lld%s), %d threads, %d rounds x %d calls\n",
               c->name, (long long)c->batch, (long long)c->m, (long long)c->k, (long long)c->n,
               c->b_transposed ? ", B^T" : "", threads, rounds, reps);
    for (int i = 0; i < count; i++) {
        const contender *w = &who[i];
        double lo, mid, hi, ratio[MAX_ROUNDS], rlo = 0, rmid = 0, rhi = 0;
        double cpu_lo, cpu_mid, cpu_hi, cpu_ratio = 0;
        bench_range(w->round_median, rounds, &lo, &mid, &hi);
        bench_range(w->round_cpu, rounds, &cpu_lo, &cpu_mid, &cpu_hi);
        if (reference && w != reference) {
            for (int r = 0; r < rounds; r++)
                ratio[r] = reference->round_median[r] / w->round_median[r];
            bench_range(ratio, rounds, &rlo, &rmid, &rhi);
            double ref_lo, ref_mid, ref_hi;
            bench_range(reference->round_cpu, rounds, &ref_lo, &ref_mid, &ref_hi);
            cpu_ratio = ref_mid / cpu_mid;
        }
        double check = reference && w != reference
                           ? bench_max_relative_difference(w->output, reference->output)
                           : 0;
        if (json) {
            printf("{\"case\":\"%s\",\"kernel\":\"%s\",\"threads\":%d,\"gflops_median\":%.1f,"
                   "\"gflops_min\":%.1f,\"gflops_max\":%.1f",
                   c->name, w->label, threads, flops / mid / 1e9, flops / hi / 1e9,
                   flops / lo / 1e9);
            if (reference && w != reference)
                printf(",\"vs_openblas_median\":%.3f,\"vs_openblas_min\":%.3f,"
                       "\"vs_openblas_max\":%.3f,\"vs_openblas_cpu_time\":%.3f,"
                       "\"max_rel_diff\":%.2g",
                       rmid, rlo, rhi, cpu_ratio, check);
            printf(",\"gflop_per_cpu_s\":%.1f", flops / cpu_mid / 1e9);
            printf("}\n");
        } else {
            printf("  %-9s %7.1f GFLOP/s (rounds %.1f-%.1f), %.1f GFLOP per CPU s", w->label,
                   flops / mid / 1e9, flops / hi / 1e9, flops / lo / 1e9, flops / cpu_mid / 1e9);
            if (reference && w != reference)
                printf("  = %.2fx OpenBLAS (%.2f-%.2f; CPU time %.2fx)  output %s (%.1g)", rmid,
                       rlo, rhi, cpu_ratio, check < 1e-4 ? "matches" : "DIFFERS", check);
            printf("\n");
        }
    }
    for (int i = 0; i < count; i++) {
        tp_tensor_release(who[i].output);
        if (who[i].exe) tp_executable_destroy(who[i].exe);
    }
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
    return 0;
}

/* ---- softmax against the bandwidth bound ---- */

typedef struct triad_part {
    float *a;
    const float *b, *c;
    int64_t n;
} triad_part;

static void *triad_thread(void *context) {
    triad_part *p = context;
    for (int64_t i = 0; i < p->n; i++) p->a[i] = p->b[i] + 3.0f * p->c[i];
    return NULL;
}

/* Bytes per second of a = b + 3c over n floats split between `threads`. */
static double triad_bandwidth(float *a, const float *b, const float *c, int64_t n, int threads) {
    pthread_t ids[64];
    triad_part parts[64];
    if (threads > 64) threads = 64;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_now();
        for (int t = 0; t < threads; t++) {
            int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
            parts[t] = (triad_part){a + lo, b + lo, c + lo, hi - lo};
            pthread_create(&ids[t], NULL, triad_thread, &parts[t]);
        }
        for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
        double elapsed = bench_now() - t0;
        if (elapsed < best) best = elapsed;
    }
    return 12.0 * (double)n / best;
}

static int run_softmax_case(int reps, int rounds, int threads, int json) {
    int64_t rows = 4096, cols = 4096, n = rows * cols;
    tp_graph *g = NULL;
    tp_graph_create("softmax", &g);
    tp_type t = {.dtype = TP_F32, .ndim = 2, .dims = {rows, cols}};
    tp_value_id x, y;
    tp_graph_add_input(g, "x", &t, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 1;
    tp_graph_add_node(g, "softmax", &x, 1, &attrs, "y", &y);
    tp_graph_set_outputs(g, &y, 1);
    tp_tensor *input = tensor_like(&t);
    random_fill(input, 3);
    tp_backend *stax = NULL;
    tp_executable *exe = NULL;
    char option[32];
    snprintf(option, sizeof option, "threads=%d", threads);
    const char *options[1] = {option};
    if (tp_backend_lookup("stax", &stax) != TP_OK ||
        tp_backend_compile(stax, g, &input, 1, options, 1, &exe) != TP_OK) {
        fprintf(stderr, "tp-bench: softmax: %s\n", tp_last_error());
        return 1;
    }
    int64_t tn = 3 * n; /* triad arrays past the caches, like softmax's */
    float *a = aligned_alloc(64, (size_t)tn * 4), *b = aligned_alloc(64, (size_t)tn * 4),
          *c = aligned_alloc(64, (size_t)tn * 4);
    for (int64_t i = 0; i < tn; i++) a[i] = 0, b[i] = 1, c[i] = 2;
    tp_tensor *output = NULL;
    double fraction[MAX_ROUNDS], bandwidth[MAX_ROUNDS], times[256];
    if (reps > 256) reps = 256;
    for (int r = 0; r < rounds; r++) {
        double before = triad_bandwidth(a, b, c, tn, threads);
        for (int i = -1; i < reps; i++) {
            double t0 = bench_now();
            tp_executable_run(exe, &input, 1, &output);
            if (i >= 0) times[i] = bench_now() - t0;
        }
        double time = bench_median(times, reps);
        double after = triad_bandwidth(a, b, c, tn, threads);
        bandwidth[r] = fmax(before, after);
        fraction[r] = 12.0 * (double)n / time / bandwidth[r];
    }
    /* the output's rows sum to 1 */
    const float *yd = tp_tensor_data(output);
    double worst = 0;
    for (int64_t i = 0; i < rows; i++) {
        double sum = 0;
        for (int64_t j = 0; j < cols; j++) sum += yd[i * cols + j];
        worst = fmax(worst, fabs(sum - 1.0));
    }
    double lo, mid, hi, blo, bmid, bhi;
    bench_range(fraction, rounds, &lo, &mid, &hi);
    bench_range(bandwidth, rounds, &blo, &bmid, &bhi);
    if (json)
        printf("{\"case\":\"softmax-4096\",\"threads\":%d,\"bound_fraction_median\":%.3f,"
               "\"bound_fraction_min\":%.3f,\"bound_fraction_max\":%.3f,\"triad_gb_per_s\":%.2f,"
               "\"row_sum_error\":%.2g}\n",
               threads, mid, lo, hi, bmid / 1e9, worst);
    else
        printf("softmax 4096 x 4096, %d threads: %.0f%% of the triad bound (rounds %.0f-%.0f%%); "
               "triad %.1f GB/s (%.1f-%.1f); rows sum to 1 within %.1g\n",
               threads, 100 * mid, 100 * lo, 100 * hi, bmid / 1e9, blo / 1e9, bhi / 1e9, worst);
    free(a), free(b), free(c);
    tp_tensor_release(output);
    tp_tensor_release(input);
    tp_executable_destroy(exe);
    tp_graph_destroy(g);
    return 0;
}

int bench_kernel_cases(const char *only, int reps, int rounds, int threads, int json) {
    if (rounds < 1) rounds = 1;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    if (threads < 1) threads = 1;
    openblas blas = open_openblas(threads);
    if (!blas.sgemm && !json) printf("OpenBLAS: n/a (libopenblas.so.0 not found)\n");
    int status = 0;
    for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++)
        if (bench_case_selected(only, gemm_cases[i].name))
            status |= run_gemm_case(&gemm_cases[i], &blas, reps, rounds, threads, json);
    if (bench_case_selected(only, "softmax-4096"))
        status |= run_softmax_case(reps, rounds, threads, json);
    return status;
}
