/* The load memory: the outcome of the last load of each plugin library
 * (loaded, or failed with the reason), kept across processes so that
 * `tp-backends list` can show a broken plugin as failed without loading it.
 *
 * One small text file per library in CACHE/registry/ (CACHE: $TP_CACHE_DIR,
 * else $XDG_CACHE_HOME/tensorplay, else $HOME/.cache/tensorplay; none in a
 * privileged process, "off" disables it), named by a hash of the library's
 * path. A record holds the library's path, size, mtime and inode and the
 * TensorPlay version; it counts only while all of them still match, so a
 * rebuilt, replaced or touched library (or another TensorPlay) is
 * forgotten. The folders must be the user's and not writable by others, and
 * a record file the user's, a regular file nobody else can write (the disk
 * cache's rules); anything else is ignored, never trusted. Owns only these
 * files: it decides nothing about loading. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "registry_internal.h"

#define RECORD_MAGIC    "tensorplay load record 1"
#define RECORD_MAX_SIZE 16384

static const char *env_value(const char *name) {
    const char *value = tp_env_get(name);
    return value && *value ? value : NULL;
}

/* The cache root (new string), or NULL when there is none or it is off. */
static char *cache_root(void) {
    const char *explicit_dir = env_value("TP_CACHE_DIR");
    if (explicit_dir && strcmp(explicit_dir, "off") == 0) return NULL;
    if (explicit_dir) return tp_format("%s", explicit_dir);
    const char *xdg = env_value("XDG_CACHE_HOME");
    if (xdg) return tp_format("%s/tensorplay", xdg);
    const char *home = env_value("HOME");
    return home ? tp_format("%s/.cache/tensorplay", home) : NULL;
}

/* A folder the user owns that nobody else can write. */
static bool folder_trusted(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == geteuid() &&
           !(info.st_mode & (S_IWGRP | S_IWOTH));
}

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

/* The record's path for `library` (new string), or NULL when there is no
 * trusted memory folder (created when `create`). */
static char *record_path(const char *library, bool create) {
    char *root = cache_root();
    char *folder = root ? tp_format("%s/registry", root) : NULL;
    char *path = NULL;
    if (folder && (!create || make_folders(folder)) && folder_trusted(root) &&
        folder_trusted(folder)) {
        uint64_t hash = 14695981039346656037ull; /* FNV-1a */
        for (const unsigned char *c = (const unsigned char *)library; *c; c++)
            hash = (hash ^ *c) * 1099511628211ull;
        path = tp_format("%s/%016llx.load", folder, (unsigned long long)hash);
    }
    free(root);
    free(folder);
    return path;
}

/* The identity lines of the library as it is now (new string), or NULL when
 * it cannot be read. */
static char *library_identity(const char *library) {
    struct stat info;
    if (stat(library, &info) != 0) return NULL;
    return tp_format("%s\ncore %s\npath %s\nsize %lld\nmtime %lld.%09ld\ninode %llu:%llu\n",
                     RECORD_MAGIC, tp_version(), library, (long long)info.st_size,
                     (long long)info.st_mtim.tv_sec, (long)info.st_mtim.tv_nsec,
                     (unsigned long long)info.st_dev, (unsigned long long)info.st_ino);
}

/* The record's text, if it is a regular file the user owns that nobody else
 * can write; NULL otherwise. */
static char *read_record(const char *path) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat info;
    char *text = NULL;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid() &&
        !(info.st_mode & (S_IWGRP | S_IWOTH)) && info.st_size < RECORD_MAX_SIZE) {
        text = malloc((size_t)info.st_size + 1);
        ssize_t got = text ? read(fd, text, (size_t)info.st_size) : -1;
        if (got != (ssize_t)info.st_size) {
            free(text);
            text = NULL;
        } else {
            text[got] = '\0';
        }
    }
    close(fd);
    return text;
}

/* The outcome part of a record whose identity is `identity`: "loaded\n" or
 * "failed REASON\n"; NULL when the record is of another identity. */
static const char *record_outcome(const char *record, const char *identity) {
    size_t length = strlen(identity);
    if (strncmp(record, identity, length) != 0) return NULL;
    const char *outcome = record + length;
    return strncmp(outcome, "outcome ", 8) == 0 ? outcome + 8 : NULL;
}

char *tp_load_memory_recall_failure(const tp_backend *backend) {
    if (backend->source != TP_BACKEND_SOURCE_INI || !backend->library) return NULL;
    char *path = record_path(backend->library, false);
    char *identity = path ? library_identity(backend->library) : NULL;
    char *record = identity ? read_record(path) : NULL;
    const char *outcome = record ? record_outcome(record, identity) : NULL;
    char *reason = NULL;
    if (outcome && strncmp(outcome, "failed ", 7) == 0) {
        const char *start = outcome + 7;
        const char *end = strchr(start, '\n');
        reason = tp_format("%.*s", (int)(end ? (size_t)(end - start) : strlen(start)), start);
    }
    free(record);
    free(identity);
    free(path);
    return reason;
}

/* Writes `text` as `path` through a temporary file in the same folder and a
 * rename, so a reader sees the old record or the new one, never half. */
static void write_atomically(const char *path, const char *text) {
    char *temporary = tp_format("%s.XXXXXX", path);
    int fd = temporary ? mkostemp(temporary, O_CLOEXEC) : -1;
    if (fd < 0) {
        free(temporary);
        return;
    }
    size_t length = strlen(text);
    bool ok = write(fd, text, length) == (ssize_t)length;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(temporary, path) != 0) unlink(temporary);
    free(temporary);
}

void tp_load_memory_record(const tp_backend *backend, const char *failure) {
    if (backend->source != TP_BACKEND_SOURCE_INI || !backend->library) return;
    char *path = record_path(backend->library, true);
    char *identity = path ? library_identity(backend->library) : NULL;
    char *text = NULL;
    if (identity) {
        /* one line: a reason's newlines become spaces */
        char *reason = failure ? tp_format("%s", failure) : NULL;
        for (char *c = reason; c && *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
        text = failure ? (reason ? tp_format("%soutcome failed %s\n", identity, reason) : NULL)
                       : tp_format("%soutcome loaded\n", identity);
        free(reason);
    }
    char *old = text ? read_record(path) : NULL;
    if (text && (!old || strcmp(old, text) != 0)) write_atomically(path, text);
    tp_loader_debug("'%s': load memory %s: %s", backend->name, path ? path : "(none)",
                    failure ? "failed" : "loaded");
    free(old);
    free(text);
    free(identity);
    free(path);
}
