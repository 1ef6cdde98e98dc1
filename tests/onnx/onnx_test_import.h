/* What the importer suites share: importing a model built with
 * onnx_model_builder.h, and the shorthands their model literals use. */
#ifndef TP_TESTS_ONNX_TEST_IMPORT_H
#define TP_TESTS_ONNX_TEST_IMPORT_H

#include "onnx_model_builder.h"
#include "tensorplay/onnx.h"
#include "tp_test.h"

#define FLOAT      ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The graph of `m`; fails the test with the importer's message otherwise. */
static inline tp_graph *import(onnx_test_model *m) {
    size_t size;
    uint8_t *bytes = onnx_test_pack(m, &size);
    tp_graph *graph = NULL;
    tp_status status = tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, NULL, 0, &graph);
    ck_assert_msg(status == TP_OK, "import failed: %s", tp_last_error());
    return graph;
}

#endif
