/* The one place that calls into a backend's table. A table speaks revision 1
 * (whole graphs, no context, compile's own error buffer, "unsupported:" as a
 * text prefix) or revision 2 (context, claims, one error channel, result
 * codes, extensions); these functions give the rest of the core revision 2
 * semantics for both, so nothing else looks at table->contract_version. */
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

static const char revision1_unsupported_prefix[] = "unsupported:";

int32_t tp_backend_call_probe(tp_backend *backend, const tp_plugin_backend *table,
                              tp_plugin_probe_info *info) {
    tp_host_clear_error();
    if (table->contract_version >= 2) {
        if (!table->calls.probe) return TP_PLUGIN_OK;
        return table->calls.probe(&backend->host, info);
    }
    if (!table->probe) return TP_PLUGIN_OK;
    char why[1024] = "";
    int32_t result = table->probe(why, sizeof why);
    why[sizeof why - 1] = '\0';
    if (result != TP_PLUGIN_OK) tp_host_put_error(why);
    return result;
}

int32_t tp_backend_call_init(tp_backend *backend, const tp_plugin_backend *table) {
    tp_host_clear_error();
    if (table->contract_version >= 2) {
        backend->context = NULL;
        return table->calls.init(&backend->host, &backend->context);
    }
    return table->init(&backend->host);
}

bool tp_backend_has_claims(const tp_backend *backend) {
    return backend->revision >= 2 && backend->table->calls.supports;
}

int32_t tp_backend_call_supports(tp_backend *backend, const tp_plugin_graph *graph, int32_t value) {
    tp_host_clear_error();
    if (!tp_backend_has_claims(backend)) return TP_PLUGIN_OK;
    int32_t result = backend->table->calls.supports(backend->context, graph, value);
    return result == TP_PLUGIN_OK ? TP_PLUGIN_OK : TP_PLUGIN_UNSUPPORTED;
}

/* A revision-1 compile reports into its own buffer; an error that starts
 * with "unsupported:" is that revision's way of saying TP_PLUGIN_UNSUPPORTED. */
static int32_t compile_revision1(tp_backend *backend, const tp_plugin_graph *graph,
                                 const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                 const tp_plugin_option *options, int32_t num_options,
                                 tp_plugin_executable **executable) {
    char error[2048] = "";
    int32_t result = backend->table->compile(graph, inputs, num_inputs, options, num_options,
                                             executable, error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (result == TP_PLUGIN_OK) return result;
    const char *reason = *error ? error : tp_host_take_error();
    if (strncmp(reason, revision1_unsupported_prefix, sizeof revision1_unsupported_prefix - 1) ==
        0) {
        reason += sizeof revision1_unsupported_prefix - 1;
        while (*reason == ' ') reason++;
        result = TP_PLUGIN_UNSUPPORTED;
    } else {
        result = TP_PLUGIN_ERROR;
    }
    if (reason != tp_host_take_error()) tp_host_put_error(reason);
    return result;
}

int32_t tp_backend_call_compile(tp_backend *backend, const tp_plugin_graph *graph,
                                const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                const tp_plugin_option *options, int32_t num_options,
                                tp_plugin_executable **executable) {
    tp_host_clear_error();
    *executable = NULL;
    int32_t result;
    if (backend->revision >= 2)
        result = backend->table->calls.compile(backend->context, graph, inputs, num_inputs, options,
                                               num_options, executable);
    else
        result =
            compile_revision1(backend, graph, inputs, num_inputs, options, num_options, executable);
    if (result == TP_PLUGIN_OK && !*executable) {
        tp_host_put_error("compile returned success but no executable (a plugin bug)");
        return TP_PLUGIN_ERROR;
    }
    if (result != TP_PLUGIN_OK && result != TP_PLUGIN_UNSUPPORTED) result = TP_PLUGIN_ERROR;
    return result;
}

int32_t tp_backend_call_run(tp_backend *backend, tp_plugin_executable *executable,
                            const tp_plugin_buffer *inputs, int32_t num_inputs,
                            tp_plugin_buffer *outputs, int32_t num_outputs) {
    tp_host_clear_error();
    if (backend->revision >= 2)
        return backend->table->calls.run(backend->context, executable, inputs, num_inputs, outputs,
                                         num_outputs);
    return backend->table->run(executable, inputs, num_inputs, outputs, num_outputs);
}

void tp_backend_call_release(tp_backend *backend, tp_plugin_executable *executable) {
    if (backend->revision >= 2)
        backend->table->calls.release(backend->context, executable);
    else
        backend->table->release(executable);
}

void tp_backend_call_reset(tp_backend *backend) {
    if (backend->revision >= 2) {
        if (backend->table->calls.reset) backend->table->calls.reset(backend->context);
    } else if (backend->table->reset) {
        backend->table->reset();
    }
}

void tp_backend_call_shutdown(tp_backend *backend) {
    if (backend->revision >= 2) {
        if (backend->table->calls.shutdown) backend->table->calls.shutdown(backend->context);
        backend->context = NULL;
    } else if (backend->table->shutdown) {
        backend->table->shutdown();
    }
}

const tp_plugin_extension *tp_backend_call_get_extension(tp_backend *backend, const char *name) {
    if (backend->revision < 2 || !backend->table->calls.get_extension || !name) return NULL;
    const tp_plugin_extension *extension =
        backend->table->calls.get_extension(backend->context, name);
    if (extension && extension->struct_size < sizeof *extension) return NULL;
    return extension;
}
