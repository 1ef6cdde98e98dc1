/* tp-bench — the graph a backend compiles: the case's graph (built here, or
 * imported from the model's ONNX file) after the core's pass pipeline
 * (normalize, constfold, decompose, cse, dce, shapeprop), as
 * tp_compile_graph and `tpc run` hand it to the backend, decompose keeping
 * the composites the backend claims (stax's softmax and layer_norm row
 * kernels). Compiling the graph as imported measured a graph no user
 * compiles: the encoder's was 21 kernels where a user's is 11. ONNX Runtime
 * and torch.compile likewise optimise the graph they are given. */
#include "pass_pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "timing.h"

/* Whether op `name` is a composite (the op table's kind). */
static bool is_composite(const char *name) {
    tp_op_info info = TP_OP_INFO_INIT;
    for (int id = 0; name && id < tp_op_count(); id++)
        if (tp_op_describe(id, &info) == TP_OK && !strcmp(info.name, name))
            return !strcmp(info.kind, "composite");
    return false;
}

/* decompose's keep_composites: the claimed values whose op is a composite. */
static tp_status keep_claimed_composites(const tp_graph *graph, bool *keep, void *user) {
    tp_backend *backend = user;
    tp_status status = tp_backend_claims(backend, graph, keep, NULL);
    if (status != TP_OK) return status;
    int count = tp_graph_num_values(graph);
    for (tp_value_id v = 0; v < count; v++)
        keep[v] = keep[v] && is_composite(tp_graph_value_op(graph, v));
    return TP_OK;
}

tp_status bench_pass_pipeline(tp_backend *backend, const tp_graph *graph, tp_graph **out,
                              double *seconds) {
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.keep_composites = keep_claimed_composites;
    options.keep_user = backend;
    double t0 = bench_now();
    tp_status status = tp_pass_pipeline_run(graph, &options, out);
    *seconds = bench_now() - t0;
    return status;
}
