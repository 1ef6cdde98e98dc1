/* tp_compile_graph: a .tpir graph compiles through the same frontend as a C
 * function, captured from the graph itself (no op is replayed). */
#include <math.h>
#include <string.h>

#include "compile_fixtures.h"
#include "ops/kernel_dispatch.h"
#include "tensorplay/graph.h"

/* y = relu(x * 2 + b): hand-checkable. */
static const char relu_graph[] = "graph scaled(%x: f32[4], %b: f32[4]) {\n"
                                 "  %two: f32[] = full() {shape=[], value=2, dtype=f32}\n"
                                 "  %m: f32[4] = mul(%x, %two)\n"
                                 "  %s: f32[4] = add(%m, %b)\n"
                                 "  %y: f32[4] = relu(%s)\n"
                                 "  return %y\n"
                                 "}\n";

static tp_graph *parse(const char *text) {
    tp_graph *graph = NULL;
    ck_assert_msg(tp_graph_parse(text, strlen(text), "test.tpir", &graph) == TP_OK, "%s",
                  tp_last_error());
    return graph;
}

START_TEST(compiled_graph_computes_the_graph) {
    tp_graph *graph = parse(relu_graph);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile_graph(graph, &options, &compiled) == TP_OK, "%s", tp_last_error());
    tp_graph_destroy(graph); /* the wrapper keeps its own copy */
    tp_tensor *x = fixture_f32(1, (int64_t[]){4}, (const float[]){-3, -1, 0.5f, 2});
    tp_tensor *b = fixture_f32(1, (int64_t[]){4}, (const float[]){1, 1, 1, -5});
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(b)};
    for (int call = 0; call < 2; call++) {
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 2, &y) == TP_OK, "%s", tp_last_error());
        const float *v = fixture_floats(y);
        /* relu(-6+1)=0, relu(-2+1)=0, relu(1+1)=2, relu(4-5)=0 */
        ck_assert(v[0] == 0 && v[1] == 0 && v[2] == 2 && v[3] == 0);
        tp_tensor_release(y);
    }
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    tp_tensor_release(x);
    tp_tensor_release(b);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(compiling_a_graph_runs_no_op_through_the_ops_api) {
    tp_graph *graph = parse(relu_graph);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile_graph(graph, &options, &compiled), TP_OK);
    tp_graph_destroy(graph);
    tp_tensor *x = fixture_f32(1, (int64_t[]){4}, (const float[]){-3, -1, 0.5f, 2});
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    uint64_t before = tp_reference_kernel_calls();
    ck_assert_msg(tp_call(compiled, args, 2, &y) == TP_OK, "%s", tp_last_error());
    /* the four nodes ran once, in the eager backend's run: nothing was
     * replayed to build the entry */
    ck_assert_uint_eq(tp_reference_kernel_calls() - before, 4);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    ck_assert(fixture_floats(y)[2] == 1.5f); /* relu(0.5 * 2 + 0.5) */
    tp_tensor_release(y);
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(compiled_graph_rejects_inputs_that_do_not_fit_its_types) {
    tp_graph *graph = parse(relu_graph);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile_graph(graph, &options, &compiled), TP_OK);
    tp_graph_destroy(graph);
    tp_tensor *x = fixture_ramp(5, 0, 1);
    tp_tensor *b = fixture_ramp(5, 0, 1);
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(b)};
    tp_tensor *y = NULL;
    ck_assert_int_ne(tp_call(compiled, args, 2, &y), TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "input %x expects f32[4], got f32[5]"), "%s",
                  tp_last_error());
    ck_assert_ptr_null(y);
    tp_tensor_release(x);
    tp_tensor_release(b);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(compile_graph_with_an_unknown_backend_fails_at_once) {
    tp_graph *graph = parse(relu_graph);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eagre";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile_graph(graph, &options, &compiled), TP_ERR_NOT_FOUND);
    ck_assert_msg(strstr(tp_last_error(), "did you mean: 'eager'"), "%s", tp_last_error());
    ck_assert_ptr_null(compiled);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(compile_graph_function) {
    Suite *suite = suite_create("compile.graph_function");
    TCase *tc = tcase_create("graph_function");
    tcase_add_test(tc, compiled_graph_computes_the_graph);
    tcase_add_test(tc, compiling_a_graph_runs_no_op_through_the_ops_api);
    tcase_add_test(tc, compiled_graph_rejects_inputs_that_do_not_fit_its_types);
    tcase_add_test(tc, compile_graph_with_an_unknown_backend_fails_at_once);
    suite_add_tcase(suite, tc);
    return suite;
}
