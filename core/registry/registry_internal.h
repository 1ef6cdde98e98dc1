/* The registry's shared structures: one tp_backend per claim of a name (an
 * INI section, a built-in, a run-time registration), and the functions the
 * registry's files offer each other. Internal to core/registry (and its
 * tests): nothing else includes this. */
#ifndef TP_CORE_REGISTRY_REGISTRY_INTERNAL_H
#define TP_CORE_REGISTRY_REGISTRY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tensorplay/backend.h"
#include "tensorplay/plugin.h"

/* A growable list of owned strings (items may be NULL where stated). */
typedef struct tp_strvec {
    char **items;
    int count;
    int capacity;
} tp_strvec;

tp_status tp_strvec_push(tp_strvec *vec, const char *text); /* copies; NULL pushes NULL */
tp_status tp_strvec_push_owned(tp_strvec *vec, char *text); /* takes ownership */
void tp_strvec_clear(tp_strvec *vec);
/* Formats into a new malloc'd string; NULL when out of memory. */
char *tp_format(const char *format, ...) TP_PRINTF(1, 2);

/* `priority` of an INI entry that does not set it (`auto` picks the highest). */
#define TP_BACKEND_DEFAULT_PRIORITY 10

/* Load progress of one claim. */
enum { TP_LOAD_NOT_TRIED = 0, TP_LOAD_DONE = 1, TP_LOAD_FAILED = 2 };

/* One claim of a backend name. The struct is the public tp_backend handle;
 * it is never freed while the process runs (handles must stay valid). */
struct tp_backend {
    char *name;
    tp_backend_source source;

    /* From the INI entry (source INI). */
    char *file;
    int line;
    char *library; /* resolved against the INI file's folder */
    char *entry_symbol;
    int contract;     /* the highest revision the entry speaks (`contract`) */
    int min_contract; /* the lowest (`min_contract`, default `contract`) */
    int priority;     /* `priority` (default TP_BACKEND_DEFAULT_PRIORITY); for `auto` */
    char *min_core, *max_core;
    tp_strvec requires;       /* sonames */
    tp_strvec requires_found; /* path per soname, NULL when missing */
    char *tags;               /* normalised: comma-separated, no spaces */
    char *description;
    tp_strvec warnings;
    int key_lines[16]; /* line of each known key (manifest.c), 0 when absent */

    /* Decided without loading (scan time): NULL when available. */
    char *unavailable_reason;
    /* The INI file is not trusted: the claim is listed (unavailable, with the
     * reason) but claims no name, so a trusted entry of the same name wins. */
    bool refused;

    /* For built-ins and registrations: the table, known before loading. */
    const tp_plugin_backend *given_table;

    /* Loading: guarded by load_lock; load_state is read without it. */
    pthread_mutex_t load_lock;
    atomic_int load_state;
    char *load_error;
    void *handle;
    const tp_plugin_backend *table;
    int revision;  /* the revision `table` speaks (table->contract_version) */
    void *context; /* revision 2: what calls.init returned */
    tp_plugin_host host;

    atomic_int live_executables;
    atomic_bool removed;   /* unregistered or replaced by a rescan */
    atomic_bool shut_down; /* shutdown() was called */
    struct tp_backend *next_retired;
};

/* ---- registry.c ---------------------------------------------------------- */
/* Reads the search path on first use (once per process). */
void tp_registry_ensure_scanned(void);
/* Claims in precedence order; call between read_lock and unlock. */
void tp_registry_read_lock(void);
void tp_registry_unlock(void);
int tp_registry_claim_count(void);
tp_backend *tp_registry_claim_at(int index);
tp_backend *tp_registry_winner(const char *name);
const tp_strvec *tp_registry_problems(void);
/* The winning claim of `name`, or NULL (registry lock taken inside). */
tp_backend *tp_registry_find(const char *name);
/* Called by executable.c when the last executable of a removed backend goes. */
void tp_registry_executable_released(tp_backend *backend);
/* Number of dlopen calls since start (tests). */
int tp_registry_dlopen_count(void);

/* ---- manifest.c: one INI file -> claims ---------------------------------- */
/* Parses `path`, appending one new tp_backend per section to `out` (an array
 * of pointers grown with realloc). File-level problems (unreadable, syntax
 * error at line N, unknown format) are appended to `problems`. Never fails
 * except for out of memory. */
tp_status tp_manifest_read(const char *path, tp_backend ***out, int *count, tp_strvec *problems);
tp_backend *tp_backend_new(const char *name, tp_backend_source source);
/* Frees a claim that was never loaded (tests, fuzzing; the registry itself
 * keeps its claims for the life of the process). */
void tp_backend_free_unloaded(tp_backend *backend);

/* ---- search_path.c --------------------------------------------------------- */
typedef struct tp_search_path {
    tp_strvec paths;
    tp_strvec origins;
} tp_search_path;
tp_status tp_search_path_build(tp_search_path *out);
/* registered_files.c: the tp_backend_register_file paths, appended in order. */
tp_status tp_registered_files_add_to(tp_search_path *out);
void tp_search_path_clear(tp_search_path *path);
/* The INI files of the search path, in precedence order (folders give their
 * *.ini files in name order). Problems (unreadable folder) go to `problems`. */
tp_status tp_search_path_files(const tp_search_path *path, tp_strvec *files, tp_strvec *problems);

/* ---- availability.c ----------------------------------------------------------- */
/* Decides whether an INI claim can be loaded, without loading it: fills
 * requires_found and unavailable_reason. */
tp_status tp_availability_check(tp_backend *backend);
/* Parses "1.2.3" (missing parts are 0); false when malformed. */
bool tp_version_parse(const char *text, int version[3]);
/* NULL when `path` is safe to trust, else a new string saying why not. */
char *tp_file_trust_problem(const char *path, const char *what);
/* The same checks for the file open as `fd` (fstat: a regular file owned by
 * root or the user, writable by nobody else) and for every folder above the
 * path it was opened by, which must still name that same file. */
char *tp_open_trust_problem(int fd, const char *path, const char *what);

/* ---- soname.c ------------------------------------------------------------------ */
/* Where the dynamic linker would find `soname` (new string), or NULL. */
char *tp_soname_find(const char *soname);
/* What provides a well-known soname ("Debian package libllvm19"), or NULL. */
const char *tp_soname_provider(const char *soname);

/* ---- loader.c -------------------------------------------------------------------- */
/* Loads a claim once (dlopen, entry, table checks, probe, init). TP_OK when
 * loaded; TP_ERR_BACKEND with the reason otherwise. */
tp_status tp_loader_ensure_loaded(tp_backend *backend);
/* Calls shutdown() if loaded, once. */
void tp_loader_shutdown(tp_backend *backend);

/* ---- load_memory.c: the last load's outcome, across processes ------------------ */
/* The reason of the remembered failed load of an INI claim's library (new
 * string), or NULL: none remembered, the last load succeeded, or the library
 * (path, size, mtime, inode) or TensorPlay changed since. */
char *tp_load_memory_recall_failure(const tp_backend *backend);
/* Remembers this load's outcome (failure NULL: loaded) for INI claims. */
void tp_load_memory_record(const tp_backend *backend, const char *failure);

/* ---- backend_calls.c: the one place that calls a plugin table ------------------ */
/* Each call dispatches on backend->revision, so the rest of the core speaks
 * revision 2 whatever the plugin speaks. Results are TP_PLUGIN_* codes; the
 * reason of a failed or refused call is read with tp_host_take_error() (a
 * revision-1 compile's error text is moved there, and its "unsupported:"
 * prefix becomes TP_PLUGIN_UNSUPPORTED). */
int32_t tp_backend_call_probe(tp_backend *backend, const tp_plugin_backend *table,
                              tp_plugin_probe_info *info);
int32_t tp_backend_call_init(tp_backend *backend, const tp_plugin_backend *table);
/* True when the backend has a supports call (else it claims every node). */
bool tp_backend_has_claims(const tp_backend *backend);
int32_t tp_backend_call_supports(tp_backend *backend, const tp_plugin_graph *graph, int32_t value);
int32_t tp_backend_call_compile(tp_backend *backend, const tp_plugin_graph *graph,
                                const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                const tp_plugin_option *options, int32_t num_options,
                                tp_plugin_executable **executable);
int32_t tp_backend_call_run(tp_backend *backend, tp_plugin_executable *executable,
                            const tp_plugin_buffer *inputs, int32_t num_inputs,
                            tp_plugin_buffer *outputs, int32_t num_outputs);
void tp_backend_call_release(tp_backend *backend, tp_plugin_executable *executable);
void tp_backend_call_reset(tp_backend *backend);
void tp_backend_call_shutdown(tp_backend *backend);
const tp_plugin_extension *tp_backend_call_get_extension(tp_backend *backend, const char *name);

/* ---- loader_log.c ---------------------------------------------------------------- */
bool tp_loader_debug_enabled(void);
void tp_loader_debug(const char *format, ...) TP_PRINTF(1, 2);

/* ---- host_table.c ----------------------------------------------------------------- */
void tp_host_table_init(tp_plugin_host *host, tp_backend *backend);
/* Replaces the thread's plugin error text (the core's own reasons for a call). */
void tp_host_put_error(const char *message);
/* The message the plugin set with host->set_error on this thread (consumed). */
const char *tp_host_take_error(void);
void tp_host_clear_error(void);

/* ---- suggest.c ------------------------------------------------------------------- */
/* Appends to `out` up to 3 names from `names` close to `name` (edit distance). */
tp_status tp_suggest_names(const char *name, const tp_strvec *names, tp_strvec *out);
/* "Invalid backend: 'X', did you mean: 'Y'? See `tp-backends list` ..." */
tp_status tp_error_unknown_backend(const char *name, const tp_strvec *known_names);

/* ---- builtin_eager.c --------------------------------------------------------------- */
const tp_plugin_backend *tp_builtin_eager_table(void);

/* ---- graph_view.c ------------------------------------------------------------------ */
typedef struct tp_graph_view tp_graph_view;
tp_status tp_graph_view_create(const tp_graph *graph, tp_graph_view **out);
const tp_plugin_graph *tp_graph_view_get(const tp_graph_view *view);
/* The graph a view was made from (built-ins run it directly). */
const tp_graph *tp_graph_view_source(const tp_plugin_graph *view);
void tp_graph_view_destroy(tp_graph_view *view);

#endif
