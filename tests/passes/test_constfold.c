/* constfold: nodes on constant operands become one constant with the values
 * the reference kernels give (checked by hand here); big results stay. */
#include <math.h>

#include "pass_test_util.h"

static tp_graph *constfold(const char *text, bool *changed) {
    return pass_on_text(text, TP_PASS_CONSTFOLD, changed);
}

/* Output `index` is a constant of `dtype` holding `expected`. */
static void assert_constant_output(const tp_graph *g, int index, tp_dtype dtype,
                                   const double *expected, int count) {
    tp_value_id out = tp_graph_output(g, index);
    ck_assert_str_eq(output_op(g, index), "constant");
    const tp_tensor *data = tp_graph_value_attrs(g, out)->data;
    ck_assert_ptr_nonnull(data);
    ck_assert_int_eq(tp_tensor_dtype(data), dtype);
    ck_assert_int_eq(tp_tensor_numel(data), count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(fabs(tp_tensor_get_f64(data, i) - expected[i]) <= 1e-6,
                      "element %d: %g, expected %g", i, tp_tensor_get_f64(data, i), expected[i]);
}

START_TEST(folds_add_of_two_constants) {
    bool changed = false;
    tp_graph *g = constfold("graph t() {\n"
                            "  %a: f32[3] = constant() {value=[1, 2, 3]}\n"
                            "  %b: f32[3] = constant() {value=[10, 20, 30]}\n"
                            "  %c: f32[3] = add(%a, %b)\n"
                            "  return %c\n"
                            "}\n",
                            &changed);
    ck_assert(changed);
    assert_constant_output(g, 0, TP_F32, (const double[]){11, 22, 33}, 3);
    ck_assert_int_eq(count_live_op(g, "add"), 0);
    ck_assert_int_eq(count_live_op(g, "constant"), 1);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_a_chain_in_one_run) {
    tp_graph *g = constfold("graph t(%x: f32[2]) {\n"
                            "  %a: f32[2] = constant() {value=[1, -2]}\n"
                            "  %two: f32[] = full() {shape=[], dtype=f32, value=2}\n"
                            "  %b: f32[2] = mul(%a, %two)\n"
                            "  %c: f32[2] = abs(%b)\n"
                            "  %y: f32[2] = add(%x, %c)\n"
                            "  return %c, %y\n"
                            "}\n",
                            NULL);
    assert_constant_output(g, 0, TP_F32, (const double[]){2, 4}, 2);
    /* The consumer with an input operand stays, reading the folded constant. */
    ck_assert_str_eq(output_op(g, 1), "add");
    tp_value_id y = tp_graph_output(g, 1);
    ck_assert_int_eq(tp_graph_value_operand(g, y, 1), tp_graph_output(g, 0));
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_arange_times_full) {
    tp_graph *g = constfold("graph t() {\n"
                            "  %r: i64[4] = arange() {start=0, stop=4, step=1, dtype=i64}\n"
                            "  %s: i64[] = full() {shape=[], dtype=i64, value=3}\n"
                            "  %y: i64[4] = mul(%r, %s)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    assert_constant_output(g, 0, TP_I64, (const double[]){0, 3, 6, 9}, 4);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_composite_on_constant) {
    tp_graph *g = constfold("graph t() {\n"
                            "  %a: f32[2] = constant() {value=[5, 5]}\n"
                            "  %y: f32[2] = softmax(%a) {axis=-1}\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    assert_constant_output(g, 0, TP_F32, (const double[]){0.5, 0.5}, 2);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(leaves_nodes_on_inputs) {
    bool changed = true;
    tp_graph *g = constfold("graph t(%x: f32[3]) {\n"
                            "  %a: f32[3] = constant() {value=[1, 2, 3]}\n"
                            "  %y: f32[3] = add(%x, %a)\n"
                            "  return %y\n"
                            "}\n",
                            &changed);
    ck_assert(!changed);
    ck_assert_str_eq(output_op(g, 0), "add");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(leaves_creation_nodes_alone) {
    bool changed = true;
    tp_graph *g = constfold("graph t() {\n"
                            "  %z: f32[2, 2] = full() {shape=[2, 2], dtype=f32, value=7}\n"
                            "  return %z\n"
                            "}\n",
                            &changed);
    ck_assert(!changed);
    ck_assert_str_eq(output_op(g, 0), "full");
    tp_graph_destroy(g);
}
END_TEST

static const char *const big_fold =
    "graph t() {\n"
    "  %a: f32[10, 10] = full() {shape=[10, 10], dtype=f32, value=1}\n"
    "  %b: f32[10, 10] = exp(%a)\n"
    "  return %b\n"
    "}\n";

START_TEST(leaves_results_over_the_size_cap) {
    tp_graph *in = parse_graph(big_fold);
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.constfold_max_elements = 99;
    tp_graph *out = NULL;
    bool changed = true;
    ck_assert_int_eq(tp_pass_run(TP_PASS_CONSTFOLD, in, &options, &out, &changed), TP_OK);
    ck_assert(!changed);
    ck_assert_str_eq(output_op(out, 0), "exp");
    tp_graph_destroy(out);
    options.constfold_max_elements = 100;
    ck_assert_int_eq(tp_pass_run(TP_PASS_CONSTFOLD, in, &options, &out, &changed), TP_OK);
    ck_assert(changed);
    ck_assert_str_eq(output_op(out, 0), "constant");
    ck_assert_double_eq_tol(
        tp_tensor_get_f64(tp_graph_value_attrs(out, tp_graph_output(out, 0))->data, 99), exp(1.0),
        1e-5);
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

START_TEST(leaves_reductions_of_huge_operands) {
    /* One-element result, but evaluating it would fill 10^10 elements. */
    bool changed = true;
    tp_graph *g =
        constfold("graph t() {\n"
                  "  %a: f32[100000, 100000] = full() {shape=[100000, 100000], dtype=f32, "
                  "value=1}\n"
                  "  %s: f32[] = sum(%a) {axes=[], keepdim=false}\n"
                  "  return %s\n"
                  "}\n",
                  &changed);
    ck_assert(!changed);
    ck_assert_str_eq(output_op(g, 0), "sum");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_reduction_of_a_modest_full) {
    tp_graph *g = constfold("graph t() {\n"
                            "  %a: f32[300, 300] = full() {shape=[300, 300], dtype=f32, value=2}\n"
                            "  %s: f32[] = sum(%a) {axes=[], keepdim=false}\n"
                            "  return %s\n"
                            "}\n",
                            NULL);
    assert_constant_output(g, 0, TP_F32, (const double[]){180000}, 1);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(constfold) {
    Suite *s = suite_create("passes.constfold");
    TCase *c = tcase_create("constfold");
    tcase_add_test(c, folds_add_of_two_constants);
    tcase_add_test(c, folds_a_chain_in_one_run);
    tcase_add_test(c, folds_arange_times_full);
    tcase_add_test(c, folds_composite_on_constant);
    tcase_add_test(c, leaves_nodes_on_inputs);
    tcase_add_test(c, leaves_creation_nodes_alone);
    tcase_add_test(c, leaves_results_over_the_size_cap);
    tcase_add_test(c, leaves_reductions_of_huge_operands);
    tcase_add_test(c, folds_reduction_of_a_modest_full);
    suite_add_tcase(s, c);
    return s;
}
