/* libFuzzer target for the plugins' disk cache entry reader
 * (plugins/common/tpcommon_cache.c): any bytes in an entry file are either
 * exactly the entry for the key asked for (a payload inside the file) or a
 * miss; never a crash, a leak, a read outside the file or undefined
 * behaviour. The input is both parsed in memory and read back from a cache
 * folder through tpcommon_cache_read, and the two must agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpcommon_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_key[] = "fuzz key: stax 0.1.0; cpu test\nIR text";
static char cache_root[256];
static tpcommon_cache cache;

static const char *fuzz_getenv(const char *name) {
    return strcmp(name, "TP_CACHE_DIR") == 0 ? cache_root : NULL;
}

static void remove_cache(void) {
    char path[2300];
    tpcommon_cache_entry_path(&cache, fuzz_key, path, sizeof path);
    unlink(path);
    rmdir(cache.folder);
    rmdir(cache_root);
}

static tp_plugin_host host = {.getenv = fuzz_getenv};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!cache_root[0]) {
        snprintf(cache_root, sizeof cache_root, "/tmp/tp-fuzz-cache-%d-XXXXXX", (int)getpid());
        if (!mkdtemp(cache_root) || !tpcommon_cache_open(&cache, &host, "fuzz")) __builtin_trap();
        atexit(remove_cache);
    }
    size_t offset = 0, payload_size = 0;
    bool parsed = tpcommon_cache_entry_parse(data, size, fuzz_key, &offset, &payload_size);
    if (parsed && (offset > size || payload_size > size - offset || payload_size == 0))
        __builtin_trap();

    char path[2300];
    tpcommon_cache_entry_path(&cache, fuzz_key, path, sizeof path);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) __builtin_trap();
    chmod(path, 0600);
    size_t read_size = 0;
    unsigned char *payload = tpcommon_cache_read(&cache, fuzz_key, &read_size);
    if ((payload != NULL) != parsed) __builtin_trap();
    if (payload && (read_size != payload_size || memcmp(payload, data + offset, read_size) != 0))
        __builtin_trap();
    free(payload);
    return 0;
}
