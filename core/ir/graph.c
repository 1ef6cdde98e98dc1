/* The graph builder and accessors: create/destroy/clone, dimension symbols,
 * inputs, nodes (result types from the op table's rules), outputs, and the
 * bounds-checked read accessors of graph.h. The struct is in
 * graph_internal.h; checking is verify.c, text is print.c/parse.c, running is
 * interpret.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "graph_internal.h"
#include "ops/attr_info.h"

/* ---- name table ------------------------------------------------------------ */

static uint32_t hash_name(const char *name) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (; *name; name++) hash = (hash ^ (uint8_t)*name) * 16777619u;
    return hash;
}

tp_value_id tp_ir_find_value(const tp_graph *graph, const char *name) {
    if (!graph || !name || graph->name_slots == 0) return TP_NO_VALUE;
    uint32_t mask = (uint32_t)graph->name_slots - 1;
    for (uint32_t slot = hash_name(name) & mask;; slot = (slot + 1) & mask) {
        tp_value_id id = graph->name_table[slot];
        if (id == TP_NO_VALUE) return TP_NO_VALUE;
        if (strcmp(graph->values[id].name, name) == 0) return id;
    }
}

static void name_table_insert(tp_graph *graph, tp_value_id id) {
    uint32_t mask = (uint32_t)graph->name_slots - 1;
    uint32_t slot = hash_name(graph->values[id].name) & mask;
    while (graph->name_table[slot] != TP_NO_VALUE) slot = (slot + 1) & mask;
    graph->name_table[slot] = id;
}

/* Makes room for one more name (load factor <= 1/2). */
static tp_status name_table_reserve(tp_graph *graph) {
    if ((int64_t)(graph->num_values + 1) * 2 <= graph->name_slots) return TP_OK;
    int32_t slots = graph->name_slots ? graph->name_slots * 2 : 64;
    tp_value_id *table = malloc((size_t)slots * sizeof *table);
    if (!table) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph: out of memory for names");
    for (int32_t i = 0; i < slots; i++) table[i] = TP_NO_VALUE;
    free(graph->name_table);
    graph->name_table = table;
    graph->name_slots = slots;
    for (tp_value_id id = 0; id < graph->num_values; id++) name_table_insert(graph, id);
    return TP_OK;
}

/* ---- create / destroy / clone ---------------------------------------------- */

tp_status tp_graph_create(const char *name, tp_graph **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_create: out is NULL");
    *out = NULL;
    if (!name) name = "main";
    if (!tp_ir_is_identifier(name))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "graph name '%.*s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at "
                            "most %d bytes)",
                            TP_IR_NAME_MAX, name, TP_IR_NAME_MAX);
    tp_graph *graph = calloc(1, sizeof *graph);
    if (!graph || !(graph->name = tp_strdup(name))) {
        free(graph);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_create: out of memory");
    }
    *out = graph;
    return TP_OK;
}

static void value_free(tp_value *value) {
    free(value->operands);
    free(value->name);
    tp_tensor_release(value->attrs.data);
}

void tp_graph_destroy(tp_graph *graph) {
    if (!graph) return;
    for (int32_t i = 0; i < graph->num_values; i++) value_free(&graph->values[i]);
    for (int32_t i = 0; i < graph->num_symbols; i++) free(graph->symbols[i]);
    free(graph->values);
    free(graph->inputs);
    free(graph->outputs);
    free(graph->symbols);
    free(graph->name_table);
    free(graph->name);
    free(graph);
}

static void *duplicate(const void *source, size_t count, size_t size) {
    void *copy = tp_malloc(count * size);
    if (copy && count) memcpy(copy, source, count * size);
    return copy;
}

/* Rebuilds the clone's arrays one by one; any failure frees the partial copy. */
static tp_status clone_into(const tp_graph *graph, tp_graph *copy) {
    copy->values = tp_calloc((size_t)graph->num_values, sizeof *copy->values);
    copy->inputs = duplicate(graph->inputs, (size_t)graph->num_inputs, sizeof *graph->inputs);
    copy->outputs = duplicate(graph->outputs, (size_t)graph->num_outputs, sizeof *graph->outputs);
    copy->symbols = tp_calloc((size_t)graph->num_symbols, sizeof *copy->symbols);
    copy->name_table =
        duplicate(graph->name_table, (size_t)graph->name_slots, sizeof *graph->name_table);
    if (!copy->values || !copy->inputs || !copy->outputs || !copy->symbols || !copy->name_table)
        return TP_ERR_OUT_OF_MEMORY;
    copy->value_capacity = graph->num_values;
    copy->num_inputs = copy->input_capacity = graph->num_inputs;
    copy->num_outputs = graph->num_outputs;
    copy->name_slots = graph->name_slots;
    for (int32_t i = 0; i < graph->num_symbols; i++) {
        if (!(copy->symbols[i] = tp_strdup(graph->symbols[i]))) return TP_ERR_OUT_OF_MEMORY;
        copy->num_symbols = copy->symbol_capacity = i + 1;
    }
    for (int32_t i = 0; i < graph->num_values; i++) {
        const tp_value *value = &graph->values[i];
        tp_value *target = &copy->values[i];
        *target = *value;
        target->name = tp_strdup(value->name);
        target->operands =
            duplicate(value->operands, (size_t)value->num_operands, sizeof *value->operands);
        /* Constant payloads are immutable: the copy shares them by reference. */
        tp_tensor_retain(target->attrs.data);
        copy->num_values = i + 1;
        if (!target->name || !target->operands) return TP_ERR_OUT_OF_MEMORY;
    }
    return TP_OK;
}

tp_status tp_graph_clone(const tp_graph *graph, tp_graph **out) {
    if (!graph || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_clone: graph or out is NULL");
    *out = NULL;
    tp_graph *copy;
    TP_TRY(tp_graph_create(graph->name, &copy));
    if (clone_into(graph, copy) != TP_OK) {
        tp_graph_destroy(copy);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_clone: out of memory copying '%s'",
                            graph->name);
    }
    *out = copy;
    return TP_OK;
}

/* ---- symbols ------------------------------------------------------------------ */

int64_t tp_ir_find_symbol(const tp_graph *graph, const char *name) {
    for (int32_t i = 0; graph && name && i < graph->num_symbols; i++)
        if (strcmp(graph->symbols[i], name) == 0) return TP_DIM_SYMBOL(i);
    return 0;
}

tp_status tp_graph_symbol(tp_graph *graph, const char *name, int64_t *dim_out) {
    if (!graph || !dim_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_symbol: graph or dim_out is NULL");
    if (!tp_ir_is_identifier(name))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "symbol name '%.*s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                            TP_IR_NAME_MAX, name ? name : "(null)");
    int64_t existing = tp_ir_find_symbol(graph, name);
    if (existing) {
        *dim_out = existing;
        return TP_OK;
    }
    if (graph->num_symbols >= TP_IR_MAX_SYMBOLS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s': more than %d dimension symbols",
                            graph->name, TP_IR_MAX_SYMBOLS);
    if (graph->num_symbols == graph->symbol_capacity) {
        int32_t capacity = graph->symbol_capacity ? graph->symbol_capacity * 2 : 8;
        char **symbols = realloc(graph->symbols, (size_t)capacity * sizeof *symbols);
        if (!symbols) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_symbol: out of memory");
        graph->symbols = symbols;
        graph->symbol_capacity = capacity;
    }
    char *copy = tp_strdup(name);
    if (!copy) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_symbol: out of memory");
    graph->symbols[graph->num_symbols] = copy;
    *dim_out = TP_DIM_SYMBOL(graph->num_symbols);
    graph->num_symbols++;
    return TP_OK;
}

const char *tp_graph_symbol_name(const tp_graph *graph, int64_t dim) {
    if (!graph || !TP_DIM_IS_SYMBOL(dim) || dim < TP_DIM_SYMBOL(TP_IR_MAX_SYMBOLS)) return NULL;
    int index = TP_DIM_SYMBOL_INDEX(dim);
    return index < graph->num_symbols ? graph->symbols[index] : NULL;
}

/* ---- adding values ------------------------------------------------------------- */

/* Checks `name` (or makes an automatic one) and reserves a slot for a value. */
static tp_status new_value(tp_graph *graph, const char *name, char **name_out) {
    *name_out = NULL;
    if (graph->num_values >= TP_IR_MAX_VALUES)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s': more than %d values", graph->name,
                            TP_IR_MAX_VALUES);
    char automatic[32];
    if (name) {
        if (!tp_ir_is_value_name(name))
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "value name '%.*s' is not words of [A-Za-z0-9_] joined by "
                                "single dots (at most %d bytes)",
                                TP_IR_NAME_MAX, name, TP_IR_NAME_MAX);
        if (tp_ir_find_value(graph, name) != TP_NO_VALUE)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "graph '%s': value name %%%s is already defined", graph->name,
                                name);
    } else {
        /* "%N" with N the id; a parsed graph may already use that number. */
        int64_t number = graph->num_values;
        do snprintf(automatic, sizeof automatic, "%lld", (long long)number++);
        while (tp_ir_find_value(graph, automatic) != TP_NO_VALUE);
        name = automatic;
    }
    if (graph->num_values == graph->value_capacity) {
        int32_t capacity = graph->value_capacity ? graph->value_capacity * 2 : 16;
        tp_value *values = realloc(graph->values, (size_t)capacity * sizeof *values);
        if (!values) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph: out of memory for values");
        graph->values = values;
        graph->value_capacity = capacity;
    }
    TP_TRY(name_table_reserve(graph));
    if (!(*name_out = tp_strdup(name)))
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph: out of memory for names");
    return TP_OK;
}

/* Appends a fully built value (name already checked by new_value). */
static tp_value_id commit_value(tp_graph *graph, const tp_value *value) {
    tp_value_id id = graph->num_values++;
    graph->values[id] = *value;
    name_table_insert(graph, id);
    return id;
}

tp_status tp_graph_add_input(tp_graph *graph, const char *name, const tp_type *type,
                             tp_value_id *out) {
    if (out) *out = TP_NO_VALUE;
    if (!graph || !type)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_add_input: graph or type is NULL");
    if (!name)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_add_input: inputs need a name");
    tp_status status = tp_ir_type_check(graph, type);
    if (status != TP_OK) return tp_error_prefix(status, "input %%%.*s: ", TP_IR_NAME_MAX, name);
    if (graph->num_inputs == graph->input_capacity) {
        int32_t capacity = graph->input_capacity ? graph->input_capacity * 2 : 8;
        tp_value_id *inputs = realloc(graph->inputs, (size_t)capacity * sizeof *inputs);
        if (!inputs) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph: out of memory for inputs");
        graph->inputs = inputs;
        graph->input_capacity = capacity;
    }
    tp_value value = {.kind = TP_VALUE_INPUT, .attrs = TP_ATTRS_INIT, .type = *type};
    TP_TRY(new_value(graph, name, &value.name));
    tp_value_id id = commit_value(graph, &value);
    graph->inputs[graph->num_inputs++] = id;
    if (out) *out = id;
    return TP_OK;
}

/* Copies the attributes `op` declares onto the defaults, checking the list
 * lengths and the constant payload. */
static tp_status normalize_attrs(const tp_op_def *op, const tp_attrs *attrs, tp_attrs *out) {
    static const tp_attrs defaults = TP_ATTRS_INIT;
    *out = defaults;
    if (!attrs) attrs = &defaults;
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key))) continue;
        int32_t count;
        if (tp_attrs_ints(attrs, (tp_attr_key)key, &count) && (count < 0 || count > TP_MAX_DIMS))
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: attribute %s has %d entries (0..%d)",
                                op->name, tp_attr_key_name((tp_attr_key)key), (int)count,
                                TP_MAX_DIMS);
        tp_ir_attr_copy(out, attrs, (tp_attr_key)key);
    }
    if ((op->attr_mask & TP_ATTR_BIT(TP_ATTR_DATA)) && !out->data)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: attrs.data (the payload) is NULL",
                            op->name);
    return TP_OK;
}

tp_status tp_graph_add_node(tp_graph *graph, const char *op_name, const tp_value_id *inputs,
                            int num_inputs, const tp_attrs *attrs, const char *name,
                            tp_value_id *out) {
    if (out) *out = TP_NO_VALUE;
    if (!graph || !op_name)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_add_node: graph or op is NULL");
    const tp_op_def *op = tp_op_find(op_name);
    if (!op) {
        const char *suggestion = tp_ir_suggest_op(op_name);
        return tp_error_set(TP_ERR_NOT_FOUND, "unknown op '%.*s'%s%s%s", TP_IR_NAME_MAX, op_name,
                            suggestion ? " (did you mean '" : "", suggestion ? suggestion : "",
                            suggestion ? "'?)" : "");
    }
    if (num_inputs < 0 || num_inputs > TP_IR_MAX_OPERANDS || (num_inputs > 0 && !inputs))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: bad input list (%d inputs)", op->name,
                            num_inputs);
    tp_type types[TP_IR_MAX_OPERANDS];
    for (int i = 0; i < num_inputs; i++) {
        if (inputs[i] < 0 || inputs[i] >= graph->num_values)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: input %d is value id %d, but the graph has %d values",
                                op->name, i, (int)inputs[i], (int)graph->num_values);
        types[i] = graph->values[inputs[i]].type;
    }
    tp_value value = {.kind = TP_VALUE_NODE, .op = op, .num_operands = num_inputs};
    TP_TRY(normalize_attrs(op, attrs, &value.attrs));
    tp_status status = tp_op_infer(op, types, num_inputs, &value.attrs, &value.type);
    if (status != TP_OK) {
        if (name) tp_error_prefix(status, "%%%.*s: ", TP_IR_NAME_MAX, name);
        return status;
    }
    TP_TRY(new_value(graph, name, &value.name));
    value.operands = duplicate(inputs, (size_t)num_inputs, sizeof *inputs);
    if (!value.operands) {
        free(value.name);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", op->name);
    }
    tp_tensor_retain(value.attrs.data);
    tp_value_id id = commit_value(graph, &value);
    if (out) *out = id;
    return TP_OK;
}

tp_status tp_graph_set_outputs(tp_graph *graph, const tp_value_id *values, int count) {
    if (!graph || count < 0 || (count > 0 && !values))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_set_outputs: bad arguments");
    if (count > TP_IR_MAX_OUTPUTS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s': more than %d outputs",
                            graph->name, TP_IR_MAX_OUTPUTS);
    for (int i = 0; i < count; i++)
        if (values[i] < 0 || values[i] >= graph->num_values)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "graph '%s': output %d is value id %d, but the graph has %d values",
                                graph->name, i, (int)values[i], (int)graph->num_values);
    tp_value_id *outputs = duplicate(values, (size_t)count, sizeof *values);
    if (!outputs) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_set_outputs: out of memory");
    free(graph->outputs);
    graph->outputs = outputs;
    graph->num_outputs = count;
    return TP_OK;
}

/* ---- reading --------------------------------------------------------------------- */

static const tp_value *value_at(const tp_graph *graph, tp_value_id id) {
    return graph && id >= 0 && id < graph->num_values ? &graph->values[id] : NULL;
}

const char *tp_graph_name(const tp_graph *graph) {
    return graph ? graph->name : NULL;
}
int tp_graph_num_inputs(const tp_graph *graph) {
    return graph ? graph->num_inputs : 0;
}
int tp_graph_num_outputs(const tp_graph *graph) {
    return graph ? graph->num_outputs : 0;
}
int tp_graph_num_values(const tp_graph *graph) {
    return graph ? graph->num_values : 0;
}

tp_value_id tp_graph_input(const tp_graph *graph, int index) {
    return graph && index >= 0 && index < graph->num_inputs ? graph->inputs[index] : TP_NO_VALUE;
}

tp_value_id tp_graph_output(const tp_graph *graph, int index) {
    return graph && index >= 0 && index < graph->num_outputs ? graph->outputs[index] : TP_NO_VALUE;
}

const tp_type *tp_graph_value_type(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = value_at(graph, id);
    return value ? &value->type : NULL;
}

const char *tp_graph_value_name(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = value_at(graph, id);
    return value ? value->name : NULL;
}

const char *tp_graph_value_op(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = value_at(graph, id);
    return value && value->op ? value->op->name : NULL;
}

int tp_graph_value_num_operands(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = value_at(graph, id);
    return value ? value->num_operands : -1;
}

tp_value_id tp_graph_value_operand(const tp_graph *graph, tp_value_id id, int index) {
    const tp_value *value = value_at(graph, id);
    return value && index >= 0 && index < value->num_operands ? value->operands[index]
                                                              : TP_NO_VALUE;
}

const tp_attrs *tp_graph_value_attrs(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = value_at(graph, id);
    return value && value->kind == TP_VALUE_NODE ? &value->attrs : NULL;
}
