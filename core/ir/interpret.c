/* The reference interpreter: tp_graph_run. Checks the caller's tensors
 * against the graph's input types (binding symbols), then runs every node in
 * id order with the op table's reference kernel, freeing each intermediate
 * right after its last use. Owns no state beyond one call. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "graph_internal.h"
#include "ops/kernel_dispatch.h"
#include "tensor/tensor_internal.h"

/* Matches one input tensor against its declared type; symbols bind to the
 * first size seen (bindings[symbol index], -1 = unbound). */
static tp_status check_input(const tp_graph *graph, int index, const tp_tensor *tensor,
                             int64_t *bindings, int *bound_by) {
    const tp_value *value = &graph->values[graph->inputs[index]];
    const tp_type *type = &value->type;
    char want[160], got[160];
    if (!tensor)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s': input %%%s (#%d) is NULL",
                            graph->name, value->name, index);
    tp_type_describe(graph, type, want, sizeof want);
    tp_tensor_describe(tensor, got, sizeof got);
    if (tensor->dtype != type->dtype || tensor->ndim != type->ndim)
        return tp_error_set(tensor->dtype != type->dtype ? TP_ERR_DTYPE : TP_ERR_SHAPE,
                            "graph '%s': input %%%s expects %s, got %s", graph->name, value->name,
                            want, got);
    for (int d = 0; d < type->ndim; d++) {
        int64_t dim = type->dims[d], size = tensor->shape[d];
        if (!TP_DIM_IS_SYMBOL(dim)) {
            if (dim != size)
                return tp_error_set(TP_ERR_SHAPE,
                                    "graph '%s': input %%%s expects %s, got %s (dimension %d: "
                                    "%lld vs %lld)",
                                    graph->name, value->name, want, got, d, (long long)dim,
                                    (long long)size);
            continue;
        }
        int symbol = TP_DIM_SYMBOL_INDEX(dim);
        if (bindings[symbol] < 0) {
            bindings[symbol] = size;
            bound_by[symbol] = index;
        } else if (bindings[symbol] != size) {
            const tp_value *first = &graph->values[graph->inputs[bound_by[symbol]]];
            return tp_error_set(TP_ERR_SHAPE,
                                "graph '%s': input %%%s dimension %d is %lld, but symbol '%s' "
                                "is %lld (bound by input %%%s); got %s for %s",
                                graph->name, value->name, d, (long long)size,
                                graph->symbols[symbol], (long long)bindings[symbol], first->name,
                                got, want);
        }
    }
    return TP_OK;
}

tp_status tp_graph_check_inputs(const tp_graph *graph, tp_tensor *const *inputs, int num_inputs) {
    if (num_inputs != graph->num_inputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s' has %d inputs, got %d tensors",
                            graph->name, (int)graph->num_inputs, num_inputs);
    if (num_inputs > 0 && !inputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s': inputs is NULL", graph->name);
    int64_t bindings[TP_IR_MAX_SYMBOLS];
    int bound_by[TP_IR_MAX_SYMBOLS];
    for (int i = 0; i < TP_IR_MAX_SYMBOLS; i++) bindings[i] = -1;
    for (int i = 0; i < num_inputs; i++)
        TP_TRY(check_input(graph, i, inputs[i], bindings, bound_by));
    return TP_OK;
}

/* Runs one node: concrete type from the actual tensors, fresh output, kernel. */
static tp_status run_node(const tp_graph *graph, const tp_value *value, tp_tensor **tensors,
                          tp_tensor **result) {
    const tp_op_def *op = value->op;
    tp_tensor *operands[TP_IR_MAX_OPERANDS];
    tp_type types[TP_IR_MAX_OPERANDS];
    for (int i = 0; i < value->num_operands; i++) {
        tp_value_id id = value->operands[i];
        tp_tensor *tensor =
            id >= 0 && id < (tp_value_id)(value - graph->values) ? tensors[id] : NULL;
        if (!tensor)
            return tp_error_set(TP_ERR_INVALID_GRAPH,
                                "graph '%s', %%%s: operand %d is not computed before its use "
                                "(run tp_graph_verify)",
                                graph->name, value->name, i);
        operands[i] = tensor;
        types[i].dtype = tensor->dtype;
        types[i].ndim = tensor->ndim;
        memcpy(types[i].dims, tensor->shape, sizeof types[i].dims);
    }
    tp_type type;
    tp_status status = tp_op_infer(op, types, value->num_operands, &value->attrs, &type);
    if (status != TP_OK)
        return tp_error_prefix(status, "graph '%s', %%%s: ", graph->name, value->name);
    if (!op->kernel)
        return tp_error_set(TP_ERR_INTERNAL,
                            "graph '%s', %%%s: op '%s' has no reference kernel (a TensorPlay bug)",
                            graph->name, value->name, op->name);
    tp_tensor *out;
    status = tp_tensor_create_uninit(type.dtype, type.ndim, type.dims, &out);
    if (status != TP_OK)
        return tp_error_prefix(status, "graph '%s', %%%s: ", graph->name, value->name);
    status = tp_op_run_kernel(op, operands, value->num_operands, &value->attrs, out);
    if (status != TP_OK) {
        tp_tensor_release(out);
        return tp_error_prefix(status, "graph '%s', %%%s (%s): ", graph->name, value->name,
                               op->name);
    }
    *result = out;
    return TP_OK;
}

/* last_use[v]: the id of the last node reading v; INT32_MAX keeps outputs
 * alive to the end; -1 means never read (dead, freed at once). */
static void compute_last_uses(const tp_graph *graph, int32_t *last_use) {
    for (int32_t v = 0; v < graph->num_values; v++) last_use[v] = -1;
    for (int32_t v = 0; v < graph->num_values; v++)
        for (int i = 0; i < graph->values[v].num_operands; i++)
            last_use[graph->values[v].operands[i]] = v;
    for (int32_t i = 0; i < graph->num_outputs; i++) last_use[graph->outputs[i]] = INT32_MAX;
}

/* Releases the run's references to node results; inputs are borrowed. */
static void release_nodes(const tp_graph *graph, tp_tensor **tensors) {
    for (int32_t v = 0; v < graph->num_values; v++)
        if (graph->values[v].kind == TP_VALUE_NODE) tp_tensor_release(tensors[v]);
}

static tp_status run_nodes(const tp_graph *graph, tp_tensor **tensors, const int32_t *last_use) {
    for (int32_t v = 0; v < graph->num_values; v++) {
        const tp_value *value = &graph->values[v];
        if (value->kind != TP_VALUE_NODE) continue;
        TP_TRY(run_node(graph, value, tensors, &tensors[v]));
        for (int i = 0; i < value->num_operands; i++) {
            tp_value_id operand = value->operands[i];
            if (last_use[operand] == v && graph->values[operand].kind == TP_VALUE_NODE) {
                tp_tensor_release(tensors[operand]); /* NULL on a repeated operand */
                tensors[operand] = NULL;
            }
        }
        if (last_use[v] < 0) {
            tp_tensor_release(tensors[v]);
            tensors[v] = NULL;
        }
    }
    return TP_OK;
}

tp_status tp_graph_run(const tp_graph *graph, tp_tensor *const *inputs, int num_inputs,
                       tp_tensor **outputs) {
    if (!graph || (!outputs && graph->num_outputs > 0))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_run: graph or outputs is NULL");
    if (graph->num_outputs == 0)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "graph '%s' has no outputs (set a return)",
                            graph->name);
    TP_TRY(tp_graph_check_inputs(graph, inputs, num_inputs));
    for (int i = 0; i < num_inputs; i++) tp_tensor_note_raw_access(inputs[i], "tp_graph_run");
    tp_tensor **tensors = tp_calloc((size_t)graph->num_values, sizeof *tensors);
    int32_t *last_use = tp_malloc((size_t)graph->num_values * sizeof *last_use);
    if (!tensors || !last_use) {
        free(tensors);
        free(last_use);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_run: out of memory");
    }
    for (int i = 0; i < num_inputs; i++) tensors[graph->inputs[i]] = inputs[i];
    compute_last_uses(graph, last_use);
    tp_status status = run_nodes(graph, tensors, last_use);
    if (status == TP_OK)
        for (int32_t i = 0; i < graph->num_outputs; i++)
            outputs[i] = tp_tensor_retain(tensors[graph->outputs[i]]);
    release_nodes(graph, tensors);
    free(tensors);
    free(last_use);
    return status;
}
