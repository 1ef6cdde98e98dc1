/* The process-wide log handler and level. The level starts from TP_LOG
 * (error|warn|info|debug, default warn) and can be changed by the API. */
#include "base/env.h"
#include "log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_log_handler log_handler;
static void *log_user_data;
static atomic_int log_level = -1;

static int level_from_environment(void) {
    const char *text = tp_env_get("TP_LOG");
    if (!text || !*text) return TP_LOG_WARN;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0) return i;
    if (text[0] >= '0' && text[0] <= '3' && text[1] == '\0') return text[0] - '0';
    return TP_LOG_WARN;
}

tp_log_level tp_get_log_level(void) {
    int level = atomic_load(&log_level);
    if (level < 0) {
        level = level_from_environment();
        atomic_store(&log_level, level);
    }
    return (tp_log_level)level;
}

void tp_set_log_level(tp_log_level level) {
    atomic_store(&log_level, (int)level);
}

void tp_set_log_handler(tp_log_handler handler, void *user_data) {
    pthread_mutex_lock(&log_lock);
    log_handler = handler;
    log_user_data = user_data;
    pthread_mutex_unlock(&log_lock);
}

int tp_log_enabled(tp_log_level level) {
    return (int)level <= (int)tp_get_log_level();
}

/* The one place the library writes to stderr: the default handler. */
void tp_log_deliver(tp_log_level level, const char *message) {
    static const char *const prefixes[] = {"error", "warning", "info", "debug"};
    if ((int)level < 0 || (int)level > TP_LOG_DEBUG) level = TP_LOG_DEBUG;
    pthread_mutex_lock(&log_lock);
    if (log_handler)
        log_handler(level, message, log_user_data);
    else
        fprintf(stderr, "tensorplay: %s: %s\n", prefixes[level], message);
    pthread_mutex_unlock(&log_lock);
}

void tp_logv(tp_log_level level, const char *format, va_list args) {
    if (!tp_log_enabled(level)) return;
    char message[4096];
    vsnprintf(message, sizeof message, format, args);
    tp_log_deliver(level, message);
}

void tp_log_message(tp_log_level level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    tp_logv(level, format, args);
    va_end(args);
}
