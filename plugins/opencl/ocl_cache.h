/* Building OpenCL programs through the plugins' shared disk cache
 * (plugins/common/tpcommon_cache.h: folder and entry rules, environment
 * through host->getenv), subfolder opencl/. The key holds the plugin and
 * core versions, platform, device, driver version, build options and the
 * program source; an entry the driver refuses is a miss and is rewritten. When the OpenCL compiler
 * rejects generated code the error holds the build log and the path of the source, written next to
 * the cache entries. */
#ifndef TP_OPENCL_CACHE_H
#define TP_OPENCL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "ocl_device.h"
#include "tensorplay/plugin.h"

typedef struct ocl_build_info {
    bool cache_hit;
    char entry_path[1024]; /* the cache file ("" when caching is off) */
} ocl_build_info;

/* Builds `source` for `device` (from the cache when possible). */
int ocl_program_build(ocl_device *device, const char *source, cl_program *out, ocl_build_info *info,
                      char *error, size_t error_size);

/* The host whose getenv and log the cache uses (set by init; NULL: no cache). */
void ocl_cache_use_host(const tp_plugin_host *host);

#endif
