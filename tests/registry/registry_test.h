/* Helpers shared by the registry suite: pointing the registry at fixture
 * INI files, writing INI files into the test's temp folder, reading a
 * backend's state and reason. Every check test runs in its own forked
 * process, so each starts with an unscanned registry. */
#ifndef TP_TESTS_REGISTRY_TEST_H
#define TP_TESTS_REGISTRY_TEST_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "registry/registry_internal.h"
#include "tensorplay/backend.h"
#include "tp_test.h"

/* Path of a file in the fixture folder (static buffer rotation of 4). */
static inline const char *fixture(const char *name) {
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 4096, "%s/%s", TP_FIXTURE_DIR, name);
    return path;
}

/* Makes the registry read exactly `files` (colon-separated), with a load
 * memory of this test's own (TEMP/cache), so that no test sees what another
 * one loaded. */
static inline void use_backend_files(const char *files) {
    setenv("TP_BACKENDS_FILES", files, 1);
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", cache, 1);
}

/* Writes `text` into TEMP/name and returns the path (static buffer rotation of 4). */
static inline const char *write_temp_file(const char *name, const char *text) {
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 4096, "%s/%s", tp_test_temp_dir(), name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0755);
    *slash = '/';
    FILE *file = fopen(path, "w");
    ck_assert_msg(file != NULL, "cannot write %s", path);
    fputs(text, file);
    fclose(file);
    chmod(path, 0644);
    return path;
}

/* State of the backend owning `name`; copies its reason into `reason`. */
static inline tp_backend_state backend_state(const char *name, char *reason, size_t size) {
    tp_backend_info *info = NULL;
    ck_assert_msg(tp_backend_info_get(name, &info) == TP_OK, "%s", tp_last_error());
    tp_backend_state state = info->state;
    if (reason) snprintf(reason, size, "%s", info->reason);
    tp_backend_info_release(info, 1);
    return state;
}

#define ck_assert_contains(haystack, needle)                                                       \
    ck_assert_msg(strstr((haystack), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle),     \
                  (haystack))

/* True when the fixture library `file` (fixture_x.so) is mapped in this process. */
static inline int fixture_is_loaded(const char *file) {
    void *handle = dlopen(fixture(file), RTLD_NOW | RTLD_NOLOAD);
    if (handle) dlclose(handle);
    return handle != NULL;
}

#endif
