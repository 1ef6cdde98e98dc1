/* The process-wide compile configuration: the knob table, the API layer, and
 * the environment and tensorplay.ini layers (read once, on first use, under
 * the config lock). Owns nothing else; wrappers copy the policy at
 * tp_compile (config.h). */
#define _GNU_SOURCE
#include "base/env.h"
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../base/error.h"
#include "tensorplay/compile.h"

typedef enum knob_type { KNOB_INT, KNOB_BOOL, KNOB_OPTIONAL_BOOL } knob_type;

typedef struct knob_def {
    const char *name;
    const char *env;
    knob_type type;
    int64_t default_value; /* -1 for an unset optional bool */
    int64_t min_value;     /* ints only */
} knob_def;

enum {
    KNOB_RECOMPILE_LIMIT,
    KNOB_ACCUMULATED_RECOMPILE_LIMIT,
    KNOB_FAIL_ON_RECOMPILE_LIMIT_HIT,
    KNOB_FORCE_DISABLE_CACHES,
    KNOB_ASSUME_STATIC_BY_DEFAULT,
    KNOB_VERBOSE,
    KNOB_DYNAMIC_SHAPES,
    KNOB_COUNT
};

static const knob_def knobs[KNOB_COUNT] = {
    [KNOB_RECOMPILE_LIMIT] = {"recompile_limit", "TP_RECOMPILE_LIMIT", KNOB_INT, 8, 1},
    [KNOB_ACCUMULATED_RECOMPILE_LIMIT] = {"accumulated_recompile_limit",
                                          "TP_ACCUMULATED_RECOMPILE_LIMIT", KNOB_INT, 256, 1},
    [KNOB_FAIL_ON_RECOMPILE_LIMIT_HIT] = {"fail_on_recompile_limit_hit",
                                          "TP_FAIL_ON_RECOMPILE_LIMIT_HIT", KNOB_BOOL, 0, 0},
    [KNOB_FORCE_DISABLE_CACHES] = {"force_disable_caches", "TP_FORCE_DISABLE_CACHES", KNOB_BOOL, 0,
                                   0},
    [KNOB_ASSUME_STATIC_BY_DEFAULT] = {"assume_static_by_default", "TP_ASSUME_STATIC_BY_DEFAULT",
                                       KNOB_BOOL, 1, 0},
    [KNOB_VERBOSE] = {"verbose", "TP_VERBOSE", KNOB_BOOL, 0, 0},
    [KNOB_DYNAMIC_SHAPES] = {"dynamic_shapes", "TP_DYNAMIC_SHAPES", KNOB_OPTIONAL_BOOL, -1, 0},
};

/* One layer's setting of one knob. */
typedef struct knob_setting {
    bool set;
    int64_t value;
} knob_setting;

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static knob_setting api_layer[KNOB_COUNT];
static knob_setting env_layer[KNOB_COUNT];
static knob_setting ini_layer[KNOB_COUNT];
/* The one text knob, fallback_backend (a backend name, or "none"): "" when
 * the layer does not set it. It has no API setter: tp_compile_options'
 * fallback_backend is the per-call layer. */
static char env_fallback_backend[TP_FALLBACK_BACKEND_MAX];
static char ini_fallback_backend[TP_FALLBACK_BACKEND_MAX];
static bool files_loaded;
/* A bad environment or ini value, reported by every snapshot until reload. */
static tp_status load_status = TP_OK;
static char load_error[TP_ERROR_MESSAGE_MAX];

static int find_knob(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < KNOB_COUNT; i++)
        if (strcmp(knobs[i].name, name) == 0) return i;
    return -1;
}

static tp_status unknown_knob(const char *name) {
    char known[512] = "";
    for (int i = 0; i < KNOB_COUNT; i++) {
        strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
        strncat(known, knobs[i].name, sizeof known - strlen(known) - 1);
    }
    return tp_error_set(TP_ERR_NOT_FOUND, "unknown compile config knob '%s'; the knobs are: %s",
                        name ? name : "(null)", known);
}

static bool parse_bool_text(const char *text, bool *out) {
    static const char *const truthy[] = {"1", "true", "yes", "on"};
    static const char *const falsy[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, truthy[i]) == 0) return *out = true, true;
        if (strcasecmp(text, falsy[i]) == 0) return *out = false, true;
    }
    return false;
}

/* Parses `text` for knob `index`; on error sets a message naming the knob and
 * `source` ("environment variable TP_X", "file.ini:3"). */
static tp_status parse_knob_text(int index, const char *text, const char *source, int64_t *out) {
    const knob_def *knob = &knobs[index];
    if (knob->type == KNOB_INT) {
        char *end = NULL;
        errno = 0;
        long long value = strtoll(text, &end, 10);
        if (errno || end == text || *end != '\0' || value < knob->min_value || value > INT_MAX)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: compile config knob '%s' must be an integer >= %lld, got '%s'",
                                source, knob->name, (long long)knob->min_value, text);
        *out = value;
        return TP_OK;
    }
    bool flag;
    if (!parse_bool_text(text, &flag))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: compile config knob '%s' must be a bool (1/0, true/false, "
                            "yes/no, on/off), got '%s'",
                            source, knob->name, text);
    *out = flag;
    return TP_OK;
}

static void remember_load_error(tp_status status) {
    if (load_status != TP_OK) return; /* keep the first */
    load_status = status;
    snprintf(load_error, sizeof load_error, "%s", tp_last_error());
}

static void load_environment(void) {
    const char *fallback = tp_env_get("TP_FALLBACK_BACKEND");
    if (fallback) snprintf(env_fallback_backend, sizeof env_fallback_backend, "%s", fallback);
    for (int i = 0; i < KNOB_COUNT; i++) {
        const char *text = tp_env_get(knobs[i].env);
        if (!text || !*text) continue;
        char source[96];
        snprintf(source, sizeof source, "environment variable %s", knobs[i].env);
        int64_t value;
        tp_status status = parse_knob_text(i, text, source, &value);
        if (status != TP_OK) {
            remember_load_error(status);
            continue;
        }
        env_layer[i] = (knob_setting){true, value};
    }
}

typedef struct ini_context {
    const char *path;
} ini_context;

static int ini_entry(void *user, const char *section, const char *name, const char *value) {
    ini_context *context = user;
    if (strcmp(section, "compile") != 0) return 1; /* other sections belong to others */
    char source[TP_ERROR_MESSAGE_MAX / 2];
    snprintf(source, sizeof source, "%s: [compile] %s", context->path, name);
    if (strcmp(name, "fallback_backend") == 0) {
        snprintf(ini_fallback_backend, sizeof ini_fallback_backend, "%s", value);
        return 1;
    }
    int index = find_knob(name);
    if (index < 0) {
        unknown_knob(name);
        tp_error_prefix(TP_ERR_NOT_FOUND, "%s: ", context->path);
        remember_load_error(TP_ERR_NOT_FOUND);
        return 1;
    }
    int64_t parsed;
    tp_status status = parse_knob_text(index, value, source, &parsed);
    if (status != TP_OK) {
        remember_load_error(status);
        return 1;
    }
    ini_layer[index] = (knob_setting){true, parsed};
    return 1;
}

/* TP_CONFIG, else $XDG_CONFIG_HOME (or ~/.config)/tensorplay/tensorplay.ini,
 * else /etc/tensorplay/tensorplay.ini; the first that exists. */
static bool find_ini_file(char *path, size_t size, bool *explicit_out) {
    const char *explicit_path = tp_env_get("TP_CONFIG");
    *explicit_out = explicit_path && *explicit_path;
    if (*explicit_out) {
        snprintf(path, size, "%s", explicit_path);
        return true;
    }
    const char *xdg = tp_env_get("XDG_CONFIG_HOME");
    const char *home = tp_env_get("HOME");
    if (xdg && *xdg)
        snprintf(path, size, "%s/tensorplay/tensorplay.ini", xdg);
    else if (home && *home)
        snprintf(path, size, "%s/.config/tensorplay/tensorplay.ini", home);
    else
        path[0] = '\0';
    if (path[0] && access(path, R_OK) == 0) return true;
    snprintf(path, size, "/etc/tensorplay/tensorplay.ini");
    return access(path, R_OK) == 0;
}

static void load_ini_file(void) {
    char path[4096];
    bool explicit_path;
    if (!find_ini_file(path, sizeof path, &explicit_path)) return;
    ini_context context = {path};
    int result = ini_parse(path, ini_entry, &context);
    if (result < 0) {
        if (explicit_path)
            remember_load_error(tp_error_set(TP_ERR_IO,
                                             "cannot read the config file '%s' named by "
                                             "TP_CONFIG (does it exist?)",
                                             path));
    } else if (result > 0) {
        remember_load_error(
            tp_error_set(TP_ERR_PARSE, "%s:%d: malformed line in the config file", path, result));
    }
}

/* Called with config_lock held. */
static void ensure_loaded(void) {
    if (files_loaded) return;
    files_loaded = true;
    char saved[TP_ERROR_MESSAGE_MAX];
    snprintf(saved, sizeof saved, "%s", tp_last_error());
    load_environment();
    load_ini_file();
    tp_error_restore(saved); /* loading must not clobber the caller's message */
}

static int64_t effective_value(int index) {
    if (api_layer[index].set) return api_layer[index].value;
    if (env_layer[index].set) return env_layer[index].value;
    if (ini_layer[index].set) return ini_layer[index].value;
    return knobs[index].default_value;
}

tp_status tp_config_snapshot(tp_compile_policy *out) {
    pthread_mutex_lock(&config_lock);
    ensure_loaded();
    tp_status status = load_status;
    if (status != TP_OK) {
        tp_error_set(status, "%s", load_error);
    } else {
        out->recompile_limit = (int)effective_value(KNOB_RECOMPILE_LIMIT);
        snprintf(out->fallback_backend, sizeof out->fallback_backend, "%s",
                 *env_fallback_backend ? env_fallback_backend : ini_fallback_backend);
        out->accumulated_recompile_limit = (int)effective_value(KNOB_ACCUMULATED_RECOMPILE_LIMIT);
        out->fail_on_recompile_limit_hit = effective_value(KNOB_FAIL_ON_RECOMPILE_LIMIT_HIT) != 0;
        out->force_disable_caches = effective_value(KNOB_FORCE_DISABLE_CACHES) != 0;
        out->assume_static_by_default = effective_value(KNOB_ASSUME_STATIC_BY_DEFAULT) != 0;
        out->verbose = effective_value(KNOB_VERBOSE) != 0;
        out->dynamic_shapes = (int)effective_value(KNOB_DYNAMIC_SHAPES);
    }
    pthread_mutex_unlock(&config_lock);
    return status;
}

tp_status tp_config_set_int(const char *knob, int64_t value) {
    int index = find_knob(knob);
    if (index < 0) return unknown_knob(knob);
    if (knobs[index].type != KNOB_INT)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "compile config knob '%s' is a bool; set it with tp_config_set_bool",
                            knob);
    if (value < knobs[index].min_value || value > INT_MAX)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "compile config knob '%s' must be an integer >= %lld, got %lld", knob,
                            (long long)knobs[index].min_value, (long long)value);
    pthread_mutex_lock(&config_lock);
    api_layer[index] = (knob_setting){true, value};
    pthread_mutex_unlock(&config_lock);
    return TP_OK;
}

tp_status tp_config_set_bool(const char *knob, bool value) {
    int index = find_knob(knob);
    if (index < 0) return unknown_knob(knob);
    if (knobs[index].type == KNOB_INT)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "compile config knob '%s' is an integer; set it with "
                            "tp_config_set_int",
                            knob);
    pthread_mutex_lock(&config_lock);
    api_layer[index] = (knob_setting){true, value};
    pthread_mutex_unlock(&config_lock);
    return TP_OK;
}

tp_status tp_config_unset(const char *knob) {
    int index = find_knob(knob);
    if (index < 0) return unknown_knob(knob);
    pthread_mutex_lock(&config_lock);
    api_layer[index].set = false;
    pthread_mutex_unlock(&config_lock);
    return TP_OK;
}

static tp_status read_knob(const char *knob, bool want_int, int64_t *value, bool *is_set) {
    int index = find_knob(knob);
    if (index < 0) {
        unknown_knob(knob); /* not inlined: returning its result would hide from gcc that
                               the outputs are written whenever TP_OK comes back */
        return TP_ERR_NOT_FOUND;
    }
    if ((knobs[index].type == KNOB_INT) != want_int)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "compile config knob '%s' is %s", knob,
                            want_int ? "a bool; read it with tp_config_get_bool"
                                     : "an integer; read it with tp_config_get_int");
    pthread_mutex_lock(&config_lock);
    ensure_loaded();
    /* A bad value in the environment or the ini fails tp_compile; the getters
     * report it too rather than a default tp_compile would not use. */
    tp_status status = load_status;
    if (status != TP_OK)
        tp_error_set(status, "%s", load_error);
    else
        *value = effective_value(index);
    pthread_mutex_unlock(&config_lock);
    TP_TRY(status);
    if (is_set) *is_set = *value >= 0;
    return TP_OK;
}

tp_status tp_config_get_int(const char *knob, int64_t *value_out) {
    if (!value_out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_config_get_int: NULL out");
    return read_knob(knob, true, value_out, NULL);
}

tp_status tp_config_get_bool(const char *knob, bool *value_out, bool *is_set_out) {
    if (!value_out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_config_get_bool: NULL out");
    int64_t value;
    bool is_set;
    TP_TRY(read_knob(knob, false, &value, &is_set));
    *value_out = value > 0;
    if (is_set_out) *is_set_out = is_set;
    return TP_OK;
}

void tp_config_reload(void) {
    pthread_mutex_lock(&config_lock);
    memset(api_layer, 0, sizeof api_layer);
    memset(env_layer, 0, sizeof env_layer);
    memset(ini_layer, 0, sizeof ini_layer);
    env_fallback_backend[0] = ini_fallback_backend[0] = '\0';
    files_loaded = false;
    load_status = TP_OK;
    load_error[0] = '\0';
    pthread_mutex_unlock(&config_lock);
}
