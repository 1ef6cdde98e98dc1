/* The CUBIN disk cache (see cuda_cache.h). File layout: the 8-byte magic
 * "TPCUBIN1", the payload size and the payload's FNV-1a hash (both 64-bit
 * little-endian as written by this machine), then the payload. */
#define _GNU_SOURCE
#include "cuda_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpcommon_text.h"

static const char magic[8] = {'T', 'P', 'C', 'U', 'B', 'I', 'N', '1'};

/* mkdir -p */
static bool make_folders(char *path) {
    for (char *slash = path + 1; *slash; slash++) {
        if (*slash != '/') continue;
        *slash = '\0';
        bool ok = mkdir(path, 0755) == 0 || errno == EEXIST;
        *slash = '/';
        if (!ok) return false;
    }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

bool cu_cache_folder(char *out, size_t size) {
    const char *explicit_dir = secure_getenv("TP_CACHE_DIR");
    const char *xdg = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    int written;
    if (explicit_dir && *explicit_dir)
        written = snprintf(out, size, "%s/cuda", explicit_dir);
    else if (xdg && *xdg)
        written = snprintf(out, size, "%s/tensorplay/cuda", xdg);
    else if (home && *home)
        written = snprintf(out, size, "%s/.cache/tensorplay/cuda", home);
    else
        return false;
    if (written < 0 || (size_t)written >= size) return false;
    return make_folders(out);
}

static void entry_path(const char *folder, const char *key, char *out, size_t size) {
    snprintf(out, size, "%s/%s.cubin", folder, key);
}

void *cu_cache_load(const char *folder, const char *key, size_t *size) {
    char path[4096];
    entry_path(folder, key, path, sizeof path);
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    char header[8];
    uint64_t length = 0, checksum = 0;
    void *data = NULL;
    bool ok = fread(header, 1, 8, file) == 8 && memcmp(header, magic, 8) == 0 &&
              fread(&length, sizeof length, 1, file) == 1 &&
              fread(&checksum, sizeof checksum, 1, file) == 1 && length > 0 &&
              length < ((uint64_t)1 << 32);
    if (ok) {
        data = malloc((size_t)length);
        ok = data && fread(data, 1, (size_t)length, file) == length && fgetc(file) == EOF &&
             tpcommon_hash_bytes(TPCOMMON_HASH_SEED, data, (size_t)length) == checksum;
    }
    fclose(file);
    if (!ok) { /* corrupt or truncated: a miss; drop it so the next store replaces it */
        free(data);
        unlink(path);
        return NULL;
    }
    *size = (size_t)length;
    return data;
}

bool cu_cache_store(const char *folder, const char *key, const void *data, size_t size) {
    char path[4096], temporary[4200];
    entry_path(folder, key, path, sizeof path);
    snprintf(temporary, sizeof temporary, "%s.XXXXXX", path);
    int fd = mkstemp(temporary);
    if (fd < 0) return false;
    FILE *file = fdopen(fd, "wb");
    if (!file) {
        close(fd);
        unlink(temporary);
        return false;
    }
    uint64_t length = size, checksum = tpcommon_hash_bytes(TPCOMMON_HASH_SEED, data, size);
    bool ok = fwrite(magic, 1, 8, file) == 8 && fwrite(&length, sizeof length, 1, file) == 1 &&
              fwrite(&checksum, sizeof checksum, 1, file) == 1 &&
              fwrite(data, 1, size, file) == size;
    ok = fclose(file) == 0 && ok;
    if (ok) ok = chmod(temporary, 0644) == 0 && rename(temporary, path) == 0;
    if (!ok) unlink(temporary);
    return ok;
}
