/* The verifier: tp_graph_verify checks what the builder guarantees, so that a
 * graph edited by a pass (or assembled by hand) can be trusted again:
 * inputs and their types, SSA order (operands defined before use), arity,
 * attributes only as the op declares them, every type re-derived from the op
 * table and equal to the stored one, unique names, and a non-empty return.
 * Errors are TP_ERR_INVALID_GRAPH naming the graph, the value and the op. */
#include "base/error.h"
#include "graph_internal.h"
#include "ops/attr_info.h"

static tp_status verify_input(const tp_graph *graph, int index) {
    tp_value_id id = graph->inputs[index];
    if (id < 0 || id >= graph->num_values || graph->values[id].kind != TP_VALUE_INPUT)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "graph '%s': input #%d is id %d, not an input",
                            graph->name, index, (int)id);
    if (tp_ir_type_check(graph, &graph->values[id].type) != TP_OK)
        return tp_error_prefix(TP_ERR_INVALID_GRAPH, "graph '%s': input %%%s: ", graph->name,
                               graph->values[id].name);
    return TP_OK;
}

static tp_status verify_attrs(const tp_graph *graph, const tp_value *value) {
    const tp_op_def *op = value->op;
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        bool declared = op->attr_mask & TP_ATTR_BIT(key);
        int32_t count;
        if (declared && tp_attrs_ints(tp_ir_value_attrs(value), (tp_attr_key)key, &count) &&
            (count < 0 || count > TP_MAX_DIMS))
            return tp_error_set(TP_ERR_INVALID_GRAPH,
                                "graph '%s': %%%s (%s): attribute %s has %d entries (0..%d)",
                                graph->name, value->name, op->name,
                                tp_attr_key_name((tp_attr_key)key), (int)count, TP_MAX_DIMS);
        if (!declared && !tp_ir_attr_is_default(tp_ir_value_attrs(value), (tp_attr_key)key))
            return tp_error_set(TP_ERR_INVALID_GRAPH,
                                "graph '%s': %%%s (%s): attribute %s is set, but %s does not "
                                "take it",
                                graph->name, value->name, op->name,
                                tp_attr_key_name((tp_attr_key)key), op->name);
    }
    if ((op->attr_mask & TP_ATTR_BIT(TP_ATTR_DATA)) && !tp_ir_value_attrs(value)->data)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "graph '%s': %%%s (%s): the payload is missing",
                            graph->name, value->name, op->name);
    return TP_OK;
}

static tp_status verify_node(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = &graph->values[id];
    const tp_op_def *op = value->op;
    if (!op || op < tp_op_table || op >= tp_op_table + TP_OP_COUNT)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "graph '%s': %%%s has no valid op", graph->name,
                            value->name);
    if (value->num_operands < op->min_arity || value->num_operands > op->max_arity)
        return tp_error_set(TP_ERR_INVALID_GRAPH,
                            "graph '%s': %%%s (%s) has %d operands; %s takes %d to %d", graph->name,
                            value->name, op->name, (int)value->num_operands, op->name,
                            op->min_arity, op->max_arity);
    tp_type types[TP_IR_MAX_OPERANDS];
    for (int i = 0; i < value->num_operands; i++) {
        tp_value_id operand = value->operands[i];
        if (operand < 0 || operand >= id)
            return tp_error_set(TP_ERR_INVALID_GRAPH,
                                "graph '%s': %%%s (%s): operand %d (id %d) is not defined before "
                                "its use",
                                graph->name, value->name, op->name, i, (int)operand);
        types[i] = graph->values[operand].type;
    }
    TP_TRY(verify_attrs(graph, value));
    tp_type derived;
    if (tp_op_infer(op, types, value->num_operands, tp_ir_value_attrs(value), &derived) != TP_OK)
        return tp_error_prefix(TP_ERR_INVALID_GRAPH, "graph '%s': %%%s: ", graph->name,
                               value->name);
    if (!tp_ir_type_equal(&derived, &value->type)) {
        char stored[160], expected[160];
        return tp_error_set(TP_ERR_INVALID_GRAPH,
                            "graph '%s': %%%s (%s) is typed %s, but its op gives %s", graph->name,
                            value->name, op->name,
                            tp_type_describe(graph, &value->type, stored, sizeof stored),
                            tp_type_describe(graph, &derived, expected, sizeof expected));
    }
    return TP_OK;
}

static tp_status verify_value(const tp_graph *graph, tp_value_id id) {
    const tp_value *value = &graph->values[id];
    if (!tp_ir_is_value_name(value->name) || tp_ir_find_value(graph, value->name) != id)
        return tp_error_set(TP_ERR_INVALID_GRAPH,
                            "graph '%s': value #%d has a missing or duplicate name", graph->name,
                            (int)id);
    if (value->kind == TP_VALUE_INPUT) {
        if (value->op || value->num_operands)
            return tp_error_set(TP_ERR_INVALID_GRAPH, "graph '%s': input %%%s has an op",
                                graph->name, value->name);
        return TP_OK;
    }
    return verify_node(graph, id);
}

tp_status tp_graph_verify(const tp_graph *graph) {
    if (!graph) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_verify: graph is NULL");
    int32_t inputs_seen = 0;
    for (int i = 0; i < graph->num_inputs; i++) TP_TRY(verify_input(graph, i));
    for (tp_value_id id = 0; id < graph->num_values; id++) {
        TP_TRY(verify_value(graph, id));
        inputs_seen += graph->values[id].kind == TP_VALUE_INPUT;
    }
    if (inputs_seen != graph->num_inputs)
        return tp_error_set(TP_ERR_INVALID_GRAPH,
                            "graph '%s': %d values are inputs, but the input list has %d",
                            graph->name, (int)inputs_seen, (int)graph->num_inputs);
    if (graph->num_outputs == 0)
        return tp_error_set(TP_ERR_INVALID_GRAPH,
                            "graph '%s' returns nothing (set its outputs with "
                            "tp_graph_set_outputs)",
                            graph->name);
    for (int i = 0; i < graph->num_outputs; i++)
        if (graph->outputs[i] < 0 || graph->outputs[i] >= graph->num_values)
            return tp_error_set(TP_ERR_INVALID_GRAPH,
                                "graph '%s': output #%d is id %d, which is not a value",
                                graph->name, i, (int)graph->outputs[i]);
    return TP_OK;
}
