/* Recompile reason lists and their summaries (reasons.h). */
#include "reasons.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/error.h"

void tp_reasons_add(tp_reason_list *list, const char *format, ...) {
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 8;
        char **items = realloc(list->items, (size_t)capacity * sizeof *items);
        if (!items) return;
        list->items = items;
        list->capacity = capacity;
    }
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    char *copy = strdup(text);
    if (copy) list->items[list->count++] = copy;
}

void tp_reasons_clear(tp_reason_list *list) {
    for (int i = 0; i < list->count; i++) free(list->items[i]);
    free(list->items);
    *list = (tp_reason_list){0};
}

void tp_reasons_move(tp_reason_list *to, tp_reason_list *from) {
    tp_reasons_clear(to);
    *to = *from;
    *from = (tp_reason_list){0};
}

char *tp_reasons_summary(const tp_reason_list *list, char *buf, size_t size) {
    if (size == 0) return buf;
    buf[0] = '\0';
    size_t used = 0;
    int shown = list->count < TP_REASONS_SHOWN ? list->count : TP_REASONS_SHOWN;
    for (int i = 0; i < shown && used < size; i++) {
        int written = snprintf(buf + used, size - used, "%s%s", i ? "; " : "", list->items[i]);
        if (written < 0) break;
        used += (size_t)written;
    }
    if (list->count > shown && used < size)
        snprintf(buf + used, size - used, " (+%d more)", list->count - shown);
    return buf;
}

tp_status tp_reasons_copy_out(const tp_reason_list *list, char ***out, int *count_out) {
    *out = NULL;
    *count_out = 0;
    if (list->count == 0) return TP_OK;
    size_t bytes = (size_t)list->count * sizeof(char *);
    for (int i = 0; i < list->count; i++) bytes += strlen(list->items[i]) + 1;
    char **array = malloc(bytes);
    if (!array)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "recompile reasons: out of memory (%zu bytes)",
                            bytes);
    char *cursor = (char *)(array + list->count);
    for (int i = 0; i < list->count; i++) {
        size_t length = strlen(list->items[i]) + 1;
        memcpy(cursor, list->items[i], length);
        array[i] = cursor;
        cursor += length;
    }
    *out = array;
    *count_out = list->count;
    return TP_OK;
}
