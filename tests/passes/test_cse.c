/* cse: equal op + operands + attributes merge; anything different stays. */
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
    tcase_add_test(c, keeps_nodes_with_different_attributes);
    suite_add_tcase(s, c);
    return s;
}
