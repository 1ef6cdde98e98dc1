/* tp_compile_graph: a graph compiles through the same frontend as a C
 * function. Its function is the graph's replay on the ops (one tp_op call
 * per node, in SSA order), which runs only where the function runs eagerly
 * (disable); a capture takes the graph itself, retyped to the call's inputs,
 * with no op run (a graph reads no values or sizes, so it has no gates and
 * no shape guards). Passes, guards and the cache then treat it exactly like
 * user code. Owns only the replay, that capture and the wrapper's private
 * copy of the graph. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile_internal.h"
#include "ops/ctx_internal.h"
#include "tensorplay/compile.h"

typedef struct graph_function {
    tp_graph *graph;
    tp_tensor **values; /* scratch: one slot per graph value, per call */
} graph_function;

static void replay_graph(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                         int num_outputs, void *user_data) {
    const tp_graph *graph = ((const graph_function *)user_data)->graph;
    int num_values = tp_graph_num_values(graph), num_inputs = tp_graph_num_inputs(graph);
    tp_tensor **values = calloc((size_t)num_values + 1, sizeof *values);
    tp_tensor **inputs = calloc((size_t)num_inputs + 1, sizeof *inputs);
    if (!values || !inputs) {
        free(values);
        free(inputs);
        tp_ctx_record_error(ctx, tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph '%s': out of memory",
                                              tp_graph_name(graph)));
        return;
    }
    for (int i = 0; i < num_inputs && i < num_args; i++)
        inputs[i] = values[tp_graph_input(graph, i)] = args[i].tensor;
    tp_status status = tp_graph_check_inputs(graph, inputs, num_args);
    free(inputs);
    if (status != TP_OK) {
        tp_ctx_record_error(ctx, status);
        free(values);
        return;
    }
    for (tp_value_id id = 0; id < num_values; id++) {
        const char *op = tp_graph_value_op(graph, id);
        if (!op) continue;
        tp_tensor *operands[64];
        int count = tp_graph_value_num_operands(graph, id);
        for (int k = 0; k < count && k < 64; k++)
            operands[k] = values[tp_graph_value_operand(graph, id, k)];
        values[id] = tp_op(ctx, op, operands, count, tp_graph_value_attrs(graph, id));
    }
    for (int i = 0; i < num_outputs; i++) outputs[i] = values[tp_graph_output(graph, i)];
    free(values);
}

bool tp_compiled_is_graph(const tp_compiled *compiled) {
    return compiled->fn == replay_graph;
}

/* The graph with its inputs typed as this call's tensors (types re-derived
 * node by node, so a shape error names the node, as the replay's would). */
static tp_status retype_graph(const tp_graph *graph, tp_tensor *const *tensors, int num_inputs,
                              tp_graph **out) {
    *out = NULL;
    int num_values = tp_graph_num_values(graph), num_outputs = tp_graph_num_outputs(graph);
    tp_type *types = malloc((size_t)(num_inputs + 1) * sizeof *types);
    tp_value_id *map = malloc((size_t)(num_values + 1) * sizeof *map);
    tp_value_id *outputs = malloc((size_t)(num_outputs + 1) * sizeof *outputs);
    tp_status status = TP_OK;
    if (!types || !map || !outputs)
        status =
            tp_error_set(TP_ERR_OUT_OF_MEMORY, "graph '%s': out of memory", tp_graph_name(graph));
    for (int i = 0; status == TP_OK && i < num_inputs; i++) {
        types[i] =
            (tp_type){.dtype = tp_tensor_dtype(tensors[i]), .ndim = tp_tensor_ndim(tensors[i])};
        for (int axis = 0; axis < types[i].ndim; axis++)
            types[i].dims[axis] = tp_tensor_dim(tensors[i], axis);
    }
    tp_graph *copy = NULL;
    if (status == TP_OK) status = tp_graph_create(tp_graph_name(graph), &copy);
    if (status == TP_OK) status = tp_subgraph_append(copy, graph, NULL, types, map);
    for (int i = 0; status == TP_OK && i < num_outputs; i++)
        outputs[i] = map[tp_graph_output(graph, i)];
    if (status == TP_OK) status = tp_graph_set_outputs(copy, outputs, num_outputs);
    if (status == TP_OK)
        *out = copy;
    else
        tp_graph_destroy(copy);
    free(types);
    free(map);
    free(outputs);
    return status;
}

tp_status tp_graph_function_capture(const tp_compiled *compiled, const tp_arg *args, int num_args,
                                    tp_capture_result *result) {
    memset(result, 0, sizeof *result);
    const tp_graph *graph = ((const graph_function *)compiled->user_data)->graph;
    tp_tensor **tensors = calloc((size_t)num_args + 1, sizeof *tensors);
    if (!tensors) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    tp_status status = TP_OK;
    for (int i = 0; status == TP_OK && i < num_args; i++) {
        if (args[i].kind != TP_ARG_TENSOR)
            status = tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                  "'%s': argument %d ('%s') must be a tensor (a graph takes one "
                                  "tensor per input)",
                                  compiled->name, i,
                                  tp_graph_value_name(graph, tp_graph_input(graph, i)));
        else
            tensors[i] = args[i].tensor;
    }
    if (status == TP_OK) status = tp_graph_check_inputs(graph, tensors, num_args);
    if (status == TP_OK) status = retype_graph(graph, tensors, num_args, &result->graph);
    if (status == TP_OK && !(result->shape_touched = calloc((size_t)num_args + 1, sizeof(bool))))
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    free(tensors);
    if (status != TP_OK) {
        tp_capture_result_clear(result);
        return tp_error_prefix(status, "'%s': ", compiled->name);
    }
    return TP_OK;
}

static void graph_function_free(void *user_data) {
    graph_function *function = user_data;
    tp_graph_destroy(function->graph);
    free(function);
}

tp_status tp_compile_graph(const tp_graph *graph, const tp_compile_options *options,
                           tp_compiled **out) {
    if (!graph || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile_graph: graph and out are required");
    *out = NULL;
    TP_TRY(tp_graph_verify(graph));
    graph_function *function = calloc(1, sizeof *function);
    if (!function) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_compile_graph: out of memory");
    tp_status status = tp_graph_clone(graph, &function->graph);
    if (status != TP_OK) {
        free(function);
        return status;
    }
    int num_inputs = tp_graph_num_inputs(graph);
    const char **names = calloc((size_t)num_inputs + 1, sizeof *names);
    if (!names) {
        graph_function_free(function);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_compile_graph: out of memory");
    }
    for (int i = 0; i < num_inputs; i++)
        names[i] = tp_graph_value_name(function->graph, tp_graph_input(function->graph, i));

    tp_compile_options graph_options = TP_COMPILE_OPTIONS_INIT;
    if (options) /* an older, smaller options struct leaves the newer fields at defaults */
        memcpy(&graph_options, options,
               options->struct_size < sizeof graph_options ? options->struct_size
                                                           : sizeof graph_options);
    graph_options.struct_size = sizeof graph_options;
    graph_options.param_names = names;
    graph_options.num_params = num_inputs;
    graph_options.num_outputs = tp_graph_num_outputs(graph);
    graph_options.user_data = function;
    if (!graph_options.name) graph_options.name = tp_graph_name(graph);
    status = tp_compile(replay_graph, &graph_options, out);
    free(names);
    if (status != TP_OK) {
        graph_function_free(function);
        return status;
    }
    (*out)->user_data_free = graph_function_free;
    return TP_OK;
}
