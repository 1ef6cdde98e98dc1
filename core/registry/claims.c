/* Asking a backend which nodes of a graph it takes (contract revision 2's
 * `supports`), and reaching its extensions. The partitioner, the
 * conformance kit's coverage and `tpc print --partition` all ask here. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "ir/graph_internal.h"
#include "registry_internal.h"

static tp_status ensure_usable(tp_backend *backend) {
    TP_TRY(tp_loader_ensure_loaded(backend));
    if (atomic_load(&backend->shut_down))
        return tp_error_set(TP_ERR_STATE, "backend '%s' was unregistered and shut down",
                            backend->name);
    return TP_OK;
}

tp_status tp_backend_claims(tp_backend *backend, const tp_graph *graph, bool *claimed,
                            char **reasons) {
    if (!backend || !graph || !claimed)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_claims: NULL argument");
    TP_TRY(ensure_usable(backend));
    int32_t count = graph->num_values;
    if (reasons) memset(reasons, 0, (size_t)count * sizeof *reasons);
    tp_graph_view *view = NULL;
    TP_TRY(tp_graph_view_create(graph, &view));
    const tp_plugin_graph *plugin_view = tp_graph_view_get(view);
    for (int32_t v = 0; v < count; v++) {
        claimed[v] = true;
        if (!graph->values[v].op) continue;
        if (tp_backend_call_supports(backend, plugin_view, v) == TP_PLUGIN_OK) continue;
        claimed[v] = false;
        const char *why = tp_host_take_error();
        if (reasons && *why) reasons[v] = tp_strdup(why);
    }
    tp_graph_view_destroy(view);
    return TP_OK;
}

const void *tp_backend_extension(tp_backend *backend, const char *name) {
    if (!backend || !name) {
        tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_extension: NULL argument");
        return NULL;
    }
    if (ensure_usable(backend) != TP_OK) return NULL;
    return tp_backend_call_get_extension(backend, name);
}
