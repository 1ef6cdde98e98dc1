/* The compile config knobs: defaults, API setters, environment, ini file,
 * precedence and the errors that name the knob. Each check test runs in its
 * own process, so environment changes stay inside one test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/config.h"
#include "tensorplay/compile.h"
#include "tp_test.h"

static char config_home[4096];

/* A fresh, empty XDG_CONFIG_HOME and no TP_* variables for each test (tests
 * may share one process under CK_FORK=no). */
static void isolate_from_host_files(void) {
    snprintf(config_home, sizeof config_home, "%s/config-XXXXXX", tp_test_temp_dir());
    ck_assert_ptr_nonnull(mkdtemp(config_home));
    setenv("XDG_CONFIG_HOME", config_home, 1);
    unsetenv("TP_CONFIG");
    unsetenv("TP_RECOMPILE_LIMIT");
    unsetenv("TP_ACCUMULATED_RECOMPILE_LIMIT");
    tp_config_reload();
}

static const char *write_ini(const char *text) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/tensorplay.ini", config_home);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    fclose(file);
    return path;
}

START_TEST(test_defaults_match_the_reference) {
    isolate_from_host_files();
    tp_compile_policy policy;
    ck_assert_int_eq(tp_config_snapshot(&policy), TP_OK);
    ck_assert_int_eq(policy.recompile_limit, 8);
    ck_assert_int_eq(policy.accumulated_recompile_limit, 256);
    ck_assert(!policy.fail_on_recompile_limit_hit);
    ck_assert(!policy.force_disable_caches);
    ck_assert(policy.assume_static_by_default);
    ck_assert(!policy.verbose);
    ck_assert_int_eq(policy.dynamic_shapes, -1);
}
END_TEST

START_TEST(test_unknown_knob_is_rejected_by_name) {
    isolate_from_host_files();
    ck_assert_int_eq(tp_config_set_int("recompile_limits", 3), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'recompile_limits'"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "recompile_limit,"));
}
END_TEST

START_TEST(test_wrong_type_is_rejected_by_name) {
    isolate_from_host_files();
    ck_assert_int_eq(tp_config_set_bool("recompile_limit", true), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'recompile_limit'"));
    ck_assert_int_eq(tp_config_set_int("verbose", 1), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'verbose'"));
}
END_TEST

START_TEST(test_limit_below_one_is_rejected) {
    isolate_from_host_files();
    ck_assert_int_eq(tp_config_set_int("accumulated_recompile_limit", 0), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'accumulated_recompile_limit'"));
}
END_TEST

START_TEST(test_environment_overrides_ini_and_api_overrides_environment) {
    isolate_from_host_files();
    setenv("TP_CONFIG", write_ini("[compile]\nrecompile_limit = 3\nverbose = yes\n"), 1);
    tp_config_reload();
    int64_t limit;
    bool verbose;
    ck_assert_int_eq(tp_config_get_int("recompile_limit", &limit), TP_OK);
    ck_assert_int_eq(limit, 3);
    ck_assert_int_eq(tp_config_get_bool("verbose", &verbose, NULL), TP_OK);
    ck_assert(verbose);

    setenv("TP_RECOMPILE_LIMIT", "5", 1);
    tp_config_reload();
    ck_assert_int_eq(tp_config_get_int("recompile_limit", &limit), TP_OK);
    ck_assert_int_eq(limit, 5);

    ck_assert_int_eq(tp_config_set_int("recompile_limit", 7), TP_OK);
    ck_assert_int_eq(tp_config_get_int("recompile_limit", &limit), TP_OK);
    ck_assert_int_eq(limit, 7);
    ck_assert_int_eq(tp_config_unset("recompile_limit"), TP_OK);
    ck_assert_int_eq(tp_config_get_int("recompile_limit", &limit), TP_OK);
    ck_assert_int_eq(limit, 5);
}
END_TEST

START_TEST(test_xdg_config_file_is_found) {
    isolate_from_host_files();
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tensorplay", config_home);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/tensorplay.ini", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("[backends]\nwhatever = 1\n[compile]\nforce_disable_caches = true\n", file);
    fclose(file);
    tp_config_reload();
    bool value;
    ck_assert_int_eq(tp_config_get_bool("force_disable_caches", &value, NULL), TP_OK);
    ck_assert(value);
}
END_TEST

START_TEST(test_bad_environment_value_names_variable_and_knob) {
    isolate_from_host_files();
    setenv("TP_ACCUMULATED_RECOMPILE_LIMIT", "many", 1);
    tp_config_reload();
    tp_compile_policy policy;
    ck_assert_int_eq(tp_config_snapshot(&policy), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "TP_ACCUMULATED_RECOMPILE_LIMIT"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'accumulated_recompile_limit'"));
}
END_TEST

START_TEST(test_unknown_ini_knob_names_file_and_knob) {
    isolate_from_host_files();
    const char *path = write_ini("[compile]\nrecompile_limt = 3\n");
    setenv("TP_CONFIG", path, 1);
    tp_config_reload();
    tp_compile_policy policy;
    ck_assert_int_eq(tp_config_snapshot(&policy), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), path));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'recompile_limt'"));
}
END_TEST

START_TEST(test_getters_report_a_bad_ini_value_that_tp_compile_rejects) {
    isolate_from_host_files();
    const char *path = write_ini("[compile]\nrecompile_limit = abc\n");
    setenv("TP_CONFIG", path, 1);
    tp_config_reload();
    int64_t limit = -1;
    ck_assert_int_eq(tp_config_get_int("recompile_limit", &limit), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'recompile_limit'"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'abc'"));
    ck_assert_int_eq(limit, -1); /* untouched: no default passed off as the value */
    bool verbose;
    ck_assert_int_eq(tp_config_get_bool("verbose", &verbose, NULL), TP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_dynamic_shapes_is_unset_until_set) {
    isolate_from_host_files();
    bool value, is_set;
    ck_assert_int_eq(tp_config_get_bool("dynamic_shapes", &value, &is_set), TP_OK);
    ck_assert(!is_set);
    ck_assert_int_eq(tp_config_set_bool("dynamic_shapes", true), TP_OK);
    ck_assert_int_eq(tp_config_get_bool("dynamic_shapes", &value, &is_set), TP_OK);
    ck_assert(is_set && value);
}
END_TEST

TP_TEST_SUITE(compile_config) {
    Suite *suite = suite_create("compile_config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, test_defaults_match_the_reference);
    tcase_add_test(tc, test_unknown_knob_is_rejected_by_name);
    tcase_add_test(tc, test_wrong_type_is_rejected_by_name);
    tcase_add_test(tc, test_limit_below_one_is_rejected);
    tcase_add_test(tc, test_environment_overrides_ini_and_api_overrides_environment);
    tcase_add_test(tc, test_xdg_config_file_is_found);
    tcase_add_test(tc, test_bad_environment_value_names_variable_and_knob);
    tcase_add_test(tc, test_unknown_ini_knob_names_file_and_knob);
    tcase_add_test(tc, test_getters_report_a_bad_ini_value_that_tp_compile_rejects);
    tcase_add_test(tc, test_dynamic_shapes_is_unset_until_set);
    suite_add_tcase(suite, tc);
    return suite;
}
