/* tp-bench — the graph a backend compiles: the case's graph (built here, or
 * imported from the model's ONNX file) after the core's pass pipeline
 * (normalize, constfold, decompose, cse, dce, shapeprop) with the options
 * tp_compile_graph and `tpc run` use for the backend
 * (tp_pass_options_for_backend: decompose keeps the composites it claims,
 * stax's softmax and layer_norm row kernels). Compiling the graph as
 * imported measured a graph no user compiles: the encoder's was 21 kernels
 * where a user's is 11. ONNX Runtime and torch.compile likewise optimise the
 * graph they are given. */
#include "pass_pipeline.h"

#include "timing.h"

tp_status bench_pass_pipeline(tp_backend *backend, const tp_graph *graph, tp_graph **out,
                              double *seconds) {
    tp_pass_options options;
    tp_pass_options_for_backend(backend, &options);
    double t0 = bench_now();
    tp_status status = tp_pass_pipeline_run(graph, &options, out);
    *seconds = bench_now() - t0;
    return status;
}
