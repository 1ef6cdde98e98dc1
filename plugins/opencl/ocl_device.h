/* OpenCL platforms and devices: probing, the platform=/device= options and
 * one context per device, shared by every executable on that device. The
 * device list is read once (under a lock) and kept until shutdown. */
#ifndef TP_OPENCL_DEVICE_H
#define TP_OPENCL_DEVICE_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ocl_device {
    cl_platform_id platform;
    cl_device_id id;
    int index; /* in the list of all devices, platform by platform */
    char platform_name[128], platform_version[128];
    char name[128], driver_version[128], version[128];
    cl_device_type type;
    bool fp64;           /* cl_khr_fp64 (or an OpenCL 1.2+ double fp config) */
    bool unified_memory; /* CL_DEVICE_HOST_UNIFIED_MEMORY */
    cl_ulong max_alloc;  /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    size_t max_work_group;
    cl_ulong local_memory;
    cl_context context; /* created on first selection */
} ocl_device;

/* 0 when some platform has a device; otherwise writes the explained reason
 * ("no OpenCL platform found (install ...)" or the CL_* error by name). */
int ocl_probe(char *why, size_t why_size);

/* Picks the device for the platform= and device= option values (NULL when
 * not given): an index, or a case-insensitive substring of the name.
 * Without device=, the first GPU, else the first device. On failure writes
 * what did not match and what is there. The device stays valid until
 * ocl_devices_release. */
int ocl_device_select(const char *platform, const char *device, ocl_device **out, char *error,
                      size_t error_size);

/* Releases every context and forgets the device list (shutdown). */
void ocl_devices_release(void);

#endif
