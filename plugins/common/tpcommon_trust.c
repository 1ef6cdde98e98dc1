/* plugins/common — trusted reads of files beside a plugin (see
 * tpcommon_trust.h). The rule is the registry's (core/registry/
 * availability.c), restated here because plugins only know plugin.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tpcommon_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Owned by root or the effective user, writable by nobody else. */
static bool owner_and_mode_ok(const char *path, const struct stat *info, const char *what,
                              char *why, size_t why_size) {
    uid_t user = geteuid();
    if (info->st_uid != 0 && info->st_uid != user) {
        snprintf(why, why_size, "%s %s is owned by uid %u, neither root nor you (uid %u)", what,
                 path, (unsigned)info->st_uid, (unsigned)user);
        return false;
    }
    if (info->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, why_size, "%s %s is writable by %s (mode %04o); fix with chmod go-w %s", what,
                 path, (info->st_mode & S_IWOTH) ? "others" : "its group",
                 (unsigned)(info->st_mode & 07777), path);
        return false;
    }
    return true;
}

/* Every folder above `resolved` passes owner_and_mode_ok, or is sticky while
 * the file is the user's (nobody else can then rename or remove it). */
static bool ancestors_ok(const char *resolved, bool file_is_users, char *why, size_t why_size) {
    char *folder = strdup(resolved);
    if (!folder) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    bool ok = true;
    for (;;) {
        char *slash = strrchr(folder, '/');
        if (!slash) break;
        if (slash == folder)
            slash[1] = '\0';
        else
            *slash = '\0';
        struct stat info;
        if (stat(folder, &info) != 0) {
            snprintf(why, why_size, "its folder %s cannot be checked: %s", folder, strerror(errno));
            ok = false;
            break;
        }
        bool sticky_ok = (info.st_mode & S_ISVTX) && file_is_users;
        if (!sticky_ok && !owner_and_mode_ok(folder, &info, "its folder", why, why_size)) {
            ok = false;
            break;
        }
        if (strcmp(folder, "/") == 0) break;
    }
    free(folder);
    return ok;
}

static unsigned char *read_all(int fd, size_t size) {
    unsigned char *bytes = malloc(size ? size : 1);
    size_t used = 0;
    while (bytes && used < size) {
        ssize_t got = read(fd, bytes + used, size - used);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            free(bytes);
            return NULL;
        }
        used += (size_t)got;
    }
    return bytes;
}

void *tpcommon_trusted_file_read(const char *path, size_t max_size, size_t *size, int *untrusted,
                                 char *why, size_t why_size) {
    *size = 0;
    *untrusted = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot be opened: %s", strerror(errno));
        return NULL;
    }
    struct stat info, named;
    unsigned char *bytes = NULL;
    char *resolved = NULL;
    if (fstat(fd, &info) != 0)
        snprintf(why, why_size, "cannot be checked: %s", strerror(errno));
    else if (!S_ISREG(info.st_mode))
        snprintf(why, why_size, "is not a regular file");
    else if (!owner_and_mode_ok(path, &info, "the file", why, why_size))
        *untrusted = 1;
    else if (!(resolved = realpath(path, NULL)))
        snprintf(why, why_size, "cannot be resolved: %s", strerror(errno));
    else if (stat(resolved, &named) != 0 || named.st_dev != info.st_dev ||
             named.st_ino != info.st_ino)
        snprintf(why, why_size, "was replaced while it was being checked");
    else if (!ancestors_ok(resolved, info.st_uid == geteuid(), why, why_size))
        *untrusted = 1;
    else if ((uint64_t)info.st_size > (uint64_t)max_size)
        snprintf(why, why_size, "is larger (%lld bytes) than such a file can be",
                 (long long)info.st_size);
    else if (!(bytes = read_all(fd, (size_t)info.st_size)))
        snprintf(why, why_size, "cannot be read: %s", errno ? strerror(errno) : "short read");
    else
        *size = (size_t)info.st_size;
    free(resolved);
    close(fd);
    return bytes;
}
