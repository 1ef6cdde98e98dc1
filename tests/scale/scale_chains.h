/* Shared by the scale suites: long chains built through the public graph
 * API, the node count they use, and a backend run of a graph. */
#ifndef TP_TESTS_SCALE_CHAINS_H
#define TP_TESTS_SCALE_CHAINS_H

#include <check.h>
#include <stdlib.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/tensor.h"

/* The depth of the long chains: 100,000 unless TP_TEST_CHAIN_NODES says
 * otherwise (the sanitizer build sets a smaller count: ASan makes the
 * backends' code generators several times slower, and what the test proves,
 * that no walk recurses per node, holds at any depth past the old limits of
 * about 2,000 (stax) and 4,500 (opencl)). */
static inline int scale_chain_nodes(void) {
    const char *text = getenv("TP_TEST_CHAIN_NODES");
    int nodes = text ? atoi(text) : 0;
    return nodes > 0 ? nodes : 100000;
}

static inline tp_value_id scale_node(tp_graph *graph, const char *op, tp_value_id a, tp_value_id b,
                                     int count, const tp_attrs *attrs) {
    tp_value_id operands[2] = {a, b}, out = TP_NO_VALUE;
    tp_status status = tp_graph_add_node(graph, op, operands, count, attrs, NULL, &out);
    ck_assert_msg(status == TP_OK, "%s: %s", op, tp_last_error());
    return out;
}

/* x: f32[4] and `nodes` adds v = v + x: the output is (nodes + 1) * x. */
static inline tp_graph *scale_add_chain(int nodes, tp_value_id *x_out) {
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_create("chain", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id v = x;
    for (int i = 0; i < nodes; i++) v = scale_node(graph, "add", v, x, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    if (x_out) *x_out = x;
    return graph;
}

/* x = [1, 2, -1, 0.5]: every partial sum k * x is exact in f32 below 2^22. */
static inline tp_tensor *scale_chain_input(void) {
    static const float values[4] = {1.0f, 2.0f, -1.0f, 0.5f};
    int64_t shape[1] = {4};
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, shape, &x), TP_OK);
    float *data = tp_tensor_data_mut(x);
    for (int i = 0; i < 4; i++) data[i] = values[i];
    return x;
}

/* Checks that out = factor * x element by element (exact: see above). */
static inline void scale_expect_multiple(const tp_tensor *out, double factor, const char *what) {
    static const double values[4] = {1.0, 2.0, -1.0, 0.5};
    ck_assert_int_eq(tp_tensor_numel(out), 4);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(tp_tensor_get_f64(out, i) == factor * values[i],
                      "%s: element %d is %.9g, expected %.9g", what, i, tp_tensor_get_f64(out, i),
                      factor * values[i]);
}

/* Compiles `graph` on `backend_name` for `x`, runs it once, returns the
 * output (a new reference). */
static inline tp_tensor *scale_run(const char *backend_name, const tp_graph *graph, tp_tensor *x) {
    tp_backend *backend = NULL;
    tp_status status = tp_backend_lookup(backend_name, &backend);
    ck_assert_msg(status == TP_OK, "lookup %s: %s", backend_name, tp_last_error());
    tp_executable *executable = NULL;
    status = tp_backend_compile(backend, graph, &x, 1, NULL, 0, &executable);
    ck_assert_msg(status == TP_OK, "%s: compile: %s", backend_name, tp_last_error());
    tp_tensor *out = NULL;
    status = tp_executable_run(executable, &x, 1, &out);
    ck_assert_msg(status == TP_OK, "%s: run: %s", backend_name, tp_last_error());
    tp_executable_destroy(executable);
    return out;
}

#endif
