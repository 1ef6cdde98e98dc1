/* Depth in the cuda backend without a GPU: a chain of adds far deeper than
 * the C stack allowed before the emitter's walk used an explicit stack
 * compiles to PTX, cut into kernels of at most TPCOMMON_FUSION_MAX_MEMBERS
 * inlined nodes each (plugins/common/tpcommon_fusion.h), so NVRTC never
 * sees one expression thousands of operations deep. */
#include "cuda_harness.h"
#include "tpcommon_fusion.h"

START_TEST(long_add_chain_compiles_in_capped_kernels) {
    int nodes = 12 * TPCOMMON_FUSION_MAX_MEMBERS + 212;
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {256}};
    tp_value_id x = TP_NO_VALUE, v;
    ck_assert_int_eq(tp_graph_create("chain", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    v = x;
    for (int i = 0; i < nodes; i++) {
        tp_value_id operands[2] = {v, x};
        ck_assert_int_eq(tp_graph_add_node(graph, "add", operands, 2, NULL, NULL, &v), TP_OK);
    }
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    /* each kernel inlines the cap's worth of adds; the last one the rest */
    int expected = (nodes + TPCOMMON_FUSION_MAX_MEMBERS - 1) / TPCOMMON_FUSION_MAX_MEMBERS;
    ck_assert_int_eq(cuda_compile_ptx(graph, "compute_75"), expected);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(cuda_ptx_depth) {
    Suite *suite = suite_create("cuda_ptx_depth");
    TCase *cases = tcase_create("depth");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, long_add_chain_compiles_in_capped_kernels);
    suite_add_tcase(suite, cases);
    return suite;
}
