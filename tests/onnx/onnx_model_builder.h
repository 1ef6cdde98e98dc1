/* Builds small ONNX models in memory for the importer's tests with the
 * protobuf-c code generated from onnx.proto (the same schema the importer
 * reads, but the messages are put together by hand here, field by field,
 * so a test states exactly what the file holds). Everything is allocated in
 * one arena freed by onnx_test_model_free. */
#ifndef TP_TESTS_ONNX_MODEL_BUILDER_H
#define TP_TESTS_ONNX_MODEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef TP_WITH_ONNX
#include "onnx.pb-c.h"

typedef struct onnx_test_model {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
    void *arena[512];
    int arena_count;
} onnx_test_model;

/* A model of opset `opset` with an empty graph named "g". */
void onnx_test_model_init(onnx_test_model *m, int64_t opset);
void onnx_test_model_free(onnx_test_model *m);

/* A graph input (or output when `output`) of float type; dims < 0 are
 * dim_param dimensions named by `params` in order. */
void onnx_test_value(onnx_test_model *m, int output, const char *name, int elem_type, int ndim,
                     const int64_t *dims, const char *const *params);
/* A float initializer with raw_data of `raw_bytes` bytes (copied from data). */
Onnx__TensorProto *onnx_test_initializer(onnx_test_model *m, const char *name, int ndim,
                                         const int64_t *dims, const float *data, size_t raw_bytes);
/* An int64 initializer in the typed int64_data field. */
Onnx__TensorProto *onnx_test_int64_initializer(onnx_test_model *m, const char *name, int64_t count,
                                               const int64_t *values);
/* A node; inputs/outputs are NULL-terminated name lists. */
Onnx__NodeProto *onnx_test_node(onnx_test_model *m, const char *op_type, const char *name,
                                const char *const *inputs, const char *const *outputs);
void onnx_test_int_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name, int64_t value);
void onnx_test_float_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name, float value);
void onnx_test_ints_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                         const int64_t *values, size_t count);
void onnx_test_string_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                           const char *value);
/* The serialized model (arena-owned). */
uint8_t *onnx_test_pack(onnx_test_model *m, size_t *size);

#endif /* TP_WITH_ONNX */
#endif
