/* A stand-in libcuda.so.1 for the unavailable-path tests: every entry point
 * the cuda plugin resolves exists, cuInit fails with CUDA_ERROR_STUB_LIBRARY
 * (34) as the toolkit's stub library does on a machine without the driver.
 * Built as tests/cuda/fake-driver/libcuda.so.1 in the build tree; never
 * installed. */
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuInit(unsigned flags) {
    (void)flags;
    return 34;
}

EXPORT int cuGetErrorName(int error, const char **name) {
    *name = error == 34 ? "CUDA_ERROR_STUB_LIBRARY" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

EXPORT int cuGetErrorString(int error, const char **text) {
    *text = error == 34 ? "CUDA driver is a stub library" : "unknown error";
    return 0;
}

/* The rest only have to exist; the plugin never gets past cuInit. */
#define STUB(name)                                                                                 \
    EXPORT int name(void) {                                                                        \
        return 999;                                                                                \
    }
STUB(cuDriverGetVersion)
STUB(cuDeviceGetCount)
STUB(cuDeviceGet)
STUB(cuDeviceGetName)
STUB(cuDeviceGetAttribute)
STUB(cuDevicePrimaryCtxRetain)
STUB(cuDevicePrimaryCtxRelease_v2)
STUB(cuCtxSetCurrent)
STUB(cuMemAlloc_v2)
STUB(cuMemFree_v2)
STUB(cuMemcpyHtoDAsync_v2)
STUB(cuMemcpyDtoHAsync_v2)
STUB(cuMemcpyDtoDAsync_v2)
STUB(cuStreamCreate)
STUB(cuStreamDestroy_v2)
STUB(cuStreamSynchronize)
STUB(cuModuleLoadData)
STUB(cuModuleUnload)
STUB(cuModuleGetFunction)
STUB(cuLaunchKernel)
STUB(cuEventCreate)
STUB(cuEventRecord)
STUB(cuEventElapsedTime)
STUB(cuEventDestroy_v2)
