/* Reading a node's attributes (typed, with defaults, wrong types named) and
 * its inputs, among them the ones a static compiler needs at import time
 * (Reshape's shape, reduce axes, Slice's bounds...). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "onnx_internal.h"

static const char *attr_type_name(int type) {
    static const char *const names[] = {
        "UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
        "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
        "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "UNKNOWN";
}

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *node, const char *name) {
    for (size_t i = 0; i < node->n_attribute; i++)
        if (node->attribute[i]->name && strcmp(node->attribute[i]->name, name) == 0)
            return node->attribute[i];
    return NULL;
}

/* The attribute when present with type `expected`; an error when its type
 * says otherwise (files without types are judged by the field that is set). */
static tp_status typed_attr(onnx_importer *im, const char *name,
                            Onnx__AttributeProto__AttributeType expected, bool field_set,
                            const Onnx__AttributeProto **out) {
    const Onnx__AttributeProto *attr = onnx_attr(im->node, name);
    *out = NULL;
    if (!attr) return TP_OK;
    bool matches = attr->has_type ? attr->type == expected : field_set;
    if (!matches)
        return onnx_node_error(im, TP_ERR_PARSE, "attribute '%s' must be %s, is %s", name,
                               attr_type_name(expected),
                               attr->has_type ? attr_type_name(attr->type) : "untyped");
    *out = attr;
    return TP_OK;
}

tp_status onnx_attr_int(onnx_importer *im, const char *name, int64_t fallback, int64_t *out) {
    const Onnx__AttributeProto *attr = onnx_attr(im->node, name);
    *out = fallback;
    if (!attr) return TP_OK;
    TP_TRY(typed_attr(im, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, attr->has_i, &attr));
    if (attr) *out = attr->i;
    return TP_OK;
}

tp_status onnx_attr_float(onnx_importer *im, const char *name, double fallback, double *out) {
    const Onnx__AttributeProto *attr = onnx_attr(im->node, name);
    *out = fallback;
    if (!attr) return TP_OK;
    TP_TRY(typed_attr(im, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, attr->has_f, &attr));
    if (attr) *out = attr->f;
    return TP_OK;
}

tp_status onnx_attr_ints(onnx_importer *im, const char *name, int64_t *out, int max, int *count) {
    const Onnx__AttributeProto *attr = onnx_attr(im->node, name);
    *count = -1;
    if (!attr) return TP_OK;
    TP_TRY(
        typed_attr(im, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, attr->n_ints > 0, &attr));
    if ((int64_t)attr->n_ints > max)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "attribute '%s' has %zu values (at most %d)",
                               name, attr->n_ints, max);
    for (size_t i = 0; i < attr->n_ints; i++) out[i] = attr->ints[i];
    *count = (int)attr->n_ints;
    return TP_OK;
}

tp_status onnx_attr_string(onnx_importer *im, const char *name, const char *fallback,
                           const char **out) {
    static char buffer[256];
    const Onnx__AttributeProto *attr = onnx_attr(im->node, name);
    *out = fallback;
    if (!attr) return TP_OK;
    TP_TRY(typed_attr(im, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, attr->has_s, &attr));
    size_t length = attr->s.len < sizeof buffer - 1 ? attr->s.len : sizeof buffer - 1;
    if (length) memcpy(buffer, attr->s.data, length);
    buffer[length] = '\0';
    *out = buffer;
    return TP_OK;
}

onnx_handle onnx_input(const onnx_importer *im, int index) {
    if (index >= (int)im->node->n_input) return ONNX_NO_HANDLE;
    const char *name = im->node->input[index];
    if (!name || !name[0]) return ONNX_NO_HANDLE;
    return onnx_find(im, name);
}

tp_status onnx_required_input(onnx_importer *im, int index, onnx_handle *out) {
    *out = onnx_input(im, index);
    if (*out == ONNX_NO_HANDLE)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "input %d is required but missing", index);
    if (im->values[*out].unsupported_by) {
        tp_value_id ignored;
        return onnx_graph_value(im, *out, &ignored); /* the error naming the producer */
    }
    return TP_OK;
}

static tp_status constant_input(onnx_importer *im, int index, const char *what, tp_tensor **out) {
    onnx_handle handle = onnx_input(im, index);
    *out = NULL;
    if (handle == ONNX_NO_HANDLE) return TP_OK;
    if (im->values[handle].known) {
        *out = (tp_tensor *)im->values[handle].known;
        return TP_OK;
    }
    if (!im->values[handle].constant)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "input %d ('%s', the %s) must be known at import time: an "
                               "initializer, a Constant, computed from those alone, or a graph "
                               "input whose value is given at import (tpc run: its --arg file)",
                               index, im->node->input[index], what);
    *out = im->values[handle].constant;
    return TP_OK;
}

tp_status onnx_constant_ints(onnx_importer *im, int index, const char *what, int64_t *out, int max,
                             int *count) {
    tp_tensor *tensor;
    *count = -1;
    TP_TRY(constant_input(im, index, what, &tensor));
    if (!tensor) return TP_OK;
    tp_dtype dtype = tp_tensor_dtype(tensor);
    if (dtype != TP_I64 && dtype != TP_I32)
        return onnx_node_error(im, TP_ERR_DTYPE, "input %d (the %s) must be int64 or int32, is %s",
                               index, what, tp_dtype_name(dtype));
    int64_t numel = tp_tensor_numel(tensor);
    if (numel > max)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "input %d (the %s) has %" PRId64 " values (at most %d)", index, what,
                               numel, max);
    const void *data = tp_tensor_data(tensor);
    for (int64_t i = 0; i < numel; i++)
        out[i] = dtype == TP_I64 ? ((const int64_t *)data)[i] : ((const int32_t *)data)[i];
    *count = (int)numel;
    return TP_OK;
}

tp_status onnx_constant_scalar(onnx_importer *im, int index, const char *what, double *out) {
    tp_tensor *tensor;
    TP_TRY(constant_input(im, index, what, &tensor));
    if (!tensor) return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "the %s is missing", what);
    if (tp_tensor_numel(tensor) != 1)
        return onnx_node_error(im, TP_ERR_SHAPE, "the %s must have one element, has %" PRId64, what,
                               tp_tensor_numel(tensor));
    *out = tp_tensor_get_f64(tensor, 0);
    return TP_OK;
}
