/* plugins/common — op kinds, attribute lookup, dtype rules and use counts on
 * the plugin graph view. Owns nothing but these pure functions; see
 * tpcommon_graph.h. */
#include "tpcommon_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_entry {
    const char *name;
    tpcommon_kind kind;
    bool composite;
} op_entry;

/* Indexed by tpcommon_op; names as in core/ops/op_list.def (the public .tpir names). */
static const op_entry op_entries[TPCOMMON_OP_COUNT] = {
    [TPCOMMON_OP_NONE] = {"input", TPCOMMON_KIND_INPUT, false},
    [TPCOMMON_OP_NEG] = {"neg", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_ABS] = {"abs", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_EXP] = {"exp", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LOG] = {"log", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SQRT] = {"sqrt", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_RSQRT] = {"rsqrt", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SIN] = {"sin", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_COS] = {"cos", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_TANH] = {"tanh", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SIGMOID] = {"sigmoid", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_RELU] = {"relu", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_ERF] = {"erf", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_FLOOR] = {"floor", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_CEIL] = {"ceil", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SIGN] = {"sign", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LOGICAL_NOT] = {"logical_not", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_CAST] = {"cast", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_ADD] = {"add", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SUB] = {"sub", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_MUL] = {"mul", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_DIV] = {"div", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_POW] = {"pow", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_MAXIMUM] = {"maximum", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_MINIMUM] = {"minimum", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LT] = {"lt", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LE] = {"le", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_GT] = {"gt", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_GE] = {"ge", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_EQ] = {"eq", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_NE] = {"ne", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LOGICAL_AND] = {"logical_and", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_LOGICAL_OR] = {"logical_or", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_WHERE] = {"where", TPCOMMON_KIND_POINTWISE, false},
    [TPCOMMON_OP_SUM] = {"sum", TPCOMMON_KIND_REDUCTION, false},
    [TPCOMMON_OP_MEAN] = {"mean", TPCOMMON_KIND_REDUCTION, false},
    [TPCOMMON_OP_MAX] = {"max", TPCOMMON_KIND_REDUCTION, false},
    [TPCOMMON_OP_MIN] = {"min", TPCOMMON_KIND_REDUCTION, false},
    [TPCOMMON_OP_ARGMAX] = {"argmax", TPCOMMON_KIND_REDUCTION, false},
    [TPCOMMON_OP_MATMUL] = {"matmul", TPCOMMON_KIND_MATMUL, false},
    [TPCOMMON_OP_RESHAPE] = {"reshape", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_PERMUTE] = {"permute", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_TRANSPOSE] = {"transpose", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_EXPAND] = {"expand", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_SLICE] = {"slice", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_CONCAT] = {"concat", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_SQUEEZE] = {"squeeze", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_UNSQUEEZE] = {"unsqueeze", TPCOMMON_KIND_SHAPE, false},
    [TPCOMMON_OP_CONSTANT] = {"constant", TPCOMMON_KIND_CREATION, false},
    [TPCOMMON_OP_FULL] = {"full", TPCOMMON_KIND_CREATION, false},
    [TPCOMMON_OP_ARANGE] = {"arange", TPCOMMON_KIND_CREATION, false},
    [TPCOMMON_OP_SOFTMAX] = {"softmax", TPCOMMON_KIND_ROW, true},
    [TPCOMMON_OP_LOG_SOFTMAX] = {"log_softmax", TPCOMMON_KIND_ROW, true},
    [TPCOMMON_OP_LAYER_NORM] = {"layer_norm", TPCOMMON_KIND_ROW, true},
    [TPCOMMON_OP_GELU] = {"gelu", TPCOMMON_KIND_POINTWISE, true},
    [TPCOMMON_OP_SILU] = {"silu", TPCOMMON_KIND_POINTWISE, true},
    [TPCOMMON_OP_SOFTPLUS] = {"softplus", TPCOMMON_KIND_POINTWISE, true},
    [TPCOMMON_OP_LINEAR] = {"linear", TPCOMMON_KIND_MATMUL, true},
    [TPCOMMON_OP_UNKNOWN] = {"?", TPCOMMON_KIND_UNKNOWN, false},
};

tpcommon_op tpcommon_op_of(const tp_plugin_value *value) {
    if (!value->op) return TPCOMMON_OP_NONE;
    for (int op = TPCOMMON_OP_NONE + 1; op < TPCOMMON_OP_UNKNOWN; op++)
        if (strcmp(op_entries[op].name, value->op) == 0) return (tpcommon_op)op;
    return TPCOMMON_OP_UNKNOWN;
}

const char *tpcommon_op_name(tpcommon_op op) {
    return (unsigned)op < TPCOMMON_OP_COUNT ? op_entries[op].name : "?";
}

tpcommon_kind tpcommon_op_kind(tpcommon_op op) {
    return (unsigned)op < TPCOMMON_OP_COUNT ? op_entries[op].kind : TPCOMMON_KIND_UNKNOWN;
}

bool tpcommon_op_is_composite(tpcommon_op op) {
    return (unsigned)op < TPCOMMON_OP_COUNT && op_entries[op].composite;
}

/* ---- attributes ---- */

const tp_plugin_attr *tpcommon_attr_find(const tp_plugin_value *value, const char *name) {
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (value->attrs[i].name && strcmp(value->attrs[i].name, name) == 0)
            return &value->attrs[i];
    return NULL;
}

int64_t tpcommon_attr_int(const tp_plugin_value *value, const char *name, int64_t fallback) {
    const tp_plugin_attr *attr = tpcommon_attr_find(value, name);
    if (!attr) return fallback;
    return attr->type == TP_PLUGIN_ATTR_FLOAT ? (int64_t)attr->f : attr->i;
}

double tpcommon_attr_float(const tp_plugin_value *value, const char *name, double fallback) {
    const tp_plugin_attr *attr = tpcommon_attr_find(value, name);
    if (!attr) return fallback;
    return attr->type == TP_PLUGIN_ATTR_FLOAT ? attr->f : (double)attr->i;
}

const int64_t *tpcommon_attr_ints(const tp_plugin_value *value, const char *name, int32_t *count) {
    const tp_plugin_attr *attr = tpcommon_attr_find(value, name);
    if (!attr || attr->type != TP_PLUGIN_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = attr->count;
    return attr->ints;
}

const tp_plugin_attr *tpcommon_attr_tensor(const tp_plugin_value *value) {
    const tp_plugin_attr *attr = tpcommon_attr_find(value, "value");
    if (attr && attr->type == TP_PLUGIN_ATTR_TENSOR) return attr;
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (value->attrs[i].type == TP_PLUGIN_ATTR_TENSOR) return &value->attrs[i];
    return NULL;
}

/* ---- dtypes ---- */

const char *tpcommon_dtype_name(int32_t dtype) {
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? names[dtype] : "?";
}

size_t tpcommon_dtype_size(int32_t dtype) {
    static const size_t sizes[] = {4, 8, 4, 8, 1};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? sizes[dtype] : 0;
}

bool tpcommon_dtype_is_float(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64;
}

bool tpcommon_dtype_is_integer(int32_t dtype) {
    return dtype == TP_PLUGIN_I32 || dtype == TP_PLUGIN_I64;
}

static int category(int32_t dtype) {
    return dtype == TP_PLUGIN_BOOL ? 0 : tpcommon_dtype_is_integer(dtype) ? 1 : 2;
}

static int width(int32_t dtype) {
    return dtype == TP_PLUGIN_I64 || dtype == TP_PLUGIN_F64 ? 2 : 1;
}

int32_t tpcommon_dtype_promote(int32_t a, int32_t b) {
    if (category(a) != category(b)) return category(a) > category(b) ? a : b;
    return width(a) >= width(b) ? a : b;
}

static int32_t float_or_f32(int32_t dtype) {
    return tpcommon_dtype_is_float(dtype) ? dtype : TP_PLUGIN_F32;
}

int32_t tpcommon_compute_dtype(const tp_plugin_graph *graph, const tp_plugin_value *value) {
    int32_t in[3] = {0, 0, 0};
    int32_t count = value->num_operands < 3 ? value->num_operands : 3;
    for (int32_t k = 0; k < count; k++) in[k] = graph->values[value->operands[k]].type.dtype;
    return tpcommon_op_compute_dtype(tpcommon_op_of(value), in, count, value->type.dtype);
}

/* lt le gt ge eq ne logical_and logical_or: adjacent in tpcommon_op. */
static bool is_binary_predicate(tpcommon_op op) {
    return op >= TPCOMMON_OP_LT && op <= TPCOMMON_OP_LOGICAL_OR;
}

int32_t tpcommon_op_compute_dtype(tpcommon_op op, const int32_t *operands, int32_t count,
                                  int32_t own) {
    int32_t in[3] = {0, 0, 0};
    for (int32_t k = 0; k < count && k < 3; k++) in[k] = operands[k];
    if (is_binary_predicate(op)) return tpcommon_dtype_promote(in[0], in[1]);
    switch (op) {
    case TPCOMMON_OP_EXP:
    case TPCOMMON_OP_LOG:
    case TPCOMMON_OP_SQRT:
    case TPCOMMON_OP_RSQRT:
    case TPCOMMON_OP_SIN:
    case TPCOMMON_OP_COS:
    case TPCOMMON_OP_TANH:
    case TPCOMMON_OP_SIGMOID:
    case TPCOMMON_OP_ERF:
    case TPCOMMON_OP_GELU:
    case TPCOMMON_OP_SILU:
    case TPCOMMON_OP_SOFTPLUS:
    case TPCOMMON_OP_SOFTMAX:
    case TPCOMMON_OP_LOG_SOFTMAX:
        return float_or_f32(in[0]);
    case TPCOMMON_OP_LAYER_NORM: {
        int32_t dtype = in[0];
        for (int32_t k = 1; k < count && k < 3; k++) dtype = tpcommon_dtype_promote(dtype, in[k]);
        return float_or_f32(dtype);
    }
    case TPCOMMON_OP_ADD:
    case TPCOMMON_OP_SUB:
    case TPCOMMON_OP_MUL:
    case TPCOMMON_OP_POW:
    case TPCOMMON_OP_MAXIMUM:
    case TPCOMMON_OP_MINIMUM:
    case TPCOMMON_OP_MATMUL:
    case TPCOMMON_OP_LINEAR:
        return tpcommon_dtype_promote(in[0], in[1]);
    case TPCOMMON_OP_DIV:
        return float_or_f32(tpcommon_dtype_promote(in[0], in[1]));
    case TPCOMMON_OP_WHERE:
        return tpcommon_dtype_promote(in[1], in[2]);
    case TPCOMMON_OP_SUM:
        return tpcommon_dtype_is_float(in[0]) ? in[0] : TP_PLUGIN_I64;
    case TPCOMMON_OP_MEAN:
        return float_or_f32(in[0]);
    case TPCOMMON_OP_NONE:
    case TPCOMMON_OP_CONSTANT:
    case TPCOMMON_OP_FULL:
    case TPCOMMON_OP_ARANGE:
        return own;
    default: /* neg abs relu floor ceil sign logical_* cast max min argmax, shape ops */
        return count > 0 ? in[0] : own;
    }
}

int32_t tpcommon_op_result_dtype(tpcommon_op op, int32_t compute, int32_t cast_to) {
    if (is_binary_predicate(op) || op == TPCOMMON_OP_LOGICAL_NOT) return TP_PLUGIN_BOOL;
    if (op == TPCOMMON_OP_CAST) return cast_to;
    return op == TPCOMMON_OP_ARGMAX ? TP_PLUGIN_I64 : compute;
}

/* ---- types ---- */

int64_t tpcommon_numel(const tp_plugin_type *type) {
    int64_t count = 1;
    for (int32_t d = 0; d < type->ndim; d++) {
        if (type->dims[d] < 0) return -1;
        count *= type->dims[d];
    }
    return count;
}

bool tpcommon_same_shape(const tp_plugin_type *a, const tp_plugin_type *b) {
    if (a->ndim != b->ndim) return false;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

bool tpcommon_strides_contiguous(int32_t ndim, const int64_t *dims, const int64_t *strides) {
    int64_t expected = 1;
    for (int32_t d = ndim - 1; d >= 0; d--) {
        if (dims[d] != 1 && strides[d] != expected) return false;
        expected *= dims[d];
    }
    return true;
}

char *tpcommon_type_text(const tp_plugin_graph *graph, const tp_plugin_type *type, char *buf,
                         size_t size) {
    size_t used = (size_t)snprintf(buf, size, "%s[", tpcommon_dtype_name(type->dtype));
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

int32_t *tpcommon_count_uses(const tp_plugin_graph *graph) {
    int32_t *uses = calloc((size_t)graph->num_values + 1, sizeof *uses);
    if (!uses) return NULL;
    for (int32_t v = 0; v < graph->num_values; v++)
        for (int32_t k = 0; k < graph->values[v].num_operands; k++)
            uses[graph->values[v].operands[k]]++;
    for (int32_t i = 0; i < graph->num_outputs; i++) uses[graph->outputs[i]]++;
    return uses;
}

bool tpcommon_is_output(const tp_plugin_graph *graph, int32_t value) {
    for (int32_t i = 0; i < graph->num_outputs; i++)
        if (graph->outputs[i] == value) return true;
    return false;
}
