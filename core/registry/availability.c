/* Whether an INI claim can be loaded, decided without loading it: contract
 * revision, core-version range, the library file (present, a regular file,
 * not writable by others, in a folder not writable by others), and every
 * `requires` soname findable by the dynamic linker. The first failing check
 * gives the reason (missing requires are listed together, with what provides
 * each). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

bool tp_version_parse(const char *text, int version[3]) {
    version[0] = version[1] = version[2] = 0;
    const char *cursor = text;
    for (int part = 0; part < 3; part++) {
        if (!isdigit((unsigned char)*cursor)) return false;
        long value = 0;
        while (isdigit((unsigned char)*cursor)) {
            value = value * 10 + (*cursor++ - '0');
            if (value > 1000000) return false;
        }
        version[part] = (int)value;
        if (*cursor == '\0') return true;
        if (*cursor != '.' || part == 2) return false;
        cursor++;
    }
    return false;
}

static int compare_versions(const int a[3], const int b[3]) {
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Why `info` (of `path`, a file or folder) may not be trusted, or NULL:
 * owned by root or by the effective user, and writable by nobody else. */
static char *owner_and_mode_problem(const char *path, const struct stat *info, const char *what) {
    uid_t user = geteuid();
    if (info->st_uid != 0 && info->st_uid != user)
        return tp_format("%s %s is refused: it is owned by uid %u, neither root nor you (uid %u)",
                         what, path, (unsigned)info->st_uid, (unsigned)user);
    if (info->st_mode & (S_IWGRP | S_IWOTH))
        return tp_format("%s %s is refused: it is writable by %s (mode %04o); fix with "
                         "chmod go-w %s",
                         what, path, (info->st_mode & S_IWOTH) ? "others" : "its group",
                         (unsigned)(info->st_mode & 07777), path);
    return NULL;
}

/* Every folder from `resolved`'s parent up to / must be owned by root or the
 * user and not writable by others, as OpenSSH's StrictModes checks: a
 * sticky folder writable by others (/tmp) is accepted only when the file
 * itself belongs to the user, since then nobody else can rename or remove it. */
static char *ancestor_problem(const char *resolved, const char *shown, const struct stat *file,
                              const char *what) {
    char *folder = tp_strdup(resolved);
    if (!folder) return NULL;
    char *problem = NULL;
    bool file_is_users = file->st_uid == geteuid();
    for (;;) {
        char *slash = strrchr(folder, '/');
        if (!slash) break;
        if (slash == folder)
            slash[1] = '\0';
        else
            *slash = '\0';
        struct stat info;
        if (stat(folder, &info) != 0) {
            problem = tp_format("%s %s is refused: its folder %s cannot be checked: %s", what,
                                shown, folder, strerror(errno));
            break;
        }
        bool sticky_ok = (info.st_mode & S_ISVTX) && file_is_users;
        if (info.st_uid != 0 && info.st_uid != geteuid()) {
            problem = tp_format("%s %s is refused: its folder %s is owned by uid %u, neither "
                                "root nor you (uid %u)",
                                what, shown, folder, (unsigned)info.st_uid, (unsigned)geteuid());
            break;
        }
        if ((info.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_ok) {
            problem = tp_format(
                "%s %s is refused: its folder %s is writable by %s (mode %04o)%s; fix with "
                "chmod go-w %s",
                what, shown, folder, (info.st_mode & S_IWOTH) ? "others" : "its group",
                (unsigned)(info.st_mode & 07777),
                (info.st_mode & S_ISVTX) ? ", and sticky folders are trusted only for files you own"
                                         : "",
                folder);
            break;
        }
        if (strcmp(folder, "/") == 0) break;
    }
    free(folder);
    return problem;
}

char *tp_file_trust_problem(const char *path, const char *what) {
    char *resolved = realpath(path, NULL);
    if (!resolved) return NULL; /* absence is reported elsewhere */
    struct stat info;
    char *problem = NULL;
    if (stat(resolved, &info) == 0) {
        problem = owner_and_mode_problem(path, &info, what);
        if (!problem) problem = ancestor_problem(resolved, path, &info, what);
    }
    free(resolved);
    return problem;
}

char *tp_open_trust_problem(int fd, const char *path, const char *what) {
    struct stat info;
    if (fstat(fd, &info) != 0)
        return tp_format("%s %s cannot be checked: %s", what, path, strerror(errno));
    if (!S_ISREG(info.st_mode)) return tp_format("%s %s is not a file", what, path);
    char *problem = owner_and_mode_problem(path, &info, what);
    if (problem) return problem;
    char *resolved = realpath(path, NULL);
    if (!resolved) return tp_format("%s %s cannot be resolved: %s", what, path, strerror(errno));
    /* The folders are checked by path: the opened file must still be the one
     * that path names now, else the check would be about another file. */
    struct stat named;
    if (stat(resolved, &named) != 0 || named.st_dev != info.st_dev || named.st_ino != info.st_ino)
        problem = tp_format("%s %s was replaced while being opened; refused", what, path);
    else
        problem = ancestor_problem(resolved, path, &info, what);
    free(resolved);
    return problem;
}

static char *core_range_problem(const tp_backend *backend) {
    int core[3], bound[3];
    tp_version_parse(tp_version(), core);
    if (*backend->min_core && tp_version_parse(backend->min_core, bound) &&
        compare_versions(core, bound) < 0)
        return tp_format("backend '%s' requires TensorPlay >= %s, found %s", backend->name,
                         backend->min_core, tp_version());
    if (*backend->max_core && tp_version_parse(backend->max_core, bound) &&
        compare_versions(core, bound) > 0)
        return tp_format("backend '%s' supports TensorPlay <= %s, found %s; check the backend "
                         "package for an update",
                         backend->name, backend->max_core, tp_version());
    return NULL;
}

static bool in_build_tree_registry(const char *ini_path) {
#ifdef TP_BUILD_TREE_REGISTRY
    size_t length = strlen(TP_BUILD_TREE_REGISTRY);
    return strncmp(ini_path, TP_BUILD_TREE_REGISTRY, length) == 0 && ini_path[length] == '/';
#else
    (void)ini_path;
    return false;
#endif
}

static char *library_problem(const tp_backend *backend) {
    struct stat info;
    if (stat(backend->library, &info) != 0) {
        if (errno == ENOENT)
            return tp_format("library %s not found%s", backend->library,
                             in_build_tree_registry(backend->file)
                                 ? " (not built yet)"
                                 : " (is the backend's package installed completely?)");
        return tp_format("library %s cannot be read: %s", backend->library, strerror(errno));
    }
    if (!S_ISREG(info.st_mode)) return tp_format("library %s is not a file", backend->library);
    return tp_file_trust_problem(backend->library, "plugin file");
}

static char *requires_problem(tp_backend *backend) {
    tp_strvec missing = {0};
    for (int i = 0; i < backend->requires.count; i++) {
        const char *soname = backend->requires.items[i];
        char *found = tp_soname_find(soname);
        if (tp_strvec_push_owned(&backend->requires_found, found) != TP_OK) break;
        if (found) continue;
        const char *provider = tp_soname_provider(soname);
        char *item = provider ? tp_format("%s not found (install %s)", soname, provider)
                              : tp_format("%s not found (install the package that provides it, or "
                                          "add its folder to LD_LIBRARY_PATH)",
                                          soname);
        if (!item || tp_strvec_push_owned(&missing, item) != TP_OK) break;
    }
    if (missing.count == 0) {
        tp_strvec_clear(&missing);
        return NULL;
    }
    size_t length = 64;
    for (int i = 0; i < missing.count; i++) length += strlen(missing.items[i]) + 2;
    char *reason = malloc(length);
    if (reason) {
        strcpy(reason, "requires ");
        for (int i = 0; i < missing.count; i++) {
            if (i) strcat(reason, "; ");
            strcat(reason, missing.items[i]);
        }
    }
    tp_strvec_clear(&missing);
    return reason;
}

tp_status tp_availability_check(tp_backend *backend) {
    if (backend->unavailable_reason) return TP_OK;
    char *reason = NULL;
    if (backend->min_contract > TP_BACKEND_CONTRACT_VERSION)
        reason = tp_format("backend '%s' speaks contract revision %s%d, this TensorPlay "
                           "implements revisions 1 to %d; upgrade TensorPlay",
                           backend->name, backend->min_contract < backend->contract ? ">= " : "",
                           backend->min_contract, TP_BACKEND_CONTRACT_VERSION);
    if (!reason) reason = core_range_problem(backend);
    if (!reason) reason = library_problem(backend);
    char *missing = requires_problem(backend); /* always: `info` shows each soname */
    if (!reason)
        reason = missing;
    else
        free(missing);
    backend->unavailable_reason = reason;
    if (reason)
        tp_loader_debug("%s:%d: '%s' is unavailable: %s", backend->file, backend->line,
                        backend->name, reason);
    else
        tp_loader_debug("%s:%d: '%s' is available (library %s)", backend->file, backend->line,
                        backend->name, backend->library);
    return TP_OK;
}
