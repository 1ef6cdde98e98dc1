/* A backend's compile time, cold and from the disk cache (see compile_timing.c). */
#ifndef TP_BENCH_COMPILE_TIMING_H
#define TP_BENCH_COMPILE_TIMING_H

#include <stdbool.h>

#include "tensorplay/tensorplay.h"

typedef struct bench_compile_times {
    double cold_s; /* an empty disk cache: every kernel compiled */
    double disk_s; /* the same compile again, its objects read from the disk cache */
} bench_compile_times;

/* Compiles `graph` on `backend` twice in a disk cache folder of its own:
 * first into the empty folder (cold), then, after the first executable is
 * destroyed (so no module is left in memory), again from the entries the
 * first compile wrote. *out is the second executable. The caller's
 * TP_CACHE_DIR is restored afterwards and the folder removed. */
tp_status bench_compile_cold_and_from_disk(tp_backend *backend, const tp_graph *graph,
                                           tp_tensor *const *inputs, int num_inputs,
                                           const char *const *options, int num_options,
                                           tp_executable **out, bench_compile_times *times);

#endif
