/* tp-bench compiles what a user's tp_compile_graph compiles
 * (tools/tp-bench/pass_pipeline.c): the case's graph after the core's pass
 * pipeline, constants folded, composites the backend claims kept. Checked
 * on a small graph with the eager backend (built in, it claims every node)
 * against the pipeline run without claims, which decomposes everything. */
#include <string.h>

#include "pass_pipeline.h"
#include "tp_test.h"

static const char graph_text[] = "graph g(%x: f32[2, 4], %w: f32[4], %b: f32[4]) {\n"
                                 "  %one: f32[] = full() {shape=[], dtype=f32, value=1}\n"
                                 "  %two: f32[] = full() {shape=[], dtype=f32, value=2}\n"
                                 "  %three: f32[] = add(%one, %two)\n"
                                 "  %y: f32[2, 4] = mul(%x, %three)\n"
                                 "  %z: f32[2, 4] = layer_norm(%y, %w, %b) {axis=-1, eps=1e-05}\n"
                                 "  return %z\n"
                                 "}\n";

/* How many nodes of `graph` run `op`. */
static int count_op(const tp_graph *graph, const char *op) {
    int count = 0;
    for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++) {
        const char *name = tp_graph_value_op(graph, v);
        count += name && !strcmp(name, op);
    }
    return count;
}

START_TEST(the_graph_compiled_is_the_pipelines_with_the_backends_composites_kept) {
    tp_graph *g = NULL, *compiled = NULL, *no_claims = NULL;
    ck_assert_int_eq(tp_graph_parse(graph_text, strlen(graph_text), "g.tpir", &g), TP_OK);
    tp_backend *eager = NULL;
    ck_assert_msg(tp_backend_lookup("eager", &eager) == TP_OK, "%s", tp_last_error());
    double seconds = -1;
    ck_assert_msg(bench_pass_pipeline(eager, g, &compiled, &seconds) == TP_OK, "%s",
                  tp_last_error());
    ck_assert(seconds >= 0);
    /* 1 + 2 folded: the add of two constants is gone, the multiply stays */
    ck_assert_int_eq(count_op(g, "add"), 1);
    ck_assert_int_eq(count_op(compiled, "add"), 0);
    ck_assert_int_eq(count_op(compiled, "mul"), 1);
    /* the claimed composite is kept whole */
    ck_assert_int_eq(count_op(compiled, "layer_norm"), 1);
    /* without claims decompose expands it: the pipeline above did keep it */
    ck_assert_int_eq(tp_pass_pipeline_run(g, NULL, &no_claims), TP_OK);
    ck_assert_int_eq(count_op(no_claims, "layer_norm"), 0);
    ck_assert_int_gt(tp_graph_num_values(no_claims), tp_graph_num_values(compiled));
    tp_graph_destroy(no_claims);
    tp_graph_destroy(compiled);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(pass_pipeline) {
    Suite *suite = suite_create("bench.pass_pipeline");
    TCase *tc = tcase_create("pass_pipeline");
    tcase_add_test(tc, the_graph_compiled_is_the_pipelines_with_the_backends_composites_kept);
    suite_add_tcase(suite, tc);
    return suite;
}
