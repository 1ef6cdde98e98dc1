/* The thread's last error: set it where a failure is detected, add context
 * on the way up. Internal to libtensorplay (public side: status.h). */
#ifndef TP_CORE_BASE_ERROR_H
#define TP_CORE_BASE_ERROR_H

#include "tensorplay/status.h"

#define TP_ERROR_MESSAGE_MAX 2048

/* Replaces the thread's message with the formatted text; returns `status`.
 * tp_error_set reports a failure: its result is never TP_OK (a TP_OK passed
 * by mistake becomes TP_ERR_INTERNAL), and the compiler sees that through
 * tp_error_failure, so `TP_TRY(helper())` where the helper fails with
 * `return tp_error_set(...)` does not look like a path that leaves the
 * helper's outputs unwritten (gcc -O2 -Wmaybe-uninitialized). */
tp_status tp_error_set_message(tp_status status, const char *format, ...) TP_PRINTF(2, 3);
tp_status tp_error_setv(tp_status status, const char *format, va_list args);
static inline tp_status tp_error_failure(tp_status status) {
    return status == TP_OK ? TP_ERR_INTERNAL : status;
}
#define tp_error_set(...) tp_error_failure(tp_error_set_message(__VA_ARGS__))
/* Puts back a message saved from tp_last_error() (the thread's status is
 * not changed: only the text). */
void tp_error_restore(const char *saved_message);
/* Prepends formatted context ("file.tpir:3:7: ") to the thread's message;
 * returns `status`. */
tp_status tp_error_prefix(tp_status status, const char *format, ...) TP_PRINTF(2, 3);

/* Evaluates an expression returning tp_status and returns it on failure. */
#define TP_TRY(expression)                                                                         \
    do {                                                                                           \
        tp_status tp_try_status_ = (expression);                                                   \
        if (tp_try_status_ != TP_OK) return tp_try_status_;                                        \
    } while (0)

#endif
