/* plugins/common — the disk cache every plugin keeps its compiled code in
 * (stax objects, OpenCL binaries, CUDA CUBINs). Built only on plugin.h and
 * the C library; the environment is read through host->getenv, so a
 * privileged process (where it returns NULL) has no cache.
 *
 * Folder: $TP_CACHE_DIR ("off": no cache), else $XDG_CACHE_HOME/tensorplay,
 * else $HOME/.cache/tensorplay; each plugin uses its own subfolder. The
 * folder (and the one above it) must be a folder owned by the user and not
 * writable by others, else the cache is not used and the reason is logged.
 *
 * An entry stores its FULL key next to the payload: a file copied under
 * another name, or a hash collision, is a miss. Entries are opened with
 * O_NOFOLLOW | O_NONBLOCK (a symlink or a FIFO is a miss, never a hang) and
 * must be regular files owned by the user and writable by nobody else.
 * Writes are atomic (temporary file in the folder + rename). Every failure
 * is a miss, never an error. */
#ifndef TPCOMMON_CACHE_H
#define TPCOMMON_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "tensorplay/plugin.h"

typedef struct tpcommon_cache {
    char folder[2048]; /* "" when the cache is not used */
    const tp_plugin_host *host;
} tpcommon_cache;

/* Finds, creates (mode 0700) and checks the folder for `subfolder`. False
 * when there is no usable cache (then read misses and write does nothing);
 * a folder refused for its owner or mode is logged as a warning. */
bool tpcommon_cache_open(tpcommon_cache *cache, const tp_plugin_host *host, const char *subfolder);

/* The payload stored under `key` (caller frees), or NULL: a miss. */
void *tpcommon_cache_read(const tpcommon_cache *cache, const char *key, size_t *size);

/* Stores `data` under `key`; false (and nothing half-written) on failure. */
bool tpcommon_cache_write(const tpcommon_cache *cache, const char *key, const void *data,
                          size_t size);

/* The entry's file path for `key` in the cache folder (for messages). */
void tpcommon_cache_entry_path(const tpcommon_cache *cache, const char *key, char *out,
                               size_t size);

/* Checks the bytes of an entry file: true when they are a complete entry for
 * exactly `key`, with the payload at bytes[*payload_offset..+*payload_size). */
bool tpcommon_cache_entry_parse(const void *bytes, size_t size, const char *key,
                                size_t *payload_offset, size_t *payload_size);

/* Why the bytes of an entry file are not a complete entry for exactly
 * `key` (a short phrase: "truncated ...", "made for another key", ...), or
 * NULL when they are (then as tpcommon_cache_entry_parse). */
const char *tpcommon_cache_entry_problem(const void *bytes, size_t size, const char *key,
                                         size_t *payload_offset, size_t *payload_size);

/* The key an entry's bytes say they hold (not NUL-terminated: *key_size
 * bytes), or NULL when the bytes are no entry; for messages. */
const char *tpcommon_cache_entry_stored_key(const void *bytes, size_t size, size_t *key_size);

/* Writes an entry file for `key` at `path` (atomic: temporary file + rename),
 * with permissions `mode` (0600 in the cache, 0644 for files shipped with a
 * plugin); false (and nothing half-written) on failure. */
bool tpcommon_cache_write_file(const char *path, const char *key, const void *data, size_t size,
                               unsigned mode);

/* Text identifying the CPU for cache keys: /proc/cpuinfo's first
 * "model name" and "flags" lines ("" when unreadable). */
void tpcommon_cache_cpu_identity(char *out, size_t size);

#endif
