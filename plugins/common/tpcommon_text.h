/* plugins/common — text: a growable string buffer for generated source (LLVM
 * IR, OpenCL C, CUDA C), the error-text helper every plugin entry point uses,
 * and kernel naming. Built only on the C library. */
#ifndef TPCOMMON_TEXT_H
#define TPCOMMON_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* A NUL-terminated growable string. An allocation failure is sticky
 * (`failed`) and makes later appends no-ops, so emitters check once. */
typedef struct tpcommon_buf {
    char *data;
    size_t length, capacity;
    bool failed;
} tpcommon_buf;

void tpcommon_buf_init(tpcommon_buf *buf);
void tpcommon_buf_free(tpcommon_buf *buf);
void tpcommon_buf_append(tpcommon_buf *buf, const char *text);
__attribute__((format(printf, 2, 3))) void tpcommon_buf_printf(tpcommon_buf *buf,
                                                               const char *format, ...);
void tpcommon_buf_vprintf(tpcommon_buf *buf, const char *format, va_list args);
/* Takes the string (caller frees); the buffer is left empty. NULL if failed. */
char *tpcommon_buf_take(tpcommon_buf *buf);

/* Writes a formatted message into error[0..size) (always NUL-terminated when
 * size > 0) and returns TP_PLUGIN_ERROR, so `return tpcommon_error(...)` reads as
 * the failure it is. */
__attribute__((format(printf, 3, 4))) int32_t tpcommon_error(char *error, size_t size,
                                                             const char *format, ...);
int32_t tpcommon_verror(char *error, size_t size, const char *format, va_list args);

/* Formats a message (at most 3000 bytes; longer ones are cut) and hands it to
 * the host's log at `level`; nothing when the host has no log. */
__attribute__((format(printf, 3, 4))) void tpcommon_log(const tp_plugin_host *host, int32_t level,
                                                        const char *format, ...);

/* Kernel name for a region: "<graph>_r<region>_<op>[_<op>...]", only
 * [A-Za-z0-9_], at most size-1 characters. `ops` are the member op names in
 * order. A long graph name is shortened first, so that "_r<region>" (what
 * keeps the names of one graph apart) is always kept when size >= 32. */
char *tpcommon_kernel_name(const char *graph_name, int32_t region, const char *const *ops,
                           int32_t num_ops, char *buf, size_t size);

/* 64-bit FNV-1a over bytes, continuing from `hash` (start with TPCOMMON_HASH_SEED). */
#define TPCOMMON_HASH_SEED 1469598103934665603ull
uint64_t tpcommon_hash_bytes(uint64_t hash, const void *data, size_t size);

#endif
