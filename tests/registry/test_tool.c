/* tp-backends, run as a program against the fixture registry: check finds
 * wrong answers and crashes, list loads nothing, exit codes. */
#include <sys/wait.h>

#include "registry_test.h"

/* Runs tp-backends on the registry `files` with `arguments`; returns the
 * exit status, output in `out`. */
static int run_tool_on(const char *files, const char *arguments, char *out, size_t size) {
    char command[8192];
    /* ASan would turn a plugin's SIGSEGV into exit(1); let the signal through. */
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' ASAN_OPTIONS=handle_segv=0:detect_leaks=0 '%s' %s 2>&1", files,
             TP_BACKENDS_TOOL, arguments);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs tp-backends on the fixture registry. */
static int run_tool(const char *arguments, char *out, size_t size) {
    return run_tool_on(TP_FIXTURE_DIR, arguments, out, size);
}

/* Appends an INI entry for fixture library `library` (entry tp_fixture_backend, contract 1). */
static void append_entry(char *text, size_t size, const char *section, const char *library,
                         int priority) {
    size_t used = strlen(text);
    snprintf(text + used, size - used,
             "[%s]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\npriority = %d\n\n",
             section, fixture(library), priority);
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

START_TEST(list_says_what_auto_picks_and_why) {
    char text[8192] = "";
    append_entry(text, sizeof text, "good", "fixture_good.so", 20);
    append_entry(text, sizeof text, "probe_fails", "fixture_probe_fails.so", 90);
    append_entry(text, sizeof text, "missing_library", "fixture_not_built.so", 300);
    append_entry(text, sizeof text, "wrong_answer", "fixture_wrong_answer.so", 5);
    const char *files = write_temp_file("auto.ini", text);
    char out[65536];
    ck_assert_int_eq(run_tool_on(files, "list", out, sizeof out), 0);
    ck_assert_contains(out, "auto picks 'good': highest priority of the available backends (20)");
    ck_assert_contains(out, "'probe_fails' (priority 90) failed to load: ");
    ck_assert_contains(out, "no fixture device found");
    ck_assert_contains(out, "'missing_library' (priority 300) is unavailable: ");
    ck_assert(strstr(out, "'wrong_answer' (priority") == NULL); /* ranked below the pick */
    ck_assert_int_eq(run_tool_on(files, "list --json", out, sizeof out), 0);
    ck_assert_contains(out, "\"auto\": {\"pick\": \"good\", \"why\": \"highest priority");
    ck_assert_contains(out, "\"priority\": 300");
    /* The child resolved auto; the listing process itself loaded nothing. */
    ck_assert(strstr(out, "\"status\": \"loaded\"") == NULL);
    ck_assert(strstr(out, "\"status\": \"failed\"") == NULL);
}
END_TEST

START_TEST(list_survives_a_candidate_that_crashes_while_auto_loads_it) {
    char text[8192] = "";
    append_entry(text, sizeof text, "good", "fixture_good.so", 20);
    append_entry(text, sizeof text, "init_crashes", "fixture_init_crashes.so", 90);
    char out[65536];
    ck_assert_int_eq(run_tool_on(write_temp_file("auto.ini", text), "list", out, sizeof out), 0);
    ck_assert_contains(out, "auto picks nothing: a candidate crashed while loading");
    ck_assert_contains(out, "`tp-backends check NAME` shows which");
    ck_assert_contains(out, "init_crashes"); /* the table is still printed */
}
END_TEST

START_TEST(info_shows_the_contract_range_and_priority) {
    char out[16384];
    ck_assert_int_eq(run_tool("info speaks_1_2", out, sizeof out), 0);
    ck_assert_contains(out, "contract:       revisions 1 to 2 (this TensorPlay implements 1 to 2)");
    ck_assert_contains(out, "priority:       40");
    ck_assert_int_eq(run_tool("info good", out, sizeof out), 0);
    ck_assert_contains(out, "contract:       revision 1 (");
    ck_assert_contains(out, "priority:       10");
}
END_TEST

START_TEST(check_prints_the_negotiated_revision) {
    char out[16384];
    ck_assert_int_eq(run_tool("check speaks_1_3", out, sizeof out), 0);
    ck_assert_contains(out, "contract revision 2 (negotiated");
    ck_assert_int_eq(run_tool("check good", out, sizeof out), 0);
    ck_assert_contains(out, "contract revision 1 (negotiated");
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
    tcase_add_test(tc, list_says_what_auto_picks_and_why);
    tcase_add_test(tc, list_survives_a_candidate_that_crashes_while_auto_loads_it);
    tcase_add_test(tc, info_shows_the_contract_range_and_priority);
    tcase_add_test(tc, check_prints_the_negotiated_revision);
    suite_add_tcase(suite, tc);
    return suite;
}
