/* The graph a backend compiles in tp-bench (see pass_pipeline.c). */
#ifndef TP_BENCH_PASS_PIPELINE_H
#define TP_BENCH_PASS_PIPELINE_H

#include "tensorplay/tensorplay.h"

/* `graph` after the core's pass pipeline as tp_compile_graph runs it for
 * `backend` (tp_pass_options_for_backend): a new graph in *out, and the
 * seconds the passes took in *seconds. */
tp_status bench_pass_pipeline(tp_backend *backend, const tp_graph *graph, tp_graph **out,
                              double *seconds);

#endif
