/* NVRTC: source -> PTX or CUBIN (see cuda_nvrtc.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuda_nvrtc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"
#include "tpcommon_text.h"

/* Writes the source to a new file in /tmp (mkstemps: never through an
 * existing name or symlink) and returns its path. */
static void save_source(const char *source, char *path, size_t size) {
    snprintf(path, size, "/tmp/tensorplay-failed-XXXXXX.cu");
    int fd = mkstemps(path, 3);
    if (fd < 0) {
        snprintf(path, size, "(could not save the source)");
        return;
    }
    FILE *file = fdopen(fd, "wb");
    if (!file || fputs(source, file) < 0) snprintf(path, size, "(could not save the source)");
    if (file)
        fclose(file);
    else
        close(fd);
}

const char *cu_nvrtc_version(char *why, size_t why_size) {
    static char text[32];
    const cuda_nvrtc *nvrtc = cuda_nvrtc_load(why, why_size);
    int major = 0, minor = 0;
    if (!nvrtc || nvrtc->version(&major, &minor) != NVRTC_SUCCESS) return NULL;
    snprintf(text, sizeof text, "%d.%d", major, minor);
    return text;
}

static bool fetch_image(const cuda_nvrtc *nvrtc, nvrtcProgram program, bool cubin, char **image,
                        size_t *image_size) {
    size_t size = 0;
    nvrtcResult result =
        cubin ? nvrtc->get_cubin_size(program, &size) : nvrtc->get_ptx_size(program, &size);
    if (result != NVRTC_SUCCESS || size == 0) return false;
    *image = malloc(size + 1);
    if (!*image) return false;
    result = cubin ? nvrtc->get_cubin(program, *image) : nvrtc->get_ptx(program, *image);
    (*image)[size] = '\0';
    *image_size = size;
    return result == NVRTC_SUCCESS;
}

bool cu_nvrtc_compile(const char *source, const char *name, const char *arch, char **image,
                      size_t *image_size, char *error, size_t error_size) {
    *image = NULL;
    *image_size = 0;
    const cuda_nvrtc *nvrtc = cuda_nvrtc_load(error, error_size);
    if (!nvrtc) return false;
    nvrtcProgram program;
    nvrtcResult result = nvrtc->create_program(&program, source, "tensorplay.cu", 0, NULL, NULL);
    if (result != NVRTC_SUCCESS) {
        snprintf(error, error_size, "nvrtcCreateProgram for graph '%s': %s", name,
                 nvrtc->get_error_string(result));
        return false;
    }
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
    const char *options[] = {arch_option, "--std=c++17"};
    result = nvrtc->compile_program(program, 2, options);
    bool cubin = strncmp(arch, "sm_", 3) == 0;
    bool ok = result == NVRTC_SUCCESS && fetch_image(nvrtc, program, cubin, image, image_size);
    if (!ok) {
        size_t log_size = 0;
        char *log = NULL;
        if (nvrtc->get_program_log_size(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            log = malloc(log_size);
            if (log && nvrtc->get_program_log(program, log) != NVRTC_SUCCESS) log[0] = '\0';
        }
        char path[4096];
        save_source(source, path, sizeof path);
        snprintf(error, error_size,
                 "NVRTC could not compile the CUDA C generated for graph '%s' (%s, source saved "
                 "to %s): %s\n%s",
                 name, arch, path,
                 result != NVRTC_SUCCESS ? nvrtc->get_error_string(result) : "no image produced",
                 log ? log : "(no log)");
        free(log);
        free(*image);
        *image = NULL;
    }
    nvrtc->destroy_program(&program);
    return ok;
}
