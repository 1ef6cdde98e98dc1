/* The "cuda.testing" extension (plugin.h's get_extension): test and
 * inspection hooks of cuda.so, outside the plugin contract. Reach it with
 * tp_backend_extension(backend, TP_CUDA_TESTING_EXTENSION) (backend.h), or
 * from a harness that loads cuda.so itself, with the table's
 * calls.get_extension(context, TP_CUDA_TESTING_EXTENSION). Check struct_size
 * before reading a field added in a later version.
 *
 * Compiling without a device: the compile option target=ptx:compute_XY
 * (XY >= 75) lowers, plans and generates the CUDA C exactly as for a device,
 * then compiles it with NVRTC to PTX for that virtual architecture and stops:
 * no driver call is made, so it works on machines without a GPU or without
 * libcuda.so.1. Such an executable cannot run (run() says so); these hooks
 * read what was produced. */
#ifndef TP_PLUGIN_CUDA_TESTING_H
#define TP_PLUGIN_CUDA_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

#define TP_CUDA_TESTING_EXTENSION "cuda.testing"

typedef struct tp_cuda_testing_extension {
    tp_plugin_extension header; /* struct_size, version 1 */
    /* The generated CUDA C of an executable (valid until release). */
    const char *(*executable_source)(const tp_plugin_executable *executable);
    /* The PTX of a target=ptx executable, NULL for a device executable. */
    const char *(*executable_ptx)(const tp_plugin_executable *executable);
    /* Number of kernels the executable launches per run. */
    int32_t (*executable_kernels)(const tp_plugin_executable *executable);
    /* Compiles arbitrary CUDA C with the plugin's NVRTC path for `arch`
     * ("compute_75", "sm_90"); TP_PLUGIN_OK, or TP_PLUGIN_ERROR with the
     * message the backend would give (NVRTC's log, the saved source path) in
     * `error`. */
    int32_t (*compile_source)(const char *source, const char *arch, char *error, size_t error_size);
    /* Benchmark hooks (tests/gpu): run only the kernels of a device
     * executable `iterations` times on its stream, its buffers as the last
     * run() left them, and return milliseconds per iteration (-1 on error or
     * for PTX-only). */
    double (*bench_kernels)(tp_plugin_executable *executable, int32_t iterations);
    /* cuMemcpyDtoDAsync of `bytes` bytes `iterations` times on device 0: the
     * device copy bandwidth in GB/s, bytes read plus bytes written (-1 on
     * error). */
    double (*bench_copy)(size_t bytes, int32_t iterations);
} tp_cuda_testing_extension;

#endif
