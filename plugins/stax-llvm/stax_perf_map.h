/* stax-llvm — JIT code named for perf through /tmp/perf-PID.map
 * (STAX_PERF_MAP=on; stax_perf_map.c). */
#ifndef STAX_PERF_MAP_H
#define STAX_PERF_MAP_H

#include <llvm-c/LLJIT.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* Reads STAX_PERF_MAP: `on` sets *on; unset, empty or `off` clears it; any
 * other value is an error naming the variable. */
int32_t stax_perf_map_setting(const tp_plugin_host *host, bool *on, char *error, size_t size);
/* The map file of this process: /tmp/perf-PID.map. */
void stax_perf_map_path(char *path, size_t size);
/* Appends a line for every function of `object`, just linked into `jit`,
 * whose exported names start with `prefix` (the module's "kKEY"). Best
 * effort: a map that cannot be written is skipped silently. */
void stax_perf_map_add(LLVMOrcLLJITRef jit, const char *prefix, const void *object,
                       size_t object_size);

#endif
