/* tp_partition_plan: the split as data, for a graph split between fixture
 * speaks_1_2 (claims only add and mul) and eager, against the partition
 * derived by hand:
 *
 *   %a = add(%x, %y)   region 0 speaks_1_2: reads x, y; hands on a
 *   %e = exp(%a)       region 1 eager:      reads a;    hands on e
 *   %m = mul(%e, %y)   region 2 speaks_1_2: reads e, y; returns m
 */
#include "registry_test.h"
#include "tensorplay/compile.h"

static const char split_graph[] = "graph split(%x: f32[4], %y: f32[4]) {\n"
                                  "  %a: f32[4] = add(%x, %y)\n"
                                  "  %e: f32[4] = exp(%a)\n"
                                  "  %m: f32[4] = mul(%e, %y)\n"
                                  "  return %m\n"
                                  "}\n";

START_TEST(plan_gives_each_value_its_region_and_each_region_its_edges) {
    use_backend_files(fixture("speaks_1_2.ini"));
    tp_graph *graph = NULL, *optimized = NULL;
    ck_assert_int_eq(tp_graph_parse(split_graph, sizeof split_graph - 1, NULL, &graph), TP_OK);
    int32_t *region_of = NULL;
    tp_partition_region_info *regions = NULL;
    int count = 0;
    ck_assert_msg(tp_partition_plan(graph, "speaks_1_2", "eager", &optimized, &region_of, &regions,
                                    &count) == TP_OK,
                  "%s", tp_last_error());
    ck_assert_int_eq(tp_graph_num_values(optimized), 5);
    const int32_t expected_region[5] = {-1, -1, 0, 1, 2};
    for (int v = 0; v < 5; v++) ck_assert_int_eq(region_of[v], expected_region[v]);
    ck_assert_int_eq(count, 3);
    const char *backend[3] = {"speaks_1_2", "eager", "speaks_1_2"};
    const int32_t inputs[3] = {2, 1, 2}, outputs[3] = {1, 1, 1};
    for (int r = 0; r < 3; r++) {
        ck_assert_str_eq(regions[r].backend, backend[r]);
        ck_assert_int_eq(regions[r].num_nodes, 1);
        ck_assert_int_eq(regions[r].num_inputs, inputs[r]);
        ck_assert_int_eq(regions[r].num_outputs, outputs[r]);
    }
    tp_free(region_of);
    tp_free(regions);
    tp_graph_destroy(optimized);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(with_fallback_none_unclaimed_regions_are_named_unclaimed) {
    use_backend_files(fixture("speaks_1_2.ini"));
    tp_graph *graph = NULL, *optimized = NULL;
    ck_assert_int_eq(tp_graph_parse(split_graph, sizeof split_graph - 1, NULL, &graph), TP_OK);
    int32_t *region_of = NULL;
    tp_partition_region_info *regions = NULL;
    int count = 0;
    ck_assert_msg(tp_partition_plan(graph, "speaks_1_2", "none", &optimized, &region_of, &regions,
                                    &count) == TP_OK,
                  "%s", tp_last_error());
    ck_assert_int_eq(count, 3);
    ck_assert_str_eq(regions[1].backend, "unclaimed");
    tp_free(region_of);
    tp_free(regions);
    tp_graph_destroy(optimized);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(partition_plan) {
    Suite *suite = suite_create("registry.partition_plan");
    TCase *plan = tcase_create("plan");
    tcase_add_test(plan, plan_gives_each_value_its_region_and_each_region_its_edges);
    tcase_add_test(plan, with_fallback_none_unclaimed_regions_are_named_unclaimed);
    suite_add_tcase(suite, plan);
    return suite;
}
