/* tpc: the "run a graph" step. The graph compiles through the same frontend
 * as a C function (tp_compile_graph: capture, passes, backend from the
 * registry) and runs once. */
#include <stdlib.h>

#include "tensorplay/compile.h"
#include "tpc.h"

tp_status tpc_run_graph(const tpc_run_options *options, const tp_graph *graph,
                        tp_tensor *const *inputs, int num_inputs, tp_tensor **outputs) {
    tp_compile_options compile_options = TP_COMPILE_OPTIONS_INIT;
    compile_options.backend = options->backend;
    compile_options.options = options->options;
    compile_options.num_options = options->num_options;
    compile_options.dynamic = options->dynamic ? TP_DYNAMIC_DYNAMIC : TP_DYNAMIC_STATIC;
    compile_options.fullgraph = true; /* a graph has no Python-like fallbacks to take */
    /* Inputs are checked against the graph's declared types first, so a wrong
     * file is reported as such rather than as a capture failure. */
    tp_status status = tp_graph_check_inputs(graph, inputs, num_inputs);
    if (status != TP_OK) return status;
    tp_compiled *compiled;
    status = tp_compile_graph(graph, &compile_options, &compiled);
    if (status != TP_OK) return status;
    tp_arg *args = calloc((size_t)num_inputs + 1, sizeof *args);
    if (!args) {
        tp_compiled_free(compiled);
        return TP_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < num_inputs; i++) args[i] = tp_arg_tensor(inputs[i]);
    status = tp_call(compiled, args, num_inputs, outputs);
    free(args);
    tp_compiled_free(compiled);
    return status;
}
