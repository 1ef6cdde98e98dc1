/* dce: nodes no output depends on go; inputs always stay. */
#include "pass_test_util.h"

START_TEST(removes_an_unused_node) {
    bool changed = false;
    tp_graph *g = pass_on_text("graph t(%x: f32[3]) {\n"
                               "  %a: f32[3] = exp(%x)\n"
                               "  %b: f32[3] = tanh(%x)\n"
                               "  return %b\n"
                               "}\n",
                               TP_PASS_DCE, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(g, "exp"), 0);
    ck_assert_int_eq(count_op(g, "tanh"), 1);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(removes_a_dead_chain_and_keeps_unused_inputs) {
    tp_graph *g = pass_on_text("graph t(%x: f32[3], %unused: f32[2]) {\n"
                               "  %c: f32[3] = constant() {value=[1, 2, 3]}\n"
                               "  %a: f32[3] = mul(%x, %c)\n"
                               "  %b: f32[3] = exp(%a)\n"
                               "  %y: f32[3] = neg(%x)\n"
                               "  return %y\n"
                               "}\n",
                               TP_PASS_DCE, NULL);
    ck_assert_int_eq(tp_graph_num_inputs(g), 2);
    ck_assert_str_eq(tp_graph_value_name(g, tp_graph_input(g, 1)), "unused");
    ck_assert_int_eq(count_nodes(g), 1);
    ck_assert_str_eq(output_op(g, 0), "neg");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_a_graph_without_dead_nodes) {
    bool changed = true;
    tp_graph *g = pass_on_text("graph t(%x: f32[3]) {\n"
                               "  %a: f32[3] = exp(%x)\n"
                               "  %b: f32[3] = add(%a, %x)\n"
                               "  return %b, %a\n"
                               "}\n",
                               TP_PASS_DCE, &changed);
    ck_assert(!changed);
    ck_assert_int_eq(count_nodes(g), 2);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(dce) {
    Suite *s = suite_create("passes.dce");
    TCase *c = tcase_create("dce");
    tcase_add_test(c, removes_an_unused_node);
    tcase_add_test(c, removes_a_dead_chain_and_keeps_unused_inputs);
    tcase_add_test(c, keeps_a_graph_without_dead_nodes);
    suite_add_tcase(s, c);
    return s;
}
