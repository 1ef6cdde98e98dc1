/* Small string helpers for the registry: an owned string list and a
 * formatting allocator. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

tp_status tp_strvec_push_owned(tp_strvec *vec, char *text) {
    if (vec->count == vec->capacity) {
        int capacity = vec->capacity ? vec->capacity * 2 : 4;
        char **items = realloc(vec->items, (size_t)capacity * sizeof *items);
        if (!items) {
            free(text);
            return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
        }
        vec->items = items;
        vec->capacity = capacity;
    }
    vec->items[vec->count++] = text;
    return TP_OK;
}

tp_status tp_strvec_push(tp_strvec *vec, const char *text) {
    char *copy = NULL;
    if (text && !(copy = tp_strdup(text)))
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    return tp_strvec_push_owned(vec, copy);
}

void tp_strvec_clear(tp_strvec *vec) {
    for (int i = 0; i < vec->count; i++) free(vec->items[i]);
    free(vec->items);
    memset(vec, 0, sizeof *vec);
}

char *tp_format(const char *format, ...) {
    va_list args;
    va_start(args, format);
    int length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (length < 0) return NULL;
    char *text = malloc((size_t)length + 1);
    if (!text) return NULL;
    va_start(args, format);
    vsnprintf(text, (size_t)length + 1, format, args);
    va_end(args);
    return text;
}
