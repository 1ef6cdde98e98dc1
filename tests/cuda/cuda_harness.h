/* Loading cuda.so from the build tree for the cuda suites (no GPU needed):
 * the backend table, the test entry points of plugins/cuda/cuda_testing.h,
 * and compiling a tp_graph to PTX through the plugin's own compile with
 * target=ptx:compute_XY. */
#ifndef TP_TESTS_CUDA_HARNESS_H
#define TP_TESTS_CUDA_HARNESS_H

#include <check.h>
#include <stdbool.h>

#include "tensorplay/graph.h"
#include "tensorplay/plugin.h"
#include "tp_test.h"

#include "../../plugins/cuda/cuda_testing.h"

typedef struct cuda_plugin {
    const tp_plugin_backend *table;
    tp_cuda_executable_source_fn source;
    tp_cuda_executable_ptx_fn ptx;
    tp_cuda_executable_kernels_fn kernels;
    tp_cuda_compile_source_fn compile_source;
} cuda_plugin;

/* The plugin, loaded and initialised once per process; fails the test
 * with the reason when cuda.so is missing. */
const cuda_plugin *cuda_plugin_get(void);

/* Compiles `graph` for its declared input types with
 * target=ptx:<arch>; on failure fails the test with the plugin's error
 * (which carries NVRTC's log). Returns the number of kernels. */
int cuda_compile_ptx(tp_graph *graph, const char *arch);

/* Same, but returns false and fills `error` instead of failing. */
bool cuda_try_compile_ptx(tp_graph *graph, const char *arch, const char *const *options,
                          int num_options, char *error, size_t error_size, int *kernels,
                          char **source_out);

/* Both architectures the suites check: compute_75 and compute_90. */
void cuda_compile_both(tp_graph *graph);

#endif
