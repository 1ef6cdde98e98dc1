/* Shared by every check suite: suite registration and small helpers.
 *
 * A test file declares its suite with TP_TEST_SUITE(name) { ... build and
 * return a Suite * ... }; check_main.c runs every suite linked into the
 * executable (one executable per module, run by ctest). */
#ifndef TP_TESTS_SUPPORT_TP_TEST_H
#define TP_TESTS_SUPPORT_TP_TEST_H

#include <check.h>

typedef Suite *(*tp_test_suite_factory)(void);
void tp_test_register_suite(tp_test_suite_factory factory);

#define TP_TEST_SUITE(name)                                                                        \
    static Suite *name##_suite(void);                                                              \
    __attribute__((constructor)) static void name##_register(void) {                               \
        tp_test_register_suite(name##_suite);                                                      \
    }                                                                                              \
    static Suite *name##_suite(void)

/* Source and build folders (set by ctest; defaults for running by hand). */
const char *tp_test_source_dir(void);
const char *tp_test_build_dir(void);
/* A fresh empty temporary folder for this process (removed at exit). */
const char *tp_test_temp_dir(void);

#endif
