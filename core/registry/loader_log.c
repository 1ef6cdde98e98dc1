/* TP_LOADER_DEBUG: when set to 1, every registry and loader decision (file
 * read, entry accepted or rejected and why, dlopen, symbol, probe, init) is
 * written to stderr. This is the one place the library writes to stderr on
 * its own, because the variable asks for exactly that. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

static pthread_once_t debug_once = PTHREAD_ONCE_INIT;
static bool debug_enabled;

static void read_debug_variable(void) {
    const char *value = secure_getenv("TP_LOADER_DEBUG");
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
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    fprintf(stderr, "tensorplay: loader: %s\n", line);
}
