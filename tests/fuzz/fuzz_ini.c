/* libFuzzer target for the backend registry's INI reader (inih + our schema
 * checks): any byte string either yields claims whose fields are all set
 * consistently, or problems with a message; never a crash, a leak or
 * undefined behaviour. The reader takes a path, so each input is written to
 * one temporary file first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry/registry_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char ini_path[256];

static void remove_ini(void) {
    unlink(ini_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ini_path[0]) {
        snprintf(ini_path, sizeof ini_path, "/tmp/tp-fuzz-ini-%d-XXXXXX", (int)getpid());
        int fd = mkstemp(ini_path);
        if (fd < 0) __builtin_trap();
        close(fd);
        atexit(remove_ini);
    }
    FILE *file = fopen(ini_path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) __builtin_trap();

    tp_backend **claims = NULL;
    int count = 0;
    tp_strvec problems = {0};
    if (tp_manifest_read(ini_path, &claims, &count, &problems) != TP_OK) __builtin_trap();
    for (int i = 0; i < count; i++) {
        tp_backend *claim = claims[i];
        /* Every claim names its file and line; a claim without a required
         * key is unavailable with a reason. */
        if (!claim->name || !claim->file || claim->line <= 0) __builtin_trap();
        tp_backend_free_unloaded(claim);
    }
    for (int i = 0; i < problems.count; i++)
        if (!problems.items[i] || !problems.items[i][0]) __builtin_trap();
    free(claims);
    tp_strvec_clear(&problems);
    return 0;
}
