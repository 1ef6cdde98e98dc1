/* Finding a shared library by soname the way the dynamic linker would,
 * without loading it: LD_LIBRARY_PATH, then /etc/ld.so.cache (parsed here,
 * once per process), then the default folders (/lib, /usr/lib, their
 * multiarch and lib64 variants). Also knows what provides a few well-known
 * sonames, so an "unavailable" reason can say what to install. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "base/alloc.h"
#include "registry_internal.h"

#if defined(__x86_64__)
#define MULTIARCH       "x86_64-linux-gnu"
#define CACHE_ARCH_FLAG 0x0300 /* FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define MULTIARCH       "aarch64-linux-gnu"
#define CACHE_ARCH_FLAG 0x0a00 /* FLAG_AARCH64_LIB64 */
#else
#define MULTIARCH       ""
#define CACHE_ARCH_FLAG -1 /* unknown: accept every entry */
#endif

/* ---- /etc/ld.so.cache, format "glibc-ld.so.cache1.1" --------------------- */

#define CACHE_MAGIC     "glibc-ld.so.cache"
#define CACHE_VERSION   "1.1"
#define OLD_CACHE_MAGIC "ld.so-1.7.0"

typedef struct cache_header {
    char magic[sizeof CACHE_MAGIC - 1];
    char version[sizeof CACHE_VERSION - 1];
    uint32_t num_libs;
    uint32_t strings_length;
    uint8_t flags;
    uint8_t padding[3];
    uint32_t extension_offset;
    uint32_t unused[3];
} cache_header;

typedef struct cache_entry {
    int32_t flags;
    uint32_t key, value; /* string offsets from the header */
    uint32_t os_version;
    uint64_t hwcap;
} cache_entry;

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static const unsigned char *cache_base; /* start of the new-format header */
static size_t cache_size;               /* bytes from cache_base to the end */

static void map_cache(void) {
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info;
    if (fstat(fd, &info) != 0 || info.st_size < (off_t)sizeof(cache_header)) {
        close(fd);
        return;
    }
    void *map = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    const unsigned char *bytes = map;
    size_t size = (size_t)info.st_size;
    size_t offset = 0;
    if (memcmp(bytes, OLD_CACHE_MAGIC, sizeof OLD_CACHE_MAGIC - 1) == 0) {
        /* Old format first: skip its entries (12 bytes each), then align to 8. */
        uint32_t old_count;
        memcpy(&old_count, bytes + sizeof OLD_CACHE_MAGIC - 1 + 1, sizeof old_count);
        offset = 16 + (size_t)old_count * 12;
        offset = (offset + 7) & ~(size_t)7;
    }
    if (offset + sizeof(cache_header) > size ||
        memcmp(bytes + offset, CACHE_MAGIC CACHE_VERSION, sizeof CACHE_MAGIC + 2) != 0) {
        tp_loader_debug("/etc/ld.so.cache: unknown format, not used");
        munmap(map, size);
        return;
    }
    cache_base = bytes + offset;
    cache_size = size - offset;
    tp_loader_debug("/etc/ld.so.cache: mapped (%zu bytes)", size);
}

static const char *cache_string(uint32_t offset) {
    if (offset >= cache_size) return NULL;
    const char *text = (const char *)cache_base + offset;
    return memchr(text, '\0', cache_size - offset) ? text : NULL;
}

static char *cache_lookup(const char *soname) {
    pthread_once(&cache_once, map_cache);
    if (!cache_base) return NULL;
    cache_header header;
    memcpy(&header, cache_base, sizeof header);
    size_t limit = (cache_size - sizeof header) / sizeof(cache_entry);
    size_t count = header.num_libs < limit ? header.num_libs : limit;
    for (size_t i = 0; i < count; i++) {
        cache_entry entry;
        memcpy(&entry, cache_base + sizeof header + i * sizeof entry, sizeof entry);
        if (CACHE_ARCH_FLAG >= 0 && (entry.flags & 0xff00) != CACHE_ARCH_FLAG) continue;
        const char *key = cache_string(entry.key);
        if (!key || strcmp(key, soname) != 0) continue;
        const char *value = cache_string(entry.value);
        if (value) return tp_strdup(value);
    }
    return NULL;
}

/* ---- folders -------------------------------------------------------------- */

static char *find_in_folder(const char *folder, size_t folder_length, const char *soname) {
    if (folder_length == 0) folder_length = 1, folder = "."; /* empty entry = current folder */
    char *path = tp_format("%.*s/%s", (int)folder_length, folder, soname);
    if (!path) return NULL;
    struct stat info;
    if (stat(path, &info) == 0 && S_ISREG(info.st_mode)) return path;
    free(path);
    return NULL;
}

static char *find_in_list(const char *list, const char *soname) {
    const char *cursor = list;
    for (;;) {
        size_t length = strcspn(cursor, ":;");
        char *found = find_in_folder(cursor, length, soname);
        if (found) return found;
        if (!cursor[length]) return NULL;
        cursor += length + 1;
    }
}

char *tp_soname_find(const char *soname) {
    if (strchr(soname, '/')) { /* a path: the linker takes it as is */
        struct stat info;
        return stat(soname, &info) == 0 ? tp_strdup(soname) : NULL;
    }
    const char *library_path = tp_env_get("LD_LIBRARY_PATH");
    char *found = NULL;
    if (library_path && *library_path && (found = find_in_list(library_path, soname))) {
        tp_loader_debug("requires %s: found in LD_LIBRARY_PATH at %s", soname, found);
        return found;
    }
    if ((found = cache_lookup(soname))) {
        tp_loader_debug("requires %s: found in /etc/ld.so.cache at %s", soname, found);
        return found;
    }
    static const char default_folders[] =
        "/lib/" MULTIARCH ":/usr/lib/" MULTIARCH ":/lib64:/usr/lib64:/lib:/usr/lib";
    if ((found = find_in_list(default_folders, soname))) {
        tp_loader_debug("requires %s: found in a default folder at %s", soname, found);
        return found;
    }
    tp_loader_debug("requires %s: not found (LD_LIBRARY_PATH, /etc/ld.so.cache, default folders)",
                    soname);
    return NULL;
}

const char *tp_soname_provider(const char *soname) {
    static const struct {
        const char *soname, *provider;
    } known[] = {
        {"libLLVM.so.19.1", "the Debian package libllvm19"},
        {"libLLVM-19.so.1", "the Debian package libllvm19"},
        {"libOpenCL.so.1", "the Debian package ocl-icd-libopencl1 (plus an OpenCL driver)"},
        {"libcuda.so.1", "the NVIDIA driver"},
        {"libnvrtc.so.12", "the CUDA toolkit (Debian package libnvrtc12)"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].soname, soname) == 0) return known[i].provider;
    return NULL;
}
