/* The cuda backend on a real GPU (tests/gpu/run-cuda.sh runs it):
 *
 *   cuda_gpu conformance   every op in every accepted dtype, a few shapes
 *                          that cross tile and block edges, and random
 *                          fusion graphs: cuda's outputs against the
 *                          reference interpreter (tp_graph_run) on the same
 *                          random inputs; exits 1 on any mismatch;
 *   cuda_gpu bench         a+b on 256M f32 against cuMemcpyDtoD bandwidth
 *                          measured in the same run, sgemm 4096^3, a fused
 *                          pointwise chain on 64M f32; kernel time only
 *                          (inputs stay on the device between iterations).
 *
 * Talks to cuda.so directly through the plugin table (like tests/cuda).
 * Output: one "name value unit" line per measurement / a summary line. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../passes/random_graph.h"
#include "../../plugins/cuda/cuda_testing.h"
#include "registry/registry_internal.h"
#include "tensor/tensor_internal.h"
#include "tensorplay/graph.h"
#include "tensorplay/passes.h"

static const tp_plugin_backend *table;
static void *context;
static const tp_cuda_testing_extension *testing; /* bench_kernels, bench_copy */
static tp_plugin_host host;

static int load_plugin(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/cuda.so", TP_GPU_BUILD_DIR);
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) return fprintf(stderr, "cannot load %s: %s\n", path, dlerror()), 0;
    tp_plugin_entry2_fn entry = (tp_plugin_entry2_fn)dlsym(library, "tp_cuda_backend");
    table = entry ? entry(TP_BACKEND_CONTRACT_VERSION) : NULL;
    tp_host_table_init(&host, NULL);
    tp_plugin_probe_info info = {.struct_size = sizeof info, .priority = 300};
    if (!table || table->calls.probe(&host, &info) != TP_PLUGIN_OK) {
        const char *why = table ? tp_host_take_error() : "no entry";
        return fprintf(stderr, "cuda backend unavailable: %s\n", why ? why : "?"), 0;
    }
    if (table->calls.init(&host, &context) != TP_PLUGIN_OK) return 0;
    testing = (const tp_cuda_testing_extension *)table->calls.get_extension(
        context, TP_CUDA_TESTING_EXTENSION);
    if (!testing) return fprintf(stderr, "cuda.so has no cuda.testing extension\n"), 0;
    return 1;
}

/* Compiles for the device; NULL with the error printed. */
static tp_plugin_executable *compile(tp_graph *graph) {
    tp_graph_view *view;
    /* cuda claims no composite: the core's decompose pass, as tp_compile runs it */
    tp_pass_options passes = TP_PASS_OPTIONS_INIT;
    tp_graph *lowered = NULL;
    bool changed = false;
    if (tp_pass_run(TP_PASS_DECOMPOSE, graph, &passes, &lowered, &changed) != TP_OK) return NULL;
    if (tp_graph_view_create(lowered, &view) != TP_OK) return tp_graph_destroy(lowered), NULL;
    const tp_plugin_graph *g = tp_graph_view_get(view);
    tp_plugin_tensor_meta metas[64] = {{0}};
    for (int i = 0; i < g->num_inputs && i < 64; i++) {
        const tp_plugin_type *type = &g->values[g->inputs[i]].type;
        metas[i].dtype = type->dtype;
        metas[i].ndim = type->ndim;
        memcpy(metas[i].dims, type->dims, sizeof metas[i].dims);
    }
    tp_plugin_executable *exe = NULL;
    if (table->calls.compile(context, g, metas, g->num_inputs, NULL, 0, &exe) != TP_PLUGIN_OK) {
        const char *error = tp_host_take_error();
        fprintf(stderr, "compile '%s' failed: %s\n", tp_graph_name(graph), error ? error : "?");
    }
    tp_graph_view_destroy(view);
    tp_graph_destroy(lowered);
    return exe;
}

static void fill_buffer(tp_plugin_buffer *buffer, tp_tensor *tensor) {
    memset(buffer, 0, sizeof *buffer);
    buffer->data = tensor->data;
    buffer->nbytes = tensor->nbytes;
    buffer->dtype = tensor->dtype;
    buffer->ndim = tensor->ndim;
    memcpy(buffer->dims, tensor->shape, sizeof(int64_t) * (size_t)tensor->ndim);
}

static uint64_t rng_state = 88172645463325252ull;
static double uniform(double low, double high) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return low + (high - low) * ((double)(rng_state >> 11) / 9007199254740992.0);
}

static tp_tensor *random_input(const tp_type *type, bool positive) {
    tp_tensor *tensor;
    if (tp_tensor_create(type->dtype, type->ndim, type->dims, &tensor) != TP_OK) return NULL;
    for (int64_t i = 0; i < tensor->numel; i++) {
        double v = type->dtype == TP_BOOL ? (uniform(0, 1) < 0.5)
                   : tp_dtype_is_float(type->dtype)
                       ? (positive ? uniform(0.25, 2) : uniform(-2, 2))
                       : floor(positive ? uniform(1, 6) : uniform(-5, 6));
        switch (type->dtype) {
        case TP_F32:
            ((float *)tensor->data)[i] = (float)v;
            break;
        case TP_F64:
            ((double *)tensor->data)[i] = v;
            break;
        case TP_I32:
            ((int32_t *)tensor->data)[i] = (int32_t)v;
            break;
        case TP_I64:
            ((int64_t *)tensor->data)[i] = (int64_t)v;
            break;
        default:
            ((uint8_t *)tensor->data)[i] = (uint8_t)v;
            break;
        }
    }
    return tensor;
}

static double element(const tp_tensor *t, int64_t i) {
    switch (t->dtype) {
    case TP_F32:
        return ((const float *)t->data)[i];
    case TP_F64:
        return ((const double *)t->data)[i];
    case TP_I32:
        return ((const int32_t *)t->data)[i];
    case TP_I64:
        return (double)((const int64_t *)t->data)[i];
    default:
        return ((const uint8_t *)t->data)[i];
    }
}

/* cuda vs the reference on random inputs; returns 1 when they agree. */
static int conform(tp_graph *graph, bool positive) {
    int n_in = tp_graph_num_inputs(graph), n_out = tp_graph_num_outputs(graph);
    tp_tensor *inputs[64] = {0}, *expected[64] = {0}, *got[64] = {0};
    for (int i = 0; i < n_in; i++)
        inputs[i] = random_input(tp_graph_value_type(graph, tp_graph_input(graph, i)), positive);
    int ok = tp_graph_run(graph, inputs, n_in, expected) == TP_OK;
    if (!ok)
        fprintf(stderr, "reference run of '%s' failed: %s\n", tp_graph_name(graph),
                tp_last_error());
    tp_plugin_executable *exe = ok ? compile(graph) : NULL;
    ok = exe != NULL;
    tp_plugin_buffer in_buffers[64], out_buffers[64];
    for (int i = 0; ok && i < n_in; i++) fill_buffer(&in_buffers[i], inputs[i]);
    for (int o = 0; ok && o < n_out; o++) {
        const tp_tensor *e = expected[o];
        ok = tp_tensor_create(e->dtype, e->ndim, e->shape, &got[o]) == TP_OK;
        if (ok) fill_buffer(&out_buffers[o], got[o]);
    }
    if (ok &&
        table->calls.run(context, exe, in_buffers, n_in, out_buffers, n_out) != TP_PLUGIN_OK) {
        fprintf(stderr, "run '%s' failed: %s\n", tp_graph_name(graph), tp_host_take_error());
        ok = 0;
    }
    for (int o = 0; ok && o < n_out; o++) {
        const tp_tensor *e = expected[o], *g = got[o];
        double tolerance = e->dtype == TP_F32 ? 2e-4 : e->dtype == TP_F64 ? 1e-9 : 0;
        for (int64_t i = 0; ok && i < e->numel; i++) {
            double want = element(e, i), have = element(g, i);
            bool same = (isnan(want) && isnan(have)) || want == have ||
                        fabs(want - have) <= tolerance * (1 + fabs(want));
            if (!same) {
                char *text = NULL;
                tp_graph_print(graph, &text);
                fprintf(stderr, "MISMATCH output %d element %lld: cuda %.9g, reference %.9g\n%s\n",
                        o, (long long)i, have, want, text ? text : "");
                tp_free(text);
                ok = 0;
            }
        }
    }
    if (exe) table->calls.release(context, exe);
    for (int i = 0; i < 64; i++) {
        tp_tensor_release(inputs[i]);
        tp_tensor_release(expected[i]);
        tp_tensor_release(got[i]);
    }
    return ok;
}

static int passed, failed;

static void check_text(const char *text, bool positive) {
    tp_graph *graph;
    if (tp_graph_parse(text, strlen(text), NULL, &graph) != TP_OK) {
        fprintf(stderr, "bad graph text: %s\n%s\n", tp_last_error(), text);
        failed++;
        return;
    }
    conform(graph, positive) ? passed++ : failed++;
    tp_graph_destroy(graph);
}

static const char *const dtype_names[] = {"f32", "f64", "i32", "i64", "bool"};

static void check_op(const char *op, int arity, const char *attrs, const char *shape,
                     const char *result_shape, bool positive) {
    for (int t = 0; t < 5; t++) {
        char text[2048], params[512] = "", args[128] = "";
        for (int k = 0; k < arity; k++) {
            const char *dtype = arity == 3 && k == 0 ? "bool" : dtype_names[t];
            snprintf(params + strlen(params), sizeof params - strlen(params), "%s%%x%d: %s[%s]",
                     k ? ", " : "", k, dtype, k == 1 && arity == 2 ? "129" : shape);
            snprintf(args + strlen(args), sizeof args - strlen(args), "%s%%x%d", k ? ", " : "", k);
        }
        /* the result type is taken from the op's rule: build through the API instead */
        tp_graph *graph;
        snprintf(text, sizeof text, "graph %s_%s(%s) {\n  return %%x0\n}\n", op, dtype_names[t],
                 params);
        if (tp_graph_parse(text, strlen(text), NULL, &graph) != TP_OK) continue;
        tp_value_id ins[3], y;
        for (int k = 0; k < arity; k++) ins[k] = tp_graph_input(graph, k);
        tp_graph *built = graph;
        tp_attrs a = TP_ATTRS_INIT;
        if (attrs && !strcmp(attrs, "axis1")) a.axis = 1;
        if (attrs && !strcmp(attrs, "axes1")) a.naxes = 1, a.axes[0] = 1;
        if (attrs && !strcmp(attrs, "axes0")) a.naxes = 1, a.axes[0] = 0;
        if (tp_graph_add_node(built, op, ins, arity, &a, "y", &y) == TP_OK &&
            tp_graph_set_outputs(built, &y, 1) == TP_OK)
            conform(built, positive) ? passed++ : failed++;
        tp_graph_destroy(built);
        (void)result_shape;
    }
}

static int run_conformance(void) {
    static const char *const unary[] = {"neg",  "abs",     "exp",        "sin", "cos",
                                        "tanh", "sigmoid", "relu",       "erf", "floor",
                                        "ceil", "sign",    "logical_not"};
    static const char *const positive_unary[] = {"log", "sqrt", "rsqrt"};
    static const char *const binary[] = {"add", "sub",         "mul",       "maximum", "minimum",
                                         "lt",  "le",          "gt",        "ge",      "eq",
                                         "ne",  "logical_and", "logical_or"};
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
        check_op(unary[i], 1, NULL, "37, 129", NULL, false);
    for (size_t i = 0; i < 3; i++) check_op(positive_unary[i], 1, NULL, "37, 129", NULL, true);
    for (size_t i = 0; i < sizeof binary / sizeof *binary; i++)
        check_op(binary[i], 2, NULL, "37, 129", NULL, false);
    check_op("div", 2, NULL, "37, 129", NULL, true);
    check_op("pow", 2, NULL, "37, 129", NULL, true);
    check_op("where", 3, NULL, "37, 129", NULL, false);
    static const char *const reductions[] = {"sum", "mean", "max", "min"};
    for (int r = 0; r < 4; r++) {
        check_op(reductions[r], 1, "axes1", "33, 1000", NULL, false);
        check_op(reductions[r], 1, "axes0", "1000, 33", NULL, false);
        check_op(reductions[r], 1, "axes0", "5000, 1030", NULL, false); /* column kernel */
        check_op(reductions[r], 1, NULL, "300, 700", NULL, false);      /* everything */
    }
    check_op("argmax", 1, "axis1", "33, 1000", NULL, false);
    check_op("softmax", 1, "axis1", "33, 1000", NULL, false);
    check_op("log_softmax", 1, "axis1", "33, 1000", NULL, false);
    check_op("gelu", 1, NULL, "37, 129", NULL, false);
    check_op("silu", 1, NULL, "37, 129", NULL, false);
    static const char *const graphs[] = {
        "graph mm(%a: f32[70, 130], %b: f32[130, 90]) {\n  %c: f32[70, 90] = matmul(%a, %b)\n  "
        "return %c\n}\n",
        "graph mm64(%a: f64[3, 70, 130], %b: f64[130, 90]) {\n  %c: f64[3, 70, 90] = matmul(%a, "
        "%b)\n  return %c\n}\n",
        "graph mmi(%a: i32[70, 33], %b: i64[33]) {\n  %c: i64[70] = matmul(%a, %b)\n  return "
        "%c\n}\n",
        "graph big(%a: f32[2048, 64], %b: f32[64, 2048], %bias: f32[2048]) {\n"
        "  %c: f32[2048, 2048] = matmul(%a, %b)\n  %d: f32[2048, 2048] = add(%c, %bias)\n"
        "  %r: f32[2048, 2048] = relu(%d)\n  return %r\n}\n",
        "graph lin(%x: f32[50, 64], %w: f32[40, 64], %b: f32[40]) {\n"
        "  %y: f32[50, 40] = linear(%x, %w, %b)\n  return %y\n}\n",
        "graph ln(%x: f32[20, 300], %w: f32[300], %b: f32[300]) {\n"
        "  %y: f32[20, 300] = layer_norm(%x, %w, %b) {axis=-1, eps=1e-05}\n  return %y\n}\n",
        "graph views(%x: f32[6, 8]) {\n  %t: f32[8, 6] = transpose(%x) {dim0=0, dim1=1}\n"
        "  %s: f32[8, 3] = slice(%t) {axis=1, start=1, stop=6, step=2}\n"
        "  %r: f32[24] = reshape(%s) {shape=[24]}\n  %c: f32[48] = concat(%r, %r) {axis=0}\n"
        "  %e: f32[2, 48] = expand(%c) {shape=[2, 48]}\n  return %e, %t\n}\n",
        "graph creation() {\n  %a: i64[5] = arange() {start=2, stop=12, step=2, dtype=i64}\n"
        "  %f: i64[5] = full() {shape=[5], dtype=i64, value=7}\n  %s: i64[5] = add(%a, %f)\n"
        "  return %s, %f\n}\n",
    };
    for (size_t i = 0; i < sizeof graphs / sizeof *graphs; i++) check_text(graphs[i], false);
    for (uint64_t seed = 1; seed <= 60; seed++) {
        tp_graph *graph;
        if (random_graph(seed, 14, &graph) != TP_OK) continue;
        conform(graph, false) ? passed++ : failed++;
        tp_graph_destroy(graph);
    }
    printf("conformance passed %d failed %d\n", passed, failed);
    return failed ? 1 : 0;
}

/* ---- bench ---- */

static tp_plugin_executable *prepare(const char *text, tp_tensor **inputs, int *n_in) {
    tp_graph *graph;
    if (tp_graph_parse(text, strlen(text), NULL, &graph) != TP_OK) return NULL;
    tp_plugin_executable *exe = compile(graph);
    *n_in = tp_graph_num_inputs(graph);
    tp_plugin_buffer in_buffers[8], out_buffers[1];
    tp_tensor *out = NULL;
    const tp_type *out_type = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    for (int i = 0; i < *n_in; i++) {
        inputs[i] = random_input(tp_graph_value_type(graph, tp_graph_input(graph, i)), false);
        fill_buffer(&in_buffers[i], inputs[i]);
    }
    tp_tensor_create(out_type->dtype, out_type->ndim, out_type->dims, &out);
    fill_buffer(&out_buffers[0], out);
    if (exe && table->calls.run(context, exe, in_buffers, *n_in, out_buffers, 1) != TP_PLUGIN_OK) {
        fprintf(stderr, "run failed: %s\n", tp_host_take_error());
        table->calls.release(context, exe);
        exe = NULL;
    }
    tp_tensor_release(out);
    tp_graph_destroy(graph);
    return exe;
}

static int run_bench(void) {
    tp_tensor *inputs[8] = {0};
    int n_in = 0;
    double copy = testing->bench_copy((size_t)1 << 30, 20);
    printf("device_copy_bandwidth %.1f GB/s\n", copy);
    tp_plugin_executable *exe = prepare("graph add(%a: f32[268435456], %b: f32[268435456]) {\n"
                                        "  %c: f32[268435456] = add(%a, %b)\n  return %c\n}\n",
                                        inputs, &n_in);
    if (exe) {
        double ms = testing->bench_kernels(exe, 20);
        double bandwidth = 3.0 * 268435456.0 * 4.0 / (ms * 1e6);
        printf("add_256M_f32 %.3f ms\nadd_256M_f32_bandwidth %.1f GB/s\n", ms, bandwidth);
        printf("add_vs_copy_bandwidth %.3f ratio\n", bandwidth / copy);
        table->calls.release(context, exe);
    }
    for (int i = 0; i < n_in; i++) tp_tensor_release(inputs[i]), inputs[i] = NULL;
    exe = prepare("graph sgemm(%a: f32[4096, 4096], %b: f32[4096, 4096]) {\n"
                  "  %c: f32[4096, 4096] = matmul(%a, %b)\n  return %c\n}\n",
                  inputs, &n_in);
    if (exe) {
        double ms = testing->bench_kernels(exe, 10);
        printf("sgemm_4096 %.3f ms\nsgemm_4096_tflops %.2f TFLOP/s\n", ms,
               2.0 * 4096.0 * 4096.0 * 4096.0 / (ms * 1e9));
        table->calls.release(context, exe);
    }
    for (int i = 0; i < n_in; i++) tp_tensor_release(inputs[i]), inputs[i] = NULL;
    exe = prepare("graph chain(%x: f32[67108864], %b: f32[67108864]) {\n"
                  "  %k: f32[] = full() {shape=[], dtype=f32, value=1.5}\n"
                  "  %m: f32[67108864] = mul(%x, %k)\n  %a: f32[67108864] = add(%m, %b)\n"
                  "  %t: f32[67108864] = tanh(%a)\n  %s: f32[67108864] = sigmoid(%x)\n"
                  "  %y: f32[67108864] = mul(%t, %s)\n  return %y\n}\n",
                  inputs, &n_in);
    if (exe) {
        printf("fused_chain_64M_f32 %.3f ms\n", testing->bench_kernels(exe, 20));
        table->calls.release(context, exe);
    }
    for (int i = 0; i < n_in; i++) tp_tensor_release(inputs[i]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "conformance") && strcmp(argv[1], "bench"))) {
        fprintf(stderr, "usage: cuda_gpu conformance|bench\n");
        return 2;
    }
    if (!load_plugin()) return 1;
    return strcmp(argv[1], "bench") == 0 ? run_bench() : run_conformance();
}
