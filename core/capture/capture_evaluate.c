/* Computing a capture's deferred values on demand (capture_state.h): the
 * smallest set of nodes a read needs, run with the reference kernels in
 * graph order. Owns state->values; never records anything. */
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../ops/kernel_dispatch.h"
#include "capture_state.h"

tp_status tp_capture_keep_value(capture_state *state, tp_value_id value, tp_tensor *tensor) {
    if (value >= state->values_capacity) {
        int capacity = state->values_capacity ? state->values_capacity : 64;
        while (capacity <= value) capacity *= 2;
        tp_tensor **values = realloc(state->values, (size_t)capacity * sizeof *values);
        if (values) state->values = values;
        uint32_t *visited =
            values ? realloc(state->visited, (size_t)capacity * sizeof *visited) : NULL;
        if (!visited) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "capture: out of memory (values)");
        state->visited = visited;
        size_t added = (size_t)(capacity - state->values_capacity);
        memset(values + state->values_capacity, 0, added * sizeof *values);
        memset(visited + state->values_capacity, 0, added * sizeof *visited);
        state->values_capacity = capacity;
    }
    tp_tensor_release(state->values[value]);
    state->values[value] = tp_tensor_retain(tensor);
    return TP_OK;
}

void tp_capture_release_values(capture_state *state) {
    for (int i = 0; i < state->values_capacity; i++) tp_tensor_release(state->values[i]);
    free(state->values);
    free(state->visited);
    state->values = NULL;
    state->visited = NULL;
    state->values_capacity = 0;
}

static tp_tensor *tensor_of(const capture_state *state, tp_value_id value) {
    return value >= 0 && value < state->values_capacity ? state->values[value] : NULL;
}

static bool is_deferred(const capture_state *state, tp_value_id value) {
    tp_tensor *tensor = tensor_of(state, value);
    return tensor && tensor->deferred;
}

/* Runs the node of `value` into its deferred tensor; its operands hold
 * their values already. */
static tp_status compute_node(capture_state *state, tp_value_id value) {
    const tp_graph *graph = state->graph;
    const char *name = tp_graph_value_op(graph, value);
    const tp_op_def *op = name ? tp_op_find(name) : NULL;
    tp_tensor *result = tensor_of(state, value);
    int count = tp_graph_value_num_operands(graph, value);
    tp_tensor *operands[64];
    if (!op || !result || count > 64)
        return tp_error_set(TP_ERR_INTERNAL, "capture: %%%s has no computable node (a bug)",
                            tp_graph_value_name(graph, value));
    for (int i = 0; i < count; i++) {
        operands[i] = tensor_of(state, tp_graph_value_operand(graph, value, i));
        if (!operands[i] || operands[i]->deferred)
            return tp_error_set(TP_ERR_INTERNAL,
                                "capture: operand %d of %%%s is not computed (a bug)", i,
                                tp_graph_value_name(graph, value));
    }
    TP_TRY(tp_tensor_allocate_deferred(result));
    tp_status status =
        tp_op_run_kernel(op, operands, count, tp_graph_value_attrs(graph, value), result);
    if (status != TP_OK) return tp_error_prefix(status, "%s: ", op->name);
    return TP_OK;
}

static int compare_ids(const void *a, const void *b) {
    tp_value_id x = *(const tp_value_id *)a, y = *(const tp_value_id *)b;
    return (x > y) - (x < y);
}

/* Whether every operand of `value` holds its values already. */
static bool operands_computed(const capture_state *state, tp_value_id value) {
    int count = tp_graph_value_num_operands(state->graph, value);
    for (int i = 0; i < count; i++)
        if (is_deferred(state, tp_graph_value_operand(state->graph, value, i))) return false;
    return true;
}

tp_status tp_capture_evaluate(capture_state *state, tp_value_id value) {
    if (!is_deferred(state, value)) return TP_OK;
    /* The common case after a raw read (every earlier value computed): no
     * walk, so computing each later op costs the op alone. */
    if (operands_computed(state, value)) return compute_node(state, value);
    /* Each value enters the walk once, so both lists fit in the count of
     * values (malloc without clearing: the walk touches what it visits). */
    int count = tp_graph_num_values(state->graph);
    tp_value_id *stack = malloc((size_t)count * sizeof *stack);
    tp_value_id *needed = malloc((size_t)count * sizeof *needed);
    tp_status status = TP_OK;
    if (!stack || !needed) {
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "capture: out of memory (evaluation)");
        goto done;
    }
    if (++state->visit_epoch == 0) { /* wrapped: start the marks again */
        memset(state->visited, 0, (size_t)state->values_capacity * sizeof *state->visited);
        state->visit_epoch = 1;
    }
    uint32_t epoch = state->visit_epoch;
    /* The deferred ancestors of `value`, found without recursion; a computed
     * value stops the walk (its own ancestors are not needed). */
    int top = 0, num_needed = 0;
    stack[top++] = value;
    state->visited[value] = epoch;
    while (top > 0) {
        tp_value_id current = stack[--top];
        needed[num_needed++] = current;
        int operands = tp_graph_value_num_operands(state->graph, current);
        for (int i = 0; i < operands; i++) {
            tp_value_id operand = tp_graph_value_operand(state->graph, current, i);
            if (is_deferred(state, operand) && state->visited[operand] != epoch) {
                state->visited[operand] = epoch;
                stack[top++] = operand;
            }
        }
    }
    /* Graph ids are a topological order: operands before their users. */
    qsort(needed, (size_t)num_needed, sizeof *needed, compare_ids);
    for (int i = 0; status == TP_OK && i < num_needed; i++) status = compute_node(state, needed[i]);
done:
    free(stack);
    free(needed);
    return status;
}

tp_status tp_capture_evaluate_all(capture_state *state) {
    int count = tp_graph_num_values(state->graph);
    for (tp_value_id value = 0; value < count; value++)
        if (is_deferred(state, value)) TP_TRY(compute_node(state, value));
    return TP_OK;
}

void tp_capture_fill_zeros(tp_tensor *tensor) {
    if (!tensor->deferred || tp_tensor_allocate_deferred(tensor) != TP_OK) return;
    if (tensor->nbytes > 0) memset(tensor->data, 0, tensor->nbytes);
}
