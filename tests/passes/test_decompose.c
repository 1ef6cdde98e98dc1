/* decompose: every composite becomes primitive ops with the same type. */
#include "ops/op_table.h"
#include "pass_test_util.h"

static int count_composites(const tp_graph *g) {
    int count = 0;
    for (int v = 0; v < tp_graph_num_values(g); v++) {
        const char *name = tp_graph_value_op(g, v);
        const tp_op_def *op = name ? tp_op_find(name) : NULL;
        if (op && op->kind == TP_KIND_COMPOSITE) count++;
    }
    return count;
}

START_TEST(softmax_becomes_max_subtraction_chain) {
    bool changed = false;
    tp_graph *g = pass_on_text("graph t(%x: f32[2, 5]) {\n"
                               "  %y: f32[2, 5] = softmax(%x) {axis=-1}\n"
                               "  return %y\n"
                               "}\n",
                               TP_PASS_DECOMPOSE, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_composites(g), 0);
    ck_assert_int_eq(count_live_op(g, "max"), 1);
    ck_assert_int_eq(count_live_op(g, "sub"), 1);
    ck_assert_int_eq(count_live_op(g, "exp"), 1);
    ck_assert_int_eq(count_live_op(g, "sum"), 1);
    ck_assert_str_eq(output_op(g, 0), "div");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(every_composite_is_decomposed_with_its_type) {
    const char *text = "graph t(%x: f32[3, 4], %w: f32[4], %b: f32[4], %m: f32[5, 4]) {\n"
                       "  %a: f32[3, 4] = log_softmax(%x) {axis=0}\n"
                       "  %c: f32[3, 4] = layer_norm(%x, %w, %b) {axis=-1, eps=1e-05}\n"
                       "  %d: f32[3, 4] = gelu(%x) {approximate=none}\n"
                       "  %e: f32[3, 4] = gelu(%x) {approximate=tanh}\n"
                       "  %f: f32[3, 4] = silu(%x)\n"
                       "  %g: f32[3, 4] = softplus(%x) {beta=2, threshold=20}\n"
                       "  %h: f32[3, 5] = linear(%x, %m)\n"
                       "  return %a, %c, %d, %e, %f, %g, %h\n"
                       "}\n";
    tp_graph *in = parse_graph(text);
    tp_graph *g = run_one_pass(in, TP_PASS_DECOMPOSE, NULL);
    ck_assert_int_eq(count_composites(g), 0);
    for (int i = 0; i < tp_graph_num_outputs(in); i++) {
        const tp_type *want = tp_graph_value_type(in, tp_graph_output(in, i));
        const tp_type *got = tp_graph_value_type(g, tp_graph_output(g, i));
        ck_assert_int_eq(got->dtype, want->dtype);
        ck_assert_int_eq(got->ndim, want->ndim);
        for (int d = 0; d < want->ndim; d++) ck_assert_int_eq(got->dims[d], want->dims[d]);
    }
    ck_assert_int_ge(count_live_op(g, "erf"), 1);  /* gelu none */
    ck_assert_int_ge(count_live_op(g, "tanh"), 1); /* gelu tanh */
    ck_assert_int_ge(count_live_op(g, "matmul"), 1);
    ck_assert_int_ge(count_live_op(g, "rsqrt"), 1);
    tp_graph_destroy(g);
    tp_graph_destroy(in);
}
END_TEST

START_TEST(graph_without_composites_is_unchanged) {
    bool changed = true;
    tp_graph *g = pass_on_text("graph t(%x: f32[3]) {\n"
                               "  %y: f32[3] = tanh(%x)\n"
                               "  return %y\n"
                               "}\n",
                               TP_PASS_DECOMPOSE, &changed);
    ck_assert(!changed);
    ck_assert_int_eq(count_nodes(g), 1);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(decompose) {
    Suite *s = suite_create("passes.decompose");
    TCase *c = tcase_create("decompose");
    tcase_add_test(c, softmax_becomes_max_subtraction_chain);
    tcase_add_test(c, every_composite_is_decomposed_with_its_type);
    tcase_add_test(c, graph_without_composites_is_unchanged);
    suite_add_tcase(s, c);
    return s;
}
