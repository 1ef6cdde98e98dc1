/* A privileged tpc ignores the environment: a setuid-root copy of tpc run as
 * `nobody` (through setpriv) uses none of TP_BACKENDS_FILES/PATH,
 * TP_DEFAULT_BACKEND, TP_CONFIG, TP_LOG, TP_LOADER_DEBUG or TP_CACHE_DIR,
 * while the same overrides, given to an unprivileged run, each visibly take
 * effect (so the test can fail). Needs root to make the setuid copy (CI runs
 * as root); skipped with a message otherwise. */
#include <sys/wait.h>
#include <unistd.h>

#include "registry_test.h"
#include "tensorplay/tensor.h"

static const char *temp(const char *relative) {
    static char paths[8][4096];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 4096, "%s/%s", tp_test_temp_dir(), relative);
    return path;
}

/* relu(x) for x = [-1, 2, 3]: the sum of the output is 5 by hand. */
static void write_graph_and_input(void) {
    FILE *graph = fopen(temp("relu.tpir"), "w");
    ck_assert_ptr_nonnull(graph);
    fputs("graph g(%x: f32[3]) {\n  %y: f32[3] = relu(%x)\n  return %y\n}\n", graph);
    fclose(graph);
    const float values[3] = {-1, 2, 3};
    const int64_t shape[1] = {3};
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &x), TP_OK);
    ck_assert_int_eq(tp_npy_save(temp("x.npy"), x), TP_OK);
    tp_tensor_release(x);
    /* An INI naming a backend whose init always fails, for the overrides to point at. */
    mkdir(temp("evil.d"), 0755);
    FILE *ini = fopen(temp("evil.d/evil.ini"), "w");
    ck_assert_ptr_nonnull(ini);
    fprintf(ini,
            "[tensorplay]\nformat = 1\n\n[init_fails]\nlibrary = %s\nentry = tp_fixture_backend\n"
            "contract = 1\n",
            fixture("fixture_init_fails.so"));
    fclose(ini);
}

/* Runs `prefix tpc run relu.tpir --arg x=x.npy` with `environment`; returns
 * the exit status, stdout and stderr together in `out`. */
static int run_tpc(const char *tpc, const char *prefix, const char *environment, char *out,
                   size_t size) {
    char command[16384];
    snprintf(command, sizeof command,
             "cd / && env -i PATH=/usr/bin:/bin %s ASAN_OPTIONS=detect_leaks=0 %s '%s' run '%s' "
             "--arg x='%s' 2>&1",
             environment, prefix, tpc, temp("relu.tpir"), temp("x.npy"));
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(setuid_tpc_run_as_nobody_ignores_every_override) {
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        fprintf(stderr, "setuid: skipping: making a setuid-root copy of tpc and running it as "
                        "nobody needs root and setpriv (CI runs as root)\n");
        return;
    }
    ck_assert_int_eq(chmod(tp_test_temp_dir(), 0755), 0);
    write_graph_and_input();
    char copy_command[8192];
    snprintf(copy_command, sizeof copy_command, "cp '%s' '%s' && chmod 4755 '%s'", TP_TPC_TOOL,
             temp("tpc-setuid"), temp("tpc-setuid"));
    ck_assert_int_eq(system(copy_command), 0);
    char environment[8192];
    char out[65536];

    /* Each override works on an unprivileged run. */
    snprintf(environment, sizeof environment, "TP_BACKENDS_PATH='%s' TP_DEFAULT_BACKEND=init_fails",
             temp("evil.d"));
    ck_assert_int_eq(run_tpc(TP_TPC_TOOL, "", environment, out, sizeof out), 1);
    ck_assert_contains(out, "license");
    snprintf(environment, sizeof environment,
             "TP_BACKENDS_FILES='%s/evil.ini' "
             "TP_DEFAULT_BACKEND=init_fails",
             temp("evil.d"));
    ck_assert_int_eq(run_tpc(TP_TPC_TOOL, "", environment, out, sizeof out), 1);
    ck_assert_contains(out, "license");
    ck_assert_int_eq(
        run_tpc(TP_TPC_TOOL, "", "TP_CONFIG=/nonexistent/tensorplay.ini", out, sizeof out), 1);
    ck_assert_contains(out, "TP_CONFIG");
    ck_assert_int_eq(run_tpc(TP_TPC_TOOL, "", "TP_LOG=debug TP_LOADER_DEBUG=1", out, sizeof out),
                     0);
    ck_assert_contains(out, "tensorplay: debug: loader: ");

    /* The setuid copy, run as nobody, with all of them at once. */
    snprintf(environment, sizeof environment,
             "TP_BACKENDS_PATH='%s' TP_BACKENDS_FILES='%s/evil.ini' TP_DEFAULT_BACKEND=init_fails "
             "TP_CONFIG=/nonexistent/tensorplay.ini TP_LOG=debug TP_LOADER_DEBUG=1 "
             "TP_CACHE_DIR='%s' HOME=/nonexistent XDG_CACHE_HOME=/nonexistent",
             temp("evil.d"), temp("evil.d"), temp("cache"));
    int status = run_tpc(temp("tpc-setuid"),
                         "/usr/bin/setpriv --reuid=nobody --regid=nogroup --clear-groups",
                         environment, out, sizeof out);
    ck_assert_msg(status == 0, "setuid tpc failed (%d): %s", status, out);
    ck_assert_msg(strstr(out, "license") == NULL, "the evil backend was used: %s", out);
    ck_assert_msg(strstr(out, "tensorplay: debug") == NULL, "debug output appeared: %s", out);
    ck_assert_contains(out, "y: f32[3] sum=5 abs_sum=5");
    struct stat info;
    ck_assert_msg(stat(temp("cache"), &info) != 0, "TP_CACHE_DIR was created");
}
END_TEST

TP_TEST_SUITE(setuid) {
    Suite *suite = suite_create("registry.setuid");
    TCase *privileged = tcase_create("privileged");
    tcase_set_timeout(privileged, 120);
    tcase_add_test(privileged, setuid_tpc_run_as_nobody_ignores_every_override);
    suite_add_tcase(suite, privileged);
    return suite;
}
