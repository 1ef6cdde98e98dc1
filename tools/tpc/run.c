/* tpc: the "run a graph" step. The graph compiles through the same frontend
 * as a C function (tp_compile_graph: capture, passes, backend from the
 * registry) and runs once. */
#include <stdlib.h>

#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/profile.h"
#include "tpc.h"

/* --repeat N: N more calls, each timed; their outputs are dropped. */
static tp_status repeat_runs(const tpc_run_options *options, tp_compiled *compiled,
                             const tp_arg *args, int num_inputs, int num_outputs) {
    tp_tensor **outputs = calloc((size_t)num_outputs + 1, sizeof *outputs);
    if (!outputs) return TP_ERR_OUT_OF_MEMORY;
    tp_status status = TP_OK;
    for (int run = 0; run < options->repeat && status == TP_OK; run++) {
        uint64_t start = tp_profile_now_ns();
        status = tp_call(compiled, args, num_inputs, outputs);
        uint64_t end = tp_profile_now_ns();
        if (status != TP_OK) break;
        tpc_profile_steady_run(options->profile, start, end);
        for (int i = 0; i < num_outputs; i++) tp_tensor_release(outputs[i]), outputs[i] = NULL;
    }
    free(outputs);
    return status;
}

tp_status tpc_run_graph(const tpc_run_options *options, const tp_graph *graph,
                        tp_tensor *const *inputs, int num_inputs, tp_tensor **outputs) {
    tp_compile_options compile_options = TP_COMPILE_OPTIONS_INIT;
    compile_options.backend = options->backend;
    compile_options.mode = options->mode;
    compile_options.options = options->options;
    compile_options.num_options = options->num_options;
    compile_options.dynamic = options->dynamic ? TP_DYNAMIC_DYNAMIC : TP_DYNAMIC_STATIC;
    /* A graph has no capture breaks to fall back from; what fullgraph still
     * decides is whether nodes the backend does not claim may run on the
     * fallback backend (the default) or make the compile fail. */
    compile_options.fullgraph = options->fullgraph;
    /* Inputs are checked against the graph's declared types first, so a wrong
     * file is reported as such rather than as a capture failure. */
    tp_status status = tp_graph_check_inputs(graph, inputs, num_inputs);
    if (status != TP_OK) return status;
    /* Loading first (lookup loads it) so that a crash names the phase. */
    const char *backend_name = options->backend ? options->backend : tp_backend_get_default();
    const char *graph_name = tp_graph_name(graph);
    tpc_crash_report_phase(backend_name, "load", graph_name);
    tp_backend *backend = NULL;
    uint64_t load_start = options->profile ? tp_profile_now_ns() : 0;
    status = tp_backend_lookup(backend_name, &backend);
    if (options->profile)
        tpc_profile_add(options->profile, "load backend", load_start, tp_profile_now_ns());
    tpc_crash_report_clear();
    if (status != TP_OK) return status;
    tp_compiled *compiled;
    tpc_crash_report_phase(backend_name, "compile", graph_name);
    status = tp_compile_graph(graph, &compile_options, &compiled);
    tpc_crash_report_clear();
    if (status != TP_OK) return status;
    tp_arg *args = calloc((size_t)num_inputs + 1, sizeof *args);
    if (!args) {
        tp_compiled_free(compiled);
        return TP_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < num_inputs; i++) args[i] = tp_arg_tensor(inputs[i]);
    tpc_crash_report_phase(backend_name, "run", graph_name);
    uint64_t start = options->profile ? tp_profile_now_ns() : 0;
    status = tp_call(compiled, args, num_inputs, outputs);
    if (options->profile)
        tpc_profile_add(options->profile, "first run", start, tp_profile_now_ns());
    if (status == TP_OK && options->profile)
        status = repeat_runs(options, compiled, args, num_inputs, tp_graph_num_outputs(graph));
    tpc_crash_report_clear();
    free(args);
    tp_compiled_free(compiled);
    return status;
}
