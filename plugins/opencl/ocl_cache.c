/* OpenCL program building through the plugins' shared disk cache
 * (plugins/common/tpcommon_cache.c, subfolder opencl/): owns the cache key
 * (plugin and core versions, platform, device, driver, build options,
 * source) and turning an entry back into a program. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ocl_cache.h"

#include <fcntl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl_errors.h"
#include "tpcommon_cache.h"
#include "tpcommon_text.h"

static const char build_options[] = "";
static _Atomic(const tp_plugin_host *) cache_host;

void ocl_cache_use_host(const tp_plugin_host *host) {
    atomic_store(&cache_host, host);
}

/* The full cache key: plugin and core versions, platform, device, driver
 * and build options, then the program source (caller frees). */
static char *entry_key(const ocl_device *device, const char *source) {
    const tp_plugin_host *host = atomic_load(&cache_host);
    tpcommon_buf key;
    tpcommon_buf_init(&key);
    tpcommon_buf_printf(&key,
                        "opencl %s; core %s; platform %s %s; device %s %s; driver %s; options "
                        "'%s'\n",
                        OCL_PLUGIN_VERSION, host && host->core_version ? host->core_version : "?",
                        device->platform_name, device->platform_version, device->name,
                        device->version, device->driver_version, build_options);
    tpcommon_buf_append(&key, source);
    return tpcommon_buf_take(&key);
}

static cl_program from_binary(ocl_device *device, const unsigned char *binary, size_t size) {
    cl_int status = CL_SUCCESS, binary_status = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(device->context, 1, &device->id, &size, &binary,
                                                   &binary_status, &status);
    if (status != CL_SUCCESS || binary_status != CL_SUCCESS || !program) {
        if (program) clReleaseProgram(program);
        return NULL;
    }
    if (clBuildProgram(program, 1, &device->id, build_options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(program);
        return NULL;
    }
    return program;
}

static void store_binary(cl_program program, const tpcommon_cache *cache, const char *key) {
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
            CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *binary = malloc(size);
    if (binary &&
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS)
        tpcommon_cache_write(cache, key, binary, size);
    free(binary);
}

/* The build log's tail that fits in `size` bytes. */
static void build_log(ocl_device *device, cl_program program, char *out, size_t size) {
    size_t length = 0;
    out[0] = '\0';
    clGetProgramBuildInfo(program, device->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &length);
    char *log = calloc(length + 1, 1);
    if (!log) return;
    if (clGetProgramBuildInfo(program, device->id, CL_PROGRAM_BUILD_LOG, length, log, NULL) ==
        CL_SUCCESS) {
        size_t used = strlen(log);
        const char *tail = used >= size ? log + used - (size - 1) : log;
        snprintf(out, size, "%s", tail);
    }
    free(log);
}

/* Writes the rejected source next to the cache entries (the checked cache
 * folder, never through a symlink), else to a new file in /tmp (mkstemps). */
static void write_source(const char *folder, const char *key, const char *source, char *path,
                         size_t size) {
    int fd;
    if (folder[0]) {
        snprintf(path, size, "%s/%s.cl", folder, key);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    } else {
        snprintf(path, size, "/tmp/tensorplay-failed-XXXXXX.cl");
        fd = mkstemps(path, 3);
    }
    FILE *file = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!file || fputs(source, file) < 0) snprintf(path, size, "(could not write the source)");
    if (file)
        fclose(file);
    else if (fd >= 0)
        close(fd);
}

static int build_from_source(ocl_device *device, const char *source, const char *folder,
                             const char *key, cl_program *out, char *error, size_t error_size) {
    cl_int status = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(device->context, 1, &source, NULL, &status);
    if (status != CL_SUCCESS || !program) {
        snprintf(error, error_size, "clCreateProgramWithSource failed: %s", ocl_error_name(status));
        return -1;
    }
    status = clBuildProgram(program, 1, &device->id, build_options, NULL, NULL);
    if (status == CL_SUCCESS) {
        *out = program;
        return 0;
    }
    char source_path[2300], log[1400];
    write_source(folder, key, source, source_path, sizeof source_path);
    build_log(device, program, log, sizeof log);
    clReleaseProgram(program);
    snprintf(error, error_size,
             "the OpenCL compiler of device '%s' rejected the generated program (%s); generated "
             "source: %s; build log:\n%s",
             device->name, ocl_error_name(status), source_path, log);
    return -1;
}

int ocl_program_build(ocl_device *device, const char *source, cl_program *out, ocl_build_info *info,
                      char *error, size_t error_size) {
    info->cache_hit = false;
    info->entry_path[0] = '\0';
    tpcommon_cache cache;
    bool cached = tpcommon_cache_open(&cache, atomic_load(&cache_host), "opencl");
    char *key = entry_key(device, source);
    if (!key) {
        tpcommon_error(error, error_size, "opencl: out of memory building a cache key");
        return -1;
    }
    char name[33];
    snprintf(name, sizeof name, "%016llx",
             (unsigned long long)tpcommon_hash_bytes(TPCOMMON_HASH_SEED, key, strlen(key)));
    if (cached) {
        tpcommon_cache_entry_path(&cache, key, info->entry_path, sizeof info->entry_path);
        size_t size = 0;
        unsigned char *binary = tpcommon_cache_read(&cache, key, &size);
        cl_program program = binary ? from_binary(device, binary, size) : NULL;
        free(binary);
        if (program) {
            info->cache_hit = true;
            *out = program;
            free(key);
            return 0;
        }
    }
    int result =
        build_from_source(device, source, cached ? cache.folder : "", name, out, error, error_size);
    if (result == 0 && cached) store_binary(*out, &cache, key);
    free(key);
    return result;
}
