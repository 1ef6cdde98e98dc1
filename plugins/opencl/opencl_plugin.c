/* The opencl backend's plugin table and entry point (tp_opencl_backend):
 * probe, init, compile (options, device, code generation, program, buffers),
 * run, release, shutdown. Everything else lives in the ocl_* files; this
 * one only connects them to plugin.h. */
#include <stdio.h>
#include <string.h>

#include "ocl_cache.h"
#include "ocl_codegen.h"
#include "ocl_device.h"
#include "ocl_executable.h"
#include "tensorplay/plugin.h"
#include "tpcommon_options.h"
#include "tpcommon_text.h"

static const tp_plugin_host *opencl_host;

static const char *const known_options[] = {"platform", "device"};

static int32_t opencl_probe(char *why, size_t why_size) {
    return ocl_probe(why, why_size) == 0 ? TP_PLUGIN_OK : TP_PLUGIN_UNAVAILABLE;
}

static int32_t opencl_init(const tp_plugin_host *host) {
    opencl_host = host;
    ocl_cache_use_host(host);
    return TP_PLUGIN_OK;
}

static void log_debug(const char *format, const char *a, const char *b, int count, int hit) {
    if (!opencl_host || !opencl_host->log) return;
    char line[512];
    snprintf(line, sizeof line, format, a, b, count, hit ? "hit" : "miss");
    opencl_host->log(opencl_host, TP_PLUGIN_LOG_DEBUG, line);
}

static int32_t opencl_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                              int32_t num_inputs, const tp_plugin_option *options,
                              int32_t num_options, tp_plugin_executable **executable, char *error,
                              size_t error_size) {
    *executable = NULL;
    if (tpcommon_options_check(options, num_options, known_options, 2, error, error_size) !=
        TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    ocl_device *device = NULL;
    if (ocl_device_select(tpcommon_option_get(options, num_options, "platform"),
                          tpcommon_option_get(options, num_options, "device"), &device, error,
                          error_size) != 0)
        return TP_PLUGIN_ERROR;
    ocl_codegen codegen;
    int32_t status =
        ocl_codegen_run(graph, inputs, num_inputs, device, &codegen, error, error_size);
    if (status == TP_PLUGIN_OK)
        status = ocl_executable_create(&codegen, device, executable, error, error_size);
    if (status == TP_PLUGIN_OK)
        log_debug("compiled graph '%s' for '%s': %d kernel(s), program cache %s", graph->name,
                  device->name, codegen.num_launches, ocl_executable_cache_hit(*executable));
    ocl_codegen_free(&codegen);
    return status;
}

static int32_t opencl_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                          int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    char error[512];
    if (ocl_executable_run(executable, inputs, num_inputs, outputs, num_outputs, error,
                           sizeof error) == TP_PLUGIN_OK)
        return TP_PLUGIN_OK;
    opencl_host->set_error(opencl_host, error);
    return TP_PLUGIN_ERROR;
}

static void opencl_release(tp_plugin_executable *executable) {
    ocl_executable_destroy(executable);
}

static void opencl_shutdown(void) {
    ocl_devices_release();
    opencl_host = NULL;
}

static const tp_plugin_backend opencl_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 1, /* revision-1 table */
    .name = "opencl",
    .version = "0.1.0",
    .description = "OpenCL C code generation through the ICD loader",
    .probe = opencl_probe,
    .init = opencl_init,
    .compile = opencl_compile,
    .run = opencl_run,
    .release = opencl_release,
    .reset = NULL,
    .shutdown = opencl_shutdown,
};

TP_PLUGIN_EXPORT const tp_plugin_backend *tp_opencl_backend(void) {
    return &opencl_table;
}
