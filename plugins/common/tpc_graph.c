/* plugins/common — op kinds, attribute lookup, dtype rules and use counts on
 * the plugin graph view. Owns nothing but these pure functions; see
 * tpc_graph.h. */
#include "tpc_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_entry {
    const char *name;
    tpc_kind kind;
    bool composite;
} op_entry;

/* Indexed by tpc_op; names as in core/ops/op_list.def (the public .tpir names). */
static const op_entry op_entries[TPC_OP_COUNT] = {
    [TPC_OP_NONE] = {"input", TPC_KIND_INPUT, false},
    [TPC_OP_NEG] = {"neg", TPC_KIND_POINTWISE, false},
    [TPC_OP_ABS] = {"abs", TPC_KIND_POINTWISE, false},
    [TPC_OP_EXP] = {"exp", TPC_KIND_POINTWISE, false},
    [TPC_OP_LOG] = {"log", TPC_KIND_POINTWISE, false},
    [TPC_OP_SQRT] = {"sqrt", TPC_KIND_POINTWISE, false},
    [TPC_OP_RSQRT] = {"rsqrt", TPC_KIND_POINTWISE, false},
    [TPC_OP_SIN] = {"sin", TPC_KIND_POINTWISE, false},
    [TPC_OP_COS] = {"cos", TPC_KIND_POINTWISE, false},
    [TPC_OP_TANH] = {"tanh", TPC_KIND_POINTWISE, false},
    [TPC_OP_SIGMOID] = {"sigmoid", TPC_KIND_POINTWISE, false},
    [TPC_OP_RELU] = {"relu", TPC_KIND_POINTWISE, false},
    [TPC_OP_ERF] = {"erf", TPC_KIND_POINTWISE, false},
    [TPC_OP_FLOOR] = {"floor", TPC_KIND_POINTWISE, false},
    [TPC_OP_CEIL] = {"ceil", TPC_KIND_POINTWISE, false},
    [TPC_OP_SIGN] = {"sign", TPC_KIND_POINTWISE, false},
    [TPC_OP_LOGICAL_NOT] = {"logical_not", TPC_KIND_POINTWISE, false},
    [TPC_OP_CAST] = {"cast", TPC_KIND_POINTWISE, false},
    [TPC_OP_ADD] = {"add", TPC_KIND_POINTWISE, false},
    [TPC_OP_SUB] = {"sub", TPC_KIND_POINTWISE, false},
    [TPC_OP_MUL] = {"mul", TPC_KIND_POINTWISE, false},
    [TPC_OP_DIV] = {"div", TPC_KIND_POINTWISE, false},
    [TPC_OP_POW] = {"pow", TPC_KIND_POINTWISE, false},
    [TPC_OP_MAXIMUM] = {"maximum", TPC_KIND_POINTWISE, false},
    [TPC_OP_MINIMUM] = {"minimum", TPC_KIND_POINTWISE, false},
    [TPC_OP_LT] = {"lt", TPC_KIND_POINTWISE, false},
    [TPC_OP_LE] = {"le", TPC_KIND_POINTWISE, false},
    [TPC_OP_GT] = {"gt", TPC_KIND_POINTWISE, false},
    [TPC_OP_GE] = {"ge", TPC_KIND_POINTWISE, false},
    [TPC_OP_EQ] = {"eq", TPC_KIND_POINTWISE, false},
    [TPC_OP_NE] = {"ne", TPC_KIND_POINTWISE, false},
    [TPC_OP_LOGICAL_AND] = {"logical_and", TPC_KIND_POINTWISE, false},
    [TPC_OP_LOGICAL_OR] = {"logical_or", TPC_KIND_POINTWISE, false},
    [TPC_OP_WHERE] = {"where", TPC_KIND_POINTWISE, false},
    [TPC_OP_SUM] = {"sum", TPC_KIND_REDUCTION, false},
    [TPC_OP_MEAN] = {"mean", TPC_KIND_REDUCTION, false},
    [TPC_OP_MAX] = {"max", TPC_KIND_REDUCTION, false},
    [TPC_OP_MIN] = {"min", TPC_KIND_REDUCTION, false},
    [TPC_OP_ARGMAX] = {"argmax", TPC_KIND_REDUCTION, false},
    [TPC_OP_MATMUL] = {"matmul", TPC_KIND_MATMUL, false},
    [TPC_OP_RESHAPE] = {"reshape", TPC_KIND_SHAPE, false},
    [TPC_OP_PERMUTE] = {"permute", TPC_KIND_SHAPE, false},
    [TPC_OP_TRANSPOSE] = {"transpose", TPC_KIND_SHAPE, false},
    [TPC_OP_EXPAND] = {"expand", TPC_KIND_SHAPE, false},
    [TPC_OP_SLICE] = {"slice", TPC_KIND_SHAPE, false},
    [TPC_OP_CONCAT] = {"concat", TPC_KIND_SHAPE, false},
    [TPC_OP_SQUEEZE] = {"squeeze", TPC_KIND_SHAPE, false},
    [TPC_OP_UNSQUEEZE] = {"unsqueeze", TPC_KIND_SHAPE, false},
    [TPC_OP_CONSTANT] = {"constant", TPC_KIND_CREATION, false},
    [TPC_OP_FULL] = {"full", TPC_KIND_CREATION, false},
    [TPC_OP_ARANGE] = {"arange", TPC_KIND_CREATION, false},
    [TPC_OP_SOFTMAX] = {"softmax", TPC_KIND_ROW, true},
    [TPC_OP_LOG_SOFTMAX] = {"log_softmax", TPC_KIND_ROW, true},
    [TPC_OP_LAYER_NORM] = {"layer_norm", TPC_KIND_ROW, true},
    [TPC_OP_GELU] = {"gelu", TPC_KIND_POINTWISE, true},
    [TPC_OP_SILU] = {"silu", TPC_KIND_POINTWISE, true},
    [TPC_OP_SOFTPLUS] = {"softplus", TPC_KIND_POINTWISE, true},
    [TPC_OP_LINEAR] = {"linear", TPC_KIND_MATMUL, true},
    [TPC_OP_UNKNOWN] = {"?", TPC_KIND_UNKNOWN, false},
};

tpc_op tpc_op_of(const tp_plugin_value *value) {
    if (!value->op) return TPC_OP_NONE;
    for (int op = TPC_OP_NONE + 1; op < TPC_OP_UNKNOWN; op++)
        if (strcmp(op_entries[op].name, value->op) == 0) return (tpc_op)op;
    return TPC_OP_UNKNOWN;
}

const char *tpc_op_name(tpc_op op) {
    return (unsigned)op < TPC_OP_COUNT ? op_entries[op].name : "?";
}

tpc_kind tpc_op_kind(tpc_op op) {
    return (unsigned)op < TPC_OP_COUNT ? op_entries[op].kind : TPC_KIND_UNKNOWN;
}

bool tpc_op_is_composite(tpc_op op) {
    return (unsigned)op < TPC_OP_COUNT && op_entries[op].composite;
}

/* ---- attributes ---- */

const tp_plugin_attr *tpc_attr_find(const tp_plugin_value *value, const char *name) {
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (value->attrs[i].name && strcmp(value->attrs[i].name, name) == 0)
            return &value->attrs[i];
    return NULL;
}

int64_t tpc_attr_int(const tp_plugin_value *value, const char *name, int64_t fallback) {
    const tp_plugin_attr *attr = tpc_attr_find(value, name);
    if (!attr) return fallback;
    return attr->type == TP_PLUGIN_ATTR_FLOAT ? (int64_t)attr->f : attr->i;
}

double tpc_attr_float(const tp_plugin_value *value, const char *name, double fallback) {
    const tp_plugin_attr *attr = tpc_attr_find(value, name);
    if (!attr) return fallback;
    return attr->type == TP_PLUGIN_ATTR_FLOAT ? attr->f : (double)attr->i;
}

const int64_t *tpc_attr_ints(const tp_plugin_value *value, const char *name, int32_t *count) {
    const tp_plugin_attr *attr = tpc_attr_find(value, name);
    if (!attr || attr->type != TP_PLUGIN_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = attr->count;
    return attr->ints;
}

const tp_plugin_attr *tpc_attr_tensor(const tp_plugin_value *value) {
    const tp_plugin_attr *attr = tpc_attr_find(value, "value");
    if (attr && attr->type == TP_PLUGIN_ATTR_TENSOR) return attr;
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (value->attrs[i].type == TP_PLUGIN_ATTR_TENSOR) return &value->attrs[i];
    return NULL;
}

/* ---- dtypes ---- */

const char *tpc_dtype_name(int32_t dtype) {
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? names[dtype] : "?";
}

size_t tpc_dtype_size(int32_t dtype) {
    static const size_t sizes[] = {4, 8, 4, 8, 1};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? sizes[dtype] : 0;
}

bool tpc_dtype_is_float(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64;
}

bool tpc_dtype_is_integer(int32_t dtype) {
    return dtype == TP_PLUGIN_I32 || dtype == TP_PLUGIN_I64;
}

static int category(int32_t dtype) {
    return dtype == TP_PLUGIN_BOOL ? 0 : tpc_dtype_is_integer(dtype) ? 1 : 2;
}

static int width(int32_t dtype) {
    return dtype == TP_PLUGIN_I64 || dtype == TP_PLUGIN_F64 ? 2 : 1;
}

int32_t tpc_dtype_promote(int32_t a, int32_t b) {
    if (category(a) != category(b)) return category(a) > category(b) ? a : b;
    return width(a) >= width(b) ? a : b;
}

static int32_t float_or_f32(int32_t dtype) {
    return tpc_dtype_is_float(dtype) ? dtype : TP_PLUGIN_F32;
}

int32_t tpc_compute_dtype(const tp_plugin_graph *graph, const tp_plugin_value *value) {
    int32_t in[3] = {0, 0, 0};
    int32_t count = value->num_operands < 3 ? value->num_operands : 3;
    for (int32_t k = 0; k < count; k++) in[k] = graph->values[value->operands[k]].type.dtype;
    return tpc_op_compute_dtype(tpc_op_of(value), in, count, value->type.dtype);
}

/* lt le gt ge eq ne logical_and logical_or: adjacent in tpc_op. */
static bool is_binary_predicate(tpc_op op) {
    return op >= TPC_OP_LT && op <= TPC_OP_LOGICAL_OR;
}

int32_t tpc_op_compute_dtype(tpc_op op, const int32_t *operands, int32_t count, int32_t own) {
    int32_t in[3] = {0, 0, 0};
    for (int32_t k = 0; k < count && k < 3; k++) in[k] = operands[k];
    if (is_binary_predicate(op)) return tpc_dtype_promote(in[0], in[1]);
    switch (op) {
    case TPC_OP_EXP:
    case TPC_OP_LOG:
    case TPC_OP_SQRT:
    case TPC_OP_RSQRT:
    case TPC_OP_SIN:
    case TPC_OP_COS:
    case TPC_OP_TANH:
    case TPC_OP_SIGMOID:
    case TPC_OP_ERF:
    case TPC_OP_GELU:
    case TPC_OP_SILU:
    case TPC_OP_SOFTPLUS:
    case TPC_OP_SOFTMAX:
    case TPC_OP_LOG_SOFTMAX:
        return float_or_f32(in[0]);
    case TPC_OP_LAYER_NORM: {
        int32_t dtype = in[0];
        for (int32_t k = 1; k < count && k < 3; k++) dtype = tpc_dtype_promote(dtype, in[k]);
        return float_or_f32(dtype);
    }
    case TPC_OP_ADD:
    case TPC_OP_SUB:
    case TPC_OP_MUL:
    case TPC_OP_POW:
    case TPC_OP_MAXIMUM:
    case TPC_OP_MINIMUM:
    case TPC_OP_MATMUL:
    case TPC_OP_LINEAR:
        return tpc_dtype_promote(in[0], in[1]);
    case TPC_OP_DIV:
        return float_or_f32(tpc_dtype_promote(in[0], in[1]));
    case TPC_OP_WHERE:
        return tpc_dtype_promote(in[1], in[2]);
    case TPC_OP_SUM:
        return tpc_dtype_is_float(in[0]) ? in[0] : TP_PLUGIN_I64;
    case TPC_OP_MEAN:
        return float_or_f32(in[0]);
    case TPC_OP_NONE:
    case TPC_OP_CONSTANT:
    case TPC_OP_FULL:
    case TPC_OP_ARANGE:
        return own;
    default: /* neg abs relu floor ceil sign logical_* cast max min argmax, shape ops */
        return count > 0 ? in[0] : own;
    }
}

int32_t tpc_op_result_dtype(tpc_op op, int32_t compute, int32_t cast_to) {
    if (is_binary_predicate(op) || op == TPC_OP_LOGICAL_NOT) return TP_PLUGIN_BOOL;
    if (op == TPC_OP_CAST) return cast_to;
    return op == TPC_OP_ARGMAX ? TP_PLUGIN_I64 : compute;
}

/* ---- types ---- */

int64_t tpc_numel(const tp_plugin_type *type) {
    int64_t count = 1;
    for (int32_t d = 0; d < type->ndim; d++) {
        if (type->dims[d] < 0) return -1;
        count *= type->dims[d];
    }
    return count;
}

bool tpc_same_shape(const tp_plugin_type *a, const tp_plugin_type *b) {
    if (a->ndim != b->ndim) return false;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

bool tpc_strides_contiguous(int32_t ndim, const int64_t *dims, const int64_t *strides) {
    int64_t expected = 1;
    for (int32_t d = ndim - 1; d >= 0; d--) {
        if (dims[d] != 1 && strides[d] != expected) return false;
        expected *= dims[d];
    }
    return true;
}

char *tpc_type_text(const tp_plugin_graph *graph, const tp_plugin_type *type, char *buf,
                    size_t size) {
    size_t used = (size_t)snprintf(buf, size, "%s[", tpc_dtype_name(type->dtype));
    for (int32_t d = 0; d < type->ndim && used < size; d++) {
        int64_t dim = type->dims[d];
        const char *sep = d ? ", " : "";
        if (dim >= 0)
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", sep, (long long)dim);
        else {
            int64_t symbol = -dim - 1;
            const char *name = graph && symbol < graph->num_symbols ? graph->symbols[symbol] : "?";
            used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, name);
        }
    }
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* ---- uses ---- */

int32_t *tpc_count_uses(const tp_plugin_graph *graph) {
    int32_t *uses = calloc((size_t)graph->num_values + 1, sizeof *uses);
    if (!uses) return NULL;
    for (int32_t v = 0; v < graph->num_values; v++)
        for (int32_t k = 0; k < graph->values[v].num_operands; k++)
            uses[graph->values[v].operands[k]]++;
    for (int32_t i = 0; i < graph->num_outputs; i++) uses[graph->outputs[i]]++;
    return uses;
}

bool tpc_is_output(const tp_plugin_graph *graph, int32_t value) {
    for (int32_t i = 0; i < graph->num_outputs; i++)
        if (graph->outputs[i] == value) return true;
    return false;
}
