/* tpc: the "run a graph" step. Today it calls the reference interpreter;
 * a backend name will select a compiler backend through the registry. */
#include "tpc.h"

tp_status tpc_run_graph(const tpc_run_options *options, const tp_graph *graph,
                        tp_tensor *const *inputs, int num_inputs, tp_tensor **outputs) {
    (void)options;
    return tp_graph_run(graph, inputs, num_inputs, outputs);
}
