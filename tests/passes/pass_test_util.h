/* Helpers shared by the pass suites: parse a .tpir text, run one pass or the
 * pipeline (verifying after each pass), and read a graph's structure. */
#ifndef TP_TESTS_PASSES_PASS_TEST_UTIL_H
#define TP_TESTS_PASSES_PASS_TEST_UTIL_H

#include <string.h>

#include "tensorplay/graph.h"
#include "tensorplay/passes.h"
#include "tp_test.h"

static inline tp_graph *parse_graph(const char *text) {
    tp_graph *graph = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "test.tpir", &graph);
    ck_assert_msg(status == TP_OK, "parse: %s", tp_last_error());
    return graph;
}

/* Runs one pass with verification; *changed may be NULL. */
static inline tp_graph *run_one_pass(const tp_graph *in, tp_pass_id pass, bool *changed) {
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.verify_each_pass = true;
    tp_graph *out = NULL;
    bool ignored;
    tp_status status = tp_pass_run(pass, in, &options, &out, changed ? changed : &ignored);
    ck_assert_msg(status == TP_OK, "%s: %s", tp_pass_name(pass), tp_last_error());
    return out;
}

/* Parses `text`, runs `pass`, destroys the parsed graph. */
static inline tp_graph *pass_on_text(const char *text, tp_pass_id pass, bool *changed) {
    tp_graph *in = parse_graph(text);
    tp_graph *out = run_one_pass(in, pass, changed);
    tp_graph_destroy(in);
    return out;
}

/* Nodes of op `op_name` some output depends on. */
static inline int count_live_op(const tp_graph *graph, const char *op_name) {
    int n = tp_graph_num_values(graph);
    bool live[4096] = {false};
    ck_assert_int_le(n, 4096);
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) live[tp_graph_output(graph, i)] = true;
    int count = 0;
    for (int v = n - 1; v >= 0; v--) {
        if (!live[v]) continue;
        const char *op = tp_graph_value_op(graph, v);
        if (op && strcmp(op, op_name) == 0) count++;
        for (int i = 0; i < tp_graph_value_num_operands(graph, v); i++)
            live[tp_graph_value_operand(graph, v, i)] = true;
    }
    return count;
}

/* Nodes of op `op_name`, live or not. */
static inline int count_op(const tp_graph *graph, const char *op_name) {
    int count = 0;
    for (int v = 0; v < tp_graph_num_values(graph); v++) {
        const char *op = tp_graph_value_op(graph, v);
        if (op && strcmp(op, op_name) == 0) count++;
    }
    return count;
}

static inline int count_nodes(const tp_graph *graph) {
    return tp_graph_num_values(graph) - tp_graph_num_inputs(graph);
}

/* The value named `name` (ck fails when absent). */
static inline tp_value_id value_named(const tp_graph *graph, const char *name) {
    for (int v = 0; v < tp_graph_num_values(graph); v++)
        if (strcmp(tp_graph_value_name(graph, v), name) == 0) return v;
    ck_abort_msg("no value named %%%s", name);
    return TP_NO_VALUE;
}

/* Op of output `index` ("input" for an input). */
static inline const char *output_op(const tp_graph *graph, int index) {
    const char *op = tp_graph_value_op(graph, tp_graph_output(graph, index));
    return op ? op : "input";
}

#endif
