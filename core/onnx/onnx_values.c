/* The importer's value table: ONNX names to handles (graph values, import-time
 * constants, outputs the importer does not produce), the on-demand
 * `constant` nodes, and onnx_emit, which adds a graph node or folds it when
 * every operand is a constant. Owns nothing of the ONNX message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "ir/graph_internal.h"
#include "ops/op_table.h"
#include "onnx_internal.h"
#include "tensorplay/onnx.h"

static uint32_t hash_name(const char *name) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (; *name; name++) hash = (hash ^ (uint8_t)*name) * 16777619u;
    return hash;
}

onnx_handle onnx_find(const onnx_importer *im, const char *name) {
    if (!name || !name[0] || im->name_slots == 0) return ONNX_NO_HANDLE;
    uint32_t mask = (uint32_t)im->name_slots - 1;
    for (uint32_t slot = hash_name(name) & mask;; slot = (slot + 1) & mask) {
        onnx_handle handle = im->name_table[slot];
        if (handle == ONNX_NO_HANDLE) return ONNX_NO_HANDLE;
        if (im->values[handle].name && strcmp(im->values[handle].name, name) == 0) return handle;
    }
}

static void table_insert(onnx_importer *im, onnx_handle handle) {
    uint32_t mask = (uint32_t)im->name_slots - 1;
    uint32_t slot = hash_name(im->values[handle].name) & mask;
    while (im->name_table[slot] != ONNX_NO_HANDLE) slot = (slot + 1) & mask;
    im->name_table[slot] = handle;
}

/* Room for one more value and one more name (load factor <= 1/2). */
static tp_status reserve(onnx_importer *im) {
    if (im->num_values == im->value_capacity) {
        int32_t capacity = im->value_capacity ? im->value_capacity * 2 : 64;
        onnx_value *values = realloc(im->values, (size_t)capacity * sizeof *values);
        if (!values) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
        im->values = values;
        im->value_capacity = capacity;
    }
    if ((int64_t)(im->num_values + 1) * 2 <= im->name_slots) return TP_OK;
    int32_t slots = im->name_slots ? im->name_slots * 2 : 128;
    onnx_handle *table = malloc((size_t)slots * sizeof *table);
    if (!table) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
    for (int32_t i = 0; i < slots; i++) table[i] = ONNX_NO_HANDLE;
    free(im->name_table);
    im->name_table = table;
    im->name_slots = slots;
    for (onnx_handle h = 0; h < im->num_values; h++)
        if (im->values[h].name) table_insert(im, h);
    return TP_OK;
}

static tp_status add_value(onnx_importer *im, const onnx_value *value, onnx_handle *out) {
    TP_TRY(reserve(im));
    onnx_handle handle = im->num_values++;
    im->values[handle] = *value;
    *out = handle;
    return TP_OK;
}

tp_status onnx_new_graph_value(onnx_importer *im, tp_value_id id, onnx_handle *out) {
    onnx_value value = {.id = id};
    return add_value(im, &value, out);
}

tp_status onnx_new_constant(onnx_importer *im, tp_tensor *constant, onnx_handle *out) {
    onnx_value value = {.id = TP_NO_VALUE, .constant = constant};
    tp_status status = add_value(im, &value, out);
    if (status != TP_OK) tp_tensor_release(constant);
    return status;
}

/* A name binds once (SSA); binding to a handle that has no name yet names it,
 * otherwise the name becomes an alias entry sharing the value. */
tp_status onnx_bind(onnx_importer *im, const char *name, onnx_handle handle) {
    if (!name || !name[0]) return TP_OK;
    if (onnx_find(im, name) != ONNX_NO_HANDLE)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                               "value '%s' is assigned twice (ONNX graphs are single-assignment)",
                               name);
    char *copy = tp_strdup(name);
    if (!copy) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
    if (!im->values[handle].name) {
        im->values[handle].name = copy;
        TP_TRY(reserve(im));
        table_insert(im, handle);
        return TP_OK;
    }
    if (im->values[handle].unsupported_by) {
        free(copy);
        tp_value_id ignored;
        return onnx_graph_value(im, handle, &ignored); /* the error naming the producer */
    }
    onnx_value alias = im->values[handle];
    alias.name = copy;
    if (alias.constant) tp_tensor_retain(alias.constant);
    onnx_handle alias_handle;
    tp_status status = add_value(im, &alias, &alias_handle);
    if (status != TP_OK) {
        free(copy);
        tp_tensor_release(alias.constant);
        return status;
    }
    table_insert(im, alias_handle);
    return TP_OK;
}

/* The graph value's name for an ONNX name: mapped, and only when free. */
static const char *graph_name_for(const onnx_importer *im, const char *onnx_name, char *buffer,
                                  size_t size) {
    if (!onnx_name || !onnx_name[0] || strlen(onnx_name) >= TP_IR_NAME_MAX) return NULL;
    tp_onnx_value_name(onnx_name, buffer, size);
    return tp_ir_find_value(im->graph, buffer) == TP_NO_VALUE ? buffer : NULL;
}

tp_status onnx_graph_value(onnx_importer *im, onnx_handle handle, tp_value_id *out) {
    onnx_value *value = &im->values[handle];
    if (value->unsupported_by)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "uses '%s', an output of %s that is not supported by the importer",
                               value->name ? value->name : "?", value->unsupported_by);
    if (value->id == TP_NO_VALUE) {
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.data = value->constant;
        char buffer[TP_IR_NAME_MAX + 8];
        TP_TRY(tp_graph_add_node(im->graph, "constant", NULL, 0, &attrs,
                                 graph_name_for(im, value->name, buffer, sizeof buffer),
                                 &value->id));
        /* Aliases of this constant share the node from now on. */
        for (onnx_handle h = 0; h < im->num_values; h++)
            if (im->values[h].constant == value->constant && im->values[h].id == TP_NO_VALUE)
                im->values[h].id = value->id;
    }
    *out = value->id;
    return TP_OK;
}

void onnx_value_type(const onnx_importer *im, onnx_handle handle, tp_type *out) {
    if (handle < 0 || handle >= im->num_values) { /* no such value: callers check operands */
        out->dtype = TP_F32;
        out->ndim = 0;
        return;
    }
    const onnx_value *value = &im->values[handle];
    if (value->constant) {
        out->dtype = tp_tensor_dtype(value->constant);
        out->ndim = tp_tensor_ndim(value->constant);
        memcpy(out->dims, tp_tensor_shape(value->constant), (size_t)out->ndim * sizeof(int64_t));
        return;
    }
    if (value->id == TP_NO_VALUE) {
        out->dtype = TP_F32;
        out->ndim = 0;
        return;
    }
    *out = *tp_graph_value_type(im->graph, value->id);
}

void onnx_values_free(onnx_importer *im) {
    for (onnx_handle h = 0; h < im->num_values; h++) {
        free(im->values[h].name);
        tp_tensor_release(im->values[h].constant);
    }
    free(im->values);
    free(im->name_table);
    im->values = NULL;
    im->name_table = NULL;
    im->num_values = im->value_capacity = im->name_slots = 0;
}

static tp_status fold(onnx_importer *im, const char *op_name, const onnx_handle *operands,
                      int count, const tp_attrs *attrs, onnx_handle *out) {
    tp_tensor *inputs[TP_IR_MAX_OPERANDS];
    for (int i = 0; i < count; i++) inputs[i] = im->values[operands[i]].constant;
    size_t mark = tp_ctx_scope_begin(im->ctx);
    tp_tensor *result = tp_op(im->ctx, op_name, inputs, count, attrs);
    if (result) tp_tensor_retain(result);
    tp_ctx_scope_end(im->ctx, mark, NULL, 0);
    if (!result) {
        tp_status status = tp_ctx_status(im->ctx);
        tp_status returned = onnx_node_error(im, status == TP_OK ? TP_ERR_INTERNAL : status, "%s",
                                             tp_ctx_error(im->ctx));
        tp_ctx_clear_error(im->ctx);
        return returned;
    }
    return onnx_new_constant(im, result, out);
}

/* Folding computes the result now: only for results of at most
 * TP_ONNX_MAX_FOLD elements (a ConstantOfShape claiming 2^33 elements stays
 * a graph node and fails, if at all, when it runs). */
static bool fold_is_small(onnx_importer *im, const char *op_name, const onnx_handle *operands,
                          int count, const tp_attrs *attrs) {
    const tp_op_def *op = tp_op_find(op_name);
    tp_type types[TP_IR_MAX_OPERANDS], result;
    for (int i = 0; i < count; i++) onnx_value_type(im, operands[i], &types[i]);
    if (!op || tp_op_infer(op, types, count, attrs, &result) != TP_OK)
        return true; /* fold reports */
    int64_t numel = 1;
    for (int d = 0; d < result.ndim; d++) {
        if (result.dims[d] < 0 || (result.dims[d] && numel > TP_ONNX_MAX_FOLD / result.dims[d]))
            return false;
        numel *= result.dims[d];
    }
    return numel <= TP_ONNX_MAX_FOLD;
}

tp_status onnx_emit(onnx_importer *im, const char *op_name, const onnx_handle *operands, int count,
                    const tp_attrs *attrs, const char *name, onnx_handle *out) {
    if (count > TP_IR_MAX_OPERANDS)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "has %d operands for %s (at most %d)", count,
                               op_name, TP_IR_MAX_OPERANDS);
    bool all_constant = true;
    for (int i = 0; i < count; i++) {
        if (im->values[operands[i]].unsupported_by) all_constant = false;
        if (!im->values[operands[i]].constant) all_constant = false;
    }
    if (all_constant && fold_is_small(im, op_name, operands, count, attrs))
        return fold(im, op_name, operands, count, attrs, out);
    tp_value_id ids[TP_IR_MAX_OPERANDS];
    for (int i = 0; i < count; i++) TP_TRY(onnx_graph_value(im, operands[i], &ids[i]));
    char buffer[TP_IR_NAME_MAX + 8];
    tp_value_id id;
    tp_status status = tp_graph_add_node(im->graph, op_name, ids, count, attrs,
                                         graph_name_for(im, name, buffer, sizeof buffer), &id);
    if (status != TP_OK) return onnx_node_error(im, status, "%s", tp_last_error());
    return onnx_new_graph_value(im, id, out);
}

tp_status onnx_node_error(onnx_importer *im, tp_status status, const char *format, ...) {
    char detail[TP_ERROR_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    if (im->node) return tp_error_set(status, "%s: %s: %s", im->file, im->node_text, detail);
    return tp_error_set(status, "%s: %s", im->file, detail);
}
