/* Loading libcuda.so.1 and NVRTC with dlopen and resolving their entry
 * points; error text for driver results. See cuda_api.h. */
#define _GNU_SOURCE
#include "cuda_api.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cuda_driver driver_table;
static int driver_loaded;

static cuda_nvrtc nvrtc_table;
static int nvrtc_loaded;
static pthread_mutex_t nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolves `name` into *slot; on failure records the first missing symbol. */
static void resolve(void *library, const char *name, void **slot, const char **missing) {
    *slot = dlsym(library, name);
    if (!*slot && !*missing) *missing = name;
}

#define RESOLVE(library, table, field, name)                                                       \
    resolve(library, name, (void **)&(table).field, &missing)

const cuda_driver *cuda_driver_load(char *why, size_t why_size) {
    if (driver_loaded) return &driver_table;
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(why, why_size, "libcuda.so.1 not found (install the NVIDIA driver)");
        return NULL;
    }
    cuda_driver table = {.library = library};
    const char *missing = NULL;
    RESOLVE(library, table, init, "cuInit");
    RESOLVE(library, table, driver_get_version, "cuDriverGetVersion");
    RESOLVE(library, table, get_error_name, "cuGetErrorName");
    RESOLVE(library, table, get_error_string, "cuGetErrorString");
    RESOLVE(library, table, device_get_count, "cuDeviceGetCount");
    RESOLVE(library, table, device_get, "cuDeviceGet");
    RESOLVE(library, table, device_get_name, "cuDeviceGetName");
    RESOLVE(library, table, device_get_attribute, "cuDeviceGetAttribute");
    RESOLVE(library, table, primary_ctx_retain, "cuDevicePrimaryCtxRetain");
    RESOLVE(library, table, primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
    RESOLVE(library, table, ctx_set_current, "cuCtxSetCurrent");
    RESOLVE(library, table, mem_alloc, "cuMemAlloc_v2");
    RESOLVE(library, table, mem_free, "cuMemFree_v2");
    RESOLVE(library, table, memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
    RESOLVE(library, table, memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
    RESOLVE(library, table, memcpy_dtod_async, "cuMemcpyDtoDAsync_v2");
    RESOLVE(library, table, stream_create, "cuStreamCreate");
    RESOLVE(library, table, stream_destroy, "cuStreamDestroy_v2");
    RESOLVE(library, table, stream_synchronize, "cuStreamSynchronize");
    RESOLVE(library, table, module_load_data, "cuModuleLoadData");
    RESOLVE(library, table, module_unload, "cuModuleUnload");
    RESOLVE(library, table, module_get_function, "cuModuleGetFunction");
    RESOLVE(library, table, launch_kernel, "cuLaunchKernel");
    RESOLVE(library, table, event_create, "cuEventCreate");
    RESOLVE(library, table, event_record, "cuEventRecord");
    RESOLVE(library, table, event_elapsed_time, "cuEventElapsedTime");
    RESOLVE(library, table, event_destroy, "cuEventDestroy_v2");
    if (missing) {
        snprintf(why, why_size,
                 "libcuda.so.1 lacks %s (the NVIDIA driver is too old or not a real driver; "
                 "update it)",
                 missing);
        dlclose(library);
        return NULL;
    }
    driver_table = table;
    driver_loaded = 1;
    return &driver_table;
}

/* Tries one candidate; appends it to `tried` when it does not load. */
static void *try_nvrtc(const char *path, char *tried, size_t tried_size) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library) return library;
    size_t used = strlen(tried);
    if (used + 1 < tried_size)
        snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", path);
    return NULL;
}

/* libnvrtc.so.* in `folder`, newest name last (glob sorts). */
static void *search_folder(const char *folder, char *loaded, size_t loaded_size, char *tried,
                           size_t tried_size) {
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/libnvrtc.so*", folder);
    glob_t found;
    void *library = NULL;
    if (glob(pattern, 0, NULL, &found) == 0) {
        for (size_t i = found.gl_pathc; i-- > 0 && !library;) {
            library = try_nvrtc(found.gl_pathv[i], tried, tried_size);
            if (library) snprintf(loaded, loaded_size, "%s", found.gl_pathv[i]);
        }
        globfree(&found);
    } else {
        try_nvrtc(pattern, tried, tried_size);
    }
    return library;
}

static void *open_nvrtc(char *loaded, size_t loaded_size, char *tried, size_t tried_size) {
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *library = try_nvrtc(names[i], tried, tried_size);
        if (library) {
            snprintf(loaded, loaded_size, "%s", names[i]);
            return library;
        }
    }
    /* Loaded before any host table exists (the driver and NVRTC are found
     * at probe time); secure_getenv keeps host->getenv's rule: a privileged
     * process takes no library folder from the environment. */
    const char *home = secure_getenv("CUDA_HOME");
    char folder[400];
    if (home && *home) {
        snprintf(folder, sizeof folder, "%s/lib64", home);
        void *library = search_folder(folder, loaded, loaded_size, tried, tried_size);
        if (library) return library;
    }
    return search_folder("/usr/local/cuda/lib64", loaded, loaded_size, tried, tried_size);
}

const cuda_nvrtc *cuda_nvrtc_load(char *why, size_t why_size) {
    pthread_mutex_lock(&nvrtc_lock);
    const cuda_nvrtc *result = nvrtc_loaded ? &nvrtc_table : NULL;
    if (!result) {
        char tried[1024] = "";
        cuda_nvrtc table = {0};
        table.library = open_nvrtc(table.path, sizeof table.path, tried, sizeof tried);
        const char *missing = NULL;
        if (table.library) {
            void *library = table.library;
            RESOLVE(library, table, version, "nvrtcVersion");
            RESOLVE(library, table, get_error_string, "nvrtcGetErrorString");
            RESOLVE(library, table, create_program, "nvrtcCreateProgram");
            RESOLVE(library, table, destroy_program, "nvrtcDestroyProgram");
            RESOLVE(library, table, compile_program, "nvrtcCompileProgram");
            RESOLVE(library, table, get_program_log_size, "nvrtcGetProgramLogSize");
            RESOLVE(library, table, get_program_log, "nvrtcGetProgramLog");
            RESOLVE(library, table, get_ptx_size, "nvrtcGetPTXSize");
            RESOLVE(library, table, get_ptx, "nvrtcGetPTX");
            RESOLVE(library, table, get_cubin_size, "nvrtcGetCUBINSize");
            RESOLVE(library, table, get_cubin, "nvrtcGetCUBIN");
        }
        if (!table.library) {
            snprintf(why, why_size,
                     "NVRTC not found (tried %s): install the CUDA toolkit's NVRTC "
                     "(libnvrtc.so.13) or set CUDA_HOME to the toolkit folder",
                     tried);
        } else if (missing) {
            snprintf(why, why_size, "%s lacks %s (NVRTC older than CUDA 11.1?)", table.path,
                     missing);
            dlclose(table.library);
        } else {
            nvrtc_table = table;
            nvrtc_loaded = 1;
            result = &nvrtc_table;
        }
    }
    pthread_mutex_unlock(&nvrtc_lock);
    return result;
}

void cuda_driver_error_text(const cuda_driver *driver, CUresult result, const char *call, char *out,
                            size_t out_size) {
    const char *name = NULL, *text = NULL;
    if (driver && driver->get_error_name && driver->get_error_name(result, &name) != CUDA_SUCCESS)
        name = NULL;
    if (driver && driver->get_error_string &&
        driver->get_error_string(result, &text) != CUDA_SUCCESS)
        text = NULL;
    if (name)
        snprintf(out, out_size, "%s: %s (%s)", call, name, text ? text : "no description");
    else
        snprintf(out, out_size, "%s: CUDA error %d (unknown to this driver)", call, (int)result);
}

void cuda_api_unload(void) {
    if (driver_loaded) dlclose(driver_table.library);
    memset(&driver_table, 0, sizeof driver_table);
    driver_loaded = 0;
    pthread_mutex_lock(&nvrtc_lock);
    if (nvrtc_loaded) dlclose(nvrtc_table.library);
    memset(&nvrtc_table, 0, sizeof nvrtc_table);
    nvrtc_loaded = 0;
    pthread_mutex_unlock(&nvrtc_lock);
}
