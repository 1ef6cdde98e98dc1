/* Dynamic mode: rebuild a captured (concrete) graph with symbolic input
 * dimensions, so one cache entry serves every size of the same rank
 * (compile_internal.h: tp_graph_symbolize). Dimensions of size 0 or 1 stay
 * sizes (broadcasting depends on them); dimensions that had equal sizes share
 * one symbol; the signature's dimension codes carry exactly that. */
#include <stdio.h>
#include <stdlib.h>

#include "../base/error.h"
#include "compile_internal.h"

tp_status tp_graph_symbolize(const tp_graph *graph, const tp_arg_signature *signature,
                             const bool *concrete, int num_args, tp_graph **out) {
    *out = NULL;
    int num_inputs = tp_graph_num_inputs(graph);
    tp_type *types = calloc((size_t)(num_inputs ? num_inputs : 1), sizeof *types);
    tp_value_id *map = malloc((size_t)tp_graph_num_values(graph) * sizeof *map + 1);
    tp_graph *result = NULL;
    tp_status status = (!types || !map)
                           ? tp_error_set(TP_ERR_OUT_OF_MEMORY, "symbolize: out of memory")
                           : tp_graph_create(tp_graph_name(graph), &result);
    int input = 0;
    for (int i = 0; status == TP_OK && i < num_args; i++) {
        if (signature[i].kind != TP_ARG_TENSOR) continue;
        if (input >= num_inputs) {
            status = tp_error_set(TP_ERR_INTERNAL, "symbolize: more tensors than graph inputs");
            break;
        }
        types[input] = *tp_graph_value_type(graph, tp_graph_input(graph, input));
        for (int axis = 0; status == TP_OK && axis < signature[i].ndim; axis++) {
            int64_t code = signature[i].dims[axis];
            if (code < TP_DIM_CODE_FIRST || (concrete && concrete[i])) continue;
            char name[32];
            snprintf(name, sizeof name, "s%lld", (long long)(code - TP_DIM_CODE_FIRST));
            status = tp_graph_symbol(result, name, &types[input].dims[axis]);
        }
        input++;
    }
    if (status == TP_OK) status = tp_subgraph_append(result, graph, NULL, types, map);
    if (status == TP_OK) {
        int num_outputs = tp_graph_num_outputs(graph);
        tp_value_id outputs[256];
        tp_value_id *ids = num_outputs <= 256 ? outputs : malloc((size_t)num_outputs * sizeof *ids);
        if (!ids) status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "symbolize: out of memory");
        for (int i = 0; status == TP_OK && i < num_outputs; i++)
            ids[i] = map[tp_graph_output(graph, i)];
        if (status == TP_OK) status = tp_graph_set_outputs(result, ids, num_outputs);
        if (ids != outputs) free(ids);
    }
    free(types);
    free(map);
    if (status != TP_OK) {
        tp_graph_destroy(result);
        return status;
    }
    *out = result;
    return TP_OK;
}
