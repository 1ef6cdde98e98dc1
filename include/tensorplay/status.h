/* TensorPlay — status codes, the thread's last error, version and logging.
 *
 * Every fallible call in the public API returns a tp_status. On failure the
 * library also stores a message for the calling thread that says what failed
 * (with names, shapes, paths and file:line where known) and what to do about
 * it; read it with tp_last_error(). The message stays until the next failing
 * call on the same thread or tp_clear_error().
 *
 * The library never aborts, exits or prints on its own: diagnostics go through
 * the log handler (default: stderr, filtered by the TP_LOG environment
 * variable: error, warn, info, debug; default warn).
 */
#ifndef TENSORPLAY_STATUS_H
#define TENSORPLAY_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_VERSION_MAJOR 0
#define TP_VERSION_MINOR 1
#define TP_VERSION_PATCH 0

#if defined(__GNUC__)
#define TP_API                          __attribute__((visibility("default")))
#define TP_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define TP_API
#define TP_PRINTF(fmt_index, first_arg)
#endif

typedef enum tp_status {
    TP_OK = 0,
    TP_ERR_INVALID_ARGUMENT, /* a parameter value is out of its domain */
    TP_ERR_SHAPE,            /* shapes do not fit the operation */
    TP_ERR_DTYPE,            /* a dtype the operation does not accept */
    TP_ERR_OUT_OF_MEMORY,    /* an allocation failed */
    TP_ERR_IO,               /* a file could not be read or written */
    TP_ERR_PARSE,            /* malformed text or file format */
    TP_ERR_INVALID_GRAPH,    /* the graph does not verify */
    TP_ERR_NOT_FOUND,        /* a name (op, backend, value, file) is unknown */
    TP_ERR_UNSUPPORTED,      /* valid request this build or backend cannot do */
    TP_ERR_BACKEND,          /* a backend failed to load, compile or run */
    TP_ERR_STATE,            /* the call is not valid in the object's state */
    TP_ERR_INTERNAL,         /* a bug in TensorPlay: please report it */
    TP_STATUS_COUNT
} tp_status;

/* Stable lower-case name of a status ("ok", "shape", ...). */
TP_API const char *tp_status_name(tp_status status);

/* The calling thread's last error message; "" when none. Never NULL. */
TP_API const char *tp_last_error(void);
TP_API void tp_clear_error(void);

/* The core's version as "MAJOR.MINOR.PATCH". */
TP_API const char *tp_version(void);

typedef enum tp_log_level {
    TP_LOG_ERROR = 0,
    TP_LOG_WARN = 1,
    TP_LOG_INFO = 2,
    TP_LOG_DEBUG = 3,
} tp_log_level;

/* Receives every log line at or below the current level. `message` has no
 * trailing newline and is only valid during the call. */
typedef void (*tp_log_handler)(tp_log_level level, const char *message, void *user_data);

/* Replaces the log handler; NULL restores the default (stderr). */
TP_API void tp_set_log_handler(tp_log_handler handler, void *user_data);
/* Sets the level; overrides TP_LOG. */
TP_API void tp_set_log_level(tp_log_level level);
TP_API tp_log_level tp_get_log_level(void);

/* Releases memory the library handed to the caller (strings, arrays) when a
 * header says "release with tp_free". */
TP_API void tp_free(void *pointer);

#ifdef __cplusplus
}
#endif
#endif
