/* The CUDA device the plugin runs on: probing the driver (never crashing,
 * always a reason), initialising it once, the device's primary context and
 * what code generation needs to know about it. Owns the process-wide device
 * state, guarded by one lock. */
#ifndef TP_PLUGIN_CUDA_DEVICE_H
#define TP_PLUGIN_CUDA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "cuda_api.h"

typedef struct cu_device {
    const cuda_driver *driver;
    int ordinal;
    CUdevice device;
    CUcontext context; /* the primary context, retained */
    int major, minor;  /* compute capability */
    int multiprocessors;
    int driver_version; /* e.g. 13000 */
    char name[128];
} cu_device;

/* TP_PLUGIN_OK, or TP_PLUGIN_UNAVAILABLE with the reason: libcuda.so.1
 * missing, cuInit failing (by its error name: a stub library, no device),
 * no device, NVRTC missing. */
int cu_device_probe(char *why, size_t why_size);

/* The device `ordinal`, initialised on first use (primary context retained).
 * NULL with the reason in `error`. Thread-safe. */
const cu_device *cu_device_get(int ordinal, char *error, size_t error_size);

/* Makes the device's context current on the calling thread. */
bool cu_device_make_current(const cu_device *device, char *error, size_t error_size);

/* Releases the primary contexts (shutdown). */
void cu_device_release_all(void);

#endif
