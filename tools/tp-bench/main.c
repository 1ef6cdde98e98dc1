/* tp-bench — TensorPlay's benchmark suite. Every case (cases.c) runs on the
 * chosen backends (default "stax,eager") through the public API, and each
 * backend's output is checked against an independent oracle: NumPy for the
 * micro cases and ONNX Runtime for the model cases, computed by the Python
 * helper bench/peers.py on the same inputs, or the eager reference backend
 * where the helper cannot (no NumPy, no ONNX Runtime). In the same run it
 * times the baselines (OpenBLAS for sgemm, on the newest kernels the CPU runs:
 * openblas_core.c; a vectorized multi-threaded C loop
 * for the pointwise cases, the STREAM triad) and the peers (NumPy; with
 * --peers ONNX Runtime with io-binding, PyTorch eager and torch.compile, from
 * the venv bench/peers-venv.sh makes). Measurements are interleaved: each of
 * --rounds rounds times every contender --reps times in turn; a figure is the
 * median of the round medians with their range, and the ratios are stax's
 * time over each other contender's.
 *
 *   tp-bench [--backends a,b] [--reps N] [--rounds N] [--threads N] [--case NAME,...]
 * [--peers[=LIST]]
 *            [--python PATH] [--models DIR] [--json] [--plot FILE.png] [--list]
 *   tp-bench --kernels [--reps N] [--rounds N] [--threads N] [--case NAME,...] [--json]
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baselines.h"
#include "c_loops.h"
#include "cases.h"
#include "compile_timing.h"
#include "pass_pipeline.h"
#include "helper_process.h"
#include "attention_cases.h"
#include "kernel_cases.h"
#include "latency.h"
#include "openblas_core.h"
#include "timing.h"

#define MAX_ROUNDS     64
#define MAX_CONTENDERS 16

#ifndef TP_BENCH_PEERS_SCRIPT
#define TP_BENCH_PEERS_SCRIPT "bench/peers.py"
#endif
#ifndef TP_BENCH_ORACLE_PYTHON
#define TP_BENCH_ORACLE_PYTHON "/usr/bin/python3"
#endif

typedef struct options {
    const char *backends, *only, *peers, *python, *models, *plot;
    int reps, rounds, threads;
    bool json, kernels;
} options;

typedef enum contender_kind {
    CONTENDER_BACKEND,
    CONTENDER_OPENBLAS,
    CONTENDER_C_LOOP,
    CONTENDER_PEER
} contender_kind;

typedef struct contender {
    char label[48];
    contender_kind kind;
    tp_executable *exe;
    tp_graph *graph; /* what a backend compiled: the case's graph after the passes */
    tp_tensor *output;
    bench_compile_times compile; /* cold and from the disk cache, the passes included */
    double first_s;
    double medians[MAX_ROUNDS];
    int rounds;
    char check[256]; /* JSON object, or "" */
    char check_text[160];
} contender;

typedef struct summary {
    double median, low, high;
} summary;

/* ---- small helpers ---- */

static int default_threads(void) {
    const char *text = getenv("TP_NUM_THREADS"); /* the count stax's pool uses */
    if (text && atoi(text) > 0) return atoi(text);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : (int)cores;
}

static const char *cache_dir(void) {
    static char path[4096];
    const char *explicit_dir = getenv("TP_BENCH_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    if (explicit_dir && *explicit_dir)
        snprintf(path, sizeof path, "%s", explicit_dir);
    else if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/tensorplay-bench", xdg);
    else
        snprintf(path, sizeof path, "%s/.cache/tensorplay-bench",
                 getenv("HOME") ? getenv("HOME") : "/tmp");
    return path;
}

static summary summarize(const contender *c) {
    double sorted[MAX_ROUNDS];
    memcpy(sorted, c->medians, sizeof(double) * (size_t)c->rounds);
    double median = bench_median(sorted, c->rounds);
    return (summary){median, sorted[0], sorted[c->rounds - 1]};
}

/* stax's time over c's round by round (both measured in the same round):
 * median, lowest, highest; median -1 unless both have every round. */
static summary round_ratios(const contender *stax, const contender *c) {
    double ratios[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; stax && stax->rounds == c->rounds && r < c->rounds; r++)
        if (c->medians[r] > 0) ratios[n++] = stax->medians[r] / c->medians[r];
    if (n == 0) return (summary){-1, -1, -1};
    double median = bench_median(ratios, n);
    return (summary){median, ratios[0], ratios[n - 1]};
}

/* `text` as the inside of a JSON string (quotes, backslashes and control
 * characters escaped), into `out`. */
static const char *json_escaped(const char *text, char *out, size_t size) {
    size_t at = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && at + 7 < size; p++) {
        if (*p == '"' || *p == '\\') {
            out[at++] = '\\', out[at++] = (char)*p;
        } else if (*p == '\n') {
            out[at++] = '\\', out[at++] = 'n';
        } else if (*p < 0x20) {
            at += (size_t)snprintf(out + at, size - at, "\\u%04x", *p);
        } else {
            out[at++] = (char)*p;
        }
    }
    out[at] = '\0';
    return out;
}

/* Appends printf-style text to a fixed buffer. */
static void append(char *buffer, size_t size, const char *format, ...) {
    size_t used = strlen(buffer);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    vsnprintf(buffer + used, size - used, format, args);
    va_end(args);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The folder this run writes its cases' inputs and outputs to (for the
 * helper), under the cache folder; removed at exit. */
static const char *run_dir(void) {
    static char path[4096];
    if (!path[0]) {
        mkdir(cache_dir(), 0755);
        snprintf(path, sizeof path, "%s/run-XXXXXX", cache_dir());
        if (!mkdtemp(path)) snprintf(path, sizeof path, "%s", cache_dir());
    }
    return path;
}

static void remove_run_dir(void) {
    if (strstr(run_dir(), "/run-")) nftw(run_dir(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- checking outputs ---- */

/* Max abs and rel error of `got` against `want` (f32, same shape), and
 * whether every element is within 1e-3 * |want| + 1e-4 * max|want|. */
static bool compare_outputs(const tp_tensor *got, const tp_tensor *want, double *max_abs,
                            double *max_rel) {
    *max_abs = *max_rel = 0;
    if (tp_tensor_numel(got) != tp_tensor_numel(want) || tp_tensor_dtype(got) != TP_F32 ||
        tp_tensor_dtype(want) != TP_F32)
        return false;
    const float *g = tp_tensor_data(got), *w = tp_tensor_data(want);
    int64_t n = tp_tensor_numel(want);
    double scale = 0;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(w[i]));
    double atol = 1e-4 * scale;
    bool ok = true;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)g[i] - w[i]);
        if (!(d <= atol + 1e-3 * fabs(w[i]))) ok = false; /* NaN fails */
        *max_abs = fmax(*max_abs, d);
        *max_rel = fmax(*max_rel, d / (fabs(w[i]) + atol + 1e-30));
    }
    return ok;
}

static bool any_output_wrong; /* the exit status says so */

static void record_check(contender *c, const char *oracle, double max_abs, double max_rel,
                         bool ok) {
    if (!ok) any_output_wrong = true;
    snprintf(c->check, sizeof c->check,
             "{\"oracle\":\"%s\",\"max_abs\":%.3g,\"max_rel\":%.3g,\"pass\":%s}", oracle, max_abs,
             max_rel, ok ? "true" : "false");
    snprintf(c->check_text, sizeof c->check_text, "%s vs %s: max abs %.2g, max rel %.2g",
             ok ? "ok" : "WRONG", oracle, max_abs, max_rel);
}

/* The helper's oracle when it has one for this case, else eager's output. */
static void check_output(contender *c, helper_process *helper, bool helper_case, const char *path,
                         const tp_tensor *eager_output) {
    char reply[512], oracle[64], verdict[16];
    double max_abs, max_rel;
    if (helper_case && helper_ask(helper, reply, sizeof reply, "check %s %s", c->label, path) &&
        sscanf(reply, "check %63s %lf %lf %15s", oracle, &max_abs, &max_rel, verdict) == 4) {
        record_check(c, oracle, max_abs, max_rel, !strcmp(verdict, "pass"));
        return;
    }
    if (eager_output && strcmp(c->label, "eager")) {
        bool ok = compare_outputs(c->output, eager_output, &max_abs, &max_rel);
        record_check(c, "eager", max_abs, max_rel, ok);
        return;
    }
    snprintf(c->check, sizeof c->check, "{\"oracle\":\"none\"}");
    snprintf(c->check_text, sizeof c->check_text, "%s",
             eager_output ? "unchecked: no oracle, so the other backends are checked against it"
                          : "unchecked (no oracle: no NumPy or ONNX Runtime, and no eager run)");
}

/* ---- measuring one round ---- */

static double backend_round(contender *c, tp_tensor **inputs, int n, int reps) {
    double times[256];
    if (reps > 256) reps = 256;
    tp_tensor *outputs[1] = {c->output};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (tp_executable_run(c->exe, inputs, n, outputs) != TP_OK) {
            fprintf(stderr, "tp-bench: %s: run failed: %s\n", c->label, tp_last_error());
            return -1;
        }
        times[r] = bench_now() - t0;
    }
    return bench_median(times, reps);
}

static double peer_round(const contender *c, helper_process *helper, int reps) {
    char reply[8192];
    if (!helper_ask(helper, reply, sizeof reply, "time %s %d", c->label, reps) ||
        strncmp(reply, "times ", 6)) {
        fprintf(stderr, "tp-bench: %s: %s\n", c->label, reply);
        return -1;
    }
    double times[256];
    int count = 0;
    char *p = reply + 6, *end;
    for (double t; count < 256 && (t = strtod(p, &end), end != p); p = end) times[count++] = t;
    return bench_median(times, count);
}

static double measure_round(contender *c, const bench_case *bc, tp_tensor **inputs, int n,
                            helper_process *helper, const options *o) {
    switch (c->kind) {
    case CONTENDER_BACKEND:
        return backend_round(c, inputs, n, o->reps);
    case CONTENDER_OPENBLAS:
        return baseline_openblas_median(bc, inputs, o->reps, o->threads);
    case CONTENDER_C_LOOP:
        return baseline_c_loop_median(bc, inputs, o->reps, o->threads);
    case CONTENDER_PEER:
        return peer_round(c, helper, o->reps);
    }
    return -1;
}

/* ---- one case ---- */

static bool save_inputs(const tp_graph *g, tp_tensor **inputs, int n, const char *dir, char *names,
                        size_t size) {
    mkdir(dir, 0755);
    names[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = tp_graph_value_name(g, tp_graph_input(g, i));
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, name);
        if (tp_npy_save(path, inputs[i]) != TP_OK) return false;
        append(names, size, "%s%s", i ? "," : "", name);
    }
    return true;
}

/* `name` is a backend, or BACKEND:MODE (stax:max-autotune): that backend
 * compiled with the option mode=MODE, measured as a contender of its own. */
static bool compile_backend(contender *c, const char *name, const tp_graph *g, tp_tensor **inputs,
                            int n) {
    tp_backend *backend;
    snprintf(c->label, sizeof c->label, "%s", name);
    c->kind = CONTENDER_BACKEND;
    char backend_name[128], mode_option[160];
    const char *colon = strchr(name, ':');
    snprintf(backend_name, sizeof backend_name, "%.*s",
             colon ? (int)(colon - name) : (int)strlen(name), name);
    snprintf(mode_option, sizeof mode_option, "mode=%s", colon ? colon + 1 : "");
    const char *options[] = {mode_option};
    if (tp_backend_lookup(backend_name, &backend) != TP_OK) {
        fprintf(stderr, "tp-bench: %s\n", tp_last_error());
        return false;
    }
    double passes_s = 0;
    if (bench_pass_pipeline(backend, g, &c->graph, &passes_s) != TP_OK) {
        fprintf(stderr, "tp-bench: %s: the pass pipeline: %s\n", name, tp_last_error());
        return false;
    }
    if (bench_compile_cold_and_from_disk(backend, c->graph, inputs, n, options, colon ? 1 : 0,
                                         &c->exe, &c->compile) != TP_OK) {
        fprintf(stderr, "tp-bench: %s: compile: %s\n", name, tp_last_error());
        tp_graph_destroy(c->graph);
        c->graph = NULL;
        return false;
    }
    /* a user's compile, cold or from the disk cache, runs the passes first */
    c->compile.cold_s += passes_s;
    c->compile.disk_s += passes_s;
    tp_tensor *outputs[1] = {NULL};
    double t0 = bench_now();
    if (tp_executable_run(c->exe, inputs, n, outputs) != TP_OK) {
        fprintf(stderr, "tp-bench: %s: run: %s\n", name, tp_last_error());
        tp_executable_destroy(c->exe);
        c->exe = NULL;
        tp_graph_destroy(c->graph);
        c->graph = NULL;
        return false;
    }
    c->first_s = bench_now() - t0;
    c->output = outputs[0];
    return true;
}

/* Adds the helper's peers named in `ready` ("ready numpy onnxruntime ..."). */
static int add_peers(contender *list, int count, const char *ready) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", ready + strlen("ready"));
    for (char *save = NULL, *p = strtok_r(copy, " ", &save); p && count < MAX_CONTENDERS;
         p = strtok_r(NULL, " ", &save)) {
        memset(&list[count], 0, sizeof list[count]);
        snprintf(list[count].label, sizeof list[count].label, "%s", p);
        list[count++].kind = CONTENDER_PEER;
    }
    return count;
}

static void print_case(const bench_case *bc, contender *list, int count, double triad,
                       helper_process *helper, const options *o) {
    double stax = -1;
    const contender *stax_contender = NULL;
    for (int i = 0; i < count; i++)
        if (!strcmp(list[i].label, "stax") && list[i].rounds) {
            stax = summarize(&list[i]).median;
            stax_contender = &list[i];
        }
    char json[8192] = "";
    append(json, sizeof json,
           "{\"case\":\"%s\",\"shape\":[%lld,%lld,%lld],\"rounds\":%d,\"reps\":%d,"
           "\"threads\":%d,\"results\":[",
           bc->name, (long long)bc->b, (long long)bc->f, (long long)bc->h, o->rounds, o->reps,
           o->threads);
    if (!o->json)
        printf("%s (%lld, %lld, %lld)\n", bc->name, (long long)bc->b, (long long)bc->f,
               (long long)bc->h);
    for (int i = 0, first = 1; i < count; i++) {
        const contender *c = &list[i];
        if (!c->rounds) continue;
        summary s = summarize(c);
        double ratio = stax > 0 && strcmp(c->label, "stax") ? stax / s.median : -1;
        summary per_round = ratio > 0 ? round_ratios(stax_contender, c) : (summary){-1, -1, -1};
        static const char *const kinds[] = {"backend", "baseline", "baseline", "peer"};
        append(json, sizeof json,
               "%s{\"name\":\"%s\",\"kind\":\"%s\",\"median_ms\":%.4f,"
               "\"min_ms\":%.4f,\"max_ms\":%.4f",
               first ? "" : ",", c->label, kinds[c->kind], s.median * 1e3, s.low * 1e3,
               s.high * 1e3);
        first = 0;
        if (c->kind == CONTENDER_BACKEND)
            append(json, sizeof json,
                   ",\"compile_cold_ms\":%.3f,\"compile_disk_cache_ms\":%.3f,"
                   "\"first_call_ms\":%.3f,\"check\":%s",
                   c->compile.cold_s * 1e3, c->compile.disk_s * 1e3, c->first_s * 1e3,
                   c->check[0] ? c->check : "null");
        if (ratio > 0) append(json, sizeof json, ",\"stax_ratio\":%.4f", ratio);
        if (per_round.median > 0)
            append(json, sizeof json,
                   ",\"stax_ratio_per_round\":{\"median\":%.4f,\"min\":%.4f,\"max\":%.4f}",
                   per_round.median, per_round.low, per_round.high);
        append(json, sizeof json, "}");
        if (!o->json) {
            printf("  %-14s median %9.3f ms [%9.3f .. %9.3f]", c->label, s.median * 1e3,
                   s.low * 1e3, s.high * 1e3);
            if (ratio > 0) printf("  stax/%s %.2f", c->label, ratio);
            if (per_round.median > 0)
                printf(" (per round %.2f, %.2f-%.2f)", per_round.median, per_round.low,
                       per_round.high);
            printf("\n");
            if (c->kind == CONTENDER_BACKEND)
                printf("  %-14s compile cold %.2f ms, from disk cache %.2f ms, first call %.3f "
                       "ms, %s\n",
                       "", c->compile.cold_s * 1e3, c->compile.disk_s * 1e3, c->first_s * 1e3,
                       c->check_text);
        }
        if (ratio > 0 && c->kind != CONTENDER_BACKEND && helper->pid > 0) {
            char reply[256];
            helper_ask(helper, reply, sizeof reply, "ratio %s %s %.6f", bc->name, c->label, ratio);
        }
    }
    append(json, sizeof json, "]");
    if (!strcmp(bc->name, "add") && stax > 0 && triad > 0) {
        double bandwidth = 12.0 * (double)bc->b / stax;
        append(json, sizeof json, ",\"stax_gb_per_s\":%.2f,\"of_triad\":%.3f", bandwidth / 1e9,
               bandwidth / triad);
        if (!o->json)
            printf("  stax bandwidth %.2f GB/s = %.0f%% of the %d-thread triad\n", bandwidth / 1e9,
                   100.0 * bandwidth / triad, o->threads);
    }
    if (o->json) printf("%s}\n", json);
    fflush(stdout);
}

static void run_case(const bench_case *bc, helper_process *helper, double triad, const options *o) {
    char dir[4096], model_path[4200];
    if (snprintf(dir, sizeof dir, "%s/%s", run_dir(), bc->name) >= (int)sizeof dir ||
        snprintf(model_path, sizeof model_path, "%s/%s.onnx", o->models, bc->name) >=
            (int)sizeof model_path) {
        fprintf(stderr, "tp-bench: %s: the run or models folder path is too long\n", bc->name);
        return;
    }
    tp_graph *g = NULL;
    tp_tensor **inputs = NULL;
    int n = 0;
    char why[2048] = "";
    if (bc->kind == BENCH_MODEL) {
        if (!bench_load_model(bc, o->models, &g, &inputs, &n, why, sizeof why)) {
            char escaped[4 * sizeof why];
            if (o->json)
                printf("{\"case\":\"%s\",\"skipped\":\"%s\"}\n", bc->name,
                       json_escaped(why, escaped, sizeof escaped));
            else
                printf("%s: skipped: %s\n", bc->name, why);
            return;
        }
    } else {
        g = bench_build_graph(bc);
        if (!g) {
            fprintf(stderr, "tp-bench: %s: cannot build the graph: %s\n", bc->name,
                    tp_last_error());
            return;
        }
        inputs = bench_make_inputs(g, &n);
    }
    char names[1024], reply[1024] = "";
    bool helper_case =
        helper->pid > 0 && save_inputs(g, inputs, n, dir, names, sizeof names) &&
        helper_ask(helper, reply, sizeof reply, "case %s %s %s %s %s", bc->name, dir, names,
                   o->peers ? o->peers : "numpy", bc->kind == BENCH_MODEL ? model_path : "-") &&
        !strncmp(reply, "ready", 5);
    if (helper->pid > 0 && !helper_case)
        fprintf(stderr, "tp-bench: %s: helper: %s\n", bc->name, reply);

    contender list[MAX_CONTENDERS];
    int count = 0;
    char backends[256];
    snprintf(backends, sizeof backends, "%s", o->backends);
    for (char *save = NULL, *name = strtok_r(backends, ",", &save); name && count < MAX_CONTENDERS;
         name = strtok_r(NULL, ",", &save)) {
        memset(&list[count], 0, sizeof list[count]);
        if (compile_backend(&list[count], name, g, inputs, n)) count++;
    }
    const tp_tensor *eager_output = NULL;
    for (int i = 0; i < count; i++)
        if (!strcmp(list[i].label, "eager")) eager_output = list[i].output;
    for (int i = 0; i < count; i++) {
        char path[4300];
        bool path_fits =
            snprintf(path, sizeof path, "%s/out-%s.npy", dir, list[i].label) < (int)sizeof path;
        if (helper_case && (!path_fits || tp_npy_save(path, list[i].output) != TP_OK))
            helper_case = false;
        check_output(&list[i], helper, helper_case, path, eager_output);
    }
    int backend_count = count;
    if ((bc->kind == BENCH_SGEMM || bc->kind == BENCH_GEMV) && baseline_openblas_available()) {
        memset(&list[count], 0, sizeof list[count]);
        snprintf(list[count].label, sizeof list[count].label, "openblas");
        list[count++].kind = CONTENDER_OPENBLAS;
    }
    if (bc->kind == BENCH_POINTWISE_C && bench_c_loops_runnable()) {
        memset(&list[count], 0, sizeof list[count]);
        snprintf(list[count].label, sizeof list[count].label, "c-loop");
        list[count++].kind = CONTENDER_C_LOOP;
    }
    if (helper_case) count = add_peers(list, count, reply);
    int rounds = o->rounds > MAX_ROUNDS ? MAX_ROUNDS : o->rounds;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < count; i++) {
            double m = measure_round(&list[i], bc, inputs, n, helper, o);
            if (m >= 0) list[i].medians[list[i].rounds++] = m;
            /* thread pools spin a while after their last job: let them go
             * to sleep before the next contender, or it shares the cores
             * with them. OpenBLAS's workers (the openblas baseline, NumPy)
             * yield for 2^28 cycles (about 0.1 s) before they sleep;
             * ONNX Runtime's, OpenMP's and ours for a few ms at most. */
            usleep(o->threads > 1 && list[i].kind != CONTENDER_BACKEND ? 150000 : 20000);
        }
    print_case(bc, list, count, triad, helper, o);
    for (int i = 0; i < backend_count; i++) {
        tp_tensor_release(list[i].output);
        tp_executable_destroy(list[i].exe);
        tp_graph_destroy(list[i].graph);
    }
    for (int i = 0; i < n; i++) tp_tensor_release(inputs[i]);
    free(inputs);
    tp_graph_destroy(g);
}

/* ---- main ---- */

static void print_usage(FILE *out) {
    fprintf(
        out,
        "usage: tp-bench [--backends a,b] [--reps N] [--rounds N] [--threads N] [--case NAME,...]\n"
        "                [--peers[=LIST]] [--python PATH] [--models DIR] [--json]\n"
        "                [--plot FILE.png] [--list]\n"
        "       tp-bench --help\n\n"
        "  --backends a,b   backends to measure (default stax,eager); BACKEND:MODE\n"
        "                   compiles with mode=MODE (stax:max-autotune)\n"
        "  --reps N         timed repetitions per contender per round (default 5)\n"
        "  --rounds N       interleaved rounds; figures are the median of the rounds'\n"
        "                   medians with their range (default 5)\n"
        "  --threads N      threads for stax, the C loops and every peer (default\n"
        "                   TP_NUM_THREADS, else the core count)\n"
        "  --case NAME,...  only these cases (see --list)\n"
        "  --peers[=LIST]   also time ONNX Runtime and PyTorch on each case (LIST: of\n"
        "                   numpy,onnxruntime,torch,torch.compile; default all), with the\n"
        "                   venv bench/peers-venv.sh makes\n"
        "  --python PATH    the helper's Python (default: the peers venv with --peers,\n"
        "                   else /usr/bin/python3 for NumPy)\n"
        "  --models DIR     where the model cases' ONNX files are (default\n"
        "                   $TP_BENCH_CACHE/models, ~/.cache/tensorplay-bench/models)\n"
        "  --json           one JSON object per case instead of the table\n"
        "  --plot FILE.png  draw stax's time over each peer's and baseline's, per case\n"
        "  --list           print the case names and exit\n"
        "  --kernels        instead: the matmul micro-kernel families vs OpenBLAS and\n"
        "                   softmax vs the triad bound (kernel_cases.c; cases sgemm-1024,\n"
        "                   sgemm-2048, sgemm-1000, mm-bt-1024, mm-m8, attn-scores,\n"
        "                   attn-values, softmax-4096; and stax's fused attention vs\n"
        "                   the fusion off: attention-encoder, attention-gpt2,\n"
        "                   fusion-encoder, fusion-gpt2-block)\n");
}

static bool parse_options(int argc, char **argv, options *o, int *exit_code) {
    static char models[4200], python[4200];
    *o = (options){.backends = "stax,eager", .reps = 5, .rounds = 5, .threads = 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--backends") && more)
            o->backends = argv[++i];
        else if (!strcmp(a, "--reps") && more)
            o->reps = atoi(argv[++i]);
        else if (!strcmp(a, "--rounds") && more)
            o->rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && more)
            o->threads = atoi(argv[++i]);
        else if (!strcmp(a, "--case") && more)
            o->only = argv[++i];
        else if (!strcmp(a, "--python") && more)
            o->python = argv[++i];
        else if (!strcmp(a, "--models") && more)
            o->models = argv[++i];
        else if (!strcmp(a, "--plot") && more)
            o->plot = argv[++i];
        else if (!strcmp(a, "--peers"))
            o->peers = "numpy,onnxruntime,torch,torch.compile";
        else if (!strncmp(a, "--peers=", 8))
            o->peers = a + 8;
        else if (!strcmp(a, "--json"))
            o->json = true;
        else if (!strcmp(a, "--kernels"))
            o->kernels = true;
        else if (!strcmp(a, "--list")) {
            for (int c = 0; c < bench_num_cases; c++) puts(bench_cases[c].name);
            puts("compile-latency");
            *exit_code = 0;
            return false;
        } else if (!strcmp(a, "--help")) {
            print_usage(stdout);
            *exit_code = 0;
            return false;
        } else {
            print_usage(stderr);
            *exit_code = 2;
            return false;
        }
    }
    if (o->reps < 1) o->reps = 1;
    if (o->reps > 256) o->reps = 256;
    if (o->rounds < 1) o->rounds = 1;
    if (o->threads > 0) { /* stax's pool reads TP_NUM_THREADS when it starts */
        char count[16];
        snprintf(count, sizeof count, "%d", o->threads);
        setenv("TP_NUM_THREADS", count, 1);
    } else {
        o->threads = default_threads();
    }
    if (!o->models) {
        const char *env = getenv("TP_BENCH_MODELS");
        snprintf(models, sizeof models, "%s/models", cache_dir());
        o->models = env && *env ? env : models;
    }
    if (!o->python) {
        const char *env = getenv("TP_BENCH_PYTHON");
        snprintf(python, sizeof python, "%s/venv/bin/python", cache_dir());
        o->python = env && *env ? env : o->peers || o->plot ? python : TP_BENCH_ORACLE_PYTHON;
    }
    return true;
}

static void print_triad(double triad, double triad_one, const options *o) {
    bool threaded = bench_c_loops_threaded();
    if (o->json) {
        if (triad > 0)
            printf("{\"case\":\"stream-triad\",\"threads\":%d,\"gb_per_s\":%.2f,"
                   "\"one_thread_gb_per_s\":%.2f,\"c_flags\":\"%s\"}\n",
                   threaded ? o->threads : 1, triad / 1e9, triad_one / 1e9, bench_c_loops_flags);
        else
            printf("{\"case\":\"stream-triad\",\"gb_per_s\":\"n/a\"}\n");
    } else if (triad > 0) {
        printf(
            "STREAM triad: %.2f GB/s on %d threads (%.2f GB/s on 1), 16M f32; C loops built with "
            "%s\n",
            triad / 1e9, threaded ? o->threads : 1, triad_one / 1e9, bench_c_loops_flags);
    } else {
        printf("STREAM triad and C loops: n/a (built with %s, for a CPU this one is not)\n",
               bench_c_loops_flags);
    }
}

int main(int argc, char **argv) {
    options o;
    int exit_code = 0;
    if (!parse_options(argc, argv, &o, &exit_code)) return exit_code;
    bench_openblas_choose_core(argv); /* may start tp-bench again: before any timing */
    bench_openblas_print_core(o.json);
    if (o.kernels)
        return bench_kernel_cases(o.only, o.reps, o.rounds, o.threads, o.json) |
               bench_attention_cases(o.only, o.models, o.reps, o.rounds, o.threads, o.json);
    signal(SIGPIPE, SIG_IGN); /* a helper that dies is reported, not fatal */
    bool c_loops = bench_c_loops_runnable();
    double triad = c_loops ? baseline_triad_bandwidth(o.reps, o.threads) : -1;
    double triad_one = c_loops ? baseline_triad_bandwidth(o.reps, 1) : -1;
    print_triad(triad, triad_one, &o);

    const char *script = getenv("TP_BENCH_PEERS_SCRIPT");
    helper_process helper;
    if (!helper_start(&helper, o.python, script && *script ? script : TP_BENCH_PEERS_SCRIPT,
                      o.threads)) {
        fprintf(stderr,
                "tp-bench: no NumPy oracle or peers: %s%s; outputs are checked against eager\n",
                helper.why, o.peers ? " (run bench/peers-venv.sh to make the peers' venv)" : "");
        if (o.peers || o.plot) return 1;
    } else if (!o.json) {
        printf("oracle and peers: %s (threads %d)\n", o.python, o.threads);
    }
    for (int c = 0; c < bench_num_cases; c++)
        if (bench_case_selected(o.only, bench_cases[c].name))
            run_case(&bench_cases[c], &helper, triad, &o);
    if (bench_case_selected(o.only, "compile-latency")) bench_compile_latency(o.json);
    int status = 0;
    if (o.plot) {
        char reply[1024] = "";
        if (!helper_ask(&helper, reply, sizeof reply, "plot %s", o.plot) ||
            strncmp(reply, "plotted", 7)) {
            fprintf(stderr, "tp-bench: --plot %s: %s\n", o.plot, reply[0] ? reply : helper.why);
            status = 1;
        } else if (!o.json) {
            printf("plot: %s\n", o.plot);
        }
    }
    helper_stop(&helper);
    remove_run_dir();
    if (any_output_wrong) {
        fprintf(stderr, "tp-bench: some outputs differ from their oracle (rows marked WRONG)\n");
        status = 1;
    }
    return status;
}
