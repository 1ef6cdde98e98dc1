/* tp_compile_graph: a graph compiles through the same frontend as a C
 * function. The captured function is the graph's replay on the ops (one
 * tp_op call per node, in SSA order), so capture, passes, guards and the
 * cache treat it exactly like user code. Owns only the replay and the
 * wrapper's private copy of the graph. */
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
