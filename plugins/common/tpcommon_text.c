/* plugins/common — the string buffer, error text, kernel names and hashing
 * declared in tpcommon_text.h. */
#include "tpcommon_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tpcommon_buf_init(tpcommon_buf *buf) {
    memset(buf, 0, sizeof *buf);
}

void tpcommon_buf_free(tpcommon_buf *buf) {
    free(buf->data);
    tpcommon_buf_init(buf);
}

static bool reserve(tpcommon_buf *buf, size_t extra) {
    if (buf->failed) return false;
    size_t need = buf->length + extra + 1;
    if (need <= buf->capacity) return true;
    size_t capacity = buf->capacity ? buf->capacity : 4096;
    while (capacity < need) capacity *= 2;
    char *data = realloc(buf->data, capacity);
    if (!data) {
        buf->failed = true;
        return false;
    }
    buf->data = data;
    buf->capacity = capacity;
    return true;
}

void tpcommon_buf_append(tpcommon_buf *buf, const char *text) {
    size_t length = strlen(text);
    if (!reserve(buf, length)) return;
    memcpy(buf->data + buf->length, text, length + 1);
    buf->length += length;
}

/* Formats straight into the free space and only formats again when the text
 * did not fit: emitting a module's IR is thousands of these, and measuring
 * each line first doubled the time (6 ms for the matmul library's IR). */
void tpcommon_buf_vprintf(tpcommon_buf *buf, const char *format, va_list args) {
    if (!reserve(buf, 256)) return;
    size_t room = buf->capacity - buf->length;
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(buf->data + buf->length, room, format, copy);
    va_end(copy);
    if (length < 0) {
        buf->data[buf->length] = '\0';
        buf->failed = true;
        return;
    }
    if ((size_t)length >= room) {
        buf->data[buf->length] = '\0';
        if (!reserve(buf, (size_t)length)) return;
        vsnprintf(buf->data + buf->length, (size_t)length + 1, format, args);
    }
    buf->length += (size_t)length;
}

void tpcommon_buf_printf(tpcommon_buf *buf, const char *format, ...) {
    va_list args;
    va_start(args, format);
    tpcommon_buf_vprintf(buf, format, args);
    va_end(args);
}

char *tpcommon_buf_take(tpcommon_buf *buf) {
    if (buf->failed || !reserve(buf, 0)) {
        tpcommon_buf_free(buf);
        return NULL;
    }
    char *data = buf->data;
    tpcommon_buf_init(buf);
    return data;
}

int32_t tpcommon_verror(char *error, size_t size, const char *format, va_list args) {
    if (error && size > 0) vsnprintf(error, size, format, args);
    return TP_PLUGIN_ERROR;
}

int32_t tpcommon_error(char *error, size_t size, const char *format, ...) {
    va_list args;
    va_start(args, format);
    tpcommon_verror(error, size, format, args);
    va_end(args);
    return TP_PLUGIN_ERROR;
}

void tpcommon_log(const tp_plugin_host *host, int32_t level, const char *format, ...) {
    if (!host || !host->log) return;
    char message[3000];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    host->log(host, level, message);
}

static void append_identifier(char *buf, size_t size, size_t *used, const char *text) {
    for (; *text && *used + 1 < size; text++) {
        char c = *text;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        buf[(*used)++] = ok ? c : '_';
    }
    buf[*used] = '\0';
}

char *tpcommon_kernel_name(const char *graph_name, int32_t region, const char *const *ops,
                           int32_t num_ops, char *buf, size_t size) {
    if (size == 0) return buf;
    size_t used = 0;
    buf[0] = '\0';
    /* room for "_r" and ten digits after the graph's name */
    size_t graph_size = size >= 32 ? size - 12 : size;
    append_identifier(buf, graph_size, &used, graph_name && *graph_name ? graph_name : "graph");
    char number[32];
    snprintf(number, sizeof number, "_r%d", (int)region);
    append_identifier(buf, size, &used, number);
    for (int32_t i = 0; i < num_ops; i++) {
        append_identifier(buf, size, &used, "_");
        append_identifier(buf, size, &used, ops[i]);
    }
    return buf;
}

uint64_t tpcommon_hash_bytes(uint64_t hash, const void *data, size_t size) {
    const unsigned char *bytes = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}
