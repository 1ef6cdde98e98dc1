/* Loading cuda.so from the build tree for the cuda suites (no GPU needed):
 * the revision-2 backend table and its context, the "cuda.testing"
 * extension (plugins/cuda/cuda_testing.h), the table's calls with the reason
 * the plugin gave through host->set_error copied out, and compiling a
 * tp_graph to PTX through the plugin's own compile with
 * target=ptx:compute_XY (composites decomposed first, as the core does for a
 * backend that does not claim them). */
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
    void *context; /* what calls.init made */
    const tp_cuda_testing_extension *testing;
} cuda_plugin;

/* The plugin, loaded and initialised once per process; fails the test
 * with the reason when cuda.so is missing. */
const cuda_plugin *cuda_plugin_get(void);

/* The table's calls on the harness' context; `error`/`why` receive what the
 * plugin passed to host->set_error ("" when nothing). */
int32_t cuda_plugin_probe(char *why, size_t why_size);
int32_t cuda_plugin_supports(const tp_plugin_graph *graph, int32_t value, char *why,
                             size_t why_size);
int32_t cuda_plugin_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                            int32_t num_inputs, const tp_plugin_option *options,
                            int32_t num_options, tp_plugin_executable **executable, char *error,
                            size_t error_size);
int32_t cuda_plugin_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                        int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs);
void cuda_plugin_release(tp_plugin_executable *executable);

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
