/* TP_LOADER_DEBUG: when set to 1, every registry and loader decision (file
 * read, entry accepted or rejected and why, dlopen, symbol, probe, init) is
 * handed to the log handler as a debug message, whatever the log level (the
 * variable asks for exactly these lines); with no handler installed they go
 * to stderr as every log message does. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/log.h"
#include "registry_internal.h"

static pthread_once_t debug_once = PTHREAD_ONCE_INIT;
static bool debug_enabled;

static void read_debug_variable(void) {
    const char *value = tp_env_get("TP_LOADER_DEBUG");
    debug_enabled = value && *value && strcmp(value, "0") != 0;
}

bool tp_loader_debug_enabled(void) {
    pthread_once(&debug_once, read_debug_variable);
    return debug_enabled;
}

void tp_loader_debug(const char *format, ...) {
    if (!tp_loader_debug_enabled()) return;
    char line[4096];
    va_list args;
    va_start(args, format);
    int prefix = snprintf(line, sizeof line, "loader: ");
    vsnprintf(line + prefix, sizeof line - (size_t)prefix, format, args);
    va_end(args);
    tp_log_deliver(TP_LOG_DEBUG, line);
}
