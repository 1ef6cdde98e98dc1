/* normalize: canonical operand order and exact identities (x+0, x*1, x/1,
 * neg(neg x)), folded only where dtype and shape stay; never x*0; and
 * reshape -> permute -> reshape chains cut instead of merged, checked
 * element by element against index formulas. */
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

/* ---- reshape -> permute -> reshape chains ---- */

/* Runs `g` (reference kernels) on x = 0, 1, 2, ... of shape `shape`; the
 * caller releases the result. */
static tp_tensor *run_on_iota(const tp_graph *g, int ndim, const int64_t *shape) {
    tp_tensor *x = NULL, *y = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, ndim, shape, &x), TP_OK);
    float *data = tp_tensor_data_mut(x);
    for (int64_t i = 0; i < tp_tensor_numel(x); i++) data[i] = (float)i;
    ck_assert_msg(tp_graph_run(g, &x, 1, &y) == TP_OK, "run: %s", tp_last_error());
    tp_tensor_release(x);
    return y;
}

/* y[b][h][s][d] = q[s][b][3 h + d] for q = iota of [6, 2, 12] (y's 144
 * elements in [2, 4, 6, 3] order, whatever y's rank). */
static void assert_heads_of_iota(const tp_tensor *y) {
    ck_assert_int_eq(tp_tensor_numel(y), 144);
    const float *a = tp_tensor_data(y);
    int64_t i = 0;
    for (int64_t batch = 0; batch < 2; batch++)
        for (int64_t h = 0; h < 4; h++)
            for (int64_t s = 0; s < 6; s++)
                for (int64_t d = 0; d < 3; d++, i++)
                    ck_assert_float_eq(a[i], (float)(s * 24 + batch * 12 + 3 * h + d));
}

/* Normalizes `text` (a chain over q: [shape], iota in), checks that it
 * changed and that the graph before and after both give the heads, the
 * result of rank `rank`; returns the normalized graph. */
static tp_graph *rewrite_heads(const char *text, int ndim, const int64_t *shape, int rank) {
    tp_graph *in = parse_graph(text);
    bool changed = false;
    tp_graph *g = run_one_pass(in, TP_PASS_NORMALIZE, &changed);
    ck_assert(changed);
    const tp_graph *graphs[2] = {in, g};
    for (int i = 0; i < 2; i++) {
        tp_tensor *y = run_on_iota(graphs[i], ndim, shape);
        ck_assert_int_eq(tp_tensor_ndim(y), rank);
        assert_heads_of_iota(y);
        tp_tensor_release(y);
    }
    tp_graph_destroy(in);
    return g;
}

/* Attention's heads: q [S=6, B=2, 12] -> [6, 8, 3] (batch x 4 heads merged)
 * -> permute -> [2, 4, 6, 3]; y[b][h][s][d] = q[s][b][3 h + d]. */
static const char heads_chain[] = "graph t(%q: f32[6, 2, 12]) {\n"
                                  "  %m: f32[6, 8, 3] = reshape(%q) {shape=[6, 8, 3]}\n"
                                  "  %p: f32[8, 6, 3] = permute(%m) {perm=[1, 0, 2]}\n"
                                  "  %y: f32[2, 4, 6, 3] = reshape(%p) {shape=[2, 4, 6, 3]}\n"
                                  "  return %y\n"
                                  "}\n";

START_TEST(splits_merged_heads_instead_of_merging) {
    const int64_t shape[3] = {6, 2, 12};
    tp_graph *g = rewrite_heads(heads_chain, 3, shape, 4);
    /* y = permute(reshape(q) to [6, 2, 4, 3]) by [1, 2, 0, 3]: no merge left */
    tp_value_id y = tp_graph_output(g, 0);
    ck_assert_str_eq(output_op(g, 0), "permute");
    const tp_attrs *perm = tp_graph_value_attrs(g, y);
    ck_assert_int_eq(perm->nperm, 4);
    const int64_t want_perm[4] = {1, 2, 0, 3}, want_cut[4] = {6, 2, 4, 3};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(perm->perm[i], want_perm[i]);
    tp_value_id cut = tp_graph_value_operand(g, y, 0);
    ck_assert_str_eq(tp_graph_value_op(g, cut), "reshape");
    ck_assert_str_eq(tp_graph_value_name(g, tp_graph_value_operand(g, cut, 0)), "q");
    const tp_type *cut_type = tp_graph_value_type(g, cut);
    ck_assert_int_eq(cut_type->ndim, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(cut_type->dims[i], want_cut[i]);
    ck_assert_str_eq(tp_graph_value_name(g, y), "y");
    tp_graph_destroy(g);
}
END_TEST

/* The last shape merges factors ([2, 4] of the heads' 8 stay cut, the
 * sequence and head width merge): a last reshape merges them. */
START_TEST(merges_at_the_end_when_the_last_shape_asks) {
    const char text[] = "graph t(%q: f32[6, 2, 12]) {\n"
                        "  %m: f32[6, 8, 3] = reshape(%q) {shape=[6, 8, 3]}\n"
                        "  %p: f32[8, 6, 3] = permute(%m) {perm=[1, 0, 2]}\n"
                        "  %y: f32[2, 4, 18] = reshape(%p) {shape=[2, 4, 18]}\n"
                        "  return %y\n"
                        "}\n";
    const int64_t shape[3] = {6, 2, 12};
    tp_graph *g = rewrite_heads(text, 3, shape, 3);
    ck_assert_str_eq(output_op(g, 0), "reshape");
    tp_value_id moved = tp_graph_value_operand(g, tp_graph_output(g, 0), 0);
    ck_assert_str_eq(tp_graph_value_op(g, moved), "permute");
    tp_graph_destroy(g);
}
END_TEST

/* [4, 6] permuted, then [3, 8]: no shape refines both; the chain stays. */
START_TEST(keeps_chain_without_common_refinement) {
    bool changed = true;
    tp_graph *g = normalize("graph t(%x: f32[6, 4]) {\n"
                            "  %m: f32[6, 4] = reshape(%x) {shape=[6, 4]}\n"
                            "  %p: f32[4, 6] = permute(%m) {perm=[1, 0]}\n"
                            "  %y: f32[3, 8] = reshape(%p) {shape=[3, 8]}\n"
                            "  return %y\n"
                            "}\n",
                            &changed);
    ck_assert(!changed);
    ck_assert_int_eq(count_op(g, "reshape"), 2);
    tp_graph_destroy(g);
}
END_TEST

/* A chain that cuts nothing of the middle shape is already in that form. */
START_TEST(keeps_chain_that_cuts_nothing) {
    bool changed = true;
    tp_graph *g = normalize("graph t(%x: f32[6, 4]) {\n"
                            "  %m: f32[2, 3, 4] = reshape(%x) {shape=[2, 3, 4]}\n"
                            "  %p: f32[4, 2, 3] = permute(%m) {perm=[2, 0, 1]}\n"
                            "  %y: f32[4, 6] = reshape(%p) {shape=[4, 6]}\n"
                            "  return %y\n"
                            "}\n",
                            &changed);
    ck_assert(!changed);
    tp_graph_destroy(g);
}
END_TEST

/* Size-1 dimensions on either side take no factor and do not block it. */
START_TEST(rewrites_around_unit_dimensions) {
    const char text[] = "graph t(%q: f32[1, 6, 2, 12]) {\n"
                        "  %m: f32[6, 1, 8, 3] = reshape(%q) {shape=[6, 1, 8, 3]}\n"
                        "  %p: f32[8, 1, 6, 3] = permute(%m) {perm=[2, 1, 0, 3]}\n"
                        "  %y: f32[2, 4, 1, 6, 3] = reshape(%p) {shape=[2, 4, 1, 6, 3]}\n"
                        "  return %y\n"
                        "}\n";
    const int64_t shape[4] = {1, 6, 2, 12};
    tp_graph_destroy(rewrite_heads(text, 4, shape, 5));
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
    tcase_add_test(c, splits_merged_heads_instead_of_merging);
    tcase_add_test(c, merges_at_the_end_when_the_last_shape_asks);
    tcase_add_test(c, keeps_chain_without_common_refinement);
    tcase_add_test(c, keeps_chain_that_cuts_nothing);
    tcase_add_test(c, rewrites_around_unit_dimensions);
    suite_add_tcase(s, c);
    return s;
}
