/* An executable of the cuda backend: the planned graph, its generated
 * source, and either a PTX image (target=ptx:compute_XY, for inspection and
 * tests; it cannot run) or the device side: module, one function per
 * kernel, one stream, and the device buffers, allocated once at compile and
 * reused by every run (constants uploaded once; intermediates never leave
 * the device; only inputs go up and outputs come down). */
#ifndef TP_PLUGIN_CUDA_EXECUTABLE_H
#define TP_PLUGIN_CUDA_EXECUTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "cuda_device.h"
#include "cuda_graph.h"
#include "tensorplay/plugin.h"

struct tp_plugin_executable {
    cu_graph graph;
    char *source;
    char target[32]; /* "sm_90" or "compute_90" */
    char *ptx;       /* PTX-only executables */
    const cu_device *device;
    CUmodule module;
    CUfunction *functions; /* per kernel */
    CUstream stream;
    CUdeviceptr *buffers; /* per cu_buffer */
    void **params;        /* &buffers[b], the kernels' argument array */
};

/* Loads `image` (CUBIN) and allocates everything the executable needs on
 * the device; uploads the constants. */
bool cu_executable_load(tp_plugin_executable *exe, const cu_device *device, const void *image,
                        char *error, size_t error_size);

/* One run: inputs up, kernels, outputs down, on the executable's stream.
 * While `host`'s core profiles, each kernel is bracketed by CUDA events and
 * its time reported (host->report_kernel) once the stream is done. */
bool cu_executable_run(tp_plugin_executable *exe, const tp_plugin_host *host,
                       const tp_plugin_buffer *inputs, tp_plugin_buffer *outputs, char *error,
                       size_t error_size);

void cu_executable_free(tp_plugin_executable *exe);

#endif
