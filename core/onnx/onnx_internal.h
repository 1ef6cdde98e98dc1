/* Shared inside the ONNX importer (core/onnx): the importer's state, the
 * value table that maps ONNX names to graph values or import-time constants,
 * and the helpers the op converters build on. Nothing outside core/onnx
 * includes this.
 *
 * A value is a graph value (id), a constant known at import time (constant,
 * materialized as a `constant` node only when a graph node or the graph's
 * outputs need it), or an output the importer does not produce (unsupported:
 * using it is an error that names the producing node).
 */
#ifndef TP_CORE_ONNX_ONNX_INTERNAL_H
#define TP_CORE_ONNX_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"
#include "tensorplay/ops.h"

/* Bounds that keep hostile files from exhausting memory before the checks. */
#define TP_ONNX_MAX_NODES    1000000
#define TP_ONNX_MAX_ELEMENTS (INT64_C(1) << 34) /* elements in one tensor */
#define TP_ONNX_MAX_FOLD     (1 << 24)          /* elements of a result folded at import time */
#define TP_ONNX_MAX_CONCAT   64 /* inputs of one concat (the op table's max arity) */

typedef int32_t onnx_handle; /* index into onnx_importer.values; -1 none */
#define ONNX_NO_HANDLE ((onnx_handle)-1)

typedef struct onnx_value {
    char *name;                 /* ONNX name, owned; NULL for intermediates */
    tp_value_id id;             /* the graph value, or TP_NO_VALUE */
    tp_tensor *constant;        /* owned reference when known at import time */
    const tp_tensor *known;     /* a graph input's value given at import (tp_onnx_known_input) */
    const char *unsupported_by; /* node description when this output is not produced */
} onnx_value;

typedef struct onnx_importer {
    tp_graph *graph;
    const char *file;                 /* for messages */
    const char *base_dir;             /* for external data; NULL refuses it */
    int64_t opset;                    /* version of the default domain */
    tp_ctx *ctx;                      /* folds ops whose operands are all constants */
    const tp_onnx_known_input *known; /* given input values, borrowed */
    int num_known;

    onnx_value *values;
    int32_t num_values, value_capacity;
    onnx_handle *name_table; /* open addressing, ONNX name -> handle */
    int32_t name_slots;

    const Onnx__NodeProto *node; /* the node being converted */
    int node_index;
    char node_text[384]; /* "node 'NAME' (OP)" of the current node */
} onnx_importer;

/* ---- values (onnx_values.c) ---- */
onnx_handle onnx_find(const onnx_importer *im, const char *name);
/* Binds `name` to an existing handle (Identity) or to a new value. */
tp_status onnx_bind(onnx_importer *im, const char *name, onnx_handle handle);
tp_status onnx_new_graph_value(onnx_importer *im, tp_value_id id, onnx_handle *out);
/* Takes the reference to `constant`. */
tp_status onnx_new_constant(onnx_importer *im, tp_tensor *constant, onnx_handle *out);
/* The graph value of a handle; a constant becomes a `constant` node here. */
tp_status onnx_graph_value(onnx_importer *im, onnx_handle handle, tp_value_id *out);
void onnx_value_type(const onnx_importer *im, onnx_handle handle, tp_type *out);
void onnx_values_free(onnx_importer *im);

/* ---- emitting (onnx_values.c) ---- */
/* Adds op `op_name` on `operands`; folds it at import time when all operands
 * are constants. `name` (ONNX name, may be NULL) names the graph value. */
tp_status onnx_emit(onnx_importer *im, const char *op_name, const onnx_handle *operands, int count,
                    const tp_attrs *attrs, const char *name, onnx_handle *out);
/* Error prefixed with the current node ("FILE: node 'n' (Op): ..."). */
tp_status onnx_node_error(onnx_importer *im, tp_status status, const char *format, ...)
    TP_PRINTF(3, 4);

/* ---- tensors (onnx_tensor.c) ---- */
tp_status onnx_dtype(int32_t onnx_type, tp_dtype *out);
const char *onnx_dtype_name(int32_t onnx_type);
/* A TensorProto as a new tensor; `what` names it in messages. */
tp_status onnx_tensor_read(const onnx_importer *im, const Onnx__TensorProto *proto,
                           const char *what, tp_tensor **out);

/* ---- attributes (onnx_attrs.c) ---- */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *node, const char *name);
tp_status onnx_attr_int(onnx_importer *im, const char *name, int64_t fallback, int64_t *out);
tp_status onnx_attr_float(onnx_importer *im, const char *name, double fallback, double *out);
/* `*count` = -1 when the attribute is absent. */
tp_status onnx_attr_ints(onnx_importer *im, const char *name, int64_t *out, int max, int *count);
tp_status onnx_attr_string(onnx_importer *im, const char *name, const char *fallback,
                           const char **out);

/* ---- node inputs (onnx_attrs.c) ---- */
/* Handle of input `index`; ONNX_NO_HANDLE when absent (missing or ""). */
onnx_handle onnx_input(const onnx_importer *im, int index);
tp_status onnx_required_input(onnx_importer *im, int index, onnx_handle *out);
/* Integer values of a constant input (shape, axes, pads...); `*count` = -1
 * when the input is absent. Errors when it is not known at import time. */
tp_status onnx_constant_ints(onnx_importer *im, int index, const char *what, int64_t *out, int max,
                             int *count);
tp_status onnx_constant_scalar(onnx_importer *im, int index, const char *what, double *out);

/* ---- ops (onnx_ops.c) ---- */
typedef tp_status (*onnx_convert_fn)(onnx_importer *im);
onnx_convert_fn onnx_converter(const char *op_type);

/* ---- sliding windows (onnx_conv.c) ---- */
tp_status onnx_convert_conv(onnx_importer *im);
tp_status onnx_convert_conv_transpose(onnx_importer *im);
tp_status onnx_convert_max_pool(onnx_importer *im);
tp_status onnx_convert_average_pool(onnx_importer *im);
tp_status onnx_convert_global_average_pool(onnx_importer *im);
tp_status onnx_convert_global_max_pool(onnx_importer *im);

#endif
