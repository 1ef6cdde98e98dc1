/* The reference interpreter (core/ir/interpret.c) on graphs whose results
 * can be checked by hand, and its input checks. */
#include <math.h>
#include <string.h>

#include "ir/graph_internal.h"
#include "ir_helpers.h"
#include "tensor/tensor_internal.h"

static tp_tensor *tensor_f32(int ndim, const int64_t *shape, const float *values) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, ndim, shape, values, &tensor), TP_OK);
    return tensor;
}

static void expect_values(const tp_tensor *tensor, const double *expected, int64_t count,
                          double tolerance) {
    ck_assert_int_eq(tp_tensor_numel(tensor), count);
    for (int64_t i = 0; i < count; i++)
        ck_assert_msg(fabs(tp_tensor_get_f64(tensor, i) - expected[i]) <= tolerance,
                      "element %lld: %g, expected %g", (long long)i, tp_tensor_get_f64(tensor, i),
                      expected[i]);
}

START_TEST(arange_reshape_transpose_gives_the_transposed_matrix) {
    tp_graph *graph = ir_parse_ok("graph g() {\n"
                                  "  %a: f32[6] = arange() {start=0, stop=6, step=1, dtype=f32}\n"
                                  "  %r: f32[2, 3] = reshape(%a) {shape=[2, 3]}\n"
                                  "  %t: f32[3, 2] = transpose(%r) {dim0=0, dim1=1}\n"
                                  "  return %t\n"
                                  "}\n");
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, NULL, 0, &out), TP_OK);
    ck_assert_int_eq(tp_tensor_dim(out, 0), 3);
    ck_assert_int_eq(tp_tensor_dim(out, 1), 2);
    expect_values(out, (const double[]){0, 3, 1, 4, 2, 5}, 6, 0);
    tp_tensor_release(out);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(linear_with_constant_weights_adds_the_bias) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[1, 2]) {\n"
                                  "  %w: f32[3, 2] = constant() {value=[1, 0, 0, 1, 1, 1]}\n"
                                  "  %b: f32[3] = constant() {value=[10, 20, 30]}\n"
                                  "  %y: f32[1, 3] = linear(%x, %w, %b)\n"
                                  "  return %y\n"
                                  "}\n");
    tp_tensor *x = tensor_f32(2, (const int64_t[]){1, 2}, (const float[]){1, 2});
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, &out), TP_OK);
    expect_values(out, (const double[]){11, 22, 33}, 3, 0);
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(softmax_of_zero_and_log3_is_a_quarter_and_three_quarters) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n"
                                  "  %y: f32[2] = softmax(%x) {axis=0}\n"
                                  "  return %y\n"
                                  "}\n");
    tp_tensor *x = tensor_f32(1, (const int64_t[]){2}, (const float[]){0, (float)log(3.0)});
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, &out), TP_OK);
    expect_values(out, (const double[]){0.25, 0.75}, 2, 1e-6);
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(returned_input_and_repeated_output_are_new_references) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n"
                                  "  %y: f32[2] = softmax(%x) {axis=0}\n"
                                  "  return %x, %y, %y\n"
                                  "}\n");
    tp_tensor *x = tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 1});
    tp_tensor *out[3] = {NULL, NULL, NULL};
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, out), TP_OK);
    ck_assert_ptr_eq(out[0], x);
    ck_assert_ptr_eq(out[1], out[2]);
    ck_assert_int_eq(atomic_load(&x->refcount), 2);
    ck_assert_int_eq(atomic_load(&out[1]->refcount), 2);
    for (int i = 0; i < 3; i++) tp_tensor_release(out[i]);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

static const char symbolic_concat[] = "graph g(%a: f32[n, 2], %b: f32[n, 3]) {\n"
                                      "  %c: f32[n, 5] = concat(%a, %b) {axis=1}\n"
                                      "  return %c\n"
                                      "}\n";

START_TEST(symbol_binds_to_the_first_size_seen) {
    tp_graph *graph = ir_parse_ok(symbolic_concat);
    tp_tensor *inputs[2] = {NULL, NULL};
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 2}, &inputs[0]);
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 3}, &inputs[1]);
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, inputs, 2, &out), TP_OK);
    ck_assert_int_eq(tp_tensor_dim(out, 0), 4);
    ck_assert_int_eq(tp_tensor_dim(out, 1), 5);
    tp_tensor_release(out);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(symbol_bound_differently_names_both_inputs_and_the_dimension) {
    tp_graph *graph = ir_parse_ok(symbolic_concat);
    tp_tensor *inputs[2] = {NULL, NULL};
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 2}, &inputs[0]);
    tp_tensor_create(TP_F32, 2, (const int64_t[]){5, 3}, &inputs[1]);
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, inputs, 2, &out), TP_ERR_SHAPE);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(tp_last_error(), "graph 'g': input %b dimension 0 is 5, but symbol 'n' is 4 "
                                      "(bound by input %a); got f32[5, 3] for f32[n, 3]");
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(wrong_dtype_names_the_input) {
    tp_graph *graph = ir_parse_ok(symbolic_concat);
    tp_tensor *inputs[2] = {NULL, NULL};
    tp_tensor_create(TP_F64, 2, (const int64_t[]){4, 2}, &inputs[0]);
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 3}, &inputs[1]);
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, inputs, 2, &out), TP_ERR_DTYPE);
    ck_assert_str_eq(tp_last_error(), "graph 'g': input %a expects f32[n, 2], got f64[4, 2]");
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(wrong_size_names_the_input_and_dimension) {
    tp_graph *graph = ir_parse_ok(symbolic_concat);
    tp_tensor *inputs[2] = {NULL, NULL};
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 2}, &inputs[0]);
    tp_tensor_create(TP_F32, 2, (const int64_t[]){4, 7}, &inputs[1]);
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, inputs, 2, &out), TP_ERR_SHAPE);
    ck_assert_str_eq(tp_last_error(),
                     "graph 'g': input %b expects f32[n, 3], got f32[4, 7] (dimension 1: 3 vs 7)");
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(wrong_rank_names_the_input) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n  return %x\n}\n");
    tp_tensor *x = NULL;
    tp_tensor_create(TP_F32, 2, (const int64_t[]){2, 1}, &x);
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, &out), TP_ERR_SHAPE);
    ck_assert_str_eq(tp_last_error(), "graph 'g': input %x expects f32[2], got f32[2, 1]");
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(wrong_number_of_inputs_is_rejected) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n  return %x\n}\n");
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, NULL, 0, &out), TP_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(tp_last_error(), "graph 'g' has 1 inputs, got 0 tensors");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(missing_kernel_is_an_internal_error_naming_the_op) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n"
                                  "  %y: f32[2] = softmax(%x) {axis=0}\n"
                                  "  return %y\n"
                                  "}\n");
    tp_op_def without_kernel = *tp_op_find("softmax");
    without_kernel.kernel = NULL;
    graph->values[1].op = &without_kernel;
    tp_tensor *x = tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 2});
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, &out), TP_ERR_INTERNAL);
    ck_assert_str_eq(tp_last_error(),
                     "graph 'g', %y: op 'softmax' has no reference kernel (a TensorPlay bug)");
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

/* Spies for the early-release test: the first records its result, the
 * second reads how many references that result still has. */
static tp_tensor *spied;
static int spied_refcount_later;

static tp_status spy_kernel(tp_tensor *const *inputs, int n, const tp_attrs *attrs,
                            tp_tensor *out) {
    spied = tp_tensor_retain(out);
    return tp_op_find("softmax")->kernel(inputs, n, attrs, out);
}

static tp_status check_kernel(tp_tensor *const *inputs, int n, const tp_attrs *attrs,
                              tp_tensor *out) {
    spied_refcount_later = atomic_load(&spied->refcount);
    return tp_op_find("softmax")->kernel(inputs, n, attrs, out);
}

START_TEST(intermediate_is_released_after_its_last_use) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[2]) {\n"
                                  "  %a: f32[2] = softmax(%x) {axis=0}\n"
                                  "  %b: f32[2] = softmax(%a) {axis=0}\n"
                                  "  %c: f32[2] = softmax(%x) {axis=0}\n"
                                  "  return %b, %c\n"
                                  "}\n");
    tp_op_def spy = *tp_op_find("softmax"), check = spy;
    spy.kernel = spy_kernel;
    check.kernel = check_kernel;
    graph->values[1].op = &spy;   /* %a */
    graph->values[3].op = &check; /* %c runs after %b, the last reader of %a */
    tp_tensor *x = tensor_f32(1, (const int64_t[]){2}, (const float[]){1, 2});
    tp_tensor *out[2] = {NULL, NULL};
    ck_assert_int_eq(tp_graph_run(graph, &x, 1, out), TP_OK);
    ck_assert_int_eq(spied_refcount_later, 1); /* only the spy's reference is left */
    tp_tensor_release(spied);
    tp_tensor_release(out[0]);
    tp_tensor_release(out[1]);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(ir_interpret) {
    Suite *suite = suite_create("ir.interpret");
    TCase *tc = tcase_create("interpret");
    tcase_add_test(tc, arange_reshape_transpose_gives_the_transposed_matrix);
    tcase_add_test(tc, linear_with_constant_weights_adds_the_bias);
    tcase_add_test(tc, softmax_of_zero_and_log3_is_a_quarter_and_three_quarters);
    tcase_add_test(tc, returned_input_and_repeated_output_are_new_references);
    tcase_add_test(tc, symbol_binds_to_the_first_size_seen);
    tcase_add_test(tc, symbol_bound_differently_names_both_inputs_and_the_dimension);
    tcase_add_test(tc, wrong_dtype_names_the_input);
    tcase_add_test(tc, wrong_size_names_the_input_and_dimension);
    tcase_add_test(tc, wrong_rank_names_the_input);
    tcase_add_test(tc, wrong_number_of_inputs_is_rejected);
    tcase_add_test(tc, missing_kernel_is_an_internal_error_naming_the_op);
    tcase_add_test(tc, intermediate_is_released_after_its_last_use);
    suite_add_tcase(suite, tc);
    return suite;
}
