/* Building OpenCL programs through the on-disk binary cache.
 *
 * Entries live in TP_CACHE_DIR (default $XDG_CACHE_HOME/tensorplay, else
 * ~/.cache/tensorplay) under opencl/, keyed by a 128-bit hash of the
 * platform, device, driver version, build options and the program source.
 * Writes are atomic (temporary file + rename); an unreadable or corrupt
 * entry (bad magic, size or checksum, or a binary the driver refuses) is a
 * miss and is rewritten. When the OpenCL compiler rejects generated code the
 * error holds the build log and the path of the source, written next to the
 * cache entries. */
#ifndef TP_OPENCL_CACHE_H
#define TP_OPENCL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "ocl_device.h"

typedef struct ocl_build_info {
    bool cache_hit;
    char entry_path[1024]; /* the cache file ("" when caching is off) */
} ocl_build_info;

/* Builds `source` for `device` (from the cache when possible). */
int ocl_program_build(ocl_device *device, const char *source, cl_program *out, ocl_build_info *info,
                      char *error, size_t error_size);

/* The cache folder for OpenCL entries (created if missing); "" when none can
 * be made. Writes into `out`. */
void ocl_cache_dir(char *out, size_t size);

#endif
