/* plugins/common — compile options ("key=value" pairs from plugin.h): checking
 * that every key is known and reading typed values, with errors a user can
 * act on ("unknown option 'X' (known: threads, opt_level, ...)"). */
#ifndef TPCOMMON_OPTIONS_H
#define TPCOMMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* TP_PLUGIN_OK when every option key is one of `known`; otherwise writes
 * "unknown option 'X' (known: a, b, c)" into error. */
int32_t tpcommon_options_check(const tp_plugin_option *options, int32_t count,
                               const char *const *known, int32_t num_known, char *error,
                               size_t error_size);
/* The value of the last option named `key`, or NULL. */
const char *tpcommon_option_get(const tp_plugin_option *options, int32_t count, const char *key);
/* Reads an integer option in [min, max]; absent leaves *out unchanged. */
int32_t tpcommon_option_int(const tp_plugin_option *options, int32_t count, const char *key,
                            int64_t min, int64_t max, int64_t *out, char *error, size_t error_size);

/* Reads an on/off option into *out; absent leaves *out unchanged. */
int32_t tpcommon_option_on_off(const tp_plugin_option *options, int32_t count, const char *key,
                               bool *out, char *error, size_t error_size);

#endif
