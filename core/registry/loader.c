/* Loading one backend claim, exactly once: dlopen (RTLD_NOW | RTLD_LOCAL),
 * resolve the entry symbol, call it, check the returned table against the
 * INI entry (struct_size, contract_version, name, required functions), probe,
 * init with a host table. Each step that fails names itself, the file and
 * the symbol; the text is kept and the claim stays "failed". Nothing here
 * aborts the process. Built-ins and run-time registrations skip dlopen and
 * start at the table checks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The revisions a claim may return a table of: INI entries say theirs
 * (`min_contract` .. `contract`); built-ins and registrations take any the
 * core speaks. */
static void accepted_revisions(const tp_backend *backend, int *lowest, int *highest) {
    *lowest = 1;
    *highest = TP_BACKEND_CONTRACT_VERSION;
    if (backend->source != TP_BACKEND_SOURCE_INI) return;
    *lowest = backend->min_contract;
    if (backend->contract < *highest) *highest = backend->contract;
}

/* The function a table of its revision must have, or NULL when none lacks. */
static const char *missing_function(const tp_plugin_backend *table) {
    if (table->contract_version >= 2)
        return !table->calls.init      ? "calls.init"
               : !table->calls.compile ? "calls.compile"
               : !table->calls.run     ? "calls.run"
               : !table->calls.release ? "calls.release"
                                       : NULL;
    return !table->init      ? "init"
           : !table->compile ? "compile"
           : !table->run     ? "run"
           : !table->release ? "release"
                             : NULL;
}

/* NULL when the table is acceptable, else why not. */
static char *table_problem(const tp_backend *backend, const tp_plugin_backend *table,
                           const char *where) {
    if (table->struct_size < TP_PLUGIN_BACKEND_SIZE_V1)
        return tp_format("the table from %s has struct_size %u, smaller than a revision-1 table "
                         "(%zu bytes); rebuild the plugin against plugin.h",
                         where, (unsigned)table->struct_size, (size_t)TP_PLUGIN_BACKEND_SIZE_V1);
    int lowest, highest;
    accepted_revisions(backend, &lowest, &highest);
    unsigned revision = table->contract_version;
    if (backend->source == TP_BACKEND_SOURCE_INI && backend->contract >= 2 &&
        (int)revision > highest)
        return tp_format("%s was asked for contract revision %d and returned a revision %u "
                         "table; an entry returns the revision it is asked for or a lower one "
                         "it speaks (fix the plugin)",
                         where, highest, revision);
    if (revision > TP_BACKEND_CONTRACT_VERSION)
        return tp_format("backend '%s' returned a contract revision %u table, this TensorPlay "
                         "implements revisions 1 to %d; upgrade TensorPlay",
                         backend->name, revision, TP_BACKEND_CONTRACT_VERSION);
    if (revision < 1)
        return tp_format("the table from %s declares contract revision %u; revisions start at 1",
                         where, revision);
    if ((int)revision < lowest || (int)revision > highest) {
        if (lowest == highest)
            return tp_format("the table from %s declares contract revision %u but the INI entry "
                             "(%s:%d) declares %d; fix the INI or rebuild the plugin",
                             where, revision, backend->file, backend->line, lowest);
        return tp_format("the table from %s declares contract revision %u, outside the revisions "
                         "%d to %d that the INI entry (%s:%d) and this TensorPlay share; fix the "
                         "INI or rebuild the plugin",
                         where, revision, lowest, highest, backend->file, backend->line);
    }
    if (revision >= 2 && table->struct_size < TP_PLUGIN_BACKEND_SIZE_V2)
        return tp_format("the table from %s declares contract revision %u but its struct_size "
                         "%u is smaller than a revision-2 table (%zu bytes); rebuild the plugin "
                         "against plugin.h",
                         where, revision, (unsigned)table->struct_size,
                         (size_t)TP_PLUGIN_BACKEND_SIZE_V2);
    if (!table->name || strcmp(table->name, backend->name) != 0)
        return tp_format("the table from %s is named '%s', but the INI entry (%s:%d) is '%s'",
                         where, table->name ? table->name : "(null)",
                         backend->file ? backend->file : "?", backend->line, backend->name);
    const char *missing = missing_function(table);
    if (missing)
        return tp_format("the table from %s (revision %u) has no '%s' function (required by the "
                         "contract)",
                         where, revision, missing);
    return NULL;
}

/* Calls the entry the way its INI revision says: no argument for revision 1
 * (how such plugins were built), the negotiated revision from 2 on. */
static const tp_plugin_backend *call_entry(const tp_backend *backend, void *symbol) {
    int lowest, highest;
    accepted_revisions(backend, &lowest, &highest);
    if (backend->contract < 2) return ((tp_plugin_entry_fn)symbol)();
    tp_loader_debug("'%s': entry called with revision %d", backend->name, highest);
    return ((tp_plugin_entry2_fn)symbol)((uint32_t)highest);
}

static char *open_library(tp_backend *backend, const tp_plugin_backend **table_out,
                          char **where_out) {
    /* The file checked is the file loaded: open it once, check what was
     * opened (fstat) and load it through that descriptor, so a file swapped
     * after the scan-time check, or between this check and dlopen, is never
     * the one mapped. */
    int fd = open(backend->library, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tp_format("cannot open library %s: %s", backend->library, strerror(errno));
    char *distrust = tp_open_trust_problem(fd, backend->library, "plugin file");
    if (distrust) {
        close(fd);
        return distrust;
    }
    char by_descriptor[64];
    snprintf(by_descriptor, sizeof by_descriptor, "/proc/self/fd/%d", fd);
    tp_loader_debug("'%s': dlopen %s (as %s)", backend->name, backend->library, by_descriptor);
    atomic_fetch_add(&dlopen_calls, 1);
    void *handle = dlopen(by_descriptor, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        close(fd);
        const char *text = dlerror();
        if (!text) text = "unknown error";
        size_t prefix = strlen(by_descriptor);
        if (strncmp(text, by_descriptor, prefix) == 0 && text[prefix] == ':')
            return tp_format("dlopen: %s%s", backend->library, text + prefix);
        return tp_format("dlopen: %s", text);
    }
    /* The descriptor stays open for the life of the process: the dynamic
     * linker knows the library by the name /proc/self/fd/N, and a later
     * dlopen of another library through a reused N would be answered with
     * this one. One descriptor per loaded plugin. */
    dlerror();
    void *entry = dlsym(handle, backend->entry_symbol);
    if (!entry) {
        dlclose(handle);
        return tp_format("library %s has no symbol '%s' (the INI's `entry`; export it with "
                         "TP_PLUGIN_EXPORT)",
                         backend->library, backend->entry_symbol);
    }
    tp_loader_debug("'%s': symbol %s resolved", backend->name, backend->entry_symbol);
    const tp_plugin_backend *table = call_entry(backend, entry);
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
    tp_host_table_init(&backend->host, backend);
    tp_plugin_probe_info probe_info = {.struct_size = sizeof probe_info,
                                       .priority = backend->priority};
    if (tp_backend_call_probe(backend, table, &probe_info) != TP_PLUGIN_OK) {
        const char *why = tp_host_take_error();
        tp_loader_debug("'%s': probe says unavailable: %s", backend->name, why);
        return tp_format("probe: the backend cannot run here: %s",
                         *why ? why : "(no reason given)");
    }
    probe_info.device[sizeof probe_info.device - 1] = '\0';
    if (probe_info.priority < backend->priority) backend->priority = probe_info.priority;
    tp_loader_debug("'%s': probe ok (priority %d%s%s)", backend->name, backend->priority,
                    *probe_info.device ? ", device " : "", probe_info.device);
    if (tp_backend_call_init(backend, table) != TP_PLUGIN_OK) return init_failure();
    tp_loader_debug("'%s': init ok", backend->name);
    backend->revision = (int)table->contract_version;
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
        tp_load_memory_record(backend, problem);
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
        tp_backend_call_shutdown(backend);
        tp_loader_debug("'%s': shut down", backend->name);
    }
    pthread_mutex_unlock(&backend->load_lock);
}
