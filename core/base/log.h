/* Logging through the settable handler (status.h). Internal. */
#ifndef TP_CORE_BASE_LOG_H
#define TP_CORE_BASE_LOG_H

#include "tensorplay/status.h"

/* Named tp_log_message because tp_log is the public natural-log op (ops.h). */
void tp_log_message(tp_log_level level, const char *format, ...) TP_PRINTF(2, 3);
void tp_logv(tp_log_level level, const char *format, va_list args);
/* True when a message at `level` would be delivered (skip costly formatting). */
int tp_log_enabled(tp_log_level level);
/* Hands `message` to the installed handler (or the default one, which writes
 * to stderr) whatever the level: for output a variable asked for explicitly,
 * such as TP_LOADER_DEBUG. */
void tp_log_deliver(tp_log_level level, const char *message);

#endif
