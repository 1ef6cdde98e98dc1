/* stax-llvm — the on-disk object cache (DESIGN section 8).
 * Folder: $TP_CACHE_DIR, else $XDG_CACHE_HOME/tensorplay, else
 * ~/.cache/tensorplay; entries live in its stax/ subfolder as <key>.o:
 * an 8-byte magic, the payload size and an FNV-1a checksum (8 bytes each),
 * then the object file. Writes go to a unique temporary file renamed into
 * place (atomic). A missing, short, or corrupt entry (bad magic, size or
 * checksum) is a miss, never an error. Nothing is ever written when the
 * folder cannot be created. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stax_internal.h"

static const char magic[8] = {'S', 'T', 'A', 'X', 'O', 'B', 'J', '1'};

static bool cache_folder(char *out, size_t size) {
    const char *dir = getenv("TP_CACHE_DIR");
    if (dir && *dir) {
        if (strcmp(dir, "off") == 0) return false;
        snprintf(out, size, "%s/stax", dir);
    } else if ((dir = getenv("XDG_CACHE_HOME")) && *dir) {
        snprintf(out, size, "%s/tensorplay/stax", dir);
    } else if ((dir = getenv("HOME")) && *dir) {
        snprintf(out, size, "%s/.cache/tensorplay/stax", dir);
    } else {
        return false;
    }
    return true;
}

/* mkdir -p */
static bool make_folders(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            *p = '/';
            return false;
        }
        *p = '/';
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

void *stax_cache_read(const char *key, size_t *size) {
    char folder[1024], path[1200];
    if (!cache_folder(folder, sizeof folder)) return NULL;
    snprintf(path, sizeof path, "%s/%s.o", folder, key);
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    unsigned char header[24];
    void *data = NULL;
    if (fread(header, 1, sizeof header, file) == sizeof header &&
        memcmp(header, magic, sizeof magic) == 0) {
        uint64_t length, checksum;
        memcpy(&length, header + 8, 8);
        memcpy(&checksum, header + 16, 8);
        data = length > 0 && length < ((uint64_t)1 << 32) ? malloc((size_t)length) : NULL;
        if (data && (fread(data, 1, (size_t)length, file) != length || fgetc(file) != EOF ||
                     tpcommon_hash_bytes(TPCOMMON_HASH_SEED, data, (size_t)length) != checksum)) {
            free(data);
            data = NULL;
        }
        if (data) *size = (size_t)length;
    }
    fclose(file);
    return data;
}

void stax_cache_write(const char *key, const void *data, size_t size) {
    static atomic_uint counter;
    char folder[1024], path[1200], temp[1300];
    if (!cache_folder(folder, sizeof folder) || !make_folders(folder)) return;
    snprintf(path, sizeof path, "%s/%s.o", folder, key);
    snprintf(temp, sizeof temp, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&counter, 1));
    FILE *file = fopen(temp, "wb");
    if (!file) return;
    uint64_t length = size, checksum = tpcommon_hash_bytes(TPCOMMON_HASH_SEED, data, size);
    bool ok = fwrite(magic, 1, sizeof magic, file) == sizeof magic &&
              fwrite(&length, 1, 8, file) == 8 && fwrite(&checksum, 1, 8, file) == 8 &&
              fwrite(data, 1, size, file) == size;
    ok = fclose(file) == 0 && ok;
    if (!ok || rename(temp, path) != 0) unlink(temp);
}
