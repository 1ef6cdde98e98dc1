/* plugins/common — op kinds, attribute lookup, dtype rules and use counts on
 * the plugin graph view. Owns nothing but these pure functions; see
 * tpcommon_graph.h. */
#include "tpcommon_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The backend-side kind of every op, indexed by op id (plugin_ops.h). The
 * core's kind is in each node; this table only adds what a backend needs
 * beyond it: which kernel a composite lowers to. */
static const tpcommon_kind op_kinds[] = {
    [TP_PLUGIN_OP_NEG] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_ABS] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_EXP] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LOG] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SQRT] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_RSQRT] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SIN] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_COS] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_TANH] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SIGMOID] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_RELU] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_ERF] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_FLOOR] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_CEIL] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SIGN] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LOGICAL_NOT] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_CAST] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_ADD] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SUB] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_MUL] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_DIV] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_POW] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_MAXIMUM] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_MINIMUM] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LT] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LE] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_GT] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_GE] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_EQ] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_NE] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LOGICAL_AND] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LOGICAL_OR] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_WHERE] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SUM] = TPCOMMON_KIND_REDUCTION,
    [TP_PLUGIN_OP_MEAN] = TPCOMMON_KIND_REDUCTION,
    [TP_PLUGIN_OP_MAX] = TPCOMMON_KIND_REDUCTION,
    [TP_PLUGIN_OP_MIN] = TPCOMMON_KIND_REDUCTION,
    [TP_PLUGIN_OP_ARGMAX] = TPCOMMON_KIND_REDUCTION,
    [TP_PLUGIN_OP_MATMUL] = TPCOMMON_KIND_MATMUL,
    [TP_PLUGIN_OP_RESHAPE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_PERMUTE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_TRANSPOSE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_EXPAND] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_SLICE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_CONCAT] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_SQUEEZE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_UNSQUEEZE] = TPCOMMON_KIND_SHAPE,
    [TP_PLUGIN_OP_CONSTANT] = TPCOMMON_KIND_CREATION,
    [TP_PLUGIN_OP_FULL] = TPCOMMON_KIND_CREATION,
    [TP_PLUGIN_OP_ARANGE] = TPCOMMON_KIND_CREATION,
    [TP_PLUGIN_OP_SOFTMAX] = TPCOMMON_KIND_ROW,
    [TP_PLUGIN_OP_LOG_SOFTMAX] = TPCOMMON_KIND_ROW,
    [TP_PLUGIN_OP_LAYER_NORM] = TPCOMMON_KIND_ROW,
    [TP_PLUGIN_OP_GELU] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SILU] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_SOFTPLUS] = TPCOMMON_KIND_POINTWISE,
    [TP_PLUGIN_OP_LINEAR] = TPCOMMON_KIND_MATMUL,
    [TP_PLUGIN_OP_GATHER] = TPCOMMON_KIND_INDEXING,
    [TP_PLUGIN_OP_GATHER_ELEMENTS] = TPCOMMON_KIND_INDEXING,
    [TP_PLUGIN_OP_CONV] = TPCOMMON_KIND_WINDOW,
    [TP_PLUGIN_OP_CONV_TRANSPOSE] = TPCOMMON_KIND_WINDOW,
    [TP_PLUGIN_OP_MAX_POOL] = TPCOMMON_KIND_WINDOW,
#ifndef TPCOMMON_TEST_DROP_LAST_OP /* tests/sdk: dropping an entry must fail the build */
    [TP_PLUGIN_OP_AVG_POOL] = TPCOMMON_KIND_WINDOW,
#endif
};
_Static_assert(sizeof op_kinds / sizeof op_kinds[0] == TP_PLUGIN_OP_COUNT,
               "plugins/common/tpcommon_graph.c: op_kinds[] has no entry for an op of "
               "include/tensorplay/plugin_ops.h (a new op in core/ops/op_list.def): add "
               "[TP_PLUGIN_OP_<NAME>] = TPCOMMON_KIND_<kernel kind> at the end of op_kinds, "
               "then teach each plugin's lowering the op or refuse it in its supports call");

/* Names and core kinds, generated from the op list: complete by construction. */
#define TPCOMMON_OP_NAME(ID, NAME, KIND, MIN_ARITY, MAX_ARITY) [TP_PLUGIN_OP_##ID] = NAME,
static const char *const op_names[TP_PLUGIN_OP_COUNT] = {TP_PLUGIN_OP_LIST(TPCOMMON_OP_NAME)};
#undef TPCOMMON_OP_NAME
#define TPCOMMON_OP_CORE_KIND(ID, NAME, KIND, MIN_ARITY, MAX_ARITY)                                \
    [TP_PLUGIN_OP_##ID] = TP_PLUGIN_KIND_##KIND,
static const int32_t op_core_kinds[TP_PLUGIN_OP_COUNT] = {TP_PLUGIN_OP_LIST(TPCOMMON_OP_CORE_KIND)};
#undef TPCOMMON_OP_CORE_KIND

bool tpcommon_graph_has_nodes(const tp_plugin_graph *graph) {
    return TP_PLUGIN_HAS_FIELD(graph, tp_plugin_graph, nodes) && graph->nodes != NULL;
}

const tp_plugin_node *tpcommon_node_of(const tp_plugin_graph *graph, const tp_plugin_value *value) {
    if (!tpcommon_graph_has_nodes(graph)) return NULL;
    return &graph->nodes[value - graph->values];
}

int32_t tpcommon_op_of(const tp_plugin_graph *graph, const tp_plugin_value *value) {
    if (!value->op) return TPCOMMON_OP_INPUT;
    const tp_plugin_node *node = tpcommon_node_of(graph, value);
    return node ? node->op_id : TPCOMMON_OP_UNKNOWN;
}

bool tpcommon_op_known(int32_t op) {
    return op >= 0 && op < TP_PLUGIN_OP_COUNT;
}

const char *tpcommon_op_name(int32_t op) {
    if (op == TPCOMMON_OP_INPUT) return "input";
    return tpcommon_op_known(op) ? op_names[op] : "?";
}

tpcommon_kind tpcommon_op_kind(int32_t op) {
    if (op == TPCOMMON_OP_INPUT) return TPCOMMON_KIND_INPUT;
    return tpcommon_op_known(op) ? op_kinds[op] : TPCOMMON_KIND_UNKNOWN;
}

bool tpcommon_op_is_composite(int32_t op) {
    return tpcommon_op_known(op) && op_core_kinds[op] == TP_PLUGIN_KIND_COMPOSITE;
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
    const tp_plugin_node *node = tpcommon_node_of(graph, value);
    return node ? node->compute_dtype : value->type.dtype;
}

static bool is_binary_predicate(int32_t op) {
    switch (op) {
    case TP_PLUGIN_OP_LT:
    case TP_PLUGIN_OP_LE:
    case TP_PLUGIN_OP_GT:
    case TP_PLUGIN_OP_GE:
    case TP_PLUGIN_OP_EQ:
    case TP_PLUGIN_OP_NE:
    case TP_PLUGIN_OP_LOGICAL_AND:
    case TP_PLUGIN_OP_LOGICAL_OR:
        return true;
    default:
        return false;
    }
}

int32_t tpcommon_op_compute_dtype(int32_t op, const int32_t *operands, int32_t count, int32_t own) {
    int32_t in[3] = {0, 0, 0};
    for (int32_t k = 0; k < count && k < 3; k++) in[k] = operands[k];
    if (is_binary_predicate(op)) return tpcommon_dtype_promote(in[0], in[1]);
    switch (op) {
    case TP_PLUGIN_OP_EXP:
    case TP_PLUGIN_OP_LOG:
    case TP_PLUGIN_OP_SQRT:
    case TP_PLUGIN_OP_RSQRT:
    case TP_PLUGIN_OP_SIN:
    case TP_PLUGIN_OP_COS:
    case TP_PLUGIN_OP_TANH:
    case TP_PLUGIN_OP_SIGMOID:
    case TP_PLUGIN_OP_ERF:
    case TP_PLUGIN_OP_GELU:
    case TP_PLUGIN_OP_SILU:
    case TP_PLUGIN_OP_SOFTPLUS:
    case TP_PLUGIN_OP_SOFTMAX:
    case TP_PLUGIN_OP_LOG_SOFTMAX:
        return float_or_f32(in[0]);
    case TP_PLUGIN_OP_LAYER_NORM: {
        int32_t dtype = in[0];
        for (int32_t k = 1; k < count && k < 3; k++) dtype = tpcommon_dtype_promote(dtype, in[k]);
        return float_or_f32(dtype);
    }
    case TP_PLUGIN_OP_ADD:
    case TP_PLUGIN_OP_SUB:
    case TP_PLUGIN_OP_MUL:
    case TP_PLUGIN_OP_POW:
    case TP_PLUGIN_OP_MAXIMUM:
    case TP_PLUGIN_OP_MINIMUM:
    case TP_PLUGIN_OP_MATMUL:
    case TP_PLUGIN_OP_LINEAR:
        return tpcommon_dtype_promote(in[0], in[1]);
    case TP_PLUGIN_OP_DIV:
        return float_or_f32(tpcommon_dtype_promote(in[0], in[1]));
    case TP_PLUGIN_OP_WHERE:
        return tpcommon_dtype_promote(in[1], in[2]);
    case TP_PLUGIN_OP_SUM:
        return tpcommon_dtype_is_float(in[0]) ? in[0] : TP_PLUGIN_I64;
    case TP_PLUGIN_OP_MEAN:
        return float_or_f32(in[0]);
    case TPCOMMON_OP_INPUT:
    case TP_PLUGIN_OP_CONSTANT:
    case TP_PLUGIN_OP_FULL:
    case TP_PLUGIN_OP_ARANGE:
        return own;
    default: /* neg abs relu floor ceil sign logical_* cast max min argmax, shape ops */
        return count > 0 ? in[0] : own;
    }
}

int32_t tpcommon_op_result_dtype(int32_t op, int32_t compute, int32_t cast_to) {
    if (is_binary_predicate(op) || op == TP_PLUGIN_OP_LOGICAL_NOT) return TP_PLUGIN_BOOL;
    if (op == TP_PLUGIN_OP_CAST) return cast_to;
    return op == TP_PLUGIN_OP_ARGMAX ? TP_PLUGIN_I64 : compute;
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
