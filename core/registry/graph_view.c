/* Converting a tp_graph into the plugin's read-only graph view (plugin.h):
 * plain C arrays of values with op names, operand indices, attributes (the
 * ones the op table declares for the op, in tp_attr_key order), types, and
 * per node what the op table says of it (op id, kind, compute dtype).
 * The view borrows the graph's strings, attribute arrays and constant
 * payloads, so the graph must outlive it; it owns only its arrays. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ir/graph_internal.h"
#include "ops/attr_info.h"
#include "ops/op_table.h"
#include "registry_internal.h"
#include "base/log.h"
#include "tensor/tensor_internal.h"

struct tp_graph_view {
    tp_plugin_graph view; /* first: tp_graph_view_source casts back */
    const tp_graph *graph;
    tp_plugin_value *values;
    tp_plugin_node *nodes;
    int32_t *operands;
    tp_plugin_attr *attrs;
    int32_t *inputs, *outputs;
    const char **symbols;
};

static void copy_type(const tp_type *type, tp_plugin_type *out) {
    memset(out, 0, sizeof *out);
    out->dtype = (int32_t)type->dtype;
    out->ndim = type->ndim;
    for (int d = 0; d < type->ndim; d++) out->dims[d] = type->dims[d];
}

static int64_t int_field(const tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_AXIS:
        return attrs->axis;
    case TP_ATTR_DIM0:
        return attrs->dim0;
    case TP_ATTR_DIM1:
        return attrs->dim1;
    case TP_ATTR_START:
        return attrs->start;
    case TP_ATTR_STOP:
        return attrs->stop;
    case TP_ATTR_STEP:
        return attrs->step;
    case TP_ATTR_GROUP:
        return attrs->group;
    default:
        return 0;
    }
}

static double float_field(const tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_RANGE_START:
        return attrs->range_start;
    case TP_ATTR_RANGE_STOP:
        return attrs->range_stop;
    case TP_ATTR_RANGE_STEP:
        return attrs->range_step;
    case TP_ATTR_VALUE:
        return attrs->value;
    case TP_ATTR_EPS:
        return attrs->eps;
    case TP_ATTR_BETA:
        return attrs->beta;
    case TP_ATTR_THRESHOLD:
        return attrs->threshold;
    default:
        return 0.0;
    }
}

static void convert_attr(const tp_attrs *attrs, tp_attr_key key, tp_plugin_attr *out) {
    const tp_attr_info *info = tp_attr_info_get(key);
    memset(out, 0, sizeof *out);
    out->name = info->name;
    switch (info->type) {
    case TP_ATTR_TYPE_INTS:
        out->type = TP_PLUGIN_ATTR_INTS;
        out->ints = tp_attrs_ints(attrs, key, &out->count);
        break;
    case TP_ATTR_TYPE_BOOL:
        out->type = TP_PLUGIN_ATTR_BOOL;
        out->i = tp_attrs_bool(attrs, key) ? 1 : 0;
        break;
    case TP_ATTR_TYPE_INT:
        out->type = TP_PLUGIN_ATTR_INT;
        out->i = int_field(attrs, key);
        break;
    case TP_ATTR_TYPE_FLOAT:
        out->type = TP_PLUGIN_ATTR_FLOAT;
        out->f = float_field(attrs, key);
        break;
    case TP_ATTR_TYPE_DTYPE:
        out->type = TP_PLUGIN_ATTR_DTYPE;
        out->i = attrs->dtype;
        break;
    case TP_ATTR_TYPE_APPROXIMATE:
        out->type = TP_PLUGIN_ATTR_INT;
        out->i = attrs->approximate == TP_GELU_TANH ? TP_PLUGIN_GELU_TANH : TP_PLUGIN_GELU_NONE;
        break;
    case TP_ATTR_TYPE_TENSOR:
        out->type = TP_PLUGIN_ATTR_TENSOR;
        if (attrs->data) {
            out->dtype = attrs->data->dtype;
            out->count = attrs->data->ndim;
            out->ints = attrs->data->shape;
            out->data = attrs->data->data;
            out->nbytes = attrs->data->nbytes;
        }
        break;
    }
}

static int popcount(uint32_t mask) {
    int count = 0;
    for (; mask; mask &= mask - 1) count++;
    return count;
}

/* What the op table says of value `id`: op id, kind, compute dtype. */
static void describe_node(const tp_graph *graph, tp_value_id id, tp_plugin_node *node) {
    const tp_value *value = &graph->values[id];
    node->result_dtype = (int32_t)value->type.dtype;
    if (!value->op) {
        *node = (tp_plugin_node){-1, -1, node->result_dtype, node->result_dtype};
        return;
    }
    tp_dtype operands[TP_IR_MAX_OPERANDS];
    for (int32_t k = 0; k < value->num_operands; k++)
        operands[k] = graph->values[value->operands[k]].type.dtype;
    node->op_id = (int32_t)value->op->id;
    node->kind = (int32_t)value->op->kind;
    node->compute_dtype =
        (int32_t)tp_op_compute_dtype(value->op, operands, value->num_operands, value->type.dtype);
}

tp_status tp_graph_view_create(const tp_graph *graph, tp_graph_view **out) {
    *out = NULL;
    size_t num_operands = 0, num_attrs = 0;
    for (int32_t i = 0; i < graph->num_values; i++) {
        const tp_value *value = &graph->values[i];
        num_operands += (size_t)value->num_operands;
        if (value->op) num_attrs += (size_t)popcount(value->op->attr_mask);
    }
    tp_graph_view *owner = calloc(1, sizeof *owner);
    if (!owner) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph view: out of memory");
    owner->graph = graph;
    owner->values = calloc((size_t)graph->num_values + 1, sizeof *owner->values);
    owner->nodes = calloc((size_t)graph->num_values + 1, sizeof *owner->nodes);
    owner->operands = calloc(num_operands + 1, sizeof *owner->operands);
    owner->attrs = calloc(num_attrs + 1, sizeof *owner->attrs);
    owner->inputs = calloc((size_t)graph->num_inputs + 1, sizeof *owner->inputs);
    owner->outputs = calloc((size_t)graph->num_outputs + 1, sizeof *owner->outputs);
    owner->symbols = calloc((size_t)graph->num_symbols + 1, sizeof *owner->symbols);
    if (!owner->values || !owner->nodes || !owner->operands || !owner->attrs || !owner->inputs ||
        !owner->outputs || !owner->symbols) {
        tp_graph_view_destroy(owner);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph view: out of memory");
    }
    int32_t *next_operand = owner->operands;
    tp_plugin_attr *next_attr = owner->attrs;
    for (int32_t i = 0; i < graph->num_values; i++) {
        const tp_value *value = &graph->values[i];
        tp_plugin_value *view_value = &owner->values[i];
        view_value->name = value->name;
        view_value->op = value->op ? value->op->name : NULL;
        copy_type(&value->type, &view_value->type);
        view_value->num_operands = value->num_operands;
        view_value->operands = next_operand;
        for (int32_t k = 0; k < value->num_operands; k++) *next_operand++ = value->operands[k];
        view_value->attrs = next_attr;
        if (value->op)
            for (int key = 0; key < TP_ATTR_KEY_COUNT; key++)
                if (value->op->attr_mask & TP_ATTR_BIT(key))
                    convert_attr(&value->attrs, (tp_attr_key)key, next_attr++);
        view_value->num_attrs = (int32_t)(next_attr - view_value->attrs);
        view_value->fusion_region = -1; /* revision 2: fusion is the backend's */
        describe_node(graph, i, &owner->nodes[i]);
    }
    for (int32_t i = 0; i < graph->num_inputs; i++) owner->inputs[i] = graph->inputs[i];
    for (int32_t i = 0; i < graph->num_outputs; i++) owner->outputs[i] = graph->outputs[i];
    for (int32_t i = 0; i < graph->num_symbols; i++) owner->symbols[i] = graph->symbols[i];
    owner->view = (tp_plugin_graph){
        .struct_size = sizeof(tp_plugin_graph),
        .name = graph->name,
        .num_values = graph->num_values,
        .values = owner->values,
        .num_inputs = graph->num_inputs,
        .inputs = owner->inputs,
        .num_outputs = graph->num_outputs,
        .outputs = owner->outputs,
        .num_symbols = graph->num_symbols,
        .symbols = owner->symbols,
        .nodes = owner->nodes,
    };
    *out = owner;
    return TP_OK;
}

const tp_plugin_graph *tp_graph_view_get(const tp_graph_view *view) {
    return &view->view;
}

const tp_graph *tp_graph_view_source(const tp_plugin_graph *view) {
    return ((const tp_graph_view *)view)->graph;
}

void tp_graph_view_destroy(tp_graph_view *view) {
    if (!view) return;
    free(view->values);
    free(view->nodes);
    free(view->operands);
    free(view->attrs);
    free(view->inputs);
    free(view->outputs);
    free(view->symbols);
    free(view);
}
