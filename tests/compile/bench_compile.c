/* Times (1) a cache-hit tp_call with three small tensors against running the
 * same backend executable directly, on the fast path (same tensors) and on
 * the signature path (alternating tensor objects), and (2) capturing a
 * 50-node function, alone and as a whole miss (capture + passes + backend
 * compile). Prints nanoseconds per call; asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capture/capture.h"
#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/plugin.h"

/* "bench_add": an in-process backend whose run is a 4-element loop, so the
 * frontend's overhead is not lost in the executable's own time. */
static int32_t bench_init(const tp_plugin_host *host) {
    (void)host;
    return TP_PLUGIN_OK;
}
static int32_t bench_compile_graph(const tp_plugin_graph *graph,
                                   const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                   const tp_plugin_option *options, int32_t num_options,
                                   tp_plugin_executable **executable, char *error,
                                   size_t error_size) {
    (void)graph, (void)inputs, (void)num_inputs, (void)options, (void)num_options, (void)error,
        (void)error_size;
    *executable = (tp_plugin_executable *)(intptr_t)1;
    return TP_PLUGIN_OK;
}
static int32_t bench_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                         int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)executable, (void)num_inputs, (void)num_outputs;
    float *out = outputs[0].data;
    const float *x = inputs[0].data, *w = inputs[1].data, *b = inputs[2].data;
    for (size_t i = 0; i < outputs[0].nbytes / sizeof(float); i++) out[i] = x[i] + w[i] * b[i];
    return TP_PLUGIN_OK;
}
static void bench_release(tp_plugin_executable *executable) {
    (void)executable;
}
static const tp_plugin_backend bench_backend = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 1, /* revision-1 table */
    .name = "bench_add",
    .version = "1",
    .description = "benchmark backend: x + w * b",
    .init = bench_init,
    .compile = bench_compile_graph,
    .run = bench_run,
    .release = bench_release,
};

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "bench_compile: %s: %s\n", what, tp_last_error());
    exit(1);
}

/* y = x + w * b */
static void small_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, tp_mul(ctx, args[1].tensor, args[2].tensor));
}

/* 50 ops on x. */
static void chain_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor, *h = x;
    for (int i = 0; i < 25; i++) {
        h = (i % 3 == 0) ? tp_tanh(ctx, h) : (i % 3 == 1) ? tp_relu(ctx, h) : tp_neg(ctx, h);
        h = tp_add(ctx, h, x);
    }
    outputs[0] = h;
}

static tp_tensor *ramp(int64_t n) {
    tp_tensor *tensor;
    if (tp_tensor_create(TP_F32, 1, &n, &tensor) != TP_OK) die("tensor");
    tp_tensor_fill(tensor, 0.5);
    return tensor;
}

static tp_executable *direct_executable(tp_backend *backend, tp_tensor *const *inputs) {
    tp_graph *graph;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x, w, b, product, sum;
    if (tp_graph_create("direct", &graph) != TP_OK ||
        tp_graph_add_input(graph, "x", &type, &x) != TP_OK ||
        tp_graph_add_input(graph, "w", &type, &w) != TP_OK ||
        tp_graph_add_input(graph, "b", &type, &b) != TP_OK ||
        tp_graph_add_node(graph, "mul", (tp_value_id[]){w, b}, 2, NULL, NULL, &product) != TP_OK ||
        tp_graph_add_node(graph, "add", (tp_value_id[]){x, product}, 2, NULL, NULL, &sum) !=
            TP_OK ||
        tp_graph_set_outputs(graph, &sum, 1) != TP_OK)
        die("graph");
    tp_executable *executable;
    if (tp_backend_compile(backend, graph, inputs, 3, NULL, 0, &executable) != TP_OK)
        die("backend compile");
    tp_graph_destroy(graph);
    return executable;
}

int main(int argc, char **argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 200000;
    const char *backend_name =
        getenv("TP_BENCH_BACKEND") ? getenv("TP_BENCH_BACKEND") : "bench_add";
    if (tp_backend_register(&bench_backend, "debug") != TP_OK) die("register");
    tp_backend *backend;
    if (tp_backend_lookup(backend_name, &backend) != TP_OK) die("backend");
    tp_tensor *set_a[3] = {ramp(4), ramp(4), ramp(4)}, *set_b[3] = {ramp(4), ramp(4), ramp(4)};

    tp_executable *executable = direct_executable(backend, set_a);
    double start = now_ns();
    for (int i = 0; i < iterations; i++) {
        tp_tensor *out = NULL;
        if (tp_executable_run(executable, set_a, 3, &out) != TP_OK) die("run");
        tp_tensor_release(out);
    }
    double direct = (now_ns() - start) / iterations;

    static const char *const params[] = {"x", "w", "b"};
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend_name;
    options.name = "small";
    options.param_names = params;
    options.num_params = 3;
    tp_compiled *compiled;
    if (tp_compile(small_fn, &options, &compiled) != TP_OK) die("compile");
    tp_arg args_a[3], args_b[3];
    for (int i = 0; i < 3; i++) args_a[i] = tp_arg_tensor(set_a[i]);
    for (int i = 0; i < 3; i++) args_b[i] = tp_arg_tensor(set_b[i]);
    tp_tensor *out = NULL;
    if (tp_call(compiled, args_a, 3, &out) != TP_OK) die("first call");
    tp_tensor_release(out);
    start = now_ns();
    for (int i = 0; i < iterations; i++) {
        if (tp_call(compiled, args_a, 3, &out) != TP_OK) die("call");
        tp_tensor_release(out);
    }
    double fast = (now_ns() - start) / iterations;
    start = now_ns();
    for (int i = 0; i < iterations; i++) {
        if (tp_call(compiled, (i & 1) ? args_b : args_a, 3, &out) != TP_OK) die("call");
        tp_tensor_release(out);
    }
    double signature = (now_ns() - start) / iterations;

    printf("backend %s, 3 inputs f32[4], %d iterations\n", backend_name, iterations);
    printf("  executable run directly        %8.1f ns/call\n", direct);
    printf("  tp_call, fast path (hit)       %8.1f ns/call  overhead %6.1f ns\n", fast,
           fast - direct);
    printf("  tp_call, signature path (hit)  %8.1f ns/call  overhead %6.1f ns\n", signature,
           signature - direct);

    static const char *const chain_params[] = {"x"};
    tp_tensor *x = ramp(16);
    tp_arg chain_args[] = {tp_arg_tensor(x)};
    int captures = 200;
    start = now_ns();
    for (int i = 0; i < captures; i++) {
        tp_capture_result result;
        if (tp_capture_run(chain_fn, NULL, "chain", chain_params, chain_args, 1, 1, &result) !=
            TP_OK)
            die("capture");
        if (i == 0)
            printf("  50-node function: %d graph values\n", tp_graph_num_values(result.graph));
        tp_capture_result_clear(&result);
    }
    double capture = (now_ns() - start) / captures;
    tp_config_set_bool("force_disable_caches", true);
    tp_compile_options chain_options = TP_COMPILE_OPTIONS_INIT;
    chain_options.backend = "eager";
    chain_options.param_names = chain_params;
    chain_options.num_params = 1;
    tp_compiled *chain;
    if (tp_compile(chain_fn, &chain_options, &chain) != TP_OK) die("compile chain");
    start = now_ns();
    for (int i = 0; i < captures; i++) {
        if (tp_call(chain, chain_args, 1, &out) != TP_OK) die("chain call");
        tp_tensor_release(out);
    }
    double miss = (now_ns() - start) / captures;
    printf("  capture alone                  %8.1f us\n", capture / 1000);
    printf("  whole miss (capture+passes+compile+run) %8.1f us\n", miss / 1000);

    tp_compiled_free(chain);
    tp_compiled_free(compiled);
    tp_executable_destroy(executable);
    tp_tensor_release(x);
    for (int i = 0; i < 3; i++) tp_tensor_release(set_a[i]), tp_tensor_release(set_b[i]);
    return 0;
}
