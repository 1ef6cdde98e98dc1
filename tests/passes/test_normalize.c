/* normalize: canonical operand order and exact identities (x+0, x*1, x/1,
 * neg(neg x)), folded only where dtype and shape stay; never x*0. */
#include "pass_test_util.h"

static tp_graph *normalize(const char *text, bool *changed) {
    return pass_on_text(text, TP_PASS_NORMALIZE, changed);
}

/* The graph returns input `name` directly. */
static void assert_returns_input(const tp_graph *g, const char *name) {
    tp_value_id out = tp_graph_output(g, 0);
    ck_assert_ptr_null(tp_graph_value_op(g, out));
    ck_assert_str_eq(tp_graph_value_name(g, out), name);
}

START_TEST(folds_mul_by_constant_ones) {
    bool changed = false;
    tp_graph *g = normalize("graph t(%x: f32[2, 3]) {\n"
                            "  %one: f32[3] = constant() {value=[1, 1, 1]}\n"
                            "  %y: f32[2, 3] = mul(%x, %one)\n"
                            "  return %y\n"
                            "}\n",
                            &changed);
    ck_assert(changed);
    assert_returns_input(g, "x");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_one_times_x_with_full) {
    tp_graph *g = normalize("graph t(%x: f32[4]) {\n"
                            "  %one: f32[] = full() {shape=[], dtype=f32, value=1}\n"
                            "  %y: f32[4] = mul(%one, %x)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    assert_returns_input(g, "x");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(never_folds_mul_by_zero) {
    tp_graph *g = normalize("graph t(%x: f32[4]) {\n"
                            "  %zero: f32[] = full() {shape=[], dtype=f32, value=0}\n"
                            "  %y: f32[4] = mul(%x, %zero)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    ck_assert_str_eq(output_op(g, 0), "mul");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_add_zero_both_sides) {
    tp_graph *g = normalize("graph t(%x: f32[2, 3]) {\n"
                            "  %zero: f32[] = full() {shape=[], dtype=f32, value=0}\n"
                            "  %a: f32[2, 3] = add(%x, %zero)\n"
                            "  %b: f32[2, 3] = add(%zero, %a)\n"
                            "  return %b\n"
                            "}\n",
                            NULL);
    assert_returns_input(g, "x");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_add_zero_that_changes_dtype) {
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %zero: f64[] = constant() {value=[0]}\n"
                            "  %y: f64[3] = add(%x, %zero)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    ck_assert_str_eq(output_op(g, 0), "add");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_add_zero_that_changes_shape) {
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %zeros: f32[4, 3] = full() {shape=[4, 3], dtype=f32, value=0}\n"
                            "  %y: f32[4, 3] = add(%x, %zeros)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    ck_assert_str_eq(output_op(g, 0), "add");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_integer_divide_by_one) {
    /* i32 / 1 is true division: f32, so x is not the result. */
    tp_graph *g = normalize("graph t(%x: i32[3]) {\n"
                            "  %one: i32[] = constant() {value=[1]}\n"
                            "  %y: f32[3] = div(%x, %one)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    ck_assert_str_eq(output_op(g, 0), "div");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_sub_zero_and_div_one_but_not_reversed) {
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %zero: f32[] = full() {shape=[], dtype=f32, value=0}\n"
                            "  %one: f32[] = full() {shape=[], dtype=f32, value=1}\n"
                            "  %a: f32[3] = sub(%x, %zero)\n"
                            "  %b: f32[3] = div(%a, %one)\n"
                            "  %c: f32[3] = sub(%zero, %x)\n"
                            "  %d: f32[3] = div(%one, %x)\n"
                            "  return %b, %c, %d\n"
                            "}\n",
                            NULL);
    assert_returns_input(g, "x");
    ck_assert_str_eq(output_op(g, 1), "sub");
    ck_assert_str_eq(output_op(g, 2), "div");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(keeps_constant_that_is_not_all_ones) {
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %c: f32[3] = constant() {value=[1, 2, 1]}\n"
                            "  %y: f32[3] = mul(%x, %c)\n"
                            "  return %y\n"
                            "}\n",
                            NULL);
    ck_assert_str_eq(output_op(g, 0), "mul");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(folds_double_negation) {
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %a: f32[3] = neg(%x)\n"
                            "  %b: f32[3] = neg(%a)\n"
                            "  %c: f32[3] = neg(%b)\n"
                            "  return %b, %c\n"
                            "}\n",
                            NULL);
    assert_returns_input(g, "x");
    /* neg(neg(neg x)) is neg x: one live neg reading x. */
    tp_value_id c = tp_graph_output(g, 1);
    ck_assert_str_eq(tp_graph_value_op(g, c), "neg");
    ck_assert_ptr_null(tp_graph_value_op(g, tp_graph_value_operand(g, c, 0)));
    tp_graph_destroy(g);
}
END_TEST

START_TEST(puts_constant_operand_second) {
    bool changed = false;
    tp_graph *g = normalize("graph t(%x: f32[3]) {\n"
                            "  %c: f32[3] = constant() {value=[1, 2, 3]}\n"
                            "  %y: f32[3] = add(%c, %x)\n"
                            "  return %y\n"
                            "}\n",
                            &changed);
    ck_assert(changed);
    tp_value_id y = tp_graph_output(g, 0);
    ck_assert_ptr_null(tp_graph_value_op(g, tp_graph_value_operand(g, y, 0)));
    ck_assert_str_eq(tp_graph_value_op(g, tp_graph_value_operand(g, y, 1)), "constant");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(orders_commutative_operands_by_id) {
    tp_graph *g = normalize("graph t(%a: f32[3], %b: f32[3]) {\n"
                            "  %y: f32[3] = mul(%b, %a)\n"
                            "  %z: f32[3] = sub(%b, %a)\n"
                            "  return %y, %z\n"
                            "}\n",
                            NULL);
    tp_value_id a = value_named(g, "a"), b = value_named(g, "b");
    tp_value_id y = tp_graph_output(g, 0), z = tp_graph_output(g, 1);
    ck_assert_int_eq(tp_graph_value_operand(g, y, 0), a);
    ck_assert_int_eq(tp_graph_value_operand(g, y, 1), b);
    /* sub is not commutative: untouched. */
    ck_assert_int_eq(tp_graph_value_operand(g, z, 0), b);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(reports_unchanged_graph) {
    bool changed = true;
    tp_graph *g = normalize("graph t(%a: f32[3], %b: f32[3]) {\n"
                            "  %y: f32[3] = add(%a, %b)\n"
                            "  %z: f32[3] = exp(%y)\n"
                            "  return %z\n"
                            "}\n",
                            &changed);
    ck_assert(!changed);
    ck_assert_int_eq(count_nodes(g), 2);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(normalize) {
    Suite *s = suite_create("passes.normalize");
    TCase *c = tcase_create("normalize");
    tcase_add_test(c, folds_mul_by_constant_ones);
    tcase_add_test(c, folds_one_times_x_with_full);
    tcase_add_test(c, never_folds_mul_by_zero);
    tcase_add_test(c, folds_add_zero_both_sides);
    tcase_add_test(c, keeps_add_zero_that_changes_dtype);
    tcase_add_test(c, keeps_add_zero_that_changes_shape);
    tcase_add_test(c, keeps_integer_divide_by_one);
    tcase_add_test(c, folds_sub_zero_and_div_one_but_not_reversed);
    tcase_add_test(c, keeps_constant_that_is_not_all_ones);
    tcase_add_test(c, folds_double_negation);
    tcase_add_test(c, puts_constant_operand_second);
    tcase_add_test(c, orders_commutative_operands_by_id);
    tcase_add_test(c, reports_unchanged_graph);
    suite_add_tcase(s, c);
    return s;
}
