/* An opencl executable: the built program, its kernels with their arguments
 * set once, and one device buffer per value that needs one, kept for the
 * executable's life so calls reuse them (inputs are copied in, outputs
 * copied back, intermediates never leave the device). */
#ifndef TP_OPENCL_EXECUTABLE_H
#define TP_OPENCL_EXECUTABLE_H

#include "ocl_codegen.h"
#include "tensorplay/plugin.h"

/* Builds the executable for `codegen` (whose launches it takes over); the
 * program goes through the disk cache of `host` (the context's). */
int ocl_executable_create(const tp_plugin_host *host, ocl_codegen *codegen, ocl_device *device,
                          tp_plugin_executable **out, char *error, size_t error_size);
int ocl_executable_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                       int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs,
                       char *error, size_t error_size);
void ocl_executable_destroy(tp_plugin_executable *executable);
/* Whether the program came from the binary cache (for logs and tests). */
int ocl_executable_cache_hit(const tp_plugin_executable *executable);

#endif
