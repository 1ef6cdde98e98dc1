/* The cuda backend's table (plugin.h): probe, init, compile, run, release,
 * reset, shutdown, and its compile options:
 *   target=device           (default) compile for the device and run there;
 *   target=ptx:compute_XY   generate and compile to PTX only (no device
 *                           needed; see cuda_testing.h);
 *   device=N                the CUDA device ordinal (default 0);
 *   cache=on|off            the CUBIN disk cache (default on);
 *   dump=FOLDER             also write the generated CUDA C there.
 * Compile pipeline: lower (cuda_lower.c) -> plan (cuda_plan.c) -> CUDA C
 * (cuda_emit.c) -> CUBIN for sm_XY through the cache or NVRTC -> module,
 * stream and buffers (cuda_executable.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cuda_device.h"
#include "cuda_emit.h"
#include "cuda_executable.h"
#include "cuda_nvrtc.h"
#include "cuda_testing.h"
#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"
#include "tpcommon_cexpr.h"
#include "tpcommon_graph.h"
#include "tpcommon_options.h"
#include "tpcommon_cache.h"
#include "tpcommon_text.h"

#define CUDA_PLUGIN_VERSION "0.2.0"

/* What init made: the host table this instance reports through. */
typedef struct cuda_context {
    const tp_plugin_host *host;
} cuda_context;

/* Reports `error` through the host; returns `code`. */
static int32_t report(const cuda_context *context, int32_t code, const char *error) {
    context->host->set_error(context->host, error);
    return code;
}

typedef struct compile_options {
    bool ptx_only;
    char arch[32]; /* ptx_only: "compute_XY" */
    int device;
    bool cache;
    const char *dump;
} compile_options;

static const char *const known_options[] = {"target", "device", "cache", "dump"};

/* target=device | ptx:compute_XY (XY >= 75). */
static int32_t parse_target(const char *value, compile_options *out, char *error, size_t size) {
    int arch = 0;
    char tail = 0;
    if (!strcmp(value, "device")) {
        out->ptx_only = false;
        return TP_PLUGIN_OK;
    }
    if (sscanf(value, "ptx:compute_%d%c", &arch, &tail) != 1 || arch < 75)
        return tpcommon_error(
            error, size,
            "option target=%s: expected 'device' or 'ptx:compute_XY' with XY >= 75 "
            "(e.g. ptx:compute_90)",
            value);
    out->ptx_only = true;
    snprintf(out->arch, sizeof out->arch, "compute_%d", arch);
    return TP_PLUGIN_OK;
}

static int32_t parse_options(const tp_plugin_option *options, int32_t count, compile_options *out,
                             char *error, size_t size) {
    *out = (compile_options){.cache = true};
    int32_t num_known = (int32_t)(sizeof known_options / sizeof known_options[0]);
    if (tpcommon_options_check(options, count, known_options, num_known, error, size) !=
        TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    const char *target = tpcommon_option_get(options, count, "target");
    if (target && parse_target(target, out, error, size) != TP_PLUGIN_OK) return TP_PLUGIN_ERROR;
    int64_t device = 0;
    if (tpcommon_option_int(options, count, "device", 0, 15, &device, error, size) !=
            TP_PLUGIN_OK ||
        tpcommon_option_on_off(options, count, "cache", &out->cache, error, size) != TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    out->device = (int)device;
    out->dump = tpcommon_option_get(options, count, "dump");
    return TP_PLUGIN_OK;
}

static void dump_source(const char *folder, const tp_plugin_executable *exe) {
    char path[4096];
    mkdir(folder, 0755);
    snprintf(path, sizeof path, "%s/%s.cu", folder, exe->graph.name ? exe->graph.name : "graph");
    FILE *file = fopen(path, "wb");
    if (!file) return;
    fputs(exe->source, file);
    fclose(file);
}

/* The disk cache's full key: plugin and core versions, target (sm_XY),
 * driver and NVRTC versions, then the source (caller frees). */
static char *cubin_key(const tp_plugin_host *host, const tp_plugin_executable *exe,
                       const cu_device *device) {
    char why[256];
    const char *nvrtc_version = cu_nvrtc_version(why, sizeof why);
    tpcommon_buf key;
    tpcommon_buf_init(&key);
    tpcommon_buf_printf(&key, "cuda %s; core %s; target %s; driver %d; nvrtc %s\n",
                        CUDA_PLUGIN_VERSION, host && host->core_version ? host->core_version : "?",
                        exe->target, device->driver_version, nvrtc_version ? nvrtc_version : "?");
    tpcommon_buf_append(&key, exe->source);
    return tpcommon_buf_take(&key);
}

/* The CUBIN for the executable's source: from the cache or NVRTC. */
static char *device_image(const tp_plugin_host *host, const tp_plugin_executable *exe,
                          const cu_device *device, bool use_cache, char *error, size_t size) {
    tpcommon_cache disk;
    char *key = use_cache ? cubin_key(host, exe, device) : NULL;
    bool cache = key && tpcommon_cache_open(&disk, host, "cuda");
    size_t image_size = 0;
    char *image = cache ? tpcommon_cache_read(&disk, key, &image_size) : NULL;
    if (!image &&
        cu_nvrtc_compile(exe->source, exe->graph.name ? exe->graph.name : "?", exe->target, &image,
                         &image_size, error, size) &&
        cache)
        tpcommon_cache_write(&disk, key, image, image_size);
    free(key);
    return image;
}

/* Compiles into `error`; "unsupported: ..." marks a refusal (the lowering's). */
static int32_t compile_graph(const tp_plugin_host *host, const tp_plugin_graph *graph,
                             const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                             const tp_plugin_option *options, int32_t num_options,
                             tp_plugin_executable **executable, char *error, size_t error_size) {
    *executable = NULL;
    compile_options opts;
    if (parse_options(options, num_options, &opts, error, error_size) != TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    const cu_device *device = NULL;
    if (!opts.ptx_only) {
        device = cu_device_get(opts.device, error, error_size);
        if (!device) return TP_PLUGIN_ERROR;
    }
    tp_plugin_executable *exe = calloc(1, sizeof *exe);
    if (!exe) return tpcommon_error(error, error_size, "out of memory");
    bool ok = cu_graph_lower(graph, inputs, num_inputs, &exe->graph, error, error_size) &&
              cu_graph_plan(&exe->graph, device ? device->multiprocessors : 132, error, error_size);
    if (ok) ok = (exe->source = cu_emit_module(&exe->graph, error, error_size)) != NULL;
    if (ok && opts.dump) dump_source(opts.dump, exe);
    if (ok && opts.ptx_only) {
        snprintf(exe->target, sizeof exe->target, "%s", opts.arch);
        size_t size;
        ok = cu_nvrtc_compile(exe->source, graph->name ? graph->name : "?", exe->target, &exe->ptx,
                              &size, error, error_size);
    } else if (ok) {
        snprintf(exe->target, sizeof exe->target, "sm_%d%d", device->major, device->minor);
        char *image = device_image(host, exe, device, opts.cache, error, error_size);
        ok = image && cu_executable_load(exe, device, image, error, error_size);
        free(image);
    }
    if (!ok) {
        cu_executable_free(exe);
        return TP_PLUGIN_ERROR;
    }
    *executable = exe;
    return TP_PLUGIN_OK;
}

static int32_t cuda_compile(void *opaque, const tp_plugin_graph *graph,
                            const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                            const tp_plugin_option *options, int32_t num_options,
                            tp_plugin_executable **executable) {
    char error[8192];
    *executable = NULL;
    if (!TP_PLUGIN_HAS_FIELD(graph, tp_plugin_graph, nodes) || !graph->nodes)
        return report(opaque, TP_PLUGIN_UNSUPPORTED,
                      "the graph view has no op ids (core older than contract revision 2)");
    error[0] = '\0';
    const cuda_context *context = opaque;
    if (compile_graph(context->host, graph, inputs, num_inputs, options, num_options, executable,
                      error, sizeof error) == TP_PLUGIN_OK)
        return TP_PLUGIN_OK;
    static const char prefix[] = "unsupported: ";
    if (!strncmp(error, prefix, sizeof prefix - 1))
        return report(opaque, TP_PLUGIN_UNSUPPORTED, error + sizeof prefix - 1);
    return report(opaque, TP_PLUGIN_ERROR, error);
}

static int32_t cuda_run(void *opaque, tp_plugin_executable *exe, const tp_plugin_buffer *inputs,
                        int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    char error[2048];
    if (!exe->device)
        snprintf(error, sizeof error,
                 "graph '%s' was compiled for target ptx:%s (PTX only); compile with "
                 "target=device to run it",
                 exe->graph.name ? exe->graph.name : "?", exe->target);
    else if (num_inputs != exe->graph.num_inputs || num_outputs != exe->graph.num_outputs)
        snprintf(error, sizeof error,
                 "run: %d inputs and %d outputs given, the graph has %d and %d", (int)num_inputs,
                 (int)num_outputs, exe->graph.num_inputs, exe->graph.num_outputs);
    else if (cu_executable_run(exe, ((const cuda_context *)opaque)->host, inputs, outputs, error,
                               sizeof error))
        return TP_PLUGIN_OK;
    return report(opaque, TP_PLUGIN_ERROR, error);
}

/* ---- the "cuda.testing" extension (cuda_testing.h) ---- */

static const char *executable_source(const tp_plugin_executable *exe) {
    return exe ? exe->source : NULL;
}

static const char *executable_ptx(const tp_plugin_executable *exe) {
    return exe ? exe->ptx : NULL;
}

static int32_t executable_kernels(const tp_plugin_executable *exe) {
    return exe ? exe->graph.num_kernels : 0;
}

static int32_t compile_source(const char *source, const char *arch, char *error,
                              size_t error_size) {
    char *image = NULL;
    size_t size = 0;
    bool ok = cu_nvrtc_compile(source, "test", arch, &image, &size, error, error_size);
    free(image);
    return ok ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double bench_kernels(tp_plugin_executable *exe, int32_t iterations) {
    if (!exe || !exe->device || iterations < 1) return -1;
    const cuda_driver *driver = exe->device->driver;
    char error[512];
    if (!cu_device_make_current(exe->device, error, sizeof error)) return -1;
    double start = now_ms();
    for (int32_t it = 0; it < iterations; it++)
        for (int k = 0; k < exe->graph.num_kernels; k++) {
            const cu_kernel *kernel = &exe->graph.kernels[k];
            if (kernel->work == 0) continue;
            if (driver->launch_kernel(exe->functions[k], kernel->grid[0], kernel->grid[1],
                                      kernel->grid[2], kernel->block, 1, 1, 0, exe->stream,
                                      exe->params, NULL) != CUDA_SUCCESS)
                return -1;
        }
    if (driver->stream_synchronize(exe->stream) != CUDA_SUCCESS) return -1;
    return (now_ms() - start) / iterations;
}

static double bench_copy(size_t bytes, int32_t iterations) {
    char error[512];
    const cu_device *device = cu_device_get(0, error, sizeof error);
    if (!device || iterations < 1 || !cu_device_make_current(device, error, sizeof error))
        return -1;
    const cuda_driver *driver = device->driver;
    CUdeviceptr from = 0, to = 0;
    CUstream stream = NULL;
    double result = -1;
    if (driver->mem_alloc(&from, bytes) == CUDA_SUCCESS &&
        driver->mem_alloc(&to, bytes) == CUDA_SUCCESS &&
        driver->stream_create(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
        driver->memcpy_dtod_async(to, from, bytes, stream) == CUDA_SUCCESS &&
        driver->stream_synchronize(stream) == CUDA_SUCCESS) {
        double start = now_ms();
        bool ok = true;
        for (int32_t it = 0; it < iterations && ok; it++)
            ok = driver->memcpy_dtod_async(to, from, bytes, stream) == CUDA_SUCCESS;
        if (ok && driver->stream_synchronize(stream) == CUDA_SUCCESS) {
            double ms = (now_ms() - start) / iterations;
            result = 2.0 * (double)bytes / (ms * 1e6);
        }
    }
    if (stream) driver->stream_destroy(stream);
    if (from) driver->mem_free(from);
    if (to) driver->mem_free(to);
    return result;
}

static const tp_cuda_testing_extension testing_extension = {
    .header = {.struct_size = sizeof(tp_cuda_testing_extension), .version = 1},
    .executable_source = executable_source,
    .executable_ptx = executable_ptx,
    .executable_kernels = executable_kernels,
    .compile_source = compile_source,
    .bench_kernels = bench_kernels,
    .bench_copy = bench_copy,
};

/* ---- the table ---- */

static int32_t cuda_probe(const tp_plugin_host *host, tp_plugin_probe_info *info) {
    (void)info; /* the INI priority stands: every CUDA device is a GPU */
    char why[512];
    if (cu_device_probe(why, sizeof why) == TP_PLUGIN_OK) return TP_PLUGIN_OK;
    host->set_error(host, why);
    return TP_PLUGIN_UNAVAILABLE;
}

static int32_t cuda_init(const tp_plugin_host *host, void **context) {
    cuda_context *made = calloc(1, sizeof *made); /* the driver opens on the first compile */
    if (!made) return host->set_error(host, "out of memory"), TP_PLUGIN_ERROR;
    made->host = host;
    *context = made;
    return TP_PLUGIN_OK;
}

/* Claims what cu_graph_lower lowers: every op of the table except the
 * composites (the core decomposes those), pointwise ops at the dtypes
 * plugins/common has an expression for, dtypes the plugin knows. */
static int32_t cuda_supports(void *opaque, const tp_plugin_graph *graph, int32_t v) {
    char why[512];
    if (!TP_PLUGIN_HAS_FIELD(graph, tp_plugin_graph, nodes) || !graph->nodes)
        return report(opaque, TP_PLUGIN_UNSUPPORTED,
                      "the graph view has no op ids (core older than contract revision 2)");
    const tp_plugin_value *value = &graph->values[v];
    const tp_plugin_node *node = &graph->nodes[v];
    const char *op = value->op ? value->op : "?";
    if (node->op_id < 0 || node->op_id >= TP_PLUGIN_OP_COUNT)
        snprintf(why, sizeof why,
                 "op '%s' (%%%s, op id %d) is newer than the cuda plugin (it knows %d ops)", op,
                 value->name, (int)node->op_id, TP_PLUGIN_OP_COUNT);
    else if (node->kind == TP_PLUGIN_KIND_COMPOSITE)
        snprintf(why, sizeof why,
                 "op '%s' (%%%s) is a composite: the cuda backend runs its decomposition", op,
                 value->name);
    else if (tpcommon_dtype_size(value->type.dtype) == 0)
        snprintf(why, sizeof why, "op '%s' (%%%s): result dtype %d is unknown to the cuda plugin",
                 op, value->name, (int)value->type.dtype);
    else if (node->kind == TP_PLUGIN_KIND_POINTWISE &&
             !tpcommon_cexpr_defined(node->op_id, node->compute_dtype))
        snprintf(why, sizeof why, "op '%s' (%%%s) computing in %s: no CUDA C expression", op,
                 value->name, tpcommon_dtype_name(node->compute_dtype));
    else
        return TP_PLUGIN_OK;
    return report(opaque, TP_PLUGIN_UNSUPPORTED, why);
}

static void cuda_release(void *context, tp_plugin_executable *exe) {
    (void)context;
    cu_executable_free(exe);
}

static void cuda_shutdown(void *context) {
    cu_device_release_all();
    cuda_api_unload();
    free(context);
}

static const tp_plugin_extension *cuda_get_extension(void *context, const char *name) {
    (void)context;
    return name && !strcmp(name, TP_CUDA_TESTING_EXTENSION) ? &testing_extension.header : NULL;
}

static const tp_plugin_backend backend = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "cuda",
    .version = CUDA_PLUGIN_VERSION,
    .description = "CUDA C through NVRTC and the driver API",
    .calls =
        {
            .probe = cuda_probe,
            .init = cuda_init,
            .supports = cuda_supports,
            .compile = cuda_compile,
            .run = cuda_run,
            .release = cuda_release,
            .reset = NULL,
            .shutdown = cuda_shutdown,
            .get_extension = cuda_get_extension,
        },
};

/* The core passes the highest revision both sides speak; this table is
 * revision 2 (the INI says min_contract = contract = 2). The only symbol
 * cuda.so exports. */
TP_PLUGIN_EXPORT const tp_plugin_backend *tp_cuda_backend(uint32_t revision) {
    return revision >= 2 ? &backend : NULL;
}
