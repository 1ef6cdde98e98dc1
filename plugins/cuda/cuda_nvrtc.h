/* Compiling generated CUDA C with NVRTC. Owns: the NVRTC call sequence, the
 * compile log, and saving the source of a failed compile where the user can
 * read it (the error names that file). */
#ifndef TP_PLUGIN_CUDA_NVRTC_H
#define TP_PLUGIN_CUDA_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

/* Compiles `source` for `arch`: "compute_XY" gives PTX, "sm_XY" a CUBIN.
 * On success *image (caller frees) holds the PTX text (NUL-terminated) or
 * the CUBIN, *image_size its size. On failure writes what failed into
 * `error`: NVRTC's own error, its compile log and the path of the saved
 * source. `name` names the program (the graph) in messages. */
bool cu_nvrtc_compile(const char *source, const char *name, const char *arch, char **image,
                      size_t *image_size, char *error, size_t error_size);

/* "MAJOR.MINOR" of the loaded NVRTC, or NULL (with the reason) if none. */
const char *cu_nvrtc_version(char *why, size_t why_size);

#endif
