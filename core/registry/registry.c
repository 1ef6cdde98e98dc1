/* The process-wide backend registry: the claims of every source in
 * precedence order (run-time registrations, built-ins, INI entries in search
 * order), which claim wins a name, lookup with "did you mean", register /
 * unregister, the default backend, reset and rescan.
 *
 * Locking: `registry_lock` (a read-write lock) guards the three claim arrays,
 * the problems list and the default name. Claims are never freed, so a
 * pointer found under the lock stays valid after it is released; loading
 * happens outside the registry lock, under the claim's own load_lock. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

typedef struct claim_list {
    tp_backend **items;
    int count;
} claim_list;

static pthread_once_t scan_once = PTHREAD_ONCE_INIT;
static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;
static claim_list registered, builtins, ini_claims;
static tp_strvec problems;    /* file-level problems of the last scan */
static tp_backend *retired;   /* removed claims, kept so handles stay valid */
static char *default_name;    /* set by tp_backend_set_default */
static tp_strvec old_strings; /* replaced default names (returned pointers stay valid) */

/* ---- claims in precedence order (caller holds the lock) ------------------- */

int tp_registry_claim_count(void) {
    return registered.count + builtins.count + ini_claims.count;
}

tp_backend *tp_registry_claim_at(int index) {
    if (index < registered.count) return registered.items[index];
    index -= registered.count;
    if (index < builtins.count) return builtins.items[index];
    return ini_claims.items[index - builtins.count];
}

/* The first claim of `name` in precedence order, passing over claims from
 * untrusted INI files: those take a name only when nothing else claims it,
 * so that a lookup still reports why the entry was refused. */
tp_backend *tp_registry_winner(const char *name) {
    int total = tp_registry_claim_count();
    tp_backend *refused = NULL;
    for (int i = 0; i < total; i++) {
        tp_backend *claim = tp_registry_claim_at(i);
        if (strcmp(claim->name, name) != 0) continue;
        if (!claim->refused) return claim;
        if (!refused) refused = claim;
    }
    return refused;
}

void tp_registry_read_lock(void) {
    pthread_rwlock_rdlock(&registry_lock);
}
void tp_registry_unlock(void) {
    pthread_rwlock_unlock(&registry_lock);
}
const tp_strvec *tp_registry_problems(void) {
    return &problems;
}

/* ---- scanning ------------------------------------------------------------------ */

static tp_status append_claim(claim_list *list, tp_backend *backend) {
    tp_backend **grown = realloc(list->items, (size_t)(list->count + 1) * sizeof *grown);
    if (!grown) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    list->items = grown;
    list->items[list->count++] = backend;
    return TP_OK;
}

static void retire(tp_backend *backend) {
    atomic_store(&backend->removed, true);
    backend->next_retired = retired;
    retired = backend;
}

static tp_status read_ini_claims(claim_list *out, tp_strvec *new_problems) {
    tp_search_path path;
    tp_strvec files = {0};
    tp_status status = tp_search_path_build(&path);
    if (status == TP_OK) status = tp_search_path_files(&path, &files, new_problems);
    for (int i = 0; i < files.count && status == TP_OK; i++)
        status = tp_manifest_read(files.items[i], &out->items, &out->count, new_problems);
    for (int i = 0; i < out->count && status == TP_OK; i++)
        status = tp_availability_check(out->items[i]);
    tp_strvec_clear(&files);
    tp_search_path_clear(&path);
    return status;
}

static void add_builtins(void) {
    tp_backend *eager = tp_backend_new("eager", TP_BACKEND_SOURCE_BUILTIN);
    if (eager) eager->priority = 0; /* `auto` picks it only when nothing else is there */
    if (!eager) return;
    eager->given_table = tp_builtin_eager_table();
    eager->tags = tp_strdup("debug");
    eager->description = tp_strdup(eager->given_table->description);
    if (append_claim(&builtins, eager) != TP_OK) free(eager);
}

static void initial_scan(void) {
    pthread_rwlock_wrlock(&registry_lock);
    add_builtins();
    if (read_ini_claims(&ini_claims, &problems) != TP_OK)
        tp_strvec_push(&problems, "registry: out of memory while reading the search path");
    pthread_rwlock_unlock(&registry_lock);
}

void tp_registry_ensure_scanned(void) {
    pthread_once(&scan_once, initial_scan);
}

/* An old claim that is loaded and describes the same entry replaces the
 * fresh one, so a rescan never loads a library twice. */
static bool same_entry(const tp_backend *a, const tp_backend *b) {
    return strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0 && a->line == b->line &&
           strcmp(a->library, b->library) == 0;
}

tp_status tp_backend_rescan(void) {
    tp_registry_ensure_scanned();
    claim_list fresh = {0};
    tp_strvec fresh_problems = {0};
    tp_status status = read_ini_claims(&fresh, &fresh_problems);
    pthread_rwlock_wrlock(&registry_lock);
    for (int i = 0; i < ini_claims.count; i++) {
        tp_backend *old = ini_claims.items[i];
        bool kept = false;
        for (int j = 0; j < fresh.count && !kept; j++) {
            if (atomic_load(&old->load_state) == TP_LOAD_NOT_TRIED ||
                !same_entry(old, fresh.items[j]))
                continue;
            retire(fresh.items[j]);
            fresh.items[j] = old;
            kept = true;
        }
        if (!kept) retire(old);
    }
    free(ini_claims.items);
    ini_claims = fresh;
    tp_strvec_clear(&problems);
    problems = fresh_problems;
    pthread_rwlock_unlock(&registry_lock);
    return status;
}

/* ---- lookup ----------------------------------------------------------------------- */

static tp_status collect_names(tp_strvec *names) {
    int total = tp_registry_claim_count();
    for (int i = 0; i < total; i++) TP_TRY(tp_strvec_push(names, tp_registry_claim_at(i)->name));
    return TP_OK;
}

tp_backend *tp_registry_find(const char *name) {
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    tp_backend *winner = tp_registry_winner(name);
    tp_registry_unlock();
    return winner;
}

static tp_status unknown_name(const char *name) {
    tp_strvec names = {0};
    tp_registry_read_lock();
    tp_status status = collect_names(&names);
    tp_registry_unlock();
    if (status == TP_OK) status = tp_error_unknown_backend(name, &names);
    tp_strvec_clear(&names);
    return status;
}

/* "eager, foo" : names a lookup would succeed or could be tried with. */
static char *available_names(void) {
    tp_strvec names = {0};
    tp_registry_read_lock();
    int total = tp_registry_claim_count();
    for (int i = 0; i < total; i++) {
        tp_backend *claim = tp_registry_claim_at(i);
        if (tp_registry_winner(claim->name) == claim && !claim->unavailable_reason &&
            atomic_load(&claim->load_state) != TP_LOAD_FAILED)
            tp_strvec_push(&names, claim->name);
    }
    tp_registry_unlock();
    size_t length = 16;
    for (int i = 0; i < names.count; i++) length += strlen(names.items[i]) + 2;
    char *text = calloc(1, length);
    if (text) {
        for (int i = 0; i < names.count; i++) {
            if (i) strcat(text, ", ");
            strcat(text, names.items[i]);
        }
        if (!names.count) strcpy(text, "(none)");
    }
    tp_strvec_clear(&names);
    return text;
}

tp_status tp_backend_lookup(const char *name, tp_backend **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_lookup: out is NULL");
    *out = NULL;
    bool is_default = name == NULL;
    if (is_default) name = tp_backend_get_default();
    if (strcmp(name, "auto") == 0) {
        tp_status resolved = tp_backend_resolve_auto(out, NULL);
        return resolved != TP_OK && is_default ? tp_error_prefix(resolved, "default backend: ")
                                               : resolved;
    }
    tp_backend *backend = tp_registry_find(name);
    tp_status status = backend ? tp_loader_ensure_loaded(backend) : unknown_name(name);
    if (status != TP_OK && is_default) {
        char *available = available_names();
        tp_error_prefix(status, "default backend: ");
        char message[TP_ERROR_MESSAGE_MAX];
        snprintf(message, sizeof message, "%s; available backends: %s", tp_last_error(),
                 available ? available : "?");
        free(available);
        return tp_error_set(status, "%s", message);
    }
    if (status == TP_OK) *out = backend;
    return status;
}

const char *tp_backend_name(const tp_backend *backend) {
    return backend ? backend->name : "";
}

const char *tp_backend_version(const tp_backend *backend) {
    if (!backend || atomic_load(&backend->load_state) != TP_LOAD_DONE || !backend->table->version)
        return "";
    return backend->table->version;
}

/* ---- registration ------------------------------------------------------------------- */

tp_status tp_backend_register(const tp_plugin_backend *table, const char *tags) {
    if (!table || !table->name || !*table->name)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_backend_register: the table (and its name) must not be NULL");
    tp_registry_ensure_scanned();
    tp_backend *backend = tp_backend_new(table->name, TP_BACKEND_SOURCE_REGISTERED);
    if (!backend) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    backend->given_table = table;
    backend->description = tp_strdup(table->description ? table->description : "");
    tp_strvec items = {0};
    const char *cursor = tags ? tags : "";
    while (*cursor) {
        while (*cursor == ',' || *cursor == ' ') cursor++;
        size_t length = strcspn(cursor, ", ");
        if (length) {
            char *tag = strndup(cursor, length);
            if (tag) tp_strvec_push_owned(&items, tag);
        }
        cursor += length;
    }
    size_t length = 1;
    for (int i = 0; i < items.count; i++) length += strlen(items.items[i]) + 1;
    backend->tags = calloc(1, length);
    for (int i = 0; backend->tags && i < items.count; i++) {
        if (i) strcat(backend->tags, ",");
        strcat(backend->tags, items.items[i]);
    }
    tp_strvec_clear(&items);

    pthread_rwlock_wrlock(&registry_lock);
    tp_status status = TP_OK;
    for (int i = 0; i < registered.count && status == TP_OK; i++)
        if (strcmp(registered.items[i]->name, table->name) == 0)
            status = tp_error_set(TP_ERR_STATE,
                                  "backend '%s' is already registered; unregister it first",
                                  table->name);
    if (status == TP_OK) status = append_claim(&registered, backend);
    if (status != TP_OK) retire(backend); /* never published: kept only to be simple */
    pthread_rwlock_unlock(&registry_lock);
    if (status == TP_OK) tp_loader_debug("'%s': registered at run time", table->name);
    return status;
}

tp_status tp_backend_unregister(const char *name) {
    if (!name) return TP_OK;
    tp_registry_ensure_scanned();
    tp_backend *removed = NULL;
    pthread_rwlock_wrlock(&registry_lock);
    for (int i = 0; i < registered.count; i++) {
        if (strcmp(registered.items[i]->name, name) != 0) continue;
        removed = registered.items[i];
        memmove(registered.items + i, registered.items + i + 1,
                (size_t)(registered.count - i - 1) * sizeof *registered.items);
        registered.count--;
        retire(removed);
        break;
    }
    pthread_rwlock_unlock(&registry_lock);
    if (removed && atomic_load(&removed->live_executables) == 0) tp_loader_shutdown(removed);
    return TP_OK;
}

void tp_registry_executable_released(tp_backend *backend) {
    if (atomic_load(&backend->removed) && atomic_load(&backend->live_executables) == 0)
        tp_loader_shutdown(backend);
}

/* ---- default backend, reset ----------------------------------------------------------- */

const char *tp_backend_get_default(void) {
    tp_registry_read_lock();
    const char *name = default_name;
    tp_registry_unlock();
    if (name) return name;
    const char *from_environment = tp_env_get("TP_DEFAULT_BACKEND");
    return from_environment && *from_environment ? from_environment : "stax";
}

tp_status tp_backend_set_default(const char *name) {
    tp_backend *backend = NULL;
    if (name) TP_TRY(tp_backend_lookup(name, &backend));
    char *copy = name ? tp_strdup(name) : NULL;
    if (name && !copy) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    pthread_rwlock_wrlock(&registry_lock);
    if (default_name) tp_strvec_push_owned(&old_strings, default_name);
    default_name = copy;
    pthread_rwlock_unlock(&registry_lock);
    return TP_OK;
}

void tp_backend_reset_all(void) {
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    int total = tp_registry_claim_count();
    tp_backend **loaded = calloc((size_t)total + 1, sizeof *loaded);
    int count = 0;
    for (int i = 0; loaded && i < total; i++) {
        tp_backend *claim = tp_registry_claim_at(i);
        if (atomic_load(&claim->load_state) == TP_LOAD_DONE) loaded[count++] = claim;
    }
    tp_registry_unlock();
    for (int i = 0; i < count; i++) {
        if (atomic_load(&loaded[i]->shut_down)) continue;
        tp_loader_debug("'%s': reset", loaded[i]->name);
        tp_backend_call_reset(loaded[i]);
    }
    free(loaded);
}
