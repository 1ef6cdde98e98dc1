/* fusion: regions of pointwise ops along producer edges, reduction tails,
 * region outputs, and the cuts (other kinds, shape changes, cycles). */
#include "pass_test_util.h"

typedef struct fused {
    tp_graph *graph;
    tp_fusion_plan *plan;
} fused;

static fused plan_text(const char *text) {
    fused f = {parse_graph(text), NULL};
    ck_assert_int_eq(tp_fusion_plan_build(f.graph, &f.plan), TP_OK);
    ck_assert_int_eq(f.plan->num_values, tp_graph_num_values(f.graph));
    return f;
}

static void fused_free(fused *f) {
    tp_fusion_plan_free(f->plan);
    tp_graph_destroy(f->graph);
}

static int region_of(const fused *f, const char *name) {
    return f->plan->region_of[value_named(f->graph, name)];
}

static bool is_output(const fused *f, const char *name) {
    return f->plan->is_region_output[value_named(f->graph, name)];
}

START_TEST(chain_of_pointwise_ops_is_one_region) {
    fused f = plan_text("graph t(%x: f32[4, 3], %y: f32[4, 3]) {\n"
                        "  %a: f32[4, 3] = mul(%x, %y)\n"
                        "  %b: f32[4, 3] = add(%a, %x)\n"
                        "  %c: f32[4, 3] = tanh(%b)\n"
                        "  return %c\n"
                        "}\n");
    ck_assert_int_eq(f.plan->num_regions, 1);
    ck_assert_int_eq(region_of(&f, "a"), 0);
    ck_assert_int_eq(region_of(&f, "b"), 0);
    ck_assert_int_eq(region_of(&f, "c"), 0);
    ck_assert_int_eq(region_of(&f, "x"), -1);
    ck_assert_int_eq(f.plan->regions[0].kind, TP_FUSION_POINTWISE);
    ck_assert_int_eq(f.plan->regions[0].num_members, 3);
    ck_assert_int_eq(f.plan->regions[0].reduction, TP_NO_VALUE);
    ck_assert(is_output(&f, "c"));
    ck_assert(!is_output(&f, "a"));
    ck_assert(!is_output(&f, "b"));
    fused_free(&f);
}
END_TEST

START_TEST(matmul_breaks_regions) {
    fused f = plan_text("graph t(%x: f32[2, 3], %w: f32[3, 2]) {\n"
                        "  %a: f32[2, 3] = exp(%x)\n"
                        "  %m: f32[2, 2] = matmul(%a, %w)\n"
                        "  %b: f32[2, 2] = tanh(%m)\n"
                        "  return %b\n"
                        "}\n");
    ck_assert_int_eq(f.plan->num_regions, 2);
    ck_assert_int_eq(region_of(&f, "m"), -1);
    ck_assert_int_ne(region_of(&f, "a"), region_of(&f, "b"));
    ck_assert(is_output(&f, "a")); /* read by the matmul */
    fused_free(&f);
}
END_TEST

START_TEST(broadcast_operand_joins_but_broadcast_result_starts_a_region) {
    fused f = plan_text("graph t(%x: f32[4, 3], %v: f32[3]) {\n"
                        "  %a: f32[4, 3] = exp(%x)\n"
                        "  %b: f32[4, 3] = add(%a, %v)\n"
                        "  %e: f32[3] = neg(%v)\n"
                        "  %c: f32[4, 3] = mul(%b, %e)\n"
                        "  return %c\n"
                        "}\n");
    /* %v [3] is an outside operand broadcast into a's region; %e has shape
     * [3], so it is its own region, read (broadcast) by %c. */
    ck_assert_int_eq(region_of(&f, "a"), region_of(&f, "b"));
    ck_assert_int_eq(region_of(&f, "b"), region_of(&f, "c"));
    ck_assert_int_ne(region_of(&f, "e"), region_of(&f, "c"));
    ck_assert_int_eq(f.plan->num_regions, 2);
    ck_assert(is_output(&f, "e"));
    fused_free(&f);
}
END_TEST

START_TEST(reduction_closes_its_producer_region) {
    fused f = plan_text("graph t(%x: f32[4, 3]) {\n"
                        "  %a: f32[4, 3] = exp(%x)\n"
                        "  %s: f32[4] = sum(%a) {axes=[1], keepdim=false}\n"
                        "  %n: f32[4] = neg(%s)\n"
                        "  return %n\n"
                        "}\n");
    int r = region_of(&f, "a");
    ck_assert_int_eq(region_of(&f, "s"), r);
    ck_assert_int_eq(f.plan->regions[r].kind, TP_FUSION_REDUCTION);
    ck_assert_int_eq(f.plan->regions[r].reduction, value_named(f.graph, "s"));
    ck_assert_int_ne(region_of(&f, "n"), r);
    ck_assert(is_output(&f, "s"));
    ck_assert(!is_output(&f, "a"));
    fused_free(&f);
}
END_TEST

START_TEST(join_that_would_form_a_cycle_is_refused) {
    /* a -> matmul -> b and a -> b: putting a and b in one region would need
     * the matmul inside it. */
    fused f = plan_text("graph t(%x: f32[2, 2]) {\n"
                        "  %a: f32[2, 2] = exp(%x)\n"
                        "  %m: f32[2, 2] = matmul(%a, %a)\n"
                        "  %b: f32[2, 2] = add(%a, %m)\n"
                        "  return %b\n"
                        "}\n");
    ck_assert_int_ne(region_of(&f, "a"), region_of(&f, "b"));
    ck_assert_int_ge(region_of(&f, "b"), 0);
    fused_free(&f);
}
END_TEST

START_TEST(diamond_merges_into_one_region) {
    fused f = plan_text("graph t(%x: f32[5]) {\n"
                        "  %a: f32[5] = exp(%x)\n"
                        "  %b: f32[5] = sin(%x)\n"
                        "  %c: f32[5] = add(%a, %b)\n"
                        "  return %c\n"
                        "}\n");
    ck_assert_int_eq(f.plan->num_regions, 1);
    ck_assert_int_eq(f.plan->regions[0].num_members, 3);
    ck_assert_int_eq(f.plan->regions[0].first, value_named(f.graph, "a"));
    ck_assert_int_eq(f.plan->regions[0].last, value_named(f.graph, "c"));
    fused_free(&f);
}
END_TEST

TP_TEST_SUITE(fusion) {
    Suite *s = suite_create("passes.fusion");
    TCase *c = tcase_create("fusion");
    tcase_add_test(c, chain_of_pointwise_ops_is_one_region);
    tcase_add_test(c, matmul_breaks_regions);
    tcase_add_test(c, broadcast_operand_joins_but_broadcast_result_starts_a_region);
    tcase_add_test(c, reduction_closes_its_producer_region);
    tcase_add_test(c, join_that_would_form_a_cycle_is_refused);
    tcase_add_test(c, diamond_merges_into_one_region);
    suite_add_tcase(s, c);
    return s;
}
