/* The first call of a compiled two-layer transformer encoder (batch 8,
 * sequence 128, width 256, 4 heads, ffn 1024), written with the public C API
 * only, against what it costs at best: on a compiling backend its backend
 * compile plus two runs, on eager two runs. Prints milliseconds and the
 * ratios measured in the same process; asserts nothing (a benchmark, not a
 * test). Public headers only, so the same file also builds against an older
 * libtensorplay for a before/after comparison:
 *   build/tests/compile/bench_first_call [backend ...]   (default: eager stax)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorplay/compile.h"
#include "tensorplay/ops.h"
#include "tensorplay/profile.h"

enum { BATCH = 8, SEQ = 128, WIDTH = 256, HEADS = 4, FFN = 1024, LAYERS = 2 };

/* Per layer: q, k, v, o [WIDTH, WIDTH] + biases, ffn up [FFN, WIDTH] + bias,
 * down [WIDTH, FFN] + bias, two layer norms (weight, bias). */
enum { PER_LAYER = 16 };

typedef struct encoder_weights {
    tp_tensor *tensors[LAYERS * PER_LAYER];
} encoder_weights;

static void die(const char *what) {
    fprintf(stderr, "bench_first_call: %s: %s\n", what, tp_last_error());
    exit(1);
}

/* Deterministic small values (a linear congruential sequence). */
static tp_tensor *filled(int ndim, const int64_t *shape, float scale, uint32_t *seed) {
    tp_tensor *tensor = NULL;
    if (tp_tensor_create(TP_F32, ndim, shape, &tensor) != TP_OK) die("tensor");
    float *data = tp_tensor_data_mut(tensor);
    int64_t count = tp_tensor_numel(tensor);
    for (int64_t i = 0; i < count; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        data[i] = scale * ((float)(*seed >> 8) / (float)(1u << 24) - 0.5f);
    }
    return tensor;
}

static void make_weights(encoder_weights *weights) {
    uint32_t seed = 7;
    float projection = 1.0f / sqrtf((float)WIDTH);
    for (int layer = 0; layer < LAYERS; layer++) {
        tp_tensor **w = &weights->tensors[layer * PER_LAYER];
        for (int i = 0; i < 4; i++) { /* q, k, v, o */
            w[2 * i] = filled(2, (int64_t[]){WIDTH, WIDTH}, projection, &seed);
            w[2 * i + 1] = filled(1, (int64_t[]){WIDTH}, 0.1f, &seed);
        }
        w[8] = filled(2, (int64_t[]){FFN, WIDTH}, projection, &seed);
        w[9] = filled(1, (int64_t[]){FFN}, 0.1f, &seed);
        w[10] = filled(2, (int64_t[]){WIDTH, FFN}, 1.0f / sqrtf((float)FFN), &seed);
        w[11] = filled(1, (int64_t[]){WIDTH}, 0.1f, &seed);
        for (int i = 12; i < 16; i++) w[i] = filled(1, (int64_t[]){WIDTH}, 0.2f, &seed);
    }
}

/* [B, S, W] -> [B, H, S, W/H] */
static tp_tensor *split_heads(tp_ctx *ctx, tp_tensor *x) {
    tp_tensor *r = tp_reshape(ctx, x, (int64_t[]){BATCH, SEQ, HEADS, WIDTH / HEADS}, 4);
    return tp_permute(ctx, r, (int64_t[]){0, 2, 1, 3}, 4);
}

static tp_tensor *attention(tp_ctx *ctx, tp_tensor *x, tp_tensor *const *w) {
    tp_tensor *q = split_heads(ctx, tp_linear(ctx, x, w[0], w[1]));
    tp_tensor *k = split_heads(ctx, tp_linear(ctx, x, w[2], w[3]));
    tp_tensor *v = split_heads(ctx, tp_linear(ctx, x, w[4], w[5]));
    tp_tensor *scores = tp_matmul(ctx, q, tp_transpose(ctx, k, 2, 3));
    tp_tensor *scale = tp_scalar(ctx, TP_F32, 1.0 / sqrt((double)(WIDTH / HEADS)));
    tp_tensor *p = tp_softmax(ctx, tp_mul(ctx, scores, scale), -1);
    tp_tensor *heads = tp_permute(ctx, tp_matmul(ctx, p, v), (int64_t[]){0, 2, 1, 3}, 4);
    tp_tensor *merged = tp_reshape(ctx, heads, (int64_t[]){BATCH, SEQ, WIDTH}, 3);
    return tp_linear(ctx, merged, w[6], w[7]);
}

static void encoder_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                       int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs;
    const encoder_weights *weights = user_data;
    tp_tensor *h = args[0].tensor;
    for (int layer = 0; layer < LAYERS; layer++) {
        tp_tensor *const *w = &weights->tensors[layer * PER_LAYER];
        h = tp_layer_norm(ctx, tp_add(ctx, h, attention(ctx, h, w)), w[12], w[13], -1, 1e-5);
        tp_tensor *up = tp_gelu(ctx, tp_linear(ctx, h, w[8], w[9]), TP_GELU_NONE);
        h = tp_layer_norm(ctx, tp_add(ctx, h, tp_linear(ctx, up, w[10], w[11])), w[14], w[15], -1,
                          1e-5);
    }
    outputs[0] = h;
}

typedef struct phase_times {
    double capture_ms, passes_ms, partition_ms, backend_compile_ms;
} phase_times;

static void on_phase(const tp_profile_event *event, void *user) {
    phase_times *times = user;
    double ms = (double)(event->end_ns - event->start_ns) / 1e6;
    if (!strcmp(event->phase, "capture")) times->capture_ms += ms;
    if (!strcmp(event->phase, "pass")) times->passes_ms += ms;
    if (!strcmp(event->phase, "partition")) times->partition_ms += ms;
    if (!strcmp(event->phase, "backend_compile")) times->backend_compile_ms += ms;
}

/* This process's CPU time: on a machine shared with other work, a steadier
 * measure than the wall clock (the backends compile and run in-process). */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct call_time {
    double wall_ms, cpu_ms;
} call_time;

static call_time timed_call(tp_compiled *compiled, tp_tensor *x) {
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    double cpu_start = cpu_ms();
    uint64_t start = tp_profile_now_ns();
    if (tp_call(compiled, &arg, 1, &y) != TP_OK) die("tp_call");
    call_time time = {(double)(tp_profile_now_ns() - start) / 1e6, cpu_ms() - cpu_start};
    tp_tensor_release(y);
    return time;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(const char *backend, encoder_weights *weights, tp_tensor *x) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    options.name = "encoder";
    options.user_data = weights;
    tp_compiled *compiled = NULL;
    if (tp_compile(encoder_fn, &options, &compiled) != TP_OK) die("tp_compile");
    phase_times times = {0};
    tp_profile_set_handler(on_phase, &times);
    call_time first = timed_call(compiled, x);
    tp_profile_set_handler(NULL, NULL);
    enum { RUNS = 5 };
    double runs[RUNS], runs_cpu[RUNS];
    for (int i = 0; i < RUNS; i++) {
        tp_tensor_bump_version(x); /* a new call each time, not the memo of the last */
        call_time time = timed_call(compiled, x);
        runs[i] = time.wall_ms;
        runs_cpu[i] = time.cpu_ms;
    }
    qsort(runs, RUNS, sizeof *runs, compare_doubles);
    qsort(runs_cpu, RUNS, sizeof *runs_cpu, compare_doubles);
    double run = runs[RUNS / 2];
    double target = strcmp(backend, "eager") == 0 ? 2 * run : times.backend_compile_ms + 2 * run;
    printf("{\"backend\":\"%s\",\"first_call_ms\":%.1f,\"capture_ms\":%.1f,\"passes_ms\":%.1f,"
           "\"partition_ms\":%.1f,\"backend_compile_ms\":%.1f,\"run_median_ms\":%.1f,"
           "\"target_ms\":%.1f,\"first_over_target\":%.2f,\"first_call_cpu_ms\":%.1f,"
           "\"run_median_cpu_ms\":%.1f}\n",
           backend, first.wall_ms, times.capture_ms, times.passes_ms, times.partition_ms,
           times.backend_compile_ms, run, target, first.wall_ms / target, first.cpu_ms,
           runs_cpu[RUNS / 2]);
    tp_compiled_free(compiled);
}

int main(int argc, char **argv) {
    encoder_weights weights;
    make_weights(&weights);
    uint32_t seed = 11;
    tp_tensor *x = filled(3, (int64_t[]){BATCH, SEQ, WIDTH}, 2.0f, &seed);
    const char *defaults[] = {"eager", "stax"};
    int count = argc > 1 ? argc - 1 : 2;
    for (int i = 0; i < count; i++) bench(argc > 1 ? argv[i + 1] : defaults[i], &weights, x);
    tp_tensor_release(x);
    for (int i = 0; i < LAYERS * PER_LAYER; i++) tp_tensor_release(weights.tensors[i]);
    return 0;
}
