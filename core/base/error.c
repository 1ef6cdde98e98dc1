/* Thread-local last-error message and status names. */
#include "error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[TP_ERROR_MESSAGE_MAX];

const char *tp_status_name(tp_status status) {
    static const char *const names[TP_STATUS_COUNT] = {
        "ok",      "invalid argument", "shape",     "dtype",       "out of memory", "i/o",
        "parse",   "invalid graph",    "not found", "unsupported", "backend",       "state",
        "internal"};
    return (unsigned)status < TP_STATUS_COUNT ? names[status] : "unknown status";
}

const char *tp_last_error(void) {
    return last_error;
}

void tp_clear_error(void) {
    last_error[0] = '\0';
}

tp_status tp_error_setv(tp_status status, const char *format, va_list args) {
    vsnprintf(last_error, sizeof last_error, format, args);
    return status;
}

tp_status tp_error_set_message(tp_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    tp_error_setv(status, format, args);
    va_end(args);
    return status;
}

void tp_error_restore(const char *saved_message) {
    snprintf(last_error, sizeof last_error, "%s", saved_message);
}

tp_status tp_error_prefix(tp_status status, const char *format, ...) {
    char prefix[TP_ERROR_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(prefix, sizeof prefix, format, args);
    va_end(args);
    if (length < 0) return status;
    size_t prefix_length = (size_t)length < sizeof prefix ? (size_t)length : sizeof prefix - 1;
    size_t message_length = strlen(last_error);
    if (prefix_length + message_length >= sizeof last_error)
        message_length = sizeof last_error - 1 - prefix_length;
    memmove(last_error + prefix_length, last_error, message_length);
    memcpy(last_error, prefix, prefix_length);
    last_error[prefix_length + message_length] = '\0';
    return status;
}
