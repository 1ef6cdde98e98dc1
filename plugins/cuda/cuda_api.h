/* The CUDA driver API and NVRTC, reached through dlopen: the few entry points
 * the cuda plugin uses, resolved at run time so that cuda.so links neither
 * libcuda nor libnvrtc (a machine without the driver still loads the plugin
 * and gets a reason instead of a loader error). The toolkit headers are used
 * for the types and prototypes only.
 *
 * Owns: finding and loading libcuda.so.1 and libnvrtc, the function tables,
 * and turning CUresult / nvrtcResult codes into text that names the call.
 * Must not touch: devices, contexts, modules (cuda_device.c owns those).
 */
#ifndef TP_PLUGIN_CUDA_API_H
#define TP_PLUGIN_CUDA_API_H

#include <stddef.h>

#include <cuda.h>
#include <nvrtc.h>

/* Driver entry points (the prototypes are the toolkit's own). */
typedef struct cuda_driver {
    void *library;
    __typeof__(cuInit) *init;
    __typeof__(cuDriverGetVersion) *driver_get_version;
    __typeof__(cuGetErrorName) *get_error_name;
    __typeof__(cuGetErrorString) *get_error_string;
    __typeof__(cuDeviceGetCount) *device_get_count;
    __typeof__(cuDeviceGet) *device_get;
    __typeof__(cuDeviceGetName) *device_get_name;
    __typeof__(cuDeviceGetAttribute) *device_get_attribute;
    __typeof__(cuDevicePrimaryCtxRetain) *primary_ctx_retain;
    __typeof__(cuDevicePrimaryCtxRelease) *primary_ctx_release;
    __typeof__(cuCtxSetCurrent) *ctx_set_current;
    __typeof__(cuMemAlloc) *mem_alloc;
    __typeof__(cuMemFree) *mem_free;
    __typeof__(cuMemcpyHtoDAsync) *memcpy_htod_async;
    __typeof__(cuMemcpyDtoHAsync) *memcpy_dtoh_async;
    __typeof__(cuMemcpyDtoDAsync) *memcpy_dtod_async;
    __typeof__(cuStreamCreate) *stream_create;
    __typeof__(cuStreamDestroy) *stream_destroy;
    __typeof__(cuStreamSynchronize) *stream_synchronize;
    __typeof__(cuModuleLoadData) *module_load_data;
    __typeof__(cuModuleUnload) *module_unload;
    __typeof__(cuModuleGetFunction) *module_get_function;
    __typeof__(cuLaunchKernel) *launch_kernel;
    /* kernel times for the core's profile (cuda_executable.c) */
    __typeof__(cuEventCreate) *event_create;
    __typeof__(cuEventRecord) *event_record;
    __typeof__(cuEventElapsedTime) *event_elapsed_time;
    __typeof__(cuEventDestroy) *event_destroy;
} cuda_driver;

/* NVRTC entry points. */
typedef struct cuda_nvrtc {
    void *library;
    char path[512]; /* what was loaded */
    __typeof__(nvrtcVersion) *version;
    __typeof__(nvrtcGetErrorString) *get_error_string;
    __typeof__(nvrtcCreateProgram) *create_program;
    __typeof__(nvrtcDestroyProgram) *destroy_program;
    __typeof__(nvrtcCompileProgram) *compile_program;
    __typeof__(nvrtcGetProgramLogSize) *get_program_log_size;
    __typeof__(nvrtcGetProgramLog) *get_program_log;
    __typeof__(nvrtcGetPTXSize) *get_ptx_size;
    __typeof__(nvrtcGetPTX) *get_ptx;
    __typeof__(nvrtcGetCUBINSize) *get_cubin_size;
    __typeof__(nvrtcGetCUBIN) *get_cubin;
} cuda_nvrtc;

/* Loads libcuda.so.1 and resolves every driver entry point (once; later
 * calls return the same table). NULL with the reason in `why` when the
 * library or a symbol is missing. Not thread-safe: call from probe/init or
 * under cuda_device's lock. */
const cuda_driver *cuda_driver_load(char *why, size_t why_size);

/* Loads NVRTC: libnvrtc.so.13, then libnvrtc.so, then libnvrtc.so.* in
 * $CUDA_HOME/lib64 and /usr/local/cuda/lib64. NULL with every place tried in
 * `why` when none loads. Thread-safe (loads once). */
const cuda_nvrtc *cuda_nvrtc_load(char *why, size_t why_size);

/* Writes "CALL: CUDA_ERROR_NAME (driver's description)" into `out`. */
void cuda_driver_error_text(const cuda_driver *driver, CUresult result, const char *call, char *out,
                            size_t out_size);

/* Unloads both libraries (plugin shutdown). */
void cuda_api_unload(void);

#endif
