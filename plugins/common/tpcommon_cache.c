/* plugins/common — the disk cache (see tpcommon_cache.h). Owns the folder
 * rules and the entry format:
 *   8 bytes "TPCACHE2", u64 key length, u64 payload length, u64 FNV-1a over
 *   key and payload (little-endian, as written by this machine), the key,
 *   the payload. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tpcommon_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpcommon_text.h"

static const char entry_magic[8] = {'T', 'P', 'C', 'A', 'C', 'H', 'E', '2'};
#define ENTRY_HEADER_SIZE 32
#define ENTRY_MAX_SIZE    ((uint64_t)1 << 32)

static const char *environment(const tp_plugin_host *host, const char *name) {
    const char *value = host && host->getenv ? host->getenv(name) : NULL;
    return value && *value ? value : NULL;
}

/* mkdir -p, new folders 0700. */
static bool make_folders(char *path) {
    for (char *slash = path + 1; *slash; slash++) {
        if (*slash != '/') continue;
        *slash = '\0';
        bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
        *slash = '/';
        if (!ok) return false;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

/* NULL when `path` is a folder the user owns that nobody else can write,
 * else why not (static text). */
static const char *folder_problem(const char *path, char *why, size_t size) {
    struct stat info;
    if (stat(path, &info) != 0) {
        snprintf(why, size, "cannot be read: %s", strerror(errno));
        return why;
    }
    if (!S_ISDIR(info.st_mode)) return "is not a folder";
    if (info.st_uid != geteuid()) {
        snprintf(why, size, "is owned by uid %u, not by you (uid %u)", (unsigned)info.st_uid,
                 (unsigned)geteuid());
        return why;
    }
    if (info.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, size, "is writable by %s (mode %04o; fix with chmod go-w)",
                 (info.st_mode & S_IWOTH) ? "others" : "its group",
                 (unsigned)(info.st_mode & 07777));
        return why;
    }
    return NULL;
}

bool tpcommon_cache_open(tpcommon_cache *cache, const tp_plugin_host *host, const char *subfolder) {
    cache->folder[0] = '\0';
    cache->host = host;
    char root[1900];
    const char *explicit_dir = environment(host, "TP_CACHE_DIR");
    const char *xdg = environment(host, "XDG_CACHE_HOME");
    const char *home = environment(host, "HOME");
    int written;
    if (explicit_dir && strcmp(explicit_dir, "off") == 0) return false;
    if (explicit_dir)
        written = snprintf(root, sizeof root, "%s", explicit_dir);
    else if (xdg)
        written = snprintf(root, sizeof root, "%s/tensorplay", xdg);
    else if (home)
        written = snprintf(root, sizeof root, "%s/.cache/tensorplay", home);
    else
        return false; /* no user folder (or a privileged process): no cache */
    if (written < 0 || (size_t)written >= sizeof root) return false;
    char folder[sizeof cache->folder];
    written = snprintf(folder, sizeof folder, "%s/%s", root, subfolder);
    if (written < 0 || (size_t)written >= sizeof folder) return false;
    if (!make_folders(folder)) {
        tpcommon_log(host, TP_PLUGIN_LOG_WARN,
                     "cache folder %s cannot be created (%s); compiling without a cache", folder,
                     strerror(errno));
        return false;
    }
    char why[256];
    const char *problem = folder_problem(root, why, sizeof why);
    const char *refused = root;
    if (!problem) {
        problem = folder_problem(folder, why, sizeof why);
        refused = folder;
    }
    if (problem) {
        tpcommon_log(host, TP_PLUGIN_LOG_WARN, "cache folder %s %s; compiling without a cache",
                     refused, problem);
        return false;
    }
    memcpy(cache->folder, folder, sizeof folder);
    return true;
}

/* Two FNV-1a passes with different seeds: a 128-bit file name. */
static void entry_name(const char *key, char out[33]) {
    size_t length = strlen(key);
    uint64_t first = tpcommon_hash_bytes(TPCOMMON_HASH_SEED, key, length);
    uint64_t second = tpcommon_hash_bytes(0x9e3779b97f4a7c15ull, key, length);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)first, (unsigned long long)second);
}

void tpcommon_cache_entry_path(const tpcommon_cache *cache, const char *key, char *out,
                               size_t size) {
    char name[33];
    entry_name(key, name);
    snprintf(out, size, "%s/%s.entry", cache->folder, name);
}

static uint64_t entry_checksum(const char *key, size_t key_length, const void *payload,
                               size_t payload_length) {
    uint64_t hash = tpcommon_hash_bytes(TPCOMMON_HASH_SEED, key, key_length);
    return tpcommon_hash_bytes(hash, payload, payload_length);
}

const char *tpcommon_cache_entry_problem(const void *bytes, size_t size, const char *key,
                                         size_t *payload_offset, size_t *payload_size) {
    const unsigned char *entry = bytes;
    if (size < ENTRY_HEADER_SIZE || memcmp(entry, entry_magic, sizeof entry_magic) != 0)
        return size < ENTRY_HEADER_SIZE ? "shorter than an entry's header" : "not an entry";
    uint64_t key_length, payload_length, checksum;
    memcpy(&key_length, entry + 8, 8);
    memcpy(&payload_length, entry + 16, 8);
    memcpy(&checksum, entry + 24, 8);
    size_t available = size - ENTRY_HEADER_SIZE;
    if (key_length > available || payload_length > available - key_length)
        return "truncated (shorter than its header says)";
    if (payload_length != available - key_length) return "longer than its header says";
    if (payload_length == 0) return "empty";
    const char *stored_key = (const char *)entry + ENTRY_HEADER_SIZE;
    if (key_length != strlen(key) || memcmp(stored_key, key, (size_t)key_length) != 0)
        return "made for another key";
    const unsigned char *payload = entry + ENTRY_HEADER_SIZE + key_length;
    if (entry_checksum(key, (size_t)key_length, payload, (size_t)payload_length) != checksum)
        return "corrupt (its checksum does not match)";
    *payload_offset = ENTRY_HEADER_SIZE + (size_t)key_length;
    *payload_size = (size_t)payload_length;
    return NULL;
}

bool tpcommon_cache_entry_parse(const void *bytes, size_t size, const char *key,
                                size_t *payload_offset, size_t *payload_size) {
    return !tpcommon_cache_entry_problem(bytes, size, key, payload_offset, payload_size);
}

const char *tpcommon_cache_entry_stored_key(const void *bytes, size_t size, size_t *key_size) {
    const unsigned char *entry = bytes;
    if (size < ENTRY_HEADER_SIZE || memcmp(entry, entry_magic, sizeof entry_magic) != 0)
        return NULL;
    uint64_t key_length;
    memcpy(&key_length, entry + 8, 8);
    if (key_length > size - ENTRY_HEADER_SIZE) return NULL;
    *key_size = (size_t)key_length;
    return (const char *)entry + ENTRY_HEADER_SIZE;
}

/* The whole entry file, if it is a regular file the user owns that nobody
 * else can write and not larger than an entry can be. */
static unsigned char *read_entry_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat info;
    unsigned char *bytes = NULL;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid() &&
        !(info.st_mode & (S_IWGRP | S_IWOTH)) && info.st_size > 0 &&
        (uint64_t)info.st_size <= ENTRY_MAX_SIZE)
        bytes = malloc((size_t)info.st_size);
    size_t used = 0;
    while (bytes && used < (size_t)info.st_size) {
        ssize_t got = read(fd, bytes + used, (size_t)info.st_size - used);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            free(bytes);
            bytes = NULL;
            break;
        }
        used += (size_t)got;
    }
    close(fd);
    *size = used;
    return bytes;
}

void *tpcommon_cache_read(const tpcommon_cache *cache, const char *key, size_t *size) {
    if (!cache->folder[0]) return NULL;
    char path[2200];
    tpcommon_cache_entry_path(cache, key, path, sizeof path);
    size_t file_size = 0, offset = 0, payload_size = 0;
    unsigned char *bytes = read_entry_file(path, &file_size);
    if (!bytes) return NULL;
    if (!tpcommon_cache_entry_parse(bytes, file_size, key, &offset, &payload_size)) {
        free(bytes);
        return NULL;
    }
    memmove(bytes, bytes + offset, payload_size);
    *size = payload_size;
    return bytes;
}

static bool write_all(int fd, const void *data, size_t size) {
    const unsigned char *bytes = data;
    while (size > 0) {
        ssize_t written = write(fd, bytes, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return false;
        bytes += written;
        size -= (size_t)written;
    }
    return true;
}

bool tpcommon_cache_write_file(const char *path, const char *key, const void *data, size_t size,
                               unsigned mode) {
    if (size == 0 || (uint64_t)size >= ENTRY_MAX_SIZE) return false;
    char temporary[2300];
    if ((size_t)snprintf(temporary, sizeof temporary, "%s.XXXXXX", path) >= sizeof temporary)
        return false;
    int fd = mkostemp(temporary, O_CLOEXEC); /* mode 0600 */
    if (fd < 0) return false;
    size_t key_length = strlen(key);
    unsigned char header[ENTRY_HEADER_SIZE];
    uint64_t fields[3] = {key_length, size, entry_checksum(key, key_length, data, size)};
    memcpy(header, entry_magic, 8);
    memcpy(header + 8, fields, sizeof fields);
    bool ok = (mode == 0600 || fchmod(fd, (mode_t)mode) == 0) &&
              write_all(fd, header, sizeof header) && write_all(fd, key, key_length) &&
              write_all(fd, data, size);
    ok = close(fd) == 0 && ok;
    if (ok) ok = rename(temporary, path) == 0;
    if (!ok) unlink(temporary);
    return ok;
}

bool tpcommon_cache_write(const tpcommon_cache *cache, const char *key, const void *data,
                          size_t size) {
    if (!cache->folder[0]) return false;
    char path[2200];
    tpcommon_cache_entry_path(cache, key, path, sizeof path);
    return tpcommon_cache_write_file(path, key, data, size, 0600);
}

/* The value of the first line of /proc/cpuinfo starting with `field`. */
static void cpuinfo_field(const char *field, char *out, size_t size) {
    out[0] = '\0';
    FILE *file = fopen("/proc/cpuinfo", "re");
    if (!file) return;
    char line[8192];
    size_t field_length = strlen(field);
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, field, field_length) != 0) continue;
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        snprintf(out, size, "%s", colon);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(file);
}

void tpcommon_cache_cpu_identity(char *out, size_t size) {
    char model[256], flags[4096];
    cpuinfo_field("model name", model, sizeof model);
    cpuinfo_field("flags", flags, sizeof flags);
    snprintf(out, size, "cpu %s; flags %s", model, flags);
}
