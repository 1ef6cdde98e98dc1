/* The host table the core hands every plugin (plugin.h): logging and error
 * reporting attributed to the backend, the core's thread pool, aligned
 * memory, environment reads, kernel times for the profile. One table per loaded backend;
 * `core_private` points back at it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/alloc.h"
#include "base/log.h"
#include "base/profile.h"
#include "registry_internal.h"
#include "ops/op_table.h"
#include "runtime/thread_pool.h"
#include "tensorplay/plugin_ops.h"

_Static_assert(TP_PLUGIN_F32 == TP_F32 && TP_PLUGIN_F64 == TP_F64 && TP_PLUGIN_I32 == TP_I32 &&
                   TP_PLUGIN_I64 == TP_I64 && TP_PLUGIN_BOOL == TP_BOOL,
               "plugin dtype codes must equal tp_dtype");
_Static_assert(TP_PLUGIN_MAX_DIMS == TP_MAX_DIMS, "plugin rank limit must equal TP_MAX_DIMS");
_Static_assert(TP_PLUGIN_LOG_DEBUG == TP_LOG_DEBUG && TP_PLUGIN_LOG_ERROR == TP_LOG_ERROR,
               "plugin log levels must equal tp_log_level");

_Static_assert(TP_PLUGIN_KIND_POINTWISE == TP_KIND_POINTWISE &&
                   TP_PLUGIN_KIND_REDUCTION == TP_KIND_REDUCTION &&
                   TP_PLUGIN_KIND_MATMUL == TP_KIND_MATMUL &&
                   TP_PLUGIN_KIND_SHAPE == TP_KIND_SHAPE &&
                   TP_PLUGIN_KIND_CREATION == TP_KIND_CREATION &&
                   TP_PLUGIN_KIND_COMPOSITE == TP_KIND_COMPOSITE,
               "plugin op kinds must equal tp_op_kind");
_Static_assert(TP_PLUGIN_OP_COUNT == TP_OP_COUNT, "plugin_ops.h must list every op of the table");
#define TP_OP_ID_MATCHES(id, name, kind, min_arity, max_arity)                                     \
    _Static_assert(TP_PLUGIN_OP_##id == (int)TP_OP_##id, "plugin op id of " name);
TP_PLUGIN_OP_LIST(TP_OP_ID_MATCHES)
#undef TP_OP_ID_MATCHES

static _Thread_local char plugin_error[1024];

static const char *backend_name_of(const tp_plugin_host *host) {
    const tp_backend *backend = host ? host->core_private : NULL;
    return backend ? backend->name : "?";
}

static void host_log(const tp_plugin_host *host, int32_t level, const char *message) {
    if (level < TP_PLUGIN_LOG_ERROR) level = TP_PLUGIN_LOG_ERROR;
    if (level > TP_PLUGIN_LOG_DEBUG) level = TP_PLUGIN_LOG_DEBUG;
    tp_log_message((tp_log_level)level, "backend '%s': %s", backend_name_of(host),
                   message ? message : "(null)");
}

static void host_set_error(const tp_plugin_host *host, const char *message) {
    (void)host;
    snprintf(plugin_error, sizeof plugin_error, "%s", message ? message : "(no message)");
}

static void host_parallel_for(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *context) {
    tp_parallel_for(n, grain, fn, context);
}

static int32_t host_num_threads(void) {
    return tp_thread_pool_size();
}

/* Environment reads for plugins follow the core's rule: nothing from the
 * environment in a privileged process. */
static const char *host_getenv(const char *name) {
    return tp_env_get(name);
}

/* Kernel times (plugin.h): profiling() is what a backend asks once per run,
 * so with no profile handler a run pays one relaxed load. */
static int32_t host_profiling(const tp_plugin_host *host) {
    (void)host;
    return tp_profile_active();
}

static void host_report_kernel(const tp_plugin_host *host, const char *name, uint64_t start_ns,
                               uint64_t end_ns) {
    tp_profile_kernel(backend_name_of(host), name, start_ns, end_ns);
}

void tp_host_put_error(const char *message) {
    char copy[sizeof plugin_error];
    snprintf(copy, sizeof copy, "%s", message ? message : "");
    memcpy(plugin_error, copy, sizeof plugin_error);
}

const char *tp_host_take_error(void) {
    return plugin_error;
}

void tp_host_clear_error(void) {
    plugin_error[0] = '\0';
}

void tp_host_table_init(tp_plugin_host *host, tp_backend *backend) {
    memset(host, 0, sizeof *host);
    host->struct_size = sizeof *host;
    host->contract_version = TP_BACKEND_CONTRACT_VERSION;
    host->core_version = tp_version();
    host->core_private = backend;
    host->log = host_log;
    host->set_error = host_set_error;
    host->parallel_for = host_parallel_for;
    host->num_threads = host_num_threads;
    host->aligned_alloc = tp_aligned_alloc;
    host->aligned_free = tp_aligned_free;
    host->getenv = host_getenv;
    host->profiling = host_profiling;
    host->now_ns = tp_profile_now_ns;
    host->report_kernel = host_report_kernel;
}
