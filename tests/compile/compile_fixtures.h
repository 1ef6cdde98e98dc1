/* Helpers shared by the compile suites: tensors from literals, an oracle
 * computed with plain loops, a log catcher, and "counting", an in-process
 * backend registered through the registry API that counts its compilations,
 * keeps the options it was given, and runs add(x, y) on f32 buffers. */
#ifndef TP_TESTS_COMPILE_FIXTURES_H
#define TP_TESTS_COMPILE_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/plugin.h"
#include "tp_test.h"

static inline tp_tensor *fixture_f32(int ndim, const int64_t *shape, const float *data) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, ndim, shape, data, &tensor), TP_OK);
    return tensor;
}

/* A 1-d f32 tensor [n] holding start, start + step, ... */
static inline tp_tensor *fixture_ramp(int64_t n, float start, float step) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, &n, &tensor), TP_OK);
    float *data = tp_tensor_data_mut(tensor);
    for (int64_t i = 0; i < n; i++) data[i] = start + step * (float)i;
    return tensor;
}

static inline const float *fixture_floats(const tp_tensor *tensor) {
    return (const float *)tp_tensor_data(tensor);
}

/* ---- log catcher ---- */

typedef struct fixture_log {
    char lines[16][1024];
    int count;
} fixture_log;

static inline void fixture_log_handler(tp_log_level level, const char *message, void *user) {
    fixture_log *log = user;
    (void)level;
    if (log->count < 16) snprintf(log->lines[log->count++], 1024, "%s", message);
}

static inline const char *fixture_log_find(const fixture_log *log, const char *needle) {
    for (int i = 0; i < log->count; i++)
        if (strstr(log->lines[i], needle)) return log->lines[i];
    return NULL;
}

/* ---- the counting backend ---- */

typedef struct fixture_counts {
    int compiles, runs, resets;
    char options[8][128];
    int num_options;
} fixture_counts;

static fixture_counts fixture_backend_counts;

static inline int32_t fixture_init(const tp_plugin_host *host) {
    (void)host;
    return TP_PLUGIN_OK;
}

static inline int32_t fixture_compile(const tp_plugin_graph *graph,
                                      const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                      const tp_plugin_option *options, int32_t num_options,
                                      tp_plugin_executable **executable, char *error,
                                      size_t error_size) {
    (void)graph, (void)inputs;
    if (num_inputs < 1 || num_inputs > 2) {
        snprintf(error, error_size, "counting backend: add of one or two inputs only");
        return TP_PLUGIN_ERROR;
    }
    fixture_backend_counts.compiles++;
    fixture_backend_counts.num_options = 0;
    for (int i = 0; i < num_options && i < 8; i++) {
        snprintf(fixture_backend_counts.options[i], 128, "%s=%s", options[i].key, options[i].value);
        fixture_backend_counts.num_options++;
    }
    *executable = (tp_plugin_executable *)(intptr_t)num_inputs;
    return TP_PLUGIN_OK;
}

/* outputs[0] = inputs[0] + inputs[1] (or inputs[0] alone), f32. */
static inline int32_t fixture_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                                  int32_t num_inputs, tp_plugin_buffer *outputs,
                                  int32_t num_outputs) {
    (void)executable, (void)num_outputs;
    fixture_backend_counts.runs++;
    size_t n = outputs[0].nbytes / sizeof(float);
    float *out = outputs[0].data;
    const float *a = inputs[0].data;
    const float *b = num_inputs > 1 ? inputs[1].data : NULL;
    for (size_t i = 0; i < n; i++) out[i] = a[i] + (b ? b[i] : 0.0f);
    return TP_PLUGIN_OK;
}

static inline void fixture_release(tp_plugin_executable *executable) {
    (void)executable;
}
static inline void fixture_reset(void) {
    fixture_backend_counts.resets++;
}

static const tp_plugin_backend fixture_backend_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 1, /* revision-1 table */
    .name = "counting",
    .version = "1.0",
    .description = "test backend: counts compilations, runs add",
    .init = fixture_init,
    .compile = fixture_compile,
    .run = fixture_run,
    .release = fixture_release,
    .reset = fixture_reset,
};

static inline void fixture_register_counting_backend(void) {
    memset(&fixture_backend_counts, 0, sizeof fixture_backend_counts);
    ck_assert_msg(tp_backend_register(&fixture_backend_table, "debug") == TP_OK, "%s",
                  tp_last_error());
}

/* Run before each test: forget what an earlier test in the same process
 * (CK_FORK=no) changed in the config, the environment, the log handler and
 * the registry. */
static inline void fixture_setup(void) {
    static const char *const variables[] = {"TP_LOG_RECOMPILES",
                                            "TP_CONFIG",
                                            "TP_RECOMPILE_LIMIT",
                                            "TP_ACCUMULATED_RECOMPILE_LIMIT",
                                            "TP_FAIL_ON_RECOMPILE_LIMIT_HIT",
                                            "TP_FORCE_DISABLE_CACHES",
                                            "TP_VERBOSE",
                                            "TP_DYNAMIC_SHAPES",
                                            "TP_ASSUME_STATIC_BY_DEFAULT"};
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++) unsetenv(variables[i]);
    setenv("XDG_CONFIG_HOME", "/nonexistent/tensorplay-test", 1);
    tp_config_reload();
    tp_set_log_handler(NULL, NULL);
    tp_backend_unregister("counting");
}

/* Options for the eager backend with parameter names. */
static inline tp_compile_options fixture_options(const char *name, const char *const *params,
                                                 int num_params) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    options.name = name;
    options.param_names = params;
    options.num_params = num_params;
    return options;
}

#endif
