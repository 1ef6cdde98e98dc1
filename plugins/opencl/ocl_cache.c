/* The OpenCL program binary cache and program building (see ocl_cache.h).
 * Owns the entry file format:
 *   8 bytes "TPOCLB01", u64 payload size, u64 payload checksum, payload
 * (the device binary). Owns nothing else. */
#include "ocl_cache.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl_errors.h"

static const char entry_magic[8] = {'T', 'P', 'O', 'C', 'L', 'B', '0', '1'};
#define HEADER_SIZE 24
static const char build_options[] = "";

/* FNV-1a over the bytes, finished with a 64-bit mixer. */
static uint64_t hash_bytes(uint64_t seed, const void *data, size_t size) {
    const unsigned char *bytes = data;
    uint64_t hash = seed;
    for (size_t i = 0; i < size; i++) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ULL;
    }
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    return hash;
}

static uint64_t hash_string(uint64_t seed, const char *text) {
    return hash_bytes(seed, text, strlen(text) + 1); /* with the NUL: fields stay apart */
}

static void entry_key(const ocl_device *device, const char *source, char out[33]) {
    uint64_t halves[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
    for (int h = 0; h < 2; h++) {
        const char *fields[] = {device->platform_name,
                                device->platform_version,
                                device->name,
                                device->version,
                                device->driver_version,
                                build_options,
                                source};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            halves[h] = hash_string(halves[h], fields[f]);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)halves[0],
             (unsigned long long)halves[1]);
}

static int make_folders(char *path) {
    for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash) *slash = '\0';
        int result = mkdir(path, 0700);
        if (slash) *slash = '/';
        if (result != 0 && errno != EEXIST) return -1;
        if (!slash) return 0;
    }
}

void ocl_cache_dir(char *out, size_t size) {
    const char *root = getenv("TP_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (root && *root)
        snprintf(out, size, "%s/opencl", root);
    else if (xdg && *xdg)
        snprintf(out, size, "%s/tensorplay/opencl", xdg);
    else if (home && *home)
        snprintf(out, size, "%s/.cache/tensorplay/opencl", home);
    else
        out[0] = '\0';
    if (out[0] && make_folders(out) != 0) out[0] = '\0';
}

/* The payload of a valid entry (caller frees), or NULL: a miss. */
static unsigned char *read_entry(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    unsigned char header[HEADER_SIZE];
    unsigned char *payload = NULL;
    uint64_t length = 0, checksum = 0;
    if (fread(header, 1, HEADER_SIZE, file) == HEADER_SIZE &&
        memcmp(header, entry_magic, sizeof entry_magic) == 0) {
        memcpy(&length, header + 8, 8);
        memcpy(&checksum, header + 16, 8);
        if (length > 0 && length < ((uint64_t)1 << 32)) payload = malloc((size_t)length + 1);
    }
    if (payload) {
        bool complete = fread(payload, 1, (size_t)length, file) == length && fgetc(file) == EOF;
        if (!complete || hash_bytes(0, payload, (size_t)length) != checksum) {
            free(payload);
            payload = NULL;
        }
    }
    fclose(file);
    *size = (size_t)length;
    return payload;
}

/* Temporary file in the same folder + rename: readers see all or nothing. */
static void write_entry(const char *path, const unsigned char *payload, size_t size) {
    static atomic_uint counter;
    char temporary[1100];
    snprintf(temporary, sizeof temporary, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&counter, 1));
    FILE *file = fopen(temporary, "wb");
    if (!file) return;
    unsigned char header[HEADER_SIZE];
    uint64_t length = size, checksum = hash_bytes(0, payload, size);
    memcpy(header, entry_magic, 8);
    memcpy(header + 8, &length, 8);
    memcpy(header + 16, &checksum, 8);
    bool ok = fwrite(header, 1, HEADER_SIZE, file) == HEADER_SIZE &&
              fwrite(payload, 1, size, file) == size;
    ok = fclose(file) == 0 && ok;
    if (!ok || rename(temporary, path) != 0) remove(temporary);
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

static void store_binary(cl_program program, const char *path) {
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
            CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *binary = malloc(size);
    if (binary &&
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS)
        write_entry(path, binary, size);
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

static void write_source(const char *folder, const char *key, const char *source, char *path,
                         size_t size) {
    char fallback[64];
    if (!folder[0]) {
        snprintf(fallback, sizeof fallback, "/tmp");
        folder = fallback;
    }
    snprintf(path, size, "%s/%s.cl", folder, key);
    FILE *file = fopen(path, "w");
    if (!file || fputs(source, file) < 0) snprintf(path, size, "(could not write the source)");
    if (file) fclose(file);
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
    char source_path[1100], log[1400];
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
    char folder[900], key[33];
    ocl_cache_dir(folder, sizeof folder);
    entry_key(device, source, key);
    info->cache_hit = false;
    info->entry_path[0] = '\0';
    if (folder[0]) {
        snprintf(info->entry_path, sizeof info->entry_path, "%s/%s.bin", folder, key);
        size_t size = 0;
        unsigned char *binary = read_entry(info->entry_path, &size);
        cl_program program = binary ? from_binary(device, binary, size) : NULL;
        free(binary);
        if (program) {
            info->cache_hit = true;
            *out = program;
            return 0;
        }
    }
    if (build_from_source(device, source, folder, key, out, error, error_size) != 0) return -1;
    if (info->entry_path[0]) store_binary(*out, info->entry_path);
    return 0;
}
