/* tp-bench --kernels, the attention cases (attention_cases.h): stax with its
 * fused attention step against stax with the fusion off (STAX_ATTENTION=off
 * when compiling), interleaved: every round times both in turn. Cases: the
 * attention sub-graph at the encoder's shapes (batch 8 x 4 heads, 128
 * tokens, head dim 64, q and k^T each scaled by sqrt(1/8), as PyTorch's
 * export), at GPT-2's (12 heads, a causal -inf mask), and the encoder and
 * gpt2-block models themselves (their ONNX files, as the model cases). The
 * fused output is compared with the unfused one (the tests compare both with
 * a double-precision reference). */
#define _GNU_SOURCE
#include "attention_cases.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "tensorplay/tensorplay.h"
#include "timing.h"

#define MAX_ROUNDS 64

/* The sub-graph of one attention layer as .tpir: q, k, v [b, h, n, d]. */
static tp_graph *subgraph(long long b, long long h, long long n, long long d, bool causal) {
    char text[4096];
    if (causal)
        snprintf(text, sizeof text,
                 "graph attention_gpt2(%%q: f32[%lld, %lld, %lld, %lld], %%k: f32[%lld, %lld, "
                 "%lld, %lld], %%v: f32[%lld, %lld, %lld, %lld], %%mask: f32[%lld, %lld]) {\n"
                 "  %%kt: f32[%lld, %lld, %lld, %lld] = transpose(%%k) {dim0=2, dim1=3}\n"
                 "  %%scores: f32[%lld, %lld, %lld, %lld] = matmul(%%q, %%kt)\n"
                 "  %%s: f32[] = constant() {value=[0.125]}\n"
                 "  %%scaled: f32[%lld, %lld, %lld, %lld] = mul(%%scores, %%s)\n"
                 "  %%masked: f32[%lld, %lld, %lld, %lld] = add(%%scaled, %%mask)\n"
                 "  %%p: f32[%lld, %lld, %lld, %lld] = softmax(%%masked) {axis=-1}\n"
                 "  %%ctx: f32[%lld, %lld, %lld, %lld] = matmul(%%p, %%v)\n"
                 "  return %%ctx\n}\n",
                 b, h, n, d, b, h, n, d, b, h, n, d, n, n, b, h, d, n, b, h, n, n, b, h, n, n, b, h,
                 n, n, b, h, n, n, b, h, n, d);
    else
        snprintf(text, sizeof text,
                 "graph attention_encoder(%%q: f32[%lld, %lld, %lld, %lld], %%k: f32[%lld, %lld, "
                 "%lld, %lld], %%v: f32[%lld, %lld, %lld, %lld]) {\n"
                 "  %%kt: f32[%lld, %lld, %lld, %lld] = transpose(%%k) {dim0=2, dim1=3}\n"
                 "  %%root: f32[1] = constant() {value=[0.35355338]}\n"
                 "  %%qs: f32[%lld, %lld, %lld, %lld] = mul(%%q, %%root)\n"
                 "  %%kts: f32[%lld, %lld, %lld, %lld] = mul(%%kt, %%root)\n"
                 "  %%scores: f32[%lld, %lld, %lld, %lld] = matmul(%%qs, %%kts)\n"
                 "  %%p: f32[%lld, %lld, %lld, %lld] = softmax(%%scores) {axis=-1}\n"
                 "  %%ctx: f32[%lld, %lld, %lld, %lld] = matmul(%%p, %%v)\n"
                 "  return %%ctx\n}\n",
                 b, h, n, d, b, h, n, d, b, h, n, d, b, h, d, n, b, h, n, d, b, h, d, n, b, h, n, n,
                 b, h, n, n, b, h, n, d);
    tp_graph *g = NULL;
    if (tp_graph_parse(text, strlen(text), "attention.tpir", &g) != TP_OK) return NULL;
    return g;
}

/* Deterministic inputs; an input named "mask" gets the causal -inf mask. */
static tp_tensor **subgraph_inputs(const tp_graph *g, int *count) {
    tp_tensor **inputs = bench_make_inputs(g, count);
    for (int i = 0; inputs && i < *count; i++) {
        if (strcmp(tp_graph_value_name(g, tp_graph_input(g, i)), "mask")) continue;
        int64_t n = tp_tensor_dim(inputs[i], 0);
        float *m = tp_tensor_data_mut(inputs[i]);
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < n; c++) m[r * n + c] = c > r ? -INFINITY : 0.0f;
    }
    return inputs;
}

typedef struct contender {
    const char *label;
    tp_executable *exe;
    tp_tensor *outputs[8];
    double wall[MAX_ROUNDS], cpu[MAX_ROUNDS]; /* round medians, seconds per call */
} contender;

static bool compile_variant(const tp_graph *g, tp_tensor **inputs, int count, int threads,
                            bool fused, contender *who) {
    memset(who, 0, sizeof *who);
    who->label = fused ? "fused" : "unfused";
    tp_backend *stax = NULL;
    char option[32];
    snprintf(option, sizeof option, "threads=%d", threads);
    const char *options[1] = {option};
    if (fused)
        unsetenv("STAX_ATTENTION");
    else
        setenv("STAX_ATTENTION", "off", 1);
    bool ok = tp_backend_lookup("stax", &stax) == TP_OK &&
              tp_backend_compile(stax, g, inputs, count, options, 1, &who->exe) == TP_OK;
    unsetenv("STAX_ATTENTION");
    if (!ok) fprintf(stderr, "tp-bench: %s: %s\n", who->label, tp_last_error());
    return ok;
}

static void time_round(contender *who, tp_tensor **inputs, int count, int reps, int round) {
    double wall[256], cpu[256];
    if (reps > 256) reps = 256;
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now(), c0 = bench_cpu_now();
        tp_executable_run(who->exe, inputs, count, who->outputs);
        if (r >= 0) wall[r] = bench_now() - t0, cpu[r] = bench_cpu_now() - c0;
    }
    who->wall[round] = bench_median(wall, reps);
    who->cpu[round] = bench_median(cpu, reps);
}

static int run_case(const char *name, tp_graph *g, tp_tensor **inputs, int count, int reps,
                    int rounds, int threads, int json) {
    contender who[2];
    if (!compile_variant(g, inputs, count, threads, true, &who[0])) return 1;
    if (!compile_variant(g, inputs, count, threads, false, &who[1])) {
        tp_executable_destroy(who[0].exe);
        return 1;
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < 2; i++) time_round(&who[i], inputs, count, reps, r);
    double ratio[MAX_ROUNDS], cpu_ratio[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        ratio[r] = who[0].wall[r] / who[1].wall[r];
        cpu_ratio[r] = who[0].cpu[r] / who[1].cpu[r];
    }
    double f[3], u[3], q[3], c[3];
    bench_range(who[0].wall, rounds, &f[0], &f[1], &f[2]);
    bench_range(who[1].wall, rounds, &u[0], &u[1], &u[2]);
    bench_range(ratio, rounds, &q[0], &q[1], &q[2]);
    bench_range(cpu_ratio, rounds, &c[0], &c[1], &c[2]);
    double diff = bench_max_relative_difference(who[0].outputs[0], who[1].outputs[0]);
    if (json)
        printf("{\"case\":\"%s\",\"threads\":%d,\"fused_ms\":%.4f,\"fused_min_ms\":%.4f,"
               "\"fused_max_ms\":%.4f,\"unfused_ms\":%.4f,\"unfused_min_ms\":%.4f,"
               "\"unfused_max_ms\":%.4f,\"fused_over_unfused\":%.3f,\"ratio_min\":%.3f,"
               "\"ratio_max\":%.3f,\"cpu_time_ratio\":%.3f,\"cpu_ratio_min\":%.3f,"
               "\"cpu_ratio_max\":%.3f,\"max_rel_diff\":%.2g}\n",
               name, threads, 1e3 * f[1], 1e3 * f[0], 1e3 * f[2], 1e3 * u[1], 1e3 * u[0],
               1e3 * u[2], q[1], q[0], q[2], c[1], c[0], c[2], diff);
    else
        printf("%s, %d threads, %d rounds x %d calls\n"
               "  fused    %8.3f ms (rounds %.3f-%.3f)\n"
               "  unfused  %8.3f ms (rounds %.3f-%.3f)\n"
               "  fused/unfused %.2f (rounds %.2f-%.2f), CPU time %.2f (%.2f-%.2f); output %s "
               "(%.1g)\n",
               name, threads, rounds, reps, 1e3 * f[1], 1e3 * f[0], 1e3 * f[2], 1e3 * u[1],
               1e3 * u[0], 1e3 * u[2], q[1], q[0], q[2], c[1], c[0], c[2],
               diff < 1e-4 ? "matches" : "DIFFERS", diff);
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 8; k++) tp_tensor_release(who[i].outputs[k]);
        tp_executable_destroy(who[i].exe);
    }
    return diff < 1e-4 ? 0 : 1;
}

static int run_subgraph(const char *name, bool causal, int reps, int rounds, int threads,
                        int json) {
    tp_graph *g = causal ? subgraph(1, 12, 128, 64, true) : subgraph(8, 4, 128, 64, false);
    if (!g) {
        fprintf(stderr, "tp-bench: %s: %s\n", name, tp_last_error());
        return 1;
    }
    int count = 0;
    tp_tensor **inputs = subgraph_inputs(g, &count);
    int status = run_case(name, g, inputs, count, reps, rounds, threads, json);
    for (int i = 0; i < count; i++) tp_tensor_release(inputs[i]);
    free(inputs);
    tp_graph_destroy(g);
    return status;
}

static int run_model(const char *name, const char *model, const char *models_dir, int reps,
                     int rounds, int threads, int json) {
    bench_case c = {.name = model, .kind = BENCH_MODEL};
    tp_graph *g = NULL;
    tp_tensor **inputs = NULL;
    int count = 0;
    char why[1024];
    if (!bench_load_model(&c, models_dir, &g, &inputs, &count, why, sizeof why)) {
        if (json)
            printf("{\"case\":\"%s\",\"skipped\":\"%s\"}\n", name, why);
        else
            printf("%s: skipped (%s)\n", name, why);
        return 0;
    }
    int status = run_case(name, g, inputs, count, reps, rounds, threads, json);
    for (int i = 0; i < count; i++) tp_tensor_release(inputs[i]);
    free(inputs);
    tp_graph_destroy(g);
    return status;
}

int bench_attention_cases(const char *only, const char *models_dir, int reps, int rounds,
                          int threads, int json) {
    if (rounds < 1) rounds = 1;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    if (threads < 1) threads = 1;
    int status = 0;
    if (bench_case_selected(only, "attention-encoder"))
        status |= run_subgraph("attention-encoder", false, reps, rounds, threads, json);
    if (bench_case_selected(only, "attention-gpt2"))
        status |= run_subgraph("attention-gpt2", true, reps, rounds, threads, json);
    if (bench_case_selected(only, "fusion-encoder"))
        status |= run_model("fusion-encoder", "encoder", models_dir, reps, rounds, threads, json);
    if (bench_case_selected(only, "fusion-gpt2-block"))
        status |=
            run_model("fusion-gpt2-block", "gpt2-block", models_dir, reps, rounds, threads, json);
    return status;
}
