/* Test and inspection entry points exported by cuda.so next to its backend
 * table (resolve them with dlsym; they are not part of the plugin contract).
 *
 * Compiling without a device: the compile option target=ptx:compute_XY
 * (XY >= 75) lowers, plans and generates the CUDA C exactly as for a device,
 * then compiles it with NVRTC to PTX for that virtual architecture and stops:
 * no driver call is made, so it works on machines without a GPU or without
 * libcuda.so.1. Such an executable cannot run (run() says so); these
 * functions read what was produced. */
#ifndef TP_PLUGIN_CUDA_TESTING_H
#define TP_PLUGIN_CUDA_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* The generated CUDA C of an executable (valid until release). */
typedef const char *(*tp_cuda_executable_source_fn)(const tp_plugin_executable *executable);
/* The PTX of a target=ptx executable, NULL for a device executable. */
typedef const char *(*tp_cuda_executable_ptx_fn)(const tp_plugin_executable *executable);
/* Number of kernels the executable launches per run. */
typedef int32_t (*tp_cuda_executable_kernels_fn)(const tp_plugin_executable *executable);
/* Compiles arbitrary CUDA C with the plugin's NVRTC path for `arch`
 * ("compute_75", "sm_90"); TP_PLUGIN_OK, or TP_PLUGIN_ERROR with the message
 * the backend would give (NVRTC's log, the saved source path) in `error`. */
typedef int32_t (*tp_cuda_compile_source_fn)(const char *source, const char *arch, char *error,
                                             size_t error_size);

/* Benchmark hooks (tests/gpu): run only the kernels of a device executable
 * `iterations` times on its stream, its buffers as the last run() left them,
 * and return milliseconds per iteration (-1 on error or for PTX-only). */
typedef double (*tp_cuda_bench_kernels_fn)(tp_plugin_executable *executable, int32_t iterations);
/* cuMemcpyDtoDAsync of `bytes` bytes `iterations` times on device 0: the
 * device copy bandwidth in GB/s, bytes read plus bytes written (-1 on error). */
typedef double (*tp_cuda_bench_copy_fn)(size_t bytes, int32_t iterations);

#define TP_CUDA_BENCH_KERNELS_SYMBOL      "tp_cuda_bench_kernels"
#define TP_CUDA_BENCH_COPY_SYMBOL         "tp_cuda_bench_copy"
#define TP_CUDA_EXECUTABLE_SOURCE_SYMBOL  "tp_cuda_executable_source"
#define TP_CUDA_EXECUTABLE_PTX_SYMBOL     "tp_cuda_executable_ptx"
#define TP_CUDA_EXECUTABLE_KERNELS_SYMBOL "tp_cuda_executable_kernels"
#define TP_CUDA_COMPILE_SOURCE_SYMBOL     "tp_cuda_compile_source_for_tests"

#endif
