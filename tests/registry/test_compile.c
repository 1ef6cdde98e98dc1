/* Compiling and running through the plugin contract: the good fixture and
 * the eager built-in on a hand-checkable graph, the graph view given to
 * plugins, options, and the compile/run failure paths. */
#include "registry_test.h"

/* (x + y) * x and x + y on f32[2, 2]. */
static tp_graph *small_graph(void) {
    tp_type type = {.dtype = TP_F32, .ndim = 2, .dims = {2, 2}};
    tp_graph *graph = NULL;
    tp_value_id x, y, a, m;
    ck_assert_int_eq(tp_graph_create("small", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "y", &type, &y), TP_OK);
    tp_value_id xy[2] = {x, y}, ax[2] = {0, x};
    ck_assert_int_eq(tp_graph_add_node(graph, "add", xy, 2, NULL, "a", &a), TP_OK);
    ax[0] = a;
    ck_assert_int_eq(tp_graph_add_node(graph, "mul", ax, 2, NULL, "m", &m), TP_OK);
    tp_value_id outputs[2] = {m, a};
    ck_assert_int_eq(tp_graph_set_outputs(graph, outputs, 2), TP_OK);
    return graph;
}

static void make_inputs(tp_tensor **inputs) {
    const float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
    const int64_t shape[2] = {2, 2};
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 2, shape, x, &inputs[0]), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 2, shape, y, &inputs[1]), TP_OK);
}

static void run_and_check(const char *backend_name) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(backend_name, &backend), TP_OK);
    tp_graph *graph = small_graph();
    tp_tensor *inputs[2];
    make_inputs(inputs);
    tp_executable *executable = NULL;
    ck_assert_msg(tp_backend_compile(backend, graph, inputs, 2, NULL, 0, &executable) == TP_OK,
                  "%s", tp_last_error());
    tp_graph_destroy(graph); /* the executable does not need the graph */
    ck_assert_int_eq(tp_executable_num_outputs(executable), 2);
    tp_tensor *outputs[2] = {NULL, NULL};
    ck_assert_msg(tp_executable_run(executable, inputs, 2, outputs) == TP_OK, "%s",
                  tp_last_error());
    /* By hand: a = x + y = 11 22 33 44; m = a * x = 11 44 99 176. */
    const float *m = tp_tensor_data(outputs[0]), *a = tp_tensor_data(outputs[1]);
    const float want_m[4] = {11, 44, 99, 176}, want_a[4] = {11, 22, 33, 44};
    for (int i = 0; i < 4; i++) {
        ck_assert_float_eq(m[i], want_m[i]);
        ck_assert_float_eq(a[i], want_a[i]);
    }
    /* Running again into the same output tensors writes them in place. */
    uint64_t version = tp_tensor_version(outputs[0]);
    ck_assert_int_eq(tp_executable_run(executable, inputs, 2, outputs), TP_OK);
    ck_assert_uint_gt(tp_tensor_version(outputs[0]), version);
    ck_assert_float_eq(((const float *)tp_tensor_data(outputs[0]))[3], 176);
    for (int i = 0; i < 2; i++) {
        tp_tensor_release(inputs[i]);
        tp_tensor_release(outputs[i]);
    }
    tp_executable_destroy(executable);
}

START_TEST(good_fixture_computes_a_hand_checked_graph) {
    run_and_check("good");
}
END_TEST

START_TEST(eager_computes_a_hand_checked_graph) {
    run_and_check("eager");
}
END_TEST

START_TEST(compile_failure_reports_backend_graph_and_plugin_text) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("compile_fails", &backend), TP_OK);
    tp_graph *graph = small_graph();
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable),
                     TP_ERR_BACKEND);
    ck_assert_str_eq(tp_last_error(),
                     "backend 'compile_fails' failed to compile graph 'small': the "
                     "fixture refuses to compile every graph");
    ck_assert_ptr_null(executable);
    tp_graph_destroy(graph);
}
END_TEST

/* An in-process revision-2 backend that refuses every graph as unsupported. */
static int32_t refusing_init(const tp_plugin_host *host, void **context) {
    *context = (void *)host;
    return TP_PLUGIN_OK;
}
static int32_t refusing_compile(void *context, const tp_plugin_graph *graph,
                                const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                const tp_plugin_option *options, int32_t num_options,
                                tp_plugin_executable **executable) {
    const tp_plugin_host *host = context;
    (void)graph, (void)inputs, (void)num_inputs, (void)options, (void)num_options;
    *executable = NULL;
    host->set_error(host, "op 'mul' is not one of mine");
    return TP_PLUGIN_UNSUPPORTED;
}
static int32_t refusing_run(void *context, tp_plugin_executable *executable,
                            const tp_plugin_buffer *inputs, int32_t num_inputs,
                            tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context, (void)executable, (void)inputs, (void)num_inputs, (void)outputs,
        (void)num_outputs;
    return TP_PLUGIN_ERROR; /* never reached: nothing compiles */
}
static void refusing_release(void *context, tp_plugin_executable *executable) {
    (void)context, (void)executable;
}
static const tp_plugin_backend refusing_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "refuses_all",
    .version = "1",
    .description = "refuses every graph as unsupported",
    .calls = {.init = refusing_init,
              .compile = refusing_compile,
              .run = refusing_run,
              .release = refusing_release},
};

START_TEST(unsupported_refusal_is_its_own_status_with_the_reason) {
    ck_assert_int_eq(tp_backend_register(&refusing_table, "debug"), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("refuses_all", &backend) == TP_OK, "%s", tp_last_error());
    tp_graph *graph = small_graph();
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable),
                     TP_ERR_UNSUPPORTED);
    ck_assert_str_eq(tp_last_error(), "backend 'refuses_all' failed to compile graph 'small': "
                                      "unsupported: op 'mul' is not one of mine");
    ck_assert_ptr_null(executable);
    tp_graph_destroy(graph);
    ck_assert_int_eq(tp_backend_unregister("refuses_all"), TP_OK);
}
END_TEST

START_TEST(run_failure_reports_the_plugin_text_and_leaves_no_outputs) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("run_fails", &backend), TP_OK);
    tp_graph *graph = small_graph();
    tp_tensor *inputs[2];
    make_inputs(inputs);
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, inputs, 2, NULL, 0, &executable), TP_OK);
    tp_tensor *outputs[2] = {NULL, NULL};
    ck_assert_int_eq(tp_executable_run(executable, inputs, 2, outputs), TP_ERR_BACKEND);
    ck_assert_str_eq(tp_last_error(),
                     "backend 'run_fails' failed to run graph 'small': the fixture "
                     "device fell off the bus");
    ck_assert_ptr_null(outputs[0]);
    ck_assert_ptr_null(outputs[1]);
    tp_executable_destroy(executable);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(options_reach_the_backend_and_unknown_ones_are_named) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    tp_graph *graph = small_graph();
    tp_executable *executable = NULL;
    const char *good_options[] = {"unroll=4"};
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, good_options, 1, &executable),
                     TP_OK);
    tp_executable_destroy(executable);
    const char *bad_options[] = {"unroll=4", "vectorize=yes"};
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, bad_options, 2, &executable),
                     TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), "unknown option 'vectorize' (known: unroll)");
    const char *malformed[] = {"unroll"};
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, malformed, 1, &executable),
                     TP_ERR_INVALID_ARGUMENT);
    ck_assert_contains(tp_last_error(), "option 'unroll' must be written key=value");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(inputs_other_than_compiled_for_are_refused) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("eager", &backend), TP_OK);
    tp_graph *graph = small_graph();
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable), TP_OK);
    const int64_t shape[1] = {4};
    tp_tensor *wrong[2];
    tp_tensor_create(TP_F32, 1, shape, &wrong[0]);
    tp_tensor_create(TP_F32, 1, shape, &wrong[1]);
    tp_tensor *outputs[2] = {NULL, NULL};
    ck_assert_int_eq(tp_executable_run(executable, wrong, 2, outputs), TP_ERR_SHAPE);
    ck_assert_contains(tp_last_error(), "compiled for f32[2, 2], got f32[4]");
    tp_tensor_release(wrong[0]);
    tp_tensor_release(wrong[1]);
    tp_executable_destroy(executable);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(graph_view_lists_values_operands_attributes_and_types) {
    tp_type type = {.dtype = TP_F32, .ndim = 2, .dims = {2, 3}};
    tp_graph *graph = NULL;
    tp_value_id x, t;
    ck_assert_int_eq(tp_graph_create("view", &graph), TP_OK);
    int64_t n = 0;
    ck_assert_int_eq(tp_graph_symbol(graph, "n", &n), TP_OK);
    type.dims[0] = n;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = 0;
    attrs.dim1 = 1;
    ck_assert_int_eq(tp_graph_add_node(graph, "transpose", &x, 1, &attrs, "t", &t), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &t, 1), TP_OK);
    tp_graph_view *owner = NULL;
    ck_assert_int_eq(tp_graph_view_create(graph, &owner), TP_OK);
    const tp_plugin_graph *view = tp_graph_view_get(owner);
    ck_assert_uint_eq(view->struct_size, sizeof(tp_plugin_graph));
    ck_assert_str_eq(view->name, "view");
    ck_assert_int_eq(view->num_values, 2);
    ck_assert_ptr_null(view->values[0].op);
    ck_assert_str_eq(view->values[0].name, "x");
    ck_assert_int_eq(view->values[0].type.dims[0], -1); /* symbol 0 */
    ck_assert_str_eq(view->symbols[0], "n");
    const tp_plugin_value *node = &view->values[1];
    ck_assert_str_eq(node->op, "transpose");
    ck_assert_int_eq(node->num_operands, 1);
    ck_assert_int_eq(node->operands[0], 0);
    ck_assert_int_eq(node->type.dims[0], 3);
    ck_assert_int_eq(node->type.dims[1], -1);
    ck_assert_int_eq(node->num_attrs, 2);
    ck_assert_str_eq(node->attrs[0].name, "dim0");
    ck_assert_int_eq(node->attrs[0].type, TP_PLUGIN_ATTR_INT);
    ck_assert_int_eq(node->attrs[1].i, 1);
    ck_assert_int_eq(node->fusion_region, -1);
    ck_assert_int_eq(view->num_inputs, 1);
    ck_assert_int_eq(view->outputs[0], 1);
    ck_assert_ptr_eq(tp_graph_view_source(view), graph);
    tp_graph_view_destroy(owner);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(symbolic_graph_compiles_for_example_inputs) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("eager", &backend), TP_OK);
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create("sym", &graph), TP_OK);
    int64_t n = 0;
    tp_graph_symbol(graph, "n", &n);
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {n}};
    tp_value_id x, y;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_value_id xx[2] = {x, x};
    ck_assert_int_eq(tp_graph_add_node(graph, "add", xx, 2, NULL, "y", &y), TP_OK);
    tp_graph_set_outputs(graph, &y, 1);
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable),
                     TP_ERR_INVALID_ARGUMENT);
    ck_assert_contains(tp_last_error(), "pass example inputs");
    const float data[3] = {1, 2, 3};
    const int64_t shape[1] = {3};
    tp_tensor *input = NULL, *output = NULL;
    tp_tensor_from_data(TP_F32, 1, shape, data, &input);
    ck_assert_int_eq(tp_backend_compile(backend, graph, &input, 1, NULL, 0, &executable), TP_OK);
    ck_assert_int_eq(tp_executable_run(executable, &input, 1, &output), TP_OK);
    ck_assert_int_eq(tp_tensor_dim(output, 0), 3);
    ck_assert_float_eq(((const float *)tp_tensor_data(output))[2], 6);
    tp_tensor_release(input);
    tp_tensor_release(output);
    tp_executable_destroy(executable);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(registry_compile) {
    Suite *suite = suite_create("registry.compile");
    TCase *tc = tcase_create("compile");
    tcase_add_test(tc, good_fixture_computes_a_hand_checked_graph);
    tcase_add_test(tc, eager_computes_a_hand_checked_graph);
    tcase_add_test(tc, compile_failure_reports_backend_graph_and_plugin_text);
    tcase_add_test(tc, unsupported_refusal_is_its_own_status_with_the_reason);
    tcase_add_test(tc, run_failure_reports_the_plugin_text_and_leaves_no_outputs);
    tcase_add_test(tc, options_reach_the_backend_and_unknown_ones_are_named);
    tcase_add_test(tc, inputs_other_than_compiled_for_are_refused);
    tcase_add_test(tc, graph_view_lists_values_operands_attributes_and_types);
    tcase_add_test(tc, symbolic_graph_compiles_for_example_inputs);
    suite_add_tcase(suite, tc);
    return suite;
}
