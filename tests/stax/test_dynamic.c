/* stax's dynamic shapes through the plugin table: one compile of a graph
 * with a symbolic dimension serves every size bound to the symbol (the sizes
 * are run-time arguments of the kernels), compared with eager at each size;
 * and run refuses buffers whose static dims disagree with the graph. */
#include <dlfcn.h>

#include "stax_harness.h"

static void host_parallel_for(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *ctx) {
    /* two chunks, to exercise split ranges */
    (void)grain;
    fn(ctx, 0, n / 2);
    fn(ctx, n / 2, n);
}
static int32_t host_threads(void) {
    return 2;
}

static void open_plugin(stax_direct *d) {
    stax_open_direct(d, host_parallel_for, host_threads);
}

/* The same graph as text (for eager) and as a hand-made view (for the table). */
static const char graph_text[] = "graph dynview(%x: f32[n, 8], %b: f32[8], %w: f32[8, 3]) {\n"
                                 "  %y: f32[n, 8] = add(%x, %b)\n"
                                 "  %z: f32[n, 8] = tanh(%y)\n"
                                 "  %s: f32[n] = sum(%z) {axes=[1], keepdim=false}\n"
                                 "  %m: f32[n, 3] = matmul(%z, %w)\n"
                                 "  %r: f32[n, 3] = relu(%m)\n"
                                 "  %e: f32[n, 8] = softmax(%x) {axis=-1}\n"
                                 "  return %z, %s, %r, %e\n"
                                 "}\n";

enum { NUM_OUT = 4 };

static int32_t compile_view(stax_direct *d, int64_t n, tp_plugin_executable **exe, char *error,
                            size_t size) {
    static const int32_t add_ops[2] = {0, 1}, tanh_ops[1] = {3}, sum_ops[1] = {4},
                         mm_ops[2] = {4, 2}, relu_ops[1] = {6}, sm_ops[1] = {0};
    static const int32_t inputs[3] = {0, 1, 2}, outputs[NUM_OUT] = {4, 5, 7, 8};
    static const int64_t axes[1] = {1};
    static const tp_plugin_attr sum_attrs[2] = {
        {.name = "axes", .type = TP_PLUGIN_ATTR_INTS, .count = 1, .ints = axes},
        {.name = "keepdim", .type = TP_PLUGIN_ATTR_BOOL, .i = 0}};
    static const tp_plugin_attr sm_attrs[1] = {
        {.name = "axis", .type = TP_PLUGIN_ATTR_INT, .i = -1}};
    static const char *const symbols[1] = {"n"};
#define T(nd, ...)                                                                                 \
    {                                                                                              \
        .dtype = TP_PLUGIN_F32, .ndim = nd, .dims = { __VA_ARGS__ }                                \
    }
    tp_plugin_value values[9] = {
        {.name = "x", .type = T(2, -1, 8), .fusion_region = -1},
        {.name = "b", .type = T(1, 8), .fusion_region = -1},
        {.name = "w", .type = T(2, 8, 3), .fusion_region = -1},
        {.name = "y", .op = "add", .type = T(2, -1, 8), .num_operands = 2, .operands = add_ops},
        {.name = "z", .op = "tanh", .type = T(2, -1, 8), .num_operands = 1, .operands = tanh_ops},
        {.name = "s",
         .op = "sum",
         .type = T(1, -1),
         .num_operands = 1,
         .operands = sum_ops,
         .num_attrs = 2,
         .attrs = sum_attrs},
        {.name = "m", .op = "matmul", .type = T(2, -1, 3), .num_operands = 2, .operands = mm_ops},
        {.name = "r", .op = "relu", .type = T(2, -1, 3), .num_operands = 1, .operands = relu_ops},
        {.name = "e",
         .op = "softmax",
         .type = T(2, -1, 8),
         .num_operands = 1,
         .operands = sm_ops,
         .num_attrs = 1,
         .attrs = sm_attrs},
    };
#undef T
    for (int v = 3; v < 9; v++) values[v].fusion_region = -1;
    tp_plugin_node nodes[9];
    stax_direct_fill_nodes(values, 9, nodes);
    tp_plugin_graph graph = {.struct_size = sizeof graph,
                             .name = "dynview",
                             .num_values = 9,
                             .values = values,
                             .num_inputs = 3,
                             .inputs = inputs,
                             .num_outputs = NUM_OUT,
                             .outputs = outputs,
                             .num_symbols = 1,
                             .symbols = symbols,
                             .nodes = nodes};
    tp_plugin_tensor_meta meta[3] = {{.dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {n, 8}},
                                     {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {8}},
                                     {.dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {8, 3}}};
    return stax_direct_compile(d, &graph, meta, 3, exe, error, size);
}

static tp_plugin_buffer buffer_of(tp_tensor *t) {
    tp_plugin_buffer b = {.data = (void *)tp_tensor_data(t),
                          .nbytes = (size_t)tp_tensor_numel(t) * sizeof(float),
                          .dtype = TP_PLUGIN_F32,
                          .ndim = tp_tensor_ndim(t)};
    for (int d = 0; d < b.ndim; d++) b.dims[d] = tp_tensor_dim(t, d);
    return b;
}

START_TEST(one_compile_serves_every_size_of_the_symbol) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    tp_status status = tp_graph_parse(graph_text, sizeof graph_text - 1, "dynview.tpir", &g);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    stax_direct d;
    open_plugin(&d);
    char error[512] = "";
    tp_plugin_executable *exe = NULL;
    ck_assert_msg(compile_view(&d, 5, &exe, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
    static const int64_t ns[] = {1, 5, 1023, 0, 7};
    for (int i = 0; i < 5; i++) {
        int64_t xs[2] = {ns[i], 8}, bs[1] = {8}, ws[2] = {8, 3};
        tp_tensor *in[3] = {stax_test_random(TP_F32, 2, xs, 1 + (uint64_t)i),
                            stax_test_random(TP_F32, 1, bs, 2), stax_test_random(TP_F32, 2, ws, 3)};
        tp_tensor *want[NUM_OUT] = {0};
        status = stax_test_run("eager", g, in, 3, NULL, 0, want);
        ck_assert_msg(status == TP_OK, "eager: %s", tp_last_error());
        tp_plugin_buffer inputs[3], outputs[NUM_OUT];
        tp_tensor *got[NUM_OUT];
        for (int k = 0; k < 3; k++) inputs[k] = buffer_of(in[k]);
        for (int k = 0; k < NUM_OUT; k++) {
            int64_t shape[TP_PLUGIN_MAX_DIMS];
            for (int d = 0; d < tp_tensor_ndim(want[k]); d++) shape[d] = tp_tensor_dim(want[k], d);
            ck_assert_int_eq(tp_tensor_create(TP_F32, tp_tensor_ndim(want[k]), shape, &got[k]),
                             TP_OK);
            outputs[k] = buffer_of(got[k]);
        }
        ck_assert_msg(stax_direct_run(&d, exe, inputs, 3, outputs, NUM_OUT) == TP_PLUGIN_OK,
                      "n=%lld: %s", (long long)ns[i], stax_direct_error);
        for (int k = 0; k < NUM_OUT; k++) {
            char what[64];
            snprintf(what, sizeof what, "n=%lld output %d", (long long)ns[i], k);
            stax_test_expect_close(got[k], want[k], 1e-5, 1e-6, what);
            tp_tensor_release(got[k]);
            tp_tensor_release(want[k]);
        }
        for (int k = 0; k < 3; k++) tp_tensor_release(in[k]);
    }
    stax_direct_release(&d, exe);
    stax_close_direct(&d);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(run_refuses_a_static_dim_that_disagrees) {
    stax_test_cache_dir();
    stax_direct d;
    open_plugin(&d);
    char error[512] = "";
    tp_plugin_executable *exe = NULL;
    ck_assert_msg(compile_view(&d, 4, &exe, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
    static float x[4 * 8], b[7], w[24], o[4 * 8], s[4], r[12], e[32];
    tp_plugin_buffer inputs[3] = {
        {.data = x, .nbytes = sizeof x, .dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {4, 8}},
        {.data = b, .nbytes = sizeof b, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {7}},
        {.data = w, .nbytes = sizeof w, .dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {8, 3}}};
    tp_plugin_buffer outputs[NUM_OUT] = {
        {.data = o, .nbytes = sizeof o, .dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {4, 8}},
        {.data = s, .nbytes = sizeof s, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}},
        {.data = r, .nbytes = sizeof r, .dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {4, 3}},
        {.data = e, .nbytes = sizeof e, .dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {4, 8}}};
    stax_direct_error[0] = 0;
    ck_assert_int_eq(stax_direct_run(&d, exe, inputs, 3, outputs, NUM_OUT), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(stax_direct_error, "input 1") && strstr(stax_direct_error, "%b"), "%s",
                  stax_direct_error);
    stax_direct_release(&d, exe);
    stax_close_direct(&d);
}
END_TEST

TP_TEST_SUITE(stax_dynamic) {
    Suite *s = suite_create("stax_dynamic");
    TCase *c = tcase_create("dynamic");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, one_compile_serves_every_size_of_the_symbol);
    tcase_add_test(c, run_refuses_a_static_dim_that_disagrees);
    suite_add_tcase(s, c);
    return s;
}
