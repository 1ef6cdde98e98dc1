/* main() for every suite executable: runs each registered suite. */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_test.h"

#define MAX_SUITES 64
static tp_test_suite_factory suites[MAX_SUITES];
static int suite_count;

void tp_test_register_suite(tp_test_suite_factory factory) {
    if (suite_count < MAX_SUITES) suites[suite_count++] = factory;
}

const char *tp_test_source_dir(void) {
    const char *dir = getenv("TP_SOURCE_DIR");
    return dir && *dir ? dir : TP_TEST_DEFAULT_SOURCE_DIR;
}

const char *tp_test_build_dir(void) {
    const char *dir = getenv("TP_BUILD_DIR");
    return dir && *dir ? dir : TP_TEST_DEFAULT_BUILD_DIR;
}

static char temp_dir[4096];
static pid_t temp_owner;

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *ftw) {
    (void)info, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_temp_dir(void) {
    if (temp_dir[0] && getpid() == temp_owner)
        nftw(temp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tp_test_temp_dir(void) {
    if (!temp_dir[0] || getpid() != temp_owner) {
        const char *base = getenv("TMPDIR");
        snprintf(temp_dir, sizeof temp_dir, "%s/tp-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(temp_dir)) {
            perror("mkdtemp");
            exit(2);
        }
        if (!temp_owner) atexit(remove_temp_dir);
        temp_owner = getpid();
    }
    return temp_dir;
}

int main(void) {
    if (suite_count == 0) {
        fprintf(stderr, "no suites registered\n");
        return 1;
    }
    SRunner *runner = srunner_create(suites[0]());
    for (int i = 1; i < suite_count; i++) srunner_add_suite(runner, suites[i]());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
