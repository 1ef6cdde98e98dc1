/* Helpers shared by the IR suites: building types and graphs in one line,
 * parsing text that must parse, reading tensors back. */
#ifndef TP_TESTS_IR_HELPERS_H
#define TP_TESTS_IR_HELPERS_H

#include <stdarg.h>
#include <string.h>

#include "tensorplay/graph.h"
#include "tp_test.h"

/* tp_type of `dtype` with `ndim` sizes given as int64_t varargs. */
static inline tp_type ir_type(tp_dtype dtype, int ndim, ...) {
    tp_type type = {.dtype = dtype, .ndim = ndim};
    va_list args;
    va_start(args, ndim);
    for (int i = 0; i < ndim; i++) type.dims[i] = va_arg(args, int64_t);
    va_end(args);
    return type;
}

/* Parses `text`; fails the test with the parser's message otherwise. */
static inline tp_graph *ir_parse_ok(const char *text) {
    tp_graph *graph = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "t.tpir", &graph);
    ck_assert_msg(status == TP_OK, "parse failed: %s", tp_last_error());
    return graph;
}

/* Parses `text`, expects TP_ERR_PARSE (or `status`), returns the message. */
static inline const char *ir_parse_error(const char *text, tp_status expected_status) {
    tp_graph *graph = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "t.tpir", &graph);
    ck_assert_msg(status == expected_status, "expected status %s, got %s (%s)",
                  tp_status_name(expected_status), tp_status_name(status), tp_last_error());
    ck_assert_ptr_null(graph);
    return tp_last_error();
}

/* Prints a graph into a malloc'd string the caller frees with tp_free. */
static inline char *ir_print_ok(const tp_graph *graph) {
    char *text = NULL;
    ck_assert_int_eq(tp_graph_print(graph, &text), TP_OK);
    return text;
}

#define IR_T(x) ((int64_t)(x))

#endif
