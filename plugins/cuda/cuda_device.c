/* Probing and opening CUDA devices (see cuda_device.h). */
#include "cuda_device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_nvrtc.h"
#include "tensorplay/plugin.h"

#define MAX_DEVICES 16

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static cu_device devices[MAX_DEVICES];
static bool device_open[MAX_DEVICES];
static bool driver_initialised;

/* Loads the driver and runs cuInit once. Call under device_lock. */
static const cuda_driver *initialised_driver(char *why, size_t why_size) {
    const cuda_driver *driver = cuda_driver_load(why, why_size);
    if (!driver || driver_initialised) return driver;
    CUresult result = driver->init(0);
    if (result != CUDA_SUCCESS) {
        cuda_driver_error_text(driver, result, "cuInit", why, why_size);
        return NULL;
    }
    driver_initialised = true;
    return driver;
}

int cu_device_probe(char *why, size_t why_size) {
    pthread_mutex_lock(&device_lock);
    const cuda_driver *driver = initialised_driver(why, why_size);
    int count = 0;
    if (driver) {
        CUresult result = driver->device_get_count(&count);
        if (result != CUDA_SUCCESS) {
            cuda_driver_error_text(driver, result, "cuDeviceGetCount", why, why_size);
            driver = NULL;
        } else if (count == 0) {
            snprintf(why, why_size, "no CUDA device found (cuDeviceGetCount returned 0)");
            driver = NULL;
        }
    }
    pthread_mutex_unlock(&device_lock);
    if (!driver) return TP_PLUGIN_UNAVAILABLE;
    if (!cu_nvrtc_version(why, why_size)) return TP_PLUGIN_UNAVAILABLE;
    return TP_PLUGIN_OK;
}

static bool attribute(const cuda_driver *driver, CUdevice device, CUdevice_attribute which,
                      int *value, char *error, size_t error_size) {
    CUresult result = driver->device_get_attribute(value, which, device);
    if (result == CUDA_SUCCESS) return true;
    cuda_driver_error_text(driver, result, "cuDeviceGetAttribute", error, error_size);
    return false;
}

static bool open_device(const cuda_driver *driver, int ordinal, cu_device *out, char *error,
                        size_t error_size) {
    memset(out, 0, sizeof *out);
    out->driver = driver;
    out->ordinal = ordinal;
    int count = 0;
    CUresult result = driver->device_get_count(&count);
    if (result != CUDA_SUCCESS)
        return cuda_driver_error_text(driver, result, "cuDeviceGetCount", error, error_size), false;
    if (ordinal >= count) {
        snprintf(error, error_size, "device=%d: this machine has %d CUDA device%s", ordinal, count,
                 count == 1 ? "" : "s");
        return false;
    }
    result = driver->device_get(&out->device, ordinal);
    if (result != CUDA_SUCCESS)
        return cuda_driver_error_text(driver, result, "cuDeviceGet", error, error_size), false;
    if (driver->device_get_name(out->name, sizeof out->name, out->device) != CUDA_SUCCESS)
        snprintf(out->name, sizeof out->name, "device %d", ordinal);
    if (!attribute(driver, out->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out->major,
                   error, error_size) ||
        !attribute(driver, out->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out->minor,
                   error, error_size) ||
        !attribute(driver, out->device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                   &out->multiprocessors, error, error_size))
        return false;
    result = driver->driver_get_version(&out->driver_version);
    if (result != CUDA_SUCCESS)
        return cuda_driver_error_text(driver, result, "cuDriverGetVersion", error, error_size),
               false;
    result = driver->primary_ctx_retain(&out->context, out->device);
    if (result != CUDA_SUCCESS)
        return cuda_driver_error_text(driver, result, "cuDevicePrimaryCtxRetain", error,
                                      error_size),
               false;
    return true;
}

const cu_device *cu_device_get(int ordinal, char *error, size_t error_size) {
    if (ordinal < 0 || ordinal >= MAX_DEVICES) {
        snprintf(error, error_size, "device=%d is out of range (0 to %d)", ordinal,
                 MAX_DEVICES - 1);
        return NULL;
    }
    pthread_mutex_lock(&device_lock);
    const cu_device *result = device_open[ordinal] ? &devices[ordinal] : NULL;
    if (!result) {
        const cuda_driver *driver = initialised_driver(error, error_size);
        if (driver && open_device(driver, ordinal, &devices[ordinal], error, error_size)) {
            device_open[ordinal] = true;
            result = &devices[ordinal];
        }
    }
    pthread_mutex_unlock(&device_lock);
    return result;
}

bool cu_device_make_current(const cu_device *device, char *error, size_t error_size) {
    CUresult result = device->driver->ctx_set_current(device->context);
    if (result == CUDA_SUCCESS) return true;
    cuda_driver_error_text(device->driver, result, "cuCtxSetCurrent", error, error_size);
    return false;
}

void cu_device_release_all(void) {
    pthread_mutex_lock(&device_lock);
    for (int i = 0; i < MAX_DEVICES; i++) {
        if (!device_open[i]) continue;
        devices[i].driver->primary_ctx_release(devices[i].device);
        device_open[i] = false;
    }
    driver_initialised = false;
    pthread_mutex_unlock(&device_lock);
}
