/* OpenCL platform/device discovery, selection by option and the per-device
 * contexts (see ocl_device.h). Owns the process-wide device list; nothing
 * else here is global. */
#include "ocl_device.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_errors.h"

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001 /* cl_khr_icd: the loader found no ICD */
#endif

#define MAX_PLATFORMS 16
#define MAX_DEVICES   64

static const char no_platform_reason[] =
    "no OpenCL platform found (install an ICD such as pocl-opencl-icd or your GPU vendor's)";

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static ocl_device devices[MAX_DEVICES];
static int num_devices = -1; /* -1: not read yet */

static void read_string(cl_device_id device, cl_device_info what, char *out, size_t size) {
    out[0] = '\0';
    if (clGetDeviceInfo(device, what, size, out, NULL) != CL_SUCCESS) out[0] = '\0';
    out[size - 1] = '\0';
}

static void read_platform_string(cl_platform_id platform, cl_platform_info what, char *out,
                                 size_t size) {
    out[0] = '\0';
    if (clGetPlatformInfo(platform, what, size, out, NULL) != CL_SUCCESS) out[0] = '\0';
    out[size - 1] = '\0';
}

static void describe_device(cl_platform_id platform, cl_device_id id, ocl_device *device) {
    memset(device, 0, sizeof *device);
    device->platform = platform;
    device->id = id;
    read_platform_string(platform, CL_PLATFORM_NAME, device->platform_name,
                         sizeof device->platform_name);
    read_platform_string(platform, CL_PLATFORM_VERSION, device->platform_version,
                         sizeof device->platform_version);
    read_string(id, CL_DEVICE_NAME, device->name, sizeof device->name);
    read_string(id, CL_DRIVER_VERSION, device->driver_version, sizeof device->driver_version);
    read_string(id, CL_DEVICE_VERSION, device->version, sizeof device->version);
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof device->type, &device->type, NULL);
    cl_device_fp_config doubles = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof doubles, &doubles, NULL) !=
        CL_SUCCESS)
        doubles = 0;
    size_t extensions_size = 0;
    clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &extensions_size);
    char *extensions = calloc(extensions_size + 1, 1);
    if (extensions &&
        clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, extensions_size, extensions, NULL) == CL_SUCCESS)
        device->fp64 = strstr(extensions, "cl_khr_fp64") != NULL;
    free(extensions);
    device->fp64 = device->fp64 && doubles != 0;
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    device->unified_memory = unified == CL_TRUE;
    clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof device->max_alloc, &device->max_alloc,
                    NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof device->max_work_group,
                    &device->max_work_group, NULL);
    clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof device->local_memory,
                    &device->local_memory, NULL);
    if (device->max_work_group == 0) device->max_work_group = 1;
}

/* Reads every device of every platform into `out`; returns the count, or -1
 * with the reason in `why`. */
static int enumerate(ocl_device *out, int capacity, char *why, size_t why_size) {
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint num_platforms = 0;
    cl_int status = clGetPlatformIDs(MAX_PLATFORMS, platforms, &num_platforms);
    if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && num_platforms == 0)) {
        snprintf(why, why_size, "%s", no_platform_reason);
        return -1;
    }
    if (status != CL_SUCCESS) {
        snprintf(why, why_size, "clGetPlatformIDs failed: %s", ocl_error_name(status));
        return -1;
    }
    if (num_platforms > MAX_PLATFORMS) num_platforms = MAX_PLATFORMS;
    int count = 0;
    cl_int last_error = CL_SUCCESS;
    for (cl_uint p = 0; p < num_platforms && count < capacity; p++) {
        cl_device_id ids[MAX_DEVICES];
        cl_uint found = 0;
        status = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &found);
        if (status != CL_SUCCESS) {
            last_error = status;
            continue;
        }
        for (cl_uint d = 0; d < found && count < capacity; d++) {
            describe_device(platforms[p], ids[d], &out[count]);
            out[count].index = count;
            count++;
        }
    }
    if (count == 0) {
        snprintf(why, why_size, "%u OpenCL platform(s) found but no device (%s)", num_platforms,
                 ocl_error_name(last_error == CL_SUCCESS ? CL_DEVICE_NOT_FOUND : last_error));
        return -1;
    }
    return count;
}

int ocl_probe(char *why, size_t why_size) {
    ocl_device *scratch = calloc(MAX_DEVICES, sizeof *scratch);
    if (!scratch) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    int count = enumerate(scratch, MAX_DEVICES, why, why_size);
    free(scratch);
    return count > 0 ? 0 : -1;
}

static bool all_digits(const char *text) {
    if (!*text) return false;
    for (; *text; text++)
        if (!isdigit((unsigned char)*text)) return false;
    return true;
}

static bool contains_ignoring_case(const char *haystack, const char *needle) {
    size_t length = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < length && haystack[i] &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == length) return true;
    }
    return length == 0;
}

/* "0: NAME (PLATFORM), 1: ..." of the candidates. */
static void list_devices(const int *candidates, int count, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && used < size; i++) {
        const ocl_device *device = &devices[candidates[i]];
        int written = snprintf(out + used, size - used, "%s%d: %s (%s)", i ? ", " : "", i,
                               device->name, device->platform_name);
        if (written < 0) break;
        used += (size_t)written;
    }
}

/* The distinct platforms, in order. */
static int list_platforms(cl_platform_id *platforms) {
    int count = 0;
    for (int i = 0; i < num_devices; i++) {
        bool seen = false;
        for (int k = 0; k < count; k++) seen = seen || platforms[k] == devices[i].platform;
        if (!seen) platforms[count++] = devices[i].platform;
    }
    return count;
}

/* Narrows `candidates` to the devices of the platform option. */
static int filter_platform(const char *option, int *candidates, char *error, size_t size) {
    cl_platform_id platforms[MAX_DEVICES];
    int num_platforms = list_platforms(platforms);
    int count = 0;
    for (int i = 0; i < num_devices; i++) {
        int platform_index = 0;
        while (platforms[platform_index] != devices[i].platform) platform_index++;
        bool match = all_digits(option) ? atoi(option) == platform_index
                                        : contains_ignoring_case(devices[i].platform_name, option);
        if (match) candidates[count++] = i;
    }
    if (count > 0) return count;
    char names[1024] = "";
    size_t used = 0;
    for (int p = 0; p < num_platforms && used < sizeof names; p++) {
        char name[128];
        read_platform_string(platforms[p], CL_PLATFORM_NAME, name, sizeof name);
        int written =
            snprintf(names + used, sizeof names - used, "%s%d: %s", p ? ", " : "", p, name);
        if (written > 0) used += (size_t)written;
    }
    snprintf(error, size, "no OpenCL platform matches platform=%s (platforms: %s)", option, names);
    return 0;
}

static int load_devices(char *error, size_t size) {
    if (num_devices > 0) return 0;
    int count = enumerate(devices, MAX_DEVICES, error, size);
    if (count < 0) return -1;
    num_devices = count;
    return 0;
}

static int ensure_context(ocl_device *device, char *error, size_t size) {
    if (device->context) return 0;
    cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                          (cl_context_properties)device->platform, 0};
    cl_int status = CL_SUCCESS;
    device->context = clCreateContext(properties, 1, &device->id, NULL, NULL, &status);
    if (status == CL_SUCCESS && device->context) return 0;
    device->context = NULL;
    snprintf(error, size, "clCreateContext for device '%s' failed: %s", device->name,
             ocl_error_name(status));
    return -1;
}

static int pick(const char *platform, const char *device, ocl_device **out, char *error,
                size_t size) {
    if (load_devices(error, size) != 0) return -1;
    int candidates[MAX_DEVICES] = {0}, count = 0;
    if (platform) {
        count = filter_platform(platform, candidates, error, size);
        if (count == 0) return -1;
    } else {
        for (int i = 0; i < num_devices; i++) candidates[count++] = i;
    }
    int chosen = -1;
    if (device && all_digits(device)) {
        long index = atol(device);
        if (index < count) chosen = candidates[index];
    } else if (device) {
        for (int i = 0; i < count && chosen < 0; i++)
            if (contains_ignoring_case(devices[candidates[i]].name, device)) chosen = candidates[i];
    } else {
        for (int i = 0; i < count && chosen < 0; i++)
            if (devices[candidates[i]].type & CL_DEVICE_TYPE_GPU) chosen = candidates[i];
        if (chosen < 0) chosen = candidates[0];
    }
    if (chosen < 0) {
        char names[1024];
        list_devices(candidates, count, names, sizeof names);
        snprintf(error, size, "no OpenCL device matches device=%s (devices: %s)", device, names);
        return -1;
    }
    if (ensure_context(&devices[chosen], error, size) != 0) return -1;
    *out = &devices[chosen];
    return 0;
}

int ocl_device_select(const char *platform, const char *device, ocl_device **out, char *error,
                      size_t error_size) {
    pthread_mutex_lock(&devices_lock);
    int result = pick(platform, device, out, error, error_size);
    pthread_mutex_unlock(&devices_lock);
    return result;
}

void ocl_devices_release(void) {
    pthread_mutex_lock(&devices_lock);
    for (int i = 0; i < num_devices; i++)
        if (devices[i].context) clReleaseContext(devices[i].context);
    memset(devices, 0, sizeof devices);
    num_devices = -1;
    pthread_mutex_unlock(&devices_lock);
}
