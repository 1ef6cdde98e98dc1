/* The cuda plugin's disk cache of compiled CUBINs (DESIGN section 8): one
 * file per key under $TP_CACHE_DIR/cuda (default
 * $XDG_CACHE_HOME/tensorplay/cuda, then ~/.cache/tensorplay/cuda). Keys
 * hash the generated source, the target (sm_XY), the driver and NVRTC
 * versions and the plugin version. Writes are atomic (temporary file in the
 * same folder + rename); an entry whose header, size or checksum is wrong is
 * a miss and is removed, never a crash. Plain C library and plugins/common's
 * hash only, so the tests compile it in directly. */
#ifndef TP_PLUGIN_CUDA_CACHE_H
#define TP_PLUGIN_CUDA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cache folder, created (with parents) if needed. False when no folder
 * can be made (then the cache is simply not used). */
bool cu_cache_folder(char *out, size_t size);

/* The payload stored under `key` (caller frees), or NULL on a miss. */
void *cu_cache_load(const char *folder, const char *key, size_t *size);

/* Stores the payload under `key`; false (and nothing half-written) on error. */
bool cu_cache_store(const char *folder, const char *key, const void *data, size_t size);

#endif
