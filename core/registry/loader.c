/* Loading one backend claim, exactly once: dlopen (RTLD_NOW | RTLD_LOCAL),
 * resolve the entry symbol, call it, check the returned table against the
 * INI entry (struct_size, contract_version, name, required functions), probe,
 * init with a host table. Each step that fails names itself, the file and
 * the symbol; the text is kept and the claim stays "failed". Nothing here
 * aborts the process. Built-ins and run-time registrations skip dlopen and
 * start at the table checks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

static atomic_int dlopen_calls;

int tp_registry_dlopen_count(void) {
    return atomic_load(&dlopen_calls);
}

static const char *source_text(const tp_backend *backend) {
    return backend->source == TP_BACKEND_SOURCE_BUILTIN ? "built-in table" : "registered table";
}

/* NULL when the table is acceptable, else why not. */
static char *table_problem(const tp_backend *backend, const tp_plugin_backend *table,
                           const char *where) {
    if (table->struct_size < TP_PLUGIN_BACKEND_SIZE_V1)
        return tp_format("the table from %s has struct_size %u, smaller than a revision-1 table "
                         "(%zu bytes); rebuild the plugin against plugin.h",
                         where, (unsigned)table->struct_size, (size_t)TP_PLUGIN_BACKEND_SIZE_V1);
    if (backend->source == TP_BACKEND_SOURCE_INI &&
        (int)table->contract_version != backend->contract)
        return tp_format("the table from %s declares contract revision %u but the INI entry "
                         "(%s:%d) declares %d; fix the INI or rebuild the plugin",
                         where, (unsigned)table->contract_version, backend->file, backend->line,
                         backend->contract);
    if (table->contract_version > TP_BACKEND_CONTRACT_VERSION)
        return tp_format("backend '%s' implements contract revision %u, this TensorPlay "
                         "implements up to %d; upgrade TensorPlay",
                         backend->name, (unsigned)table->contract_version,
                         TP_BACKEND_CONTRACT_VERSION);
    if (table->contract_version < 1)
        return tp_format("the table from %s declares contract revision %u; revisions start at 1",
                         where, (unsigned)table->contract_version);
    if (!table->name || strcmp(table->name, backend->name) != 0)
        return tp_format("the table from %s is named '%s', but the INI entry (%s:%d) is '%s'",
                         where, table->name ? table->name : "(null)",
                         backend->file ? backend->file : "?", backend->line, backend->name);
    const char *missing = !table->init      ? "init"
                          : !table->compile ? "compile"
                          : !table->run     ? "run"
                          : !table->release ? "release"
                                            : NULL;
    if (missing)
        return tp_format("the table from %s has no '%s' function (required by the contract)", where,
                         missing);
    return NULL;
}

static char *open_library(tp_backend *backend, const tp_plugin_backend **table_out,
                          char **where_out) {
    tp_loader_debug("'%s': dlopen %s", backend->name, backend->library);
    atomic_fetch_add(&dlopen_calls, 1);
    void *handle = dlopen(backend->library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *text = dlerror();
        return tp_format("dlopen: %s", text ? text : "unknown error");
    }
    dlerror();
    tp_plugin_entry_fn entry = (tp_plugin_entry_fn)dlsym(handle, backend->entry_symbol);
    if (!entry) {
        dlclose(handle);
        return tp_format("library %s has no symbol '%s' (the INI's `entry`; export it with "
                         "TP_PLUGIN_EXPORT)",
                         backend->library, backend->entry_symbol);
    }
    tp_loader_debug("'%s': symbol %s resolved", backend->name, backend->entry_symbol);
    const tp_plugin_backend *table = entry();
    if (!table) {
        dlclose(handle);
        return tp_format("%s() in %s returned NULL (the plugin cannot run in this process)",
                         backend->entry_symbol, backend->library);
    }
    backend->handle = handle;
    *table_out = table;
    *where_out = tp_format("%s() in %s", backend->entry_symbol, backend->library);
    return NULL;
}

static char *init_failure(void) {
    const char *text = tp_host_take_error();
    return tp_format("init: %s", *text ? text : "failed (the plugin gave no reason)");
}

/* Runs every step; NULL on success, else the reason. */
static char *load(tp_backend *backend) {
    const tp_plugin_backend *table = backend->given_table;
    char *where = NULL;
    if (!table) {
        char *problem = open_library(backend, &table, &where);
        if (problem) return problem;
    } else {
        where = tp_format("the %s of '%s'", source_text(backend), backend->name);
    }
    char *problem = table_problem(backend, table, where ? where : "?");
    free(where);
    if (problem) return problem;
    tp_loader_debug("'%s': table accepted (version %s, contract %u)", backend->name,
                    table->version ? table->version : "?", (unsigned)table->contract_version);
    if (table->probe) {
        char why[512] = "";
        int32_t result = table->probe(why, sizeof why);
        why[sizeof why - 1] = '\0';
        if (result != TP_PLUGIN_OK) {
            tp_loader_debug("'%s': probe says unavailable: %s", backend->name, why);
            return tp_format("probe: the backend cannot run here: %s",
                             *why ? why : "(no reason given)");
        }
        tp_loader_debug("'%s': probe ok", backend->name);
    }
    tp_host_table_init(&backend->host, backend);
    tp_host_clear_error();
    if (table->init(&backend->host) != TP_PLUGIN_OK) return init_failure();
    tp_loader_debug("'%s': init ok", backend->name);
    backend->table = table;
    return NULL;
}

static tp_status report(const tp_backend *backend) {
    if (atomic_load(&backend->load_state) == TP_LOAD_FAILED)
        return tp_error_set(TP_ERR_BACKEND, "backend '%s' failed to load: %s", backend->name,
                            backend->load_error ? backend->load_error : "out of memory");
    return TP_OK;
}

tp_status tp_loader_ensure_loaded(tp_backend *backend) {
    int state = atomic_load_explicit(&backend->load_state, memory_order_acquire);
    if (state != TP_LOAD_NOT_TRIED) return report(backend);
    if (backend->unavailable_reason)
        return tp_error_set(TP_ERR_BACKEND, "backend '%s' is unavailable: %s", backend->name,
                            backend->unavailable_reason);
    pthread_mutex_lock(&backend->load_lock);
    if (atomic_load(&backend->load_state) == TP_LOAD_NOT_TRIED) {
        char *problem = load(backend);
        if (problem) {
            backend->load_error = problem;
            tp_loader_debug("'%s' failed: %s", backend->name,
                            backend->load_error ? backend->load_error : "out of memory");
            atomic_store_explicit(&backend->load_state, TP_LOAD_FAILED, memory_order_release);
        } else {
            atomic_store_explicit(&backend->load_state, TP_LOAD_DONE, memory_order_release);
        }
    }
    pthread_mutex_unlock(&backend->load_lock);
    return report(backend);
}

void tp_loader_shutdown(tp_backend *backend) {
    pthread_mutex_lock(&backend->load_lock);
    if (atomic_load(&backend->load_state) == TP_LOAD_DONE && !atomic_load(&backend->shut_down)) {
        atomic_store(&backend->shut_down, true);
        if (backend->table->shutdown) backend->table->shutdown();
        tp_loader_debug("'%s': shut down", backend->name);
    }
    pthread_mutex_unlock(&backend->load_lock);
}
