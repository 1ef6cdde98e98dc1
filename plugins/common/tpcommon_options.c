/* plugins/common — option checking and typed reads (tpcommon_options.h). */
#include "tpcommon_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpcommon_text.h"

int32_t tpcommon_options_check(const tp_plugin_option *options, int32_t count,
                               const char *const *known, int32_t num_known, char *error,
                               size_t error_size) {
    for (int32_t i = 0; i < count; i++) {
        const char *key = options[i].key ? options[i].key : "";
        int32_t k = 0;
        while (k < num_known && strcmp(known[k], key) != 0) k++;
        if (k < num_known) continue;
        /* The core hands a mode over as the option mode=NAME; a backend that
         * takes no `mode` option knows only the default one. */
        if (strcmp(key, "mode") == 0)
            return tpcommon_error(error, error_size, "unknown mode '%s' (known modes: default)",
                                  options[i].value ? options[i].value : "");
        char list[256] = "";
        for (int32_t j = 0; j < num_known; j++) {
            if (j) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, known[j], sizeof list - strlen(list) - 1);
        }
        return tpcommon_error(error, error_size, "unknown option '%s' (known: %s)", key, list);
    }
    return TP_PLUGIN_OK;
}

const char *tpcommon_option_get(const tp_plugin_option *options, int32_t count, const char *key) {
    const char *value = NULL;
    for (int32_t i = 0; i < count; i++)
        if (options[i].key && strcmp(options[i].key, key) == 0) value = options[i].value;
    return value;
}

int32_t tpcommon_option_int(const tp_plugin_option *options, int32_t count, const char *key,
                            int64_t min, int64_t max, int64_t *out, char *error,
                            size_t error_size) {
    const char *text = tpcommon_option_get(options, count, key);
    if (!text) return TP_PLUGIN_OK;
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (!*text || *end || errno || value < min || value > max)
        return tpcommon_error(error, error_size,
                              "option %s=%s: expected an integer from %lld to %lld", key, text,
                              (long long)min, (long long)max);
    *out = value;
    return TP_PLUGIN_OK;
}

int32_t tpcommon_option_on_off(const tp_plugin_option *options, int32_t count, const char *key,
                               bool *out, char *error, size_t error_size) {
    const char *text = tpcommon_option_get(options, count, key);
    if (!text) return TP_PLUGIN_OK;
    if (strcmp(text, "on") != 0 && strcmp(text, "off") != 0)
        return tpcommon_error(error, error_size, "option %s=%s: expected on or off", key, text);
    *out = strcmp(text, "on") == 0;
    return TP_PLUGIN_OK;
}
