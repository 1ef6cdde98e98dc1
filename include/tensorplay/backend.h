/* TensorPlay — the backend registry: finding, listing, loading and using
 * compiler backends.
 *
 * Backends come from three sources; for one name the first wins:
 *   1. tables registered at run time with tp_backend_register;
 *   2. the built-ins ("eager": the reference interpreter, tagged debug);
 *   3. INI entries on the search path (`tp-backends paths`): the first file
 *      that names a backend wins it; later claims are kept as "shadowed".
 * Availability of an INI backend is decided without loading anything (the
 * library file and every `requires` soname exist, the contract revision and
 * core-version range fit; the INI and the library are trusted only when they
 * and every folder above them up to / belong to root or you and are writable
 * by nobody else, symlinks resolved first, a sticky folder such as /tmp
 * counting only for your own files; an untrusted INI is listed as
 * unavailable and claims no name). The library is opened once, checked
 * again on the open descriptor and loaded through it, on the first
 * tp_backend_lookup of its name, exactly once even under
 * concurrent lookups. A load failure never aborts the process; the reason is
 * kept and reported by every later lookup.
 *
 * Environment (read with secure_getenv: a setuid/setgid process uses none of
 * it): TP_BACKENDS_FILES, TP_BACKENDS_PATH, XDG_CONFIG_HOME,
 * TP_DEFAULT_BACKEND, TP_LOADER_DEBUG=1 (every loader decision as a debug
 * message to the log handler, whatever the log level), TP_NUM_THREADS (size
 * of the core's thread pool).
 *
 * Ownership: tp_backend handles belong to the registry and stay valid for the
 * life of the process. Executables are owned by the caller
 * (tp_executable_destroy). Info arrays are released with
 * tp_backend_info_release.
 */
#ifndef TENSORPLAY_BACKEND_H
#define TENSORPLAY_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "plugin.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_backend tp_backend;
typedef struct tp_executable tp_executable;

typedef enum tp_backend_state {
    TP_BACKEND_AVAILABLE = 0, /* can be loaded (nothing loaded yet) */
    TP_BACKEND_UNAVAILABLE,   /* cannot be loaded; `reason` says why */
    TP_BACKEND_LOADED,        /* loaded, probed and initialised */
    TP_BACKEND_FAILED,        /* loading was tried and failed; `reason` keeps the error */
    TP_BACKEND_SHADOWED,      /* another source claims the same name first */
    TP_BACKEND_STATE_COUNT
} tp_backend_state;

typedef enum tp_backend_source {
    TP_BACKEND_SOURCE_REGISTERED = 0, /* tp_backend_register */
    TP_BACKEND_SOURCE_BUILTIN,        /* compiled into libtensorplay */
    TP_BACKEND_SOURCE_INI,            /* an INI entry */
} tp_backend_source;

/* "available", "unavailable", "loaded", "failed", "shadowed". */
TP_API const char *tp_backend_state_name(tp_backend_state state);

/* A snapshot of what the registry knows about one backend claim. Strings are
 * never NULL ("" when absent) except where noted. */
typedef struct tp_backend_info {
    const char *name;
    tp_backend_state state;
    tp_backend_source source;
    const char *reason;      /* why unavailable / failed / shadowed; "" otherwise */
    const char *description; /* INI description, else the table's */
    const char *tags;        /* comma-separated, e.g. "debug" */
    const char *file;        /* INI file ("" unless source is INI) */
    int line;                /* line of the [section] header (0 unless INI) */
    const char *library;     /* resolved library path (INI) */
    const char *entry;       /* entry symbol (INI) */
    int contract;            /* declared contract revision */
    const char *min_core;    /* "" when not declared */
    const char *max_core;
    int num_required_sonames; /* the INI's `requires` (the field is not named
                                 `requires`: a C++20 keyword) */
    const char *const *required_sonames;
    const char *const *required_sonames_found; /* where each was found; NULL: missing */
    int num_warnings;
    const char *const *warnings; /* e.g. unknown keys, "FILE:LINE: unknown key 'x'" */
    const char *version;         /* the plugin's version once loaded; "" before */
    /* ---- contract revision 2 ---- */
    int min_contract; /* lowest contract revision it speaks (INI `min_contract`) */
    /* Rank for `auto` (highest available wins): the INI `priority` (default
     * 10; eager 0), or what the probe lowered it to once loaded. */
    int priority;
    int revision; /* the negotiated contract revision once loaded; 0 before */
    /* State `failed` comes from the load memory: this process has not loaded
     * it, and the last load of the same library file (path, size, mtime,
     * inode) by this TensorPlay, in an earlier process, failed with `reason`.
     * Using the backend loads it again; `tp-backends check` refreshes it. */
    bool remembered;
} tp_backend_info;

typedef struct tp_backend_list_options {
    uint32_t struct_size;
    /* Comma-separated tags to hide; NULL hides "debug,experimental"; "" hides none. */
    const char *exclude_tags;
    bool include_unavailable; /* also unavailable and failed backends */
    bool include_shadowed;    /* also claims shadowed by an earlier source */
} tp_backend_list_options;

#define TP_BACKEND_LIST_OPTIONS_INIT                                                               \
    { sizeof(tp_backend_list_options), NULL, false, false }

/* Lists backends in name order (shadowed claims after their winner), never
 * loading one. `options` NULL uses the defaults. Release with
 * tp_backend_info_release(*out, *count). */
TP_API tp_status tp_backend_list(const tp_backend_list_options *options, tp_backend_info **out,
                                 int *count);
/* Info of the backend that owns `name` (not loading it). Unknown names give
 * TP_ERR_NOT_FOUND with "did you mean" suggestions. Release with
 * tp_backend_info_release(*out, 1). */
TP_API tp_status tp_backend_info_get(const char *name, tp_backend_info **out);
TP_API void tp_backend_info_release(tp_backend_info *infos, int count);

/* One part of the search path, in order. */
typedef struct tp_backend_path_part {
    const char *path;
    const char *origin; /* "TP_BACKENDS_FILES", "TP_BACKENDS_PATH", "XDG_CONFIG_HOME", ... */
    bool exists;
    bool is_directory;
} tp_backend_path_part;

/* The search path as the registry reads it. Release with tp_free(*out) (one block). */
TP_API tp_status tp_backend_search_path(tp_backend_path_part **out, int *count);

/* Problems of the last scan that belong to no backend (an unreadable file,
 * a syntax error at FILE:LINE, a refused file), one per line; "" when none.
 * Release with tp_free. */
TP_API tp_status tp_backend_problems(char **text_out);

/* Finds a backend by name and loads it on first use. NULL `name` means the
 * default backend; "auto" means tp_backend_resolve_auto's pick. Errors: TP_ERR_NOT_FOUND ("Invalid
 * backend: 'X', did you mean: 'Y'? ..."), TP_ERR_BACKEND (unavailable or failed, with the reason).
 */
TP_API tp_status tp_backend_lookup(const char *name, tp_backend **out);
/* What the name "auto" means (tp_backend_lookup("auto"), tp_compile's
 * backend option, `tpc --backend auto`): the available backend with the
 * highest `priority` (INI key; built-in eager 0, registered tables 10),
 * ties broken by name. A candidate's probe may lower its priority (opencl
 * on a CPU device), so candidates are loaded from the highest down until
 * the best loaded one outranks every other; none below the pick is loaded.
 * When `why` is not NULL it receives a new string (free()) saying why this
 * one: its priority and every candidate above it that failed or lowered its
 * priority. */
TP_API tp_status tp_backend_resolve_auto(tp_backend **out, char **why);
TP_API const char *tp_backend_name(const tp_backend *backend);
/* The loaded table's version string. */
TP_API const char *tp_backend_version(const tp_backend *backend);

/* Registers an in-process backend table (highest precedence). The table and
 * its strings must outlive the registration. `tags` is comma-separated or
 * NULL. TP_ERR_STATE when a registered backend already has the name. */
TP_API tp_status tp_backend_register(const tp_plugin_backend *table, const char *tags);
/* Removes a registered backend; unknown names are not an error. Handles and
 * executables of it stay valid until released. */
TP_API tp_status tp_backend_unregister(const char *name);

/* The default backend's name: the one set by tp_backend_set_default, else
 * TP_DEFAULT_BACKEND, else "stax". */
TP_API const char *tp_backend_get_default(void);
/* Sets the default (NULL restores "stax"). The backend is looked up (and
 * loaded) now, so a wrong name fails here. */
TP_API tp_status tp_backend_set_default(const char *name);

/* Adds one backends INI file to the front of the search path (before
 * TP_BACKENDS_FILES and every default location) for the rest of the process,
 * and rescans, so its backends can be looked up now. Registering the same
 * file again only rescans. Errors: TP_ERR_IO when the file cannot be read,
 * TP_ERR_PARSE with the scan's problem ("FILE:LINE: ...") when the file was
 * refused or does not parse. */
TP_API tp_status tp_backend_register_file(const char *ini_path);

/* Calls reset() once on every loaded backend. */
TP_API void tp_backend_reset_all(void);
/* Reads the search path again (registered backends stay). Backends already
 * loaded stay loaded; their handles stay valid. */
TP_API tp_status tp_backend_rescan(void);

/* ---- compiling and running ------------------------------------------------ */

/* Compiles `graph` with `backend`. `example_inputs` (one tensor per graph
 * input) give the concrete input types; it may be NULL when every input
 * dimension of the graph is a size. `options` are "key=value" strings
 * (num_options of them; NULL when 0); the backend rejects keys it does not
 * know. A backend's "unsupported" refusal is TP_ERR_UNSUPPORTED (the message
 * reads "backend 'X' failed to compile graph 'G': unsupported: REASON"); any
 * other compile failure is TP_ERR_BACKEND. */
TP_API tp_status tp_backend_compile(tp_backend *backend, const tp_graph *graph,
                                    tp_tensor *const *example_inputs, int num_inputs,
                                    const char *const *options, int num_options,
                                    tp_executable **out);
/* Runs an executable. `inputs` must have the dtypes and shapes it was compiled
 * for. For each output i: if outputs[i] is a tensor of the right dtype and
 * shape it is written in place (its version bumps); otherwise (NULL) a new
 * tensor is stored there (one reference for the caller). */
TP_API tp_status tp_executable_run(tp_executable *executable, tp_tensor *const *inputs,
                                   int num_inputs, tp_tensor **outputs);
TP_API int tp_executable_num_outputs(const tp_executable *executable);

/* ---- claims and extensions (contract revision 2) --------------------------- */

/* Which nodes of `graph` `backend` claims (loads the backend). claimed[v] is
 * set for every value v of the graph (graph inputs: true); a backend without
 * a `supports` call claims every node. When `reasons` is not NULL,
 * reasons[v] is a new string (free() each) saying why v was refused, or NULL.
 * Both arrays hold tp_graph_num_values(graph) entries. */
TP_API tp_status tp_backend_claims(tp_backend *backend, const tp_graph *graph, bool *claimed,
                                   char **reasons);
/* The extension struct `name` of a loaded (or loadable) backend, or NULL
 * when it has none (or failed to load: tp_last_error says why). The struct
 * starts with a tp_plugin_extension header (plugin.h) and lives until the
 * backend is shut down. */
TP_API const void *tp_backend_extension(tp_backend *backend, const char *name);
TP_API tp_backend *tp_executable_backend(const tp_executable *executable);
TP_API void tp_executable_destroy(tp_executable *executable);

#ifdef __cplusplus
}
#endif
#endif
