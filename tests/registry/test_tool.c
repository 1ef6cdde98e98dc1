/* tp-backends, run as a program against the fixture registry: check finds
 * wrong answers and crashes, list loads nothing, exit codes. */
#include <sys/wait.h>

#include "registry_test.h"

/* Runs tp-backends with `arguments`; returns the exit status, output in `out`. */
static int run_tool(const char *arguments, char *out, size_t size) {
    char command[8192];
    /* ASan would turn a plugin's SIGSEGV into exit(1); let the signal through. */
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' ASAN_OPTIONS=handle_segv=0:detect_leaks=0 '%s' %s 2>&1",
             TP_FIXTURE_DIR, TP_BACKENDS_TOOL, arguments);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(check_passes_a_good_backend) {
    char out[16384];
    ck_assert_int_eq(run_tool("check good", out, sizeof out), 0);
    ck_assert_contains(out, "ok: backend 'good' passes the check");
}
END_TEST

START_TEST(check_detects_a_wrong_answer) {
    char out[16384];
    ck_assert_int_eq(run_tool("check wrong_answer", out, sizeof out), 1);
    ck_assert_contains(out, "output 0 differs from eager: element 0 is 2.5, eager gives 1.5");
}
END_TEST

START_TEST(check_reports_a_crash_with_the_signal_name) {
    char out[16384];
    ck_assert_int_eq(run_tool("check init_crashes", out, sizeof out), 1);
    ck_assert_contains(out, "backend 'init_crashes' crashed with SIGSEGV");
    ck_assert_contains(out, "during load");
}
END_TEST

START_TEST(check_reports_a_load_failure) {
    char out[16384];
    ck_assert_int_eq(run_tool("check init_fails", out, sizeof out), 1);
    ck_assert_contains(out, "license");
}
END_TEST

START_TEST(list_shows_states_and_loads_nothing) {
    char out[65536];
    ck_assert_int_eq(run_tool("list --json", out, sizeof out), 0);
    ck_assert(strstr(out, "\"status\": \"loaded\"") == NULL);
    ck_assert(strstr(out, "\"status\": \"failed\"") == NULL);
    ck_assert_contains(out, "\"name\": \"core_too_old\", \"status\": \"unavailable\"");
    ck_assert_int_eq(run_tool("list", out, sizeof out), 0);
    ck_assert_contains(out, "NAME");
    ck_assert_contains(out, "missing_requires");
    ck_assert(strstr(out, "eager") == NULL); /* debug: only with --all */
    ck_assert_int_eq(run_tool("list --all", out, sizeof out), 0);
    ck_assert_contains(out, "eager");
}
END_TEST

START_TEST(info_of_unknown_name_exits_1_with_suggestions) {
    char out[16384];
    ck_assert_int_eq(run_tool("info godo", out, sizeof out), 1);
    ck_assert_contains(out, "did you mean: 'good'?");
    ck_assert_int_eq(run_tool("info missing_requires", out, sizeof out), 0);
    ck_assert_contains(out, "libtp-fixture-missing.so.7: MISSING");
}
END_TEST

START_TEST(usage_errors_exit_2) {
    char out[16384];
    ck_assert_int_eq(run_tool("", out, sizeof out), 2);
    ck_assert_int_eq(run_tool("frobnicate", out, sizeof out), 2);
    ck_assert_int_eq(run_tool("list --bogus", out, sizeof out), 2);
    ck_assert_int_eq(run_tool("--help", out, sizeof out), 0);
    ck_assert_contains(out, "usage: tp-backends");
}
END_TEST

START_TEST(paths_shows_the_replacing_variable) {
    char out[16384];
    ck_assert_int_eq(run_tool("paths", out, sizeof out), 0);
    ck_assert_contains(out, "from TP_BACKENDS_FILES; folder");
}
END_TEST

TP_TEST_SUITE(registry_tool) {
    Suite *suite = suite_create("registry.tool");
    TCase *tc = tcase_create("tool");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, check_passes_a_good_backend);
    tcase_add_test(tc, check_detects_a_wrong_answer);
    tcase_add_test(tc, check_reports_a_crash_with_the_signal_name);
    tcase_add_test(tc, check_reports_a_load_failure);
    tcase_add_test(tc, list_shows_states_and_loads_nothing);
    tcase_add_test(tc, info_of_unknown_name_exits_1_with_suggestions);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, paths_shows_the_replacing_variable);
    suite_add_tcase(suite, tc);
    return suite;
}
