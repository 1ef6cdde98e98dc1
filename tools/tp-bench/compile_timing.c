/* tp-bench — a backend's compile time measured both ways a user meets it:
 * cold (a first compile on a machine whose disk cache does not hold the
 * graph) and from the disk cache (a later process compiling the same graph).
 * A run's figure used to be whichever of the two the user's cache happened
 * to give; here both come from a folder of their own, whatever the user's
 * cache holds. */
#define _GNU_SOURCE
#include "compile_timing.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void restore_cache_dir(char *saved) {
    if (saved)
        setenv("TP_CACHE_DIR", saved, 1);
    else
        unsetenv("TP_CACHE_DIR");
    free(saved);
}

tp_status bench_compile_cold_and_from_disk(tp_backend *backend, const tp_graph *graph,
                                           tp_tensor *const *inputs, int num_inputs,
                                           const char *const *options, int num_options,
                                           tp_executable **out, bench_compile_times *times) {
    *out = NULL;
    times->cold_s = times->disk_s = -1;
    char folder[] = "/tmp/tp-bench-compile-XXXXXX"; /* mode 0700: the cache accepts it */
    if (!mkdtemp(folder)) {
        perror("tp-bench: a temporary cache folder for the compile times");
        return TP_ERR_IO;
    }
    const char *previous = getenv("TP_CACHE_DIR");
    char *saved = previous ? strdup(previous) : NULL;
    setenv("TP_CACHE_DIR", folder, 1);
    tp_executable *first = NULL;
    double t0 = bench_now();
    tp_status status =
        tp_backend_compile(backend, graph, inputs, num_inputs, options, num_options, &first);
    times->cold_s = bench_now() - t0;
    tp_executable_destroy(first); /* its modules leave memory: the next compile reads the disk */
    if (status == TP_OK) {
        t0 = bench_now();
        status = tp_backend_compile(backend, graph, inputs, num_inputs, options, num_options, out);
        times->disk_s = bench_now() - t0;
    }
    restore_cache_dir(saved);
    nftw(folder, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return status;
}
