/* cse: equal op + operands + attributes merge; anything different stays. */
#include <stdlib.h>

#include "pass_test_util.h"

static tp_graph *cse(const char *text, bool *changed) {
    return pass_on_text(text, TP_PASS_CSE, changed);
}

START_TEST(merges_two_identical_exps) {
    bool changed = false;
    tp_graph *g = cse("graph t(%x: f32[3]) {\n"
                      "  %a: f32[3] = exp(%x)\n"
                      "  %b: f32[3] = exp(%x)\n"
                      "  return %a, %b\n"
                      "}\n",
                      &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(g, "exp"), 1);
    ck_assert_int_eq(tp_graph_output(g, 0), tp_graph_output(g, 1));
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_exps_of_different_operands) {
    bool changed = true;
    tp_graph *g = cse("graph t(%x: f32[3], %y: f32[3]) {\n"
                      "  %a: f32[3] = exp(%x)\n"
                      "  %b: f32[3] = exp(%y)\n"
                      "  return %a, %b\n"
                      "}\n",
                      &changed);
    ck_assert(!changed);
    ck_assert_int_eq(count_op(g, "exp"), 2);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(merges_cascade_down_a_chain) {
    tp_graph *g = cse("graph t(%x: f32[3]) {\n"
                      "  %a: f32[3] = exp(%x)\n"
                      "  %b: f32[3] = exp(%x)\n"
                      "  %c: f32[3] = tanh(%a)\n"
                      "  %d: f32[3] = tanh(%b)\n"
                      "  return %c, %d\n"
                      "}\n",
                      NULL);
    ck_assert_int_eq(count_nodes(g), 2);
    ck_assert_int_eq(tp_graph_output(g, 0), tp_graph_output(g, 1));
    tp_graph_destroy(g);
}
END_TEST

START_TEST(merges_commutative_operands_in_either_order) {
    tp_graph *g = cse("graph t(%x: f32[3], %y: f32[3]) {\n"
                      "  %a: f32[3] = add(%x, %y)\n"
                      "  %b: f32[3] = add(%y, %x)\n"
                      "  %c: f32[3] = sub(%x, %y)\n"
                      "  %d: f32[3] = sub(%y, %x)\n"
                      "  return %a, %b, %c, %d\n"
                      "}\n",
                      NULL);
    ck_assert_int_eq(count_op(g, "add"), 1);
    ck_assert_int_eq(count_op(g, "sub"), 2);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(merges_only_constants_with_equal_data) {
    tp_graph *g = cse("graph t() {\n"
                      "  %a: f32[2] = constant() {value=[1, 2]}\n"
                      "  %b: f32[2] = constant() {value=[1, 2]}\n"
                      "  %c: f32[2] = constant() {value=[1, 3]}\n"
                      "  %d: f64[2] = constant() {value=[1, 2]}\n"
                      "  return %a, %b, %c, %d\n"
                      "}\n",
                      NULL);
    ck_assert_int_eq(count_op(g, "constant"), 3);
    ck_assert_int_eq(tp_graph_output(g, 0), tp_graph_output(g, 1));
    ck_assert_int_ne(tp_graph_output(g, 0), tp_graph_output(g, 2));
    ck_assert_int_ne(tp_graph_output(g, 0), tp_graph_output(g, 3));
    tp_graph_destroy(g);
}
END_TEST

/* Two constants of `count` floats, 0.5 * i each, except that the second one
 * has element `differs` (when >= 0) set to -1; each graph output is a constant. */
static tp_graph *two_large_constants(int64_t count, int64_t differs) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create("large", &graph), TP_OK);
    float *values = malloc(sizeof *values * (size_t)count);
    ck_assert_ptr_nonnull(values);
    tp_value_id ids[2];
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < count; i++) values[i] = 0.5f * (float)i;
        if (k == 1 && differs >= 0) values[differs] = -1.0f;
        tp_tensor *data = NULL;
        ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, &count, values, &data), TP_OK);
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.data = data;
        ck_assert_int_eq(tp_graph_add_node(graph, "constant", NULL, 0, &attrs, NULL, &ids[k]),
                         TP_OK);
        tp_tensor_release(data);
    }
    free(values);
    ck_assert_int_eq(tp_graph_set_outputs(graph, ids, 2), TP_OK);
    return graph;
}

START_TEST(merges_large_constants_with_equal_data) {
    tp_graph *in = two_large_constants(100000, -1);
    bool changed = false;
    tp_graph *out = run_one_pass(in, TP_PASS_CSE, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(out, "constant"), 1);
    ck_assert_int_eq(tp_graph_output(out, 0), tp_graph_output(out, 1));
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

/* The hash reads only part of a large payload: constants that differ in a
 * single element anywhere (first, last, and every element of a stretch in
 * the middle) must still stay apart. */
START_TEST(keeps_large_constants_that_differ_in_one_element) {
    const int64_t count = 4099; /* not a multiple of any sampling stride */
    int64_t positions[] = {0, 1, count / 2, count - 2, count - 1};
    for (size_t i = 0; i < sizeof positions / sizeof *positions; i++) {
        tp_graph *in = two_large_constants(count, positions[i]);
        bool changed = true;
        tp_graph *out = run_one_pass(in, TP_PASS_CSE, &changed);
        ck_assert_msg(!changed, "merged constants that differ at element %lld",
                      (long long)positions[i]);
        ck_assert_int_eq(count_op(out, "constant"), 2);
        tp_graph_destroy(out);
        tp_graph_destroy(in);
    }
    for (int64_t at = 1000; at < 1200; at++) {
        tp_graph *in = two_large_constants(count, at);
        tp_graph *out = run_one_pass(in, TP_PASS_CSE, NULL);
        ck_assert_msg(count_op(out, "constant") == 2, "merged constants that differ at %lld",
                      (long long)at);
        tp_graph_destroy(out);
        tp_graph_destroy(in);
    }
}
END_TEST

START_TEST(keeps_nodes_with_different_attributes) {
    tp_graph *g = cse("graph t(%x: f32[2, 2]) {\n"
                      "  %a: f32[2] = sum(%x) {axes=[0], keepdim=false}\n"
                      "  %b: f32[2] = sum(%x) {axes=[1], keepdim=false}\n"
                      "  %c: f32[2] = sum(%x) {axes=[1], keepdim=false}\n"
                      "  %d: f32[] = full() {shape=[], dtype=f32, value=0}\n"
                      "  %e: f32[] = full() {shape=[], dtype=f32, value=-0}\n"
                      "  return %a, %b, %c, %d, %e\n"
                      "}\n",
                      NULL);
    ck_assert_int_eq(count_op(g, "sum"), 2);
    ck_assert_int_eq(tp_graph_output(g, 1), tp_graph_output(g, 2));
    ck_assert_int_eq(count_op(g, "full"), 2); /* 0.0 and -0.0 differ bit for bit */
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(cse) {
    Suite *s = suite_create("passes.cse");
    TCase *c = tcase_create("cse");
    tcase_add_test(c, merges_two_identical_exps);
    tcase_add_test(c, keeps_exps_of_different_operands);
    tcase_add_test(c, merges_cascade_down_a_chain);
    tcase_add_test(c, merges_commutative_operands_in_either_order);
    tcase_add_test(c, merges_only_constants_with_equal_data);
    tcase_add_test(c, merges_large_constants_with_equal_data);
    tcase_add_test(c, keeps_large_constants_that_differ_in_one_element);
    tcase_add_test(c, keeps_nodes_with_different_attributes);
    suite_add_tcase(s, c);
    return s;
}
