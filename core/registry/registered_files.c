/* INI files added at run time with tp_backend_register_file. They come first
 * on the search path (before TP_BACKENDS_FILES, which replaces only the
 * environment and default locations), so a program that names a file gets
 * that file's backends. Owns the process-wide list of those paths, guarded by
 * its own mutex; reads and writes nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "registry_internal.h"
#include "tensorplay/backend.h"

static pthread_mutex_t registered_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_strvec registered_files;

tp_status tp_registered_files_add_to(tp_search_path *out) {
    tp_status status = TP_OK;
    pthread_mutex_lock(&registered_lock);
    for (int i = 0; i < registered_files.count && status == TP_OK; i++) {
        status = tp_strvec_push(&out->paths, registered_files.items[i]);
        if (status == TP_OK) status = tp_strvec_push(&out->origins, "tp_backend_register_file");
    }
    pthread_mutex_unlock(&registered_lock);
    return status;
}

static bool already_registered(const char *path) {
    for (int i = 0; i < registered_files.count; i++)
        if (strcmp(registered_files.items[i], path) == 0) return true;
    return false;
}

/* The first problem of the last scan that names `path`, as a new string. */
static char *problem_naming(const char *path) {
    char *text = NULL;
    if (tp_backend_problems(&text) != TP_OK || !text) return NULL;
    char *found = NULL;
    for (char *line = text; line && *line && !found;) {
        char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, path, strlen(path)) == 0) found = strndup(line, length);
        line = end ? end + 1 : NULL;
    }
    tp_free(text);
    return found;
}

tp_status tp_backend_register_file(const char *ini_path) {
    if (!ini_path || !*ini_path)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_register_file: no path given");
    char resolved[PATH_MAX];
    struct stat info;
    if (!realpath(ini_path, resolved) || stat(resolved, &info) != 0)
        return tp_error_set(TP_ERR_IO, "backends file '%s' cannot be read: %s", ini_path,
                            strerror(errno));
    if (!S_ISREG(info.st_mode))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "backends file '%s' is not a regular file (give one .ini file; "
                            "folders go in TP_BACKENDS_PATH)",
                            ini_path);
    pthread_mutex_lock(&registered_lock);
    tp_status status =
        already_registered(resolved) ? TP_OK : tp_strvec_push(&registered_files, resolved);
    pthread_mutex_unlock(&registered_lock);
    TP_TRY(status);
    TP_TRY(tp_backend_rescan());
    char *problem = problem_naming(resolved);
    if (!problem) return TP_OK;
    status = tp_error_set(TP_ERR_PARSE, "%s", problem);
    free(problem);
    return status;
}
