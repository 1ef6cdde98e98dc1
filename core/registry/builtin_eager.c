/* The built-in `eager` backend (tagged debug): runs the graph as is with the
 * reference interpreter (tp_graph_run). It goes through the same plugin
 * table as every backend (revision 2: it claims every node), so it doubles as
 * the reference `tp-backends check` compares against and as the last
 * fallback. Being part of the core, it reads the tp_graph behind the view
 * instead of the view itself. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "registry_internal.h"

struct tp_plugin_executable {
    tp_graph *graph;
};

typedef struct eager_context {
    const tp_plugin_host *host;
} eager_context;

static int32_t eager_init(const tp_plugin_host *host, void **context) {
    eager_context *eager = calloc(1, sizeof *eager);
    if (!eager) {
        host->set_error(host, "out of memory");
        return TP_PLUGIN_ERROR;
    }
    eager->host = host;
    *context = eager;
    return TP_PLUGIN_OK;
}

static void eager_shutdown(void *context) {
    free(context);
}

static int32_t eager_compile(void *context, const tp_plugin_graph *view,
                             const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                             const tp_plugin_option *options, int32_t num_options,
                             tp_plugin_executable **out) {
    const tp_plugin_host *host = ((eager_context *)context)->host;
    (void)inputs, (void)num_inputs;
    if (num_options > 0) {
        char text[256];
        if (options[0].key && strcmp(options[0].key, "mode") == 0) /* tp_compile's mode=NAME */
            snprintf(text, sizeof text, "unknown mode '%s' (known modes: default)",
                     options[0].value ? options[0].value : "");
        else
            snprintf(text, sizeof text, "unknown option '%s' (eager takes no options)",
                     options[0].key);
        host->set_error(host, text);
        return TP_PLUGIN_ERROR;
    }
    tp_plugin_executable *executable = calloc(1, sizeof *executable);
    if (!executable || tp_graph_clone(tp_graph_view_source(view), &executable->graph) != TP_OK) {
        host->set_error(host, executable ? tp_last_error() : "out of memory");
        free(executable);
        return TP_PLUGIN_ERROR;
    }
    *out = executable;
    return TP_PLUGIN_OK;
}

static void release_all(tp_tensor **tensors, int count) {
    for (int i = 0; tensors && i < count; i++) tp_tensor_release(tensors[i]);
    free(tensors);
}

static int32_t eager_run(void *context, tp_plugin_executable *executable,
                         const tp_plugin_buffer *inputs, int32_t num_inputs,
                         tp_plugin_buffer *outputs, int32_t num_outputs) {
    const tp_plugin_host *host = ((eager_context *)context)->host;
    tp_tensor **in = calloc((size_t)num_inputs + 1, sizeof *in);
    tp_tensor **out = calloc((size_t)num_outputs + 1, sizeof *out);
    tp_status status = in && out ? TP_OK : TP_ERR_OUT_OF_MEMORY;
    /* The inputs are wrapped, not copied: the reference kernels only read
     * their operands, and nothing keeps a reference past this call (a
     * fallback region's input can be a 94 MB embedding table). */
    for (int i = 0; i < num_inputs && status == TP_OK; i++)
        status = tp_tensor_wrap((tp_dtype)inputs[i].dtype, inputs[i].ndim, inputs[i].dims,
                                (void *)(uintptr_t)inputs[i].data, NULL, NULL, &in[i]);
    if (status == TP_OK) status = tp_graph_run(executable->graph, in, num_inputs, out);
    for (int i = 0; i < num_outputs && status == TP_OK; i++) {
        if (tp_tensor_nbytes(out[i]) != outputs[i].nbytes) {
            host->set_error(host, "output size differs from the compiled type");
            status = TP_ERR_INTERNAL;
            break;
        }
        memcpy(outputs[i].data, tp_tensor_data(out[i]), outputs[i].nbytes);
    }
    if (status != TP_OK && status != TP_ERR_INTERNAL)
        host->set_error(host, status == TP_ERR_OUT_OF_MEMORY ? "out of memory" : tp_last_error());
    release_all(in, num_inputs);
    release_all(out, num_outputs);
    return status == TP_OK ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
}

static void eager_release(void *context, tp_plugin_executable *executable) {
    (void)context;
    tp_graph_destroy(executable->graph);
    free(executable);
}

static const tp_plugin_backend eager_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "eager",
    .version = "0.1.0",
    .description = "reference interpreter: runs the graph op by op (debugging, the "
                   "reference for `tp-backends check`, the last fallback)",
    .calls =
        {
            .init = eager_init,
            .compile = eager_compile,
            .run = eager_run,
            .release = eager_release,
            .shutdown = eager_shutdown,
        },
};

const tp_plugin_backend *tp_builtin_eager_table(void) {
    return &eager_table;
}
