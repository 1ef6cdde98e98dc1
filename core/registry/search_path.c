/* The search path of backends INI files, and the INI files it yields.
 *
 * Files given to tp_backend_register_file come first. TP_BACKENDS_FILES
 * (colon-separated files or folders) replaces everything after them.
 * Otherwise, in order: TP_BACKENDS_PATH entries, $XDG_CONFIG_HOME/tensorplay/
 * backends.d (default ~/.config), /etc/tensorplay/backends.d, the
 * share/tensorplay/backends.d of the prefix libtensorplay actually runs
 * from (when it differs from the configured one: a relocated install),
 * <prefix>/share/tensorplay/backends.d, and the build tree's registry when
 * this code runs from the build tree. A folder contributes its *.ini files in
 * name order. Environment variables are read with secure_getenv, so a setuid
 * program ignores them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "base/error.h"
#include "registry_internal.h"

#ifndef TP_INSTALL_PREFIX
#define TP_INSTALL_PREFIX "/usr/local"
#endif

static tp_status add_part(tp_search_path *out, const char *path, const char *origin) {
    if (!*path) return TP_OK;
    TP_TRY(tp_strvec_push(&out->paths, path));
    return tp_strvec_push(&out->origins, origin);
}

static tp_status add_colon_list(tp_search_path *out, const char *list, const char *origin) {
    char *copy = strdup(list);
    if (!copy) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    tp_status status = TP_OK;
    char *save = NULL;
    for (char *part = strtok_r(copy, ":", &save); part && status == TP_OK;
         part = strtok_r(NULL, ":", &save))
        status = add_part(out, part, origin);
    free(copy);
    return status;
}

/* Real path of the module running this code (libtensorplay, or the
 * executable that links the core's objects); false when unknown. */
static bool running_module_path(char *module, size_t size) {
    Dl_info info;
    if (size < PATH_MAX) return false;
    if (!dladdr((void *)running_module_path, &info) || !info.dli_fname) return false;
    const char *module_path = info.dli_fname;
    char self[PATH_MAX];
    if (!strchr(module_path, '/')) { /* the main program: dladdr gives argv[0] */
        ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
        if (length <= 0) return false;
        self[length] = '\0';
        module_path = self;
    }
    return realpath(module_path, module) != NULL;
}

/* The prefix the running library is installed in, derived from its own
 * location (<P>/lib, <P>/lib64 or <P>/lib/<multiarch>), so a tree installed
 * with `cmake --install --prefix P` or moved elsewhere finds its own
 * backends.d. NULL when the module is not in such a folder. */
static char *relocated_registry(void) {
    char module[PATH_MAX];
    if (!running_module_path(module, sizeof module)) return NULL;
    char *slash = strrchr(module, '/');
    if (!slash) return NULL;
    *slash = '\0'; /* the module's folder */
    for (int depth = 0; depth < 2; depth++) {
        slash = strrchr(module, '/');
        if (!slash) return NULL;
        if (strcmp(slash + 1, "lib") == 0 || strcmp(slash + 1, "lib64") == 0) {
            *slash = '\0';
            return tp_format("%s/share/tensorplay/backends.d", module[0] ? module : "");
        }
        *slash = '\0'; /* try the parent: <P>/lib/<multiarch> */
    }
    return NULL;
}

/* Adds the relocated prefix's registry when it exists and is not the
 * configured prefix's. */
static tp_status add_relocated_registry(tp_search_path *out) {
    char *registry = relocated_registry();
    if (!registry) return TP_OK;
    char found[PATH_MAX], configured[PATH_MAX];
    tp_status status = TP_OK;
    if (realpath(registry, found) &&
        (!realpath(TP_INSTALL_PREFIX "/share/tensorplay/backends.d", configured) ||
         strcmp(found, configured) != 0))
        status = add_part(out, registry, "prefix of libtensorplay's location");
    free(registry);
    return status;
}

#ifdef TP_BUILD_TREE_REGISTRY
/* True when the code that is running (libtensorplay or an executable that
 * links its objects) lives inside the build tree that holds the registry. */
static bool running_from_build_tree(void) {
    char module[PATH_MAX], registry[PATH_MAX];
    if (!running_module_path(module, sizeof module)) return false;
    char build_dir[PATH_MAX];
    snprintf(build_dir, sizeof build_dir, "%s/..", TP_BUILD_TREE_REGISTRY);
    if (!realpath(build_dir, registry)) return false;
    size_t length = strlen(registry);
    return strncmp(module, registry, length) == 0 && module[length] == '/';
}
#endif

tp_status tp_search_path_build(tp_search_path *out) {
    memset(out, 0, sizeof *out);
    TP_TRY(tp_registered_files_add_to(out));
    const char *files = tp_env_get("TP_BACKENDS_FILES");
    if (files && *files) return add_colon_list(out, files, "TP_BACKENDS_FILES");

    const char *extra = tp_env_get("TP_BACKENDS_PATH");
    if (extra && *extra) TP_TRY(add_colon_list(out, extra, "TP_BACKENDS_PATH"));

    const char *xdg = tp_env_get("XDG_CONFIG_HOME");
    const char *home = tp_env_get("HOME");
    char *user_dir = NULL;
    const char *user_origin = "XDG_CONFIG_HOME";
    if (xdg && xdg[0] == '/') {
        user_dir = tp_format("%s/tensorplay/backends.d", xdg);
    } else if (home && *home) {
        user_dir = tp_format("%s/.config/tensorplay/backends.d", home);
        user_origin = "~/.config (XDG_CONFIG_HOME unset)";
    }
    if (user_dir) {
        tp_status status = add_part(out, user_dir, user_origin);
        free(user_dir);
        TP_TRY(status);
    }
    TP_TRY(add_part(out, "/etc/tensorplay/backends.d", "system"));
    TP_TRY(add_relocated_registry(out));
    TP_TRY(add_part(out, TP_INSTALL_PREFIX "/share/tensorplay/backends.d", "install prefix"));
#ifdef TP_BUILD_TREE_REGISTRY
    if (running_from_build_tree()) TP_TRY(add_part(out, TP_BUILD_TREE_REGISTRY, "build tree"));
#endif
    return TP_OK;
}

void tp_search_path_clear(tp_search_path *path) {
    tp_strvec_clear(&path->paths);
    tp_strvec_clear(&path->origins);
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with_ini(const char *name) {
    size_t length = strlen(name);
    return length > 4 && strcmp(name + length - 4, ".ini") == 0;
}

static tp_status add_folder(const char *folder, tp_strvec *files, tp_strvec *problems) {
    DIR *dir = opendir(folder);
    if (!dir) {
        if (errno == ENOENT) {
            tp_loader_debug("folder %s does not exist", folder);
            return TP_OK;
        }
        char *problem = tp_format("%s: cannot read folder: %s", folder, strerror(errno));
        tp_loader_debug("%s", problem ? problem : "out of memory");
        return problem ? tp_strvec_push_owned(problems, problem)
                       : tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    }
    tp_strvec names = {0};
    tp_status status = TP_OK;
    struct dirent *item;
    while (status == TP_OK && (item = readdir(dir)))
        if (item->d_name[0] != '.' && ends_with_ini(item->d_name))
            status = tp_strvec_push(&names, item->d_name);
    closedir(dir);
    if (names.count) qsort(names.items, (size_t)names.count, sizeof *names.items, compare_names);
    for (int i = 0; i < names.count && status == TP_OK; i++) {
        char *path = tp_format("%s/%s", folder, names.items[i]);
        status = path ? tp_strvec_push_owned(files, path)
                      : tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    }
    tp_strvec_clear(&names);
    return status;
}

tp_status tp_search_path_files(const tp_search_path *path, tp_strvec *files, tp_strvec *problems) {
    for (int i = 0; i < path->paths.count; i++) {
        const char *part = path->paths.items[i];
        struct stat info;
        if (stat(part, &info) != 0) {
            if (errno == ENOENT && strcmp(path->origins.items[i], "TP_BACKENDS_FILES") != 0) {
                tp_loader_debug("%s (%s) does not exist", part, path->origins.items[i]);
                continue;
            }
            char *problem =
                tp_format("%s (from %s): %s", part, path->origins.items[i], strerror(errno));
            if (!problem) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
            tp_loader_debug("%s", problem);
            TP_TRY(tp_strvec_push_owned(problems, problem));
            continue;
        }
        if (S_ISDIR(info.st_mode))
            TP_TRY(add_folder(part, files, problems));
        else
            TP_TRY(tp_strvec_push(files, part));
    }
    return TP_OK;
}
