/* The opencl backend's plugin table (contract revision 2) and entry point
 * (tp_opencl_backend): probe (and the priority of the device found), init
 * (the per-instance context), supports (which nodes this backend lowers),
 * compile (options, device, code generation, program, buffers), run,
 * release, shutdown. Everything else lives in the ocl_* files; this one only
 * connects them to plugin.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cache.h"
#include "ocl_codegen.h"
#include "ocl_device.h"
#include "ocl_executable.h"
#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"
#include "tpcommon_cexpr.h"
#include "tpcommon_options.h"
#include "tpcommon_text.h"

/* `auto` ranks an OpenCL CPU device (PoCL, a vendor's CPU runtime) below the
 * native CPU backend: the same cores, a slower code path. */
#define OPENCL_PRIORITY_NOT_GPU 50

/* What init made: the host table this instance reports through. */
typedef struct opencl_context {
    const tp_plugin_host *host;
} opencl_context;

static const char *const known_options[] = {"platform", "device"};

/* Reports `error` through the host; returns `code`. */
static int32_t report(const opencl_context *context, int32_t code, const char *error) {
    context->host->set_error(context->host, error);
    return code;
}

static int32_t opencl_probe(const tp_plugin_host *host, tp_plugin_probe_info *info) {
    char why[512];
    ocl_device *device = NULL;
    if (ocl_probe(why, sizeof why) != 0 || ocl_device_select(NULL, NULL, &device, why, sizeof why))
        return host->set_error(host, why), TP_PLUGIN_UNAVAILABLE;
    if (!info) return TP_PLUGIN_OK;
    bool gpu = (device->type & CL_DEVICE_TYPE_GPU) != 0;
    if (TP_PLUGIN_HAS_FIELD(info, tp_plugin_probe_info, priority) && !gpu &&
        info->priority > OPENCL_PRIORITY_NOT_GPU)
        info->priority = OPENCL_PRIORITY_NOT_GPU;
    if (TP_PLUGIN_HAS_FIELD(info, tp_plugin_probe_info, device))
        snprintf(info->device, sizeof info->device, "%.120s (%.100s, %s)", device->name,
                 device->platform_name, gpu ? "GPU" : "not a GPU");
    return TP_PLUGIN_OK;
}

static int32_t opencl_init(const tp_plugin_host *host, void **context) {
    opencl_context *made = calloc(1, sizeof *made);
    if (!made) return host->set_error(host, "out of memory"), TP_PLUGIN_ERROR;
    made->host = host;
    *context = made;
    return TP_PLUGIN_OK;
}

static bool has_nodes(const tp_plugin_graph *graph) {
    return TP_PLUGIN_HAS_FIELD(graph, tp_plugin_graph, nodes) && graph->nodes;
}

/* Whether node `v` needs f64: its result, compute or an operand dtype. */
static bool uses_f64(const tp_plugin_graph *graph, int32_t v) {
    const tp_plugin_value *value = &graph->values[v];
    if (value->type.dtype == TP_PLUGIN_F64 || graph->nodes[v].compute_dtype == TP_PLUGIN_F64)
        return true;
    for (int32_t k = 0; k < value->num_operands; k++)
        if (graph->values[value->operands[k]].type.dtype == TP_PLUGIN_F64) return true;
    return false;
}

/* Claims: every op this plugin lowers (ocl_codegen.h: pointwise through
 * tpcommon_cexpr, reductions, matmul, shape and creation ops, and the
 * composites as native row kernels, pointwise code and a tiled matmul), at
 * the dtypes it has code for; f64 only on a device with cl_khr_fp64 (the
 * default device: compile's platform=/device= may pick another, and refuses
 * f64 there the same way). */
static int32_t opencl_supports(void *opaque, const tp_plugin_graph *graph, int32_t v) {
    const opencl_context *context = opaque;
    char why[512];
    if (!has_nodes(graph))
        return report(context, TP_PLUGIN_UNSUPPORTED,
                      "the graph view has no op ids (core older "
                      "than contract revision 2)");
    const tp_plugin_value *value = &graph->values[v];
    const tp_plugin_node *node = &graph->nodes[v];
    if (node->op_id < 0 || node->op_id >= TP_PLUGIN_OP_COUNT) {
        snprintf(why, sizeof why,
                 "op '%s' (%%%s, op id %d) is newer than the opencl plugin (it knows %d ops)",
                 value->op ? value->op : "?", value->name, (int)node->op_id, TP_PLUGIN_OP_COUNT);
        return report(context, TP_PLUGIN_UNSUPPORTED, why);
    }
    if (tpcommon_op_kind(node->op_id) == TPCOMMON_KIND_INDEXING ||
        tpcommon_op_kind(node->op_id) == TPCOMMON_KIND_WINDOW) {
        /* Refused here, not in compile: a claimed node compile refuses fails. */
        snprintf(why, sizeof why, "op '%s' (%%%s): the opencl backend has no kernel for it yet",
                 value->op, value->name);
        return report(context, TP_PLUGIN_UNSUPPORTED, why);
    }
    if (node->kind == TP_PLUGIN_KIND_POINTWISE &&
        !tpcommon_cexpr_defined(node->op_id, node->compute_dtype)) {
        snprintf(why, sizeof why, "op '%s' (%%%s) computing in %s: no OpenCL C expression",
                 value->op, value->name, tpcommon_dtype_name(node->compute_dtype));
        return report(context, TP_PLUGIN_UNSUPPORTED, why);
    }
    if (uses_f64(graph, v)) {
        ocl_device *device = NULL;
        if (ocl_device_select(NULL, NULL, &device, why, sizeof why) != 0)
            return report(context, TP_PLUGIN_UNSUPPORTED, why);
        if (!device->fp64) {
            snprintf(why, sizeof why,
                     "op '%s' (%%%s) uses f64, which device '%s' does not support (no "
                     "cl_khr_fp64): cast to f32 first",
                     value->op, value->name, device->name);
            return report(context, TP_PLUGIN_UNSUPPORTED, why);
        }
    }
    return TP_PLUGIN_OK;
}

static void log_debug(const opencl_context *context, const char *format, const char *a,
                      const char *b, int count, int hit) {
    if (!context->host->log) return;
    char line[512];
    snprintf(line, sizeof line, format, a, b, count, hit ? "hit" : "miss");
    context->host->log(context->host, TP_PLUGIN_LOG_DEBUG, line);
}

static int32_t opencl_compile(void *opaque, const tp_plugin_graph *graph,
                              const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                              const tp_plugin_option *options, int32_t num_options,
                              tp_plugin_executable **executable) {
    const opencl_context *context = opaque;
    char error[1024];
    *executable = NULL;
    if (!has_nodes(graph))
        return report(context, TP_PLUGIN_UNSUPPORTED,
                      "the graph view has no op ids (core older than contract revision 2)");
    if (tpcommon_options_check(options, num_options, known_options, 2, error, sizeof error) !=
        TP_PLUGIN_OK)
        return report(context, TP_PLUGIN_ERROR, error);
    ocl_device *device = NULL;
    if (ocl_device_select(tpcommon_option_get(options, num_options, "platform"),
                          tpcommon_option_get(options, num_options, "device"), &device, error,
                          sizeof error) != 0)
        return report(context, TP_PLUGIN_ERROR, error);
    ocl_codegen codegen;
    int32_t status =
        ocl_codegen_run(graph, inputs, num_inputs, device, &codegen, error, sizeof error);
    if (status == TP_PLUGIN_OK)
        status =
            ocl_executable_create(context->host, &codegen, device, executable, error, sizeof error);
    if (status == TP_PLUGIN_OK)
        log_debug(context, "compiled graph '%s' for '%s': %d kernel(s), program cache %s",
                  graph->name, device->name, codegen.num_launches,
                  ocl_executable_cache_hit(*executable));
    ocl_codegen_free(&codegen);
    return status == TP_PLUGIN_OK ? TP_PLUGIN_OK : report(context, status, error);
}

static int32_t opencl_run(void *opaque, tp_plugin_executable *executable,
                          const tp_plugin_buffer *inputs, int32_t num_inputs,
                          tp_plugin_buffer *outputs, int32_t num_outputs) {
    char error[512];
    if (ocl_executable_run(executable, inputs, num_inputs, outputs, num_outputs, error,
                           sizeof error) == TP_PLUGIN_OK)
        return TP_PLUGIN_OK;
    return report(opaque, TP_PLUGIN_ERROR, error);
}

static void opencl_release(void *context, tp_plugin_executable *executable) {
    (void)context;
    ocl_executable_destroy(executable);
}

static void opencl_shutdown(void *context) {
    ocl_devices_release();
    free(context);
}

static const tp_plugin_backend opencl_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "opencl",
    .version = "0.2.0",
    .description = "OpenCL C code generation through the ICD loader",
    .calls =
        {
            .probe = opencl_probe,
            .init = opencl_init,
            .supports = opencl_supports,
            .compile = opencl_compile,
            .run = opencl_run,
            .release = opencl_release,
            .reset = NULL,
            .shutdown = opencl_shutdown,
            .get_extension = NULL,
        },
};

/* The core passes the highest revision both sides speak; this table is
 * revision 2 (the INI says min_contract = contract = 2). */
TP_PLUGIN_EXPORT const tp_plugin_backend *tp_opencl_backend(uint32_t revision) {
    return revision >= 2 ? &opencl_table : NULL;
}
