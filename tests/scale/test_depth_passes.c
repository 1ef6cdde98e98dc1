/* Depth in the core: the verifier, printer, parser, interpreter and each
 * pass of the pipeline take a chain of 100,000 nodes (scale_chains.h) and
 * do to it what they do to a short one, each checked against what the
 * chain's construction says the result must be. Times are not asserted
 * (bench_scale prints them). */
#include <string.h>

#include "scale_chains.h"
#include "tensorplay/passes.h"
#include "tp_test.h"

static tp_graph *run_pass(tp_pass_id pass, const tp_graph *graph, bool *changed) {
    tp_graph *out = NULL;
    tp_status status = tp_pass_run(pass, graph, NULL, &out, changed);
    ck_assert_msg(status == TP_OK, "%s: %s", tp_pass_name(pass), tp_last_error());
    ck_assert_int_eq(tp_graph_verify(out), TP_OK);
    return out;
}

static int count_op(const tp_graph *graph, const char *op) {
    int count = 0;
    for (int v = 0; v < tp_graph_num_values(graph); v++) {
        const char *name = tp_graph_value_op(graph, v);
        count += name && strcmp(name, op) == 0;
    }
    return count;
}

START_TEST(chain_verifies_prints_and_parses_back) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    ck_assert_int_eq(tp_graph_verify(graph), TP_OK);
    char *text = NULL;
    ck_assert_int_eq(tp_graph_print(graph, &text), TP_OK);
    tp_graph *parsed = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "chain.tpir", &parsed);
    ck_assert_msg(status == TP_OK, "parse: %s", tp_last_error());
    ck_assert_int_eq(tp_graph_num_values(parsed), nodes + 1);
    ck_assert_int_eq(count_op(parsed, "add"), nodes);
    char *again = NULL;
    ck_assert_int_eq(tp_graph_print(parsed, &again), TP_OK);
    ck_assert_str_eq(again, text);
    tp_free(again);
    tp_free(text);
    tp_graph_destroy(parsed);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(chain_interprets) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    tp_tensor *x = scale_chain_input(), *out = NULL;
    tp_status status = tp_graph_run(graph, &x, 1, &out);
    ck_assert_msg(status == TP_OK, "run: %s", tp_last_error());
    scale_expect_multiple(out, nodes + 1.0, "interpreter");
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}
END_TEST

static tp_value_id full_of(tp_graph *graph, double value) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = 1;
    attrs.shape[0] = 4;
    attrs.dtype = TP_F32;
    attrs.value = value;
    return scale_node(graph, "full", 0, 0, 0, &attrs);
}

/* v = v + 0 a hundred thousand times: every add folds away, x is returned. */
START_TEST(normalize_folds_a_chain_of_identities) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_create("identities", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id zero = full_of(graph, 0.0), v = x;
    for (int i = 0; i < nodes; i++) v = scale_node(graph, "add", v, zero, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    bool changed = false;
    tp_graph *out = run_pass(TP_PASS_NORMALIZE, graph, &changed);
    ck_assert(changed);
    ck_assert_int_eq(tp_graph_output(out, 0), tp_graph_input(out, 0));
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

/* c = c + one from c = one: folds to one constant holding N + 1. */
START_TEST(constfold_folds_a_constant_chain) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create("constants", &graph), TP_OK);
    tp_value_id one = full_of(graph, 1.0), v = one;
    for (int i = 0; i < nodes; i++) v = scale_node(graph, "add", v, one, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    bool changed = false;
    tp_graph *out = run_pass(TP_PASS_CONSTFOLD, graph, &changed);
    ck_assert(changed);
    tp_value_id result = tp_graph_output(out, 0);
    ck_assert_str_eq(tp_graph_value_op(out, result), "constant");
    const tp_tensor *payload = tp_graph_value_attrs(out, result)->data;
    for (int i = 0; i < 4; i++) ck_assert_double_eq(tp_tensor_get_f64(payload, i), nodes + 1.0);
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

/* A chain of silu: each becomes its primitive chain; no composite is left. */
START_TEST(decompose_expands_a_chain_of_composites) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_create("composites", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id v = x;
    for (int i = 0; i < nodes; i++) v = scale_node(graph, "silu", v, 0, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    bool changed = false;
    tp_graph *out = run_pass(TP_PASS_DECOMPOSE, graph, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(out, "silu"), 0);
    ck_assert_int_eq(count_op(out, "sigmoid") + count_op(out, "exp") > 0, 1);
    ck_assert_int_gt(tp_graph_num_values(out), nodes + 1);
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

/* Two identical chains from x, subtracted: cse merges the second into the
 * first in one sweep (N + 1 adds and a sub are left of 2N and a sub). */
START_TEST(cse_merges_twin_chains) {
    int nodes = scale_chain_nodes() / 2;
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_create("twins", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id a = x, b = x;
    for (int i = 0; i < nodes; i++) a = scale_node(graph, "add", a, x, 2, NULL);
    for (int i = 0; i < nodes; i++) b = scale_node(graph, "add", b, x, 2, NULL);
    tp_value_id difference = scale_node(graph, "sub", a, b, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &difference, 1), TP_OK);
    bool changed = false;
    tp_graph *out = run_pass(TP_PASS_CSE, graph, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(out, "add"), nodes);
    tp_value_id result = tp_graph_output(out, 0);
    ck_assert_int_eq(tp_graph_value_operand(out, result, 0),
                     tp_graph_value_operand(out, result, 1));
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

/* Each step of the chain also computes an unread exp: dce drops all of them. */
START_TEST(dce_drops_the_dead_side_of_a_chain) {
    int nodes = scale_chain_nodes() / 2;
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_create("dead", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id v = x;
    for (int i = 0; i < nodes; i++) {
        v = scale_node(graph, "add", v, x, 2, NULL);
        scale_node(graph, "exp", v, 0, 1, NULL);
    }
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    bool changed = false;
    tp_graph *out = run_pass(TP_PASS_DCE, graph, &changed);
    ck_assert(changed);
    ck_assert_int_eq(count_op(out, "exp"), 0);
    ck_assert_int_eq(count_op(out, "add"), nodes);
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(shapeprop_keeps_a_chain) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    bool changed = true;
    tp_graph *out = run_pass(TP_PASS_SHAPEPROP, graph, &changed);
    ck_assert(!changed);
    ck_assert_int_eq(tp_graph_num_values(out), nodes + 1);
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(pipeline_keeps_a_chain) {
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.verify_each_pass = true;
    tp_graph *out = NULL;
    tp_status status = tp_pass_pipeline_run(graph, &options, &out);
    ck_assert_msg(status == TP_OK, "pipeline: %s", tp_last_error());
    ck_assert_int_eq(count_op(out, "add"), nodes);
    tp_graph_destroy(out);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(depth_passes) {
    Suite *suite = suite_create("depth_passes");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 600);
    tcase_add_test(core, chain_verifies_prints_and_parses_back);
    tcase_add_test(core, chain_interprets);
    tcase_add_test(core, normalize_folds_a_chain_of_identities);
    tcase_add_test(core, constfold_folds_a_constant_chain);
    tcase_add_test(core, decompose_expands_a_chain_of_composites);
    tcase_add_test(core, cse_merges_twin_chains);
    tcase_add_test(core, dce_drops_the_dead_side_of_a_chain);
    tcase_add_test(core, shapeprop_keeps_a_chain);
    tcase_add_test(core, pipeline_keeps_a_chain);
    suite_add_tcase(suite, core);
    return suite;
}
