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

char *tp_file_trust_problem(const char *path, const char *what) {
    struct stat info;
    if (stat(path, &info) != 0) return NULL; /* absence is reported elsewhere */
    uid_t user = geteuid();
    if (info.st_uid != 0 && info.st_uid != user)
        return tp_format("%s %s is refused: it is owned by uid %u, neither root nor you (uid %u)",
                         what, path, (unsigned)info.st_uid, (unsigned)user);
    if (info.st_mode & (S_IWGRP | S_IWOTH))
        return tp_format("%s %s is refused: it is writable by %s (mode %04o); fix with "
                         "chmod go-w %s",
                         what, path, (info.st_mode & S_IWOTH) ? "others" : "its group",
                         (unsigned)(info.st_mode & 07777), path);
    return NULL;
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
    char *problem = tp_file_trust_problem(backend->library, "plugin file");
    if (problem) return problem;
    char *folder = tp_format("%s", backend->library);
    if (!folder) return NULL;
    char *slash = strrchr(folder, '/');
    if (slash) {
        *(slash == folder ? slash + 1 : slash) = '\0';
        problem = tp_file_trust_problem(folder, "plugin folder");
    }
    free(folder);
    return problem;
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
