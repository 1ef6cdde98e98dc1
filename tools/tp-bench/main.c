/* tp-bench — TensorPlay's benchmark suite: every case runs on the chosen
 * backends (default "stax,eager") through the public registry API, with
 * baselines measured in the same run: NumPy (through /usr/bin/python3; "n/a"
 * when it is missing), OpenBLAS cblas_sgemm (dlopen'd libopenblas.so.0) for
 * matmul cases, a plain C loop (c_loops.c: -O3, AVX2/FMA on x86-64) and the STREAM
 * triad for memory-bound cases. Each measurement: warm-up runs, then
 * --reps repetitions; min and median are reported. Compile time and the
 * first call are reported apart from the steady state.
 *
 *   tp-bench [--backends a,b] [--reps N] [--case NAME[,NAME]] [--json] [--list]
 *   tp-bench --kernels [--rounds N] [--threads N] [--reps N] [--case NAME,...] [--json]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "c_loops.h"
#include "kernel_cases.h"
#include "tensorplay/tensorplay.h"

typedef struct stats {
    double min, median; /* seconds; < 0 is n/a */
} stats;

static int reps = 10;
static bool json;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static stats summarize(double *times, int n) {
    qsort(times, (size_t)n, sizeof *times, compare_double);
    return (stats){times[0], times[n / 2]};
}

/* ---- graphs ---- */

typedef struct bench_case {
    const char *name;
    const char *numpy; /* Python expression over arrays named as the inputs */
    int kind;          /* 0 graph; 1 sgemm */
    int64_t b, f, h;   /* batch, features, hidden (or sizes) */
    double flops, bytes;
} bench_case;

static tp_value_id in(tp_graph *g, const char *name, int ndim, int64_t d0, int64_t d1) {
    tp_type t = {.dtype = TP_F32, .ndim = ndim, .dims = {d0, d1}};
    tp_value_id id;
    tp_graph_add_input(g, name, &t, &id);
    return id;
}

static tp_value_id op(tp_graph *g, const char *name, tp_value_id a, tp_value_id b,
                      const tp_attrs *attrs) {
    tp_value_id ids[2] = {a, b}, out = TP_NO_VALUE;
    if (tp_graph_add_node(g, name, ids, b == TP_NO_VALUE ? 1 : 2, attrs, NULL, &out) != TP_OK)
        fprintf(stderr, "tp-bench: %s: %s\n", name, tp_last_error());
    return out;
}

static tp_value_id scalar(tp_graph *g, double v) {
    tp_attrs a = TP_ATTRS_INIT;
    a.dtype = TP_F32, a.value = v;
    tp_value_id out;
    tp_graph_add_node(g, "full", NULL, 0, &a, NULL, &out);
    return out;
}

static tp_graph *build(const bench_case *c) {
    tp_graph *g = NULL;
    tp_graph_create("bench", &g);
    const char *n = c->name;
    tp_value_id y = TP_NO_VALUE, none = TP_NO_VALUE;
    if (!strncmp(n, "mm-", 3) || !strcmp(n, "two-linear-relu") || !strcmp(n, "transpose-mm")) {
        tp_value_id x;
        if (!strcmp(n, "transpose-mm")) {
            tp_attrs t = TP_ATTRS_INIT;
            t.dim0 = 0, t.dim1 = 1;
            x = op(g, "transpose", in(g, "xt", 2, c->f, c->b), none, &t);
        } else {
            x = in(g, "x", 2, c->b, c->f);
        }
        tp_value_id w = in(g, "w", 2, c->f, c->h), bias = in(g, "bias", 1, c->h, 0);
        tp_value_id h = op(g, "add", op(g, "matmul", x, w, NULL), bias, NULL);
        if (!strcmp(n, "mm-bias") || !strcmp(n, "transpose-mm"))
            y = h;
        else if (!strcmp(n, "mm-bias-relu"))
            y = op(g, "relu", h, none, NULL);
        else if (!strcmp(n, "mm-bias-sigmoid"))
            y = op(g, "sigmoid", h, none, NULL);
        else if (!strcmp(n, "mm-bias-sin"))
            y = op(g, "sin", h, none, NULL);
        else if (!strcmp(n, "mm-bias-tanh"))
            y = op(g, "tanh", h, none, NULL);
        else if (!strcmp(n, "mm-bias-pointwise"))
            y = op(g, "mul", op(g, "sigmoid", h, none, NULL), op(g, "add", h, scalar(g, 1.0), NULL),
                   NULL);
        else if (!strcmp(n, "mm-bias-chain"))
            y = op(g, "tanh",
                   op(g, "sub", op(g, "mul", op(g, "relu", h, none, NULL), scalar(g, 2.0), NULL),
                      scalar(g, 1.0), NULL),
                   none, NULL);
        else if (!strcmp(n, "mm-reduce")) {
            tp_attrs s = TP_ATTRS_INIT;
            s.naxes = 1, s.axes[0] = 1;
            y = op(g, "sum", h, none, &s);
        } else { /* two-linear-relu */
            tp_value_id w2 = in(g, "w2", 2, c->h, c->h), b2 = in(g, "b2", 1, c->h, 0);
            y = op(g, "add", op(g, "matmul", op(g, "relu", h, none, NULL), w2, NULL), b2, NULL);
        }
    } else if (!strcmp(n, "tanh-affine")) {
        tp_value_id x = in(g, "x", 1, c->b, 0);
        y = op(g, "mul",
               op(g, "tanh",
                  op(g, "add", op(g, "mul", x, scalar(g, 2.0), NULL), scalar(g, 1.0), NULL), none,
                  NULL),
               x, NULL);
    } else if (!strcmp(n, "add")) {
        y = op(g, "add", in(g, "a", 1, c->b, 0), in(g, "b", 1, c->b, 0), NULL);
    } else if (!strcmp(n, "softmax")) {
        tp_attrs a = TP_ATTRS_INIT;
        a.axis = -1;
        y = op(g, "softmax", in(g, "x", 2, c->b, c->f), none, &a);
    } else if (!strcmp(n, "layer_norm")) {
        tp_attrs a = TP_ATTRS_INIT;
        a.axis = -1;
        y = op(g, "layer_norm", in(g, "x", 2, c->b, c->f), none, &a);
    } else { /* sgemm */
        y = op(g, "matmul", in(g, "a", 2, c->b, c->b), in(g, "b", 2, c->b, c->b), NULL);
    }
    tp_graph_set_outputs(g, &y, 1);
    return g;
}

static tp_tensor **make_inputs(const tp_graph *g, int *count) {
    *count = tp_graph_num_inputs(g);
    tp_tensor **inputs = calloc((size_t)*count, sizeof *inputs);
    for (int i = 0; i < *count; i++) {
        const tp_type *t = tp_graph_value_type(g, tp_graph_input(g, i));
        tp_tensor_create(t->dtype, t->ndim, t->dims, &inputs[i]);
        float *d = tp_tensor_data_mut(inputs[i]);
        for (int64_t k = 0; k < tp_tensor_numel(inputs[i]); k++)
            d[k] = (float)((k * 7919 + i * 104729) % 2001 - 1000) * 1e-3f;
    }
    return inputs;
}

/* ---- measuring a backend ---- */

typedef struct backend_result {
    double compile_s, first_s;
    stats run;
} backend_result;

static bool measure_backend(const char *name, const tp_graph *g, tp_tensor **inputs, int n,
                            backend_result *out) {
    tp_backend *backend;
    tp_executable *exe = NULL;
    if (tp_backend_lookup(name, &backend) != TP_OK) {
        fprintf(stderr, "tp-bench: %s\n", tp_last_error());
        return false;
    }
    double t0 = now();
    if (tp_backend_compile(backend, g, inputs, n, NULL, 0, &exe) != TP_OK) {
        fprintf(stderr, "tp-bench: %s\n", tp_last_error());
        return false;
    }
    out->compile_s = now() - t0;
    tp_tensor *outputs[1] = {NULL};
    t0 = now();
    bool ok = tp_executable_run(exe, inputs, n, outputs) == TP_OK;
    out->first_s = now() - t0;
    double *times = calloc((size_t)reps, sizeof *times);
    for (int w = 0; ok && w < 2; w++) /* warm-up */
        ok = tp_executable_run(exe, inputs, n, outputs) == TP_OK;
    for (int r = 0; ok && times && r < reps; r++) {
        t0 = now();
        ok = tp_executable_run(exe, inputs, n, outputs) == TP_OK; /* output reused */
        times[r] = now() - t0;
    }
    if (!ok) fprintf(stderr, "tp-bench: %s: run failed: %s\n", name, tp_last_error());
    if (ok && times) out->run = summarize(times, reps);
    free(times);
    tp_tensor_release(outputs[0]);
    tp_executable_destroy(exe);
    return ok && times;
}

/* ---- baselines ---- */

static stats numpy_time(const bench_case *c) {
    char script[2048], command[2600];
    snprintf(script, sizeof script,
             "import time,sys\n"
             "try:\n import numpy as np\nexcept Exception:\n print('n/a'); sys.exit()\n"
             "B,F,H=%lld,%lld,%lld\nr=np.random.default_rng(0)\n"
             "f=lambda *s: r.standard_normal(s,dtype=np.float32)\n"
             "x=f(B,F);xt=f(F,B);w=f(F,H);bias=f(H);w2=f(H,H);b2=f(H);a=f(B);b=f(B)\n"
             "A=f(B,B) if %d else None\nsig=lambda v:1/(1+np.exp(-v))\n"
             "def sm(v):\n e=np.exp(v-v.max(-1,keepdims=True)); return e/e.sum(-1,keepdims=True)\n"
             "def ln(v):\n m=v.mean(-1,keepdims=True); return "
             "(v-m)/np.sqrt(v.var(-1,keepdims=True)+1e-5)\n"
             "g=lambda: %s\n"
             "for _ in range(2): g()\nt=[]\n"
             "for _ in range(%d):\n s=time.perf_counter(); g(); t.append(time.perf_counter()-s)\n"
             "t.sort(); print(t[0], t[len(t)//2])\n",
             (long long)c->b, (long long)c->f, (long long)c->h, c->kind == 1, c->numpy, reps);
    char path[] = "/tmp/tp-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return (stats){-1, -1};
    FILE *file = fdopen(fd, "w");
    fputs(script, file);
    fclose(file);
    snprintf(command, sizeof command, "/usr/bin/python3 %s 2>/dev/null", path);
    FILE *pipe = popen(command, "r");
    stats s = {-1, -1};
    if (pipe) {
        if (fscanf(pipe, "%lf %lf", &s.min, &s.median) != 2) s = (stats){-1, -1};
        pclose(pipe);
    }
    unlink(path);
    return s;
}

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

static stats openblas_time(const bench_case *c, tp_tensor **inputs) {
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    sgemm_fn sgemm = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
    if (!sgemm) return (stats){-1, -1};
    bool square = c->kind == 1;
    int m = (int)c->b, k = (int)(square ? c->b : c->f), n = (int)(square ? c->b : c->h);
    const float *a = tp_tensor_data(inputs[0]), *b = tp_tensor_data(inputs[1]);
    float *out = calloc((size_t)m * (size_t)n, sizeof(float));
    double *times = calloc((size_t)reps, sizeof *times);
    for (int r = -2; r < reps; r++) {
        double t0 = now();
        sgemm(101, 111, 111, m, n, k, 1.0f, a, k, b, n, 0.0f, out, n); /* row-major, no trans */
        if (r >= 0) times[r] = now() - t0;
    }
    stats s = summarize(times, reps);
    free(times);
    free(out);
    return s;
}

static stats c_loop_time(const bench_case *c, tp_tensor **inputs) {
    int64_t n = c->b;
    float *y = aligned_alloc(64, (size_t)n * sizeof(float));
    double *times = calloc((size_t)reps, sizeof *times);
    for (int r = -2; r < reps; r++) {
        double t0 = now();
        if (!strcmp(c->name, "tanh-affine"))
            bench_c_tanh_affine(tp_tensor_data(inputs[0]), y, n);
        else
            bench_c_add(tp_tensor_data(inputs[0]), tp_tensor_data(inputs[1]), y, n);
        if (r >= 0) times[r] = now() - t0;
    }
    stats s = summarize(times, reps);
    free(times);
    free(y);
    return s;
}

/* STREAM triad over 16M floats: bytes/s (3 streams). */
static double triad_bandwidth(void) {
    int64_t n = 16 << 20;
    float *a = aligned_alloc(64, (size_t)n * 4), *b = aligned_alloc(64, (size_t)n * 4),
          *c = aligned_alloc(64, (size_t)n * 4);
    for (int64_t i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
    double best = 1e30;
    for (int r = 0; r < reps + 2; r++) {
        double t0 = now();
        bench_c_triad(a, b, c, n);
        double t = now() - t0;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 3.0 * 4.0 * (double)n / best;
}

/* ---- compile latency and call overhead ---- */

static void compile_latency(void) {
    char dir[] = "/tmp/tp-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) return;
    setenv("TP_CACHE_DIR", dir, 1);
    tp_backend *stax;
    if (tp_backend_lookup("stax", &stax) != TP_OK) return;
    double cold = 1e30, warm = 1e30;
    for (int r = 0; r < 5; r++) {
        tp_graph *g = NULL;
        char name[32];
        snprintf(name, sizeof name, "latency%d", r); /* a new graph: a cold compile */
        tp_graph_create(name, &g);
        tp_value_id x = in(g, "x", 2, 64, 64), y = x;
        for (int k = 0; k < 19; k++)
            y = op(g,
                   k % 3 == 0   ? "tanh"
                   : k % 3 == 1 ? "add"
                                : "mul",
                   y, k % 3 ? x : TP_NO_VALUE, NULL);
        tp_graph_set_outputs(g, &y, 1);
        tp_executable *exe = NULL;
        double t0 = now();
        tp_backend_compile(stax, g, NULL, 0, NULL, 0, &exe);
        double t = now() - t0;
        cold = t < cold ? t : cold;
        tp_executable_destroy(exe);
        t0 = now();
        tp_backend_compile(stax, g, NULL, 0, NULL, 0, &exe); /* memory freed: from disk */
        t = now() - t0;
        warm = t < warm ? t : warm;
        tp_executable_destroy(exe);
        tp_graph_destroy(g);
    }
    /* cache-hit call overhead: a 4-element add, steady state */
    tp_graph *g = NULL;
    tp_graph_create("overhead", &g);
    tp_value_id a = in(g, "a", 1, 4, 0);
    tp_value_id y = op(g, "add", a, a, NULL);
    tp_graph_set_outputs(g, &y, 1);
    int count;
    tp_tensor **inputs = make_inputs(g, &count);
    tp_executable *exe = NULL;
    tp_tensor *out[1] = {NULL};
    bool ok = tp_backend_compile(stax, g, NULL, 0, NULL, 0, &exe) == TP_OK &&
              tp_executable_run(exe, inputs, 1, out) == TP_OK;
    int calls = 100000, done = 0;
    double t0 = now();
    for (; ok && done < calls; done++) ok = tp_executable_run(exe, inputs, 1, out) == TP_OK;
    double per_call = (now() - t0) / (done ? done : 1);
    if (!ok) fprintf(stderr, "tp-bench: call overhead: run failed: %s\n", tp_last_error());
    if (json)
        printf("{\"case\":\"compile-latency\",\"nodes\":20,\"cold_ms\":%.3f,\"disk_cache_ms\":%.3f,"
               "\"call_overhead_us\":%.3f}\n",
               cold * 1e3, warm * 1e3, per_call * 1e6);
    else
        printf("compile latency (20 nodes): cold %.2f ms, from disk cache %.2f ms; "
               "call overhead (cache hit, 4-element add) %.2f us\n",
               cold * 1e3, warm * 1e3, per_call * 1e6);
    tp_tensor_release(out[0]);
    tp_tensor_release(inputs[0]);
    free(inputs);
    tp_executable_destroy(exe);
    tp_graph_destroy(g);
}

/* ---- main ---- */

static const bench_case cases[] = {
    {"mm-bias", "x@w+bias", 0, 64, 256, 512, 0, 0},
    {"mm-bias-relu", "np.maximum(x@w+bias,0)", 0, 128, 512, 1024, 0, 0},
    {"mm-bias-sigmoid", "sig(x@w+bias)", 0, 128, 512, 1024, 0, 0},
    {"mm-bias-sin", "np.sin(x@w+bias)", 0, 64, 1024, 1024, 0, 0},
    {"mm-bias-tanh", "np.tanh(x@w+bias)", 0, 64, 1024, 1024, 0, 0},
    {"mm-bias-pointwise", "(lambda h: sig(h)*(h+1))(x@w+bias)", 0, 32, 1024, 2048, 0, 0},
    {"mm-bias-chain", "np.tanh(np.maximum(x@w+bias,0)*2-1)", 0, 64, 256, 512, 0, 0},
    {"two-linear-relu", "np.maximum(x@w+bias,0)@w2+b2", 0, 64, 256, 256, 0, 0},
    {"transpose-mm", "xt.T@w+bias", 0, 256, 64, 512, 0, 0},
    {"mm-reduce", "(x@w+bias).sum(1)", 0, 128, 512, 1024, 0, 0},
    {"tanh-affine", "np.tanh(a*2+1)*a", 0, 16 << 20, 0, 0, 0, 0},
    {"add", "a+b", 0, 16 << 20, 0, 0, 0, 0},
    {"sgemm-1024", "A@A", 1, 1024, 0, 0, 0, 0},
    {"sgemm-2048", "A@A", 1, 2048, 0, 0, 0, 0},
    {"softmax", "sm(x)", 0, 4096, 4096, 0, 0, 0},
    {"layer_norm", "ln(x)", 0, 4096, 1024, 0, 0, 0},
};

static bool selected(const char *list, const char *name) {
    if (!list) return true;
    size_t length = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += length)
        if ((p == list || p[-1] == ',') && (p[length] == ',' || !p[length])) return true;
    return false;
}

static void print_stats(const char *label, stats s, double base) {
    if (s.min < 0) {
        printf("  %-22s n/a\n", label);
        return;
    }
    printf("  %-22s min %9.3f ms  median %9.3f ms", label, s.min * 1e3, s.median * 1e3);
    if (base > 0) printf("  (stax is %.2fx faster)", s.median / base);
    printf("\n");
}

static void print_usage(FILE *out) {
    fprintf(out, "usage: tp-bench [--backends a,b] [--reps N] [--case NAME,...] [--json] [--list]\n"
                 "       tp-bench --help\n\n"
                 "  --backends a,b   backends to measure (default stax,eager)\n"
                 "  --reps N         timed repetitions per measurement (default 10)\n"
                 "  --case NAME,...  only these cases (see --list)\n"
                 "  --json           one JSON object per line instead of the table\n"
                 "  --list           print the case names and exit\n"
                 "  --kernels        the matmul micro-kernel families vs OpenBLAS and softmax vs\n"
                 "                   the triad bound, in interleaved rounds (cases: sgemm-1024,\n"
                 "                   sgemm-2048, sgemm-1000, mm-bt-1024, mm-m8, attn-scores,\n"
                 "                   attn-values, softmax-4096)\n"
                 "  --rounds N       rounds for --kernels (default 5)\n"
                 "  --threads N      threads for --kernels, stax and OpenBLAS (default 2)\n");
}

int main(int argc, char **argv) {
    const char *backends = "stax,eager", *only = NULL;
    int kernels = 0, rounds = 5, threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels"))
            kernels = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backends") && i + 1 < argc)
            backends = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--list")) {
            for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) puts(cases[c].name);
            puts("compile-latency");
            return 0;
        } else if (!strcmp(argv[i], "--help")) {
            print_usage(stdout);
            return 0;
        } else {
            print_usage(stderr);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (kernels) return bench_kernel_cases(only, reps, rounds, threads, json);
    /* The C loops (STREAM triad included) may be built for AVX2/FMA. */
    bool c_loops = bench_c_loops_runnable();
    double triad = c_loops ? triad_bandwidth() : -1;
    if (json && c_loops)
        printf("{\"case\":\"stream-triad\",\"gb_per_s\":%.2f,\"c_flags\":\"%s\"}\n", triad / 1e9,
               bench_c_loops_flags);
    else if (json)
        printf("{\"case\":\"stream-triad\",\"gb_per_s\":\"n/a\"}\n");
    else if (c_loops)
        printf("STREAM triad: %.2f GB/s (16M f32, 1 thread); C loops built with %s\n", triad / 1e9,
               bench_c_loops_flags);
    else
        printf("STREAM triad and C loops: n/a (built with %s, which this CPU lacks)\n",
               bench_c_loops_flags);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const bench_case *bc = &cases[c];
        if (!selected(only, bc->name)) continue;
        tp_graph *g = build(bc);
        int n;
        tp_tensor **inputs = make_inputs(g, &n);
        if (!json)
            printf("%s (%lld, %lld, %lld)\n", bc->name, (long long)bc->b, (long long)bc->f,
                   (long long)bc->h);
        double stax_median = -1;
        char list[256];
        snprintf(list, sizeof list, "%s", backends);
        for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
             name = strtok_r(NULL, ",", &save)) {
            backend_result r;
            if (!measure_backend(name, g, inputs, n, &r)) continue;
            if (!strcmp(name, "stax")) stax_median = r.run.median;
            if (json)
                printf("{\"case\":\"%s\",\"backend\":\"%s\",\"compile_ms\":%.3f,\"first_call_ms\":%"
                       ".3f,"
                       "\"min_ms\":%.4f,\"median_ms\":%.4f}\n",
                       bc->name, name, r.compile_s * 1e3, r.first_s * 1e3, r.run.min * 1e3,
                       r.run.median * 1e3);
            else {
                char label[64];
                snprintf(label, sizeof label, "%s", name);
                print_stats(label, r.run, strcmp(name, "stax") ? stax_median : -1);
                printf("  %-22s compile %.2f ms, first call %.3f ms\n", "", r.compile_s * 1e3,
                       r.first_s * 1e3);
            }
        }
        stats baselines[3] = {numpy_time(bc), {-1, -1}, {-1, -1}};
        bool matmul = bc->kind == 1;
        if (matmul) baselines[1] = openblas_time(bc, inputs);
        if (c_loops && (!strcmp(bc->name, "tanh-affine") || !strcmp(bc->name, "add")))
            baselines[2] = c_loop_time(bc, inputs);
        static const char *const labels[] = {"numpy", "openblas cblas_sgemm", "C loop"};
        for (int k = 0; k < 3; k++) {
            if (k > 0 && baselines[k].min < 0) continue;
            if (json) {
                if (baselines[k].min < 0)
                    printf("{\"case\":\"%s\",\"baseline\":\"%s\",\"median_ms\":\"n/a\"}\n",
                           bc->name, labels[k]);
                else
                    printf("{\"case\":\"%s\",\"baseline\":\"%s\",\"min_ms\":%.4f,\"median_ms\":%."
                           "4f}\n",
                           bc->name, labels[k], baselines[k].min * 1e3, baselines[k].median * 1e3);
            } else {
                print_stats(labels[k], baselines[k], stax_median);
            }
        }
        if (!json && !strcmp(bc->name, "add") && stax_median > 0 && triad > 0)
            printf("  stax bandwidth %.2f GB/s = %.0f%% of triad\n",
                   12.0 * (double)bc->b / stax_median / 1e9,
                   100.0 * 12.0 * (double)bc->b / stax_median / triad);
        for (int i = 0; i < n; i++) tp_tensor_release(inputs[i]);
        free(inputs);
        tp_graph_destroy(g);
    }
    if (selected(only, "compile-latency")) compile_latency();
    return 0;
}
