/* tpc and a backend that crashes (fixture init_crashes: SIGSEGV while it is
 * loaded): tpc says which backend, phase and graph, then dies with the same
 * signal; with --isolate the crash happens in a child and tpc fails with
 * exit status 1 and the signal named. */
#include <signal.h>
#include <sys/wait.h>

#include "registry_test.h"
#include "tensorplay/tensor.h"

/* A one-input graph named crash_probe and its input, in the temp folder. */
static void write_graph(char *graph_path, char *input_path, size_t size) {
    snprintf(graph_path, size, "%s/crash_probe.tpir", tp_test_temp_dir());
    snprintf(input_path, size, "%s/x.npy", tp_test_temp_dir());
    FILE *graph = fopen(graph_path, "w");
    ck_assert_ptr_nonnull(graph);
    fputs("graph crash_probe(%x: f32[2]) {\n  %y: f32[2] = neg(%x)\n  return %y\n}\n", graph);
    fclose(graph);
    const float values[2] = {1, 2};
    const int64_t shape[1] = {2};
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &x), TP_OK);
    ck_assert_int_eq(tp_npy_save(input_path, x), TP_OK);
    tp_tensor_release(x);
}

/* Runs tpc run on the graph with --backend init_crashes and `extra`;
 * returns the raw wait status, stderr and stdout in `out`. */
static int run_crashing(const char *extra, char *out, size_t size) {
    char graph[4200], input[4200], command[16384];
    write_graph(graph, input, sizeof graph);
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' ASAN_OPTIONS=handle_segv=0:handle_abort=0:detect_leaks=0 "
             "'%s' run '%s' --arg x='%s' --backend init_crashes %s 2>&1",
             TP_FIXTURE_DIR, TP_TPC_TOOL, graph, input, extra);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    return pclose(pipe);
}

START_TEST(crash_in_a_backend_names_backend_phase_and_graph_and_keeps_the_signal) {
    char out[16384];
    int status = run_crashing("", out, sizeof out);
    /* popen runs a shell: a child killed by a signal shows as 128 + signal. */
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSEGV,
                  "tpc did not die with SIGSEGV (status %d): %s", status, out);
    ck_assert_contains(out, "tpc: backend 'init_crashes' crashed with SIGSEGV");
    ck_assert_contains(out, "during load of graph 'crash_probe'");
}
END_TEST

START_TEST(isolated_run_reports_the_crash_and_fails_normally) {
    char out[16384];
    int status = run_crashing("--isolate", out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, out);
    ck_assert_contains(out, "during load of graph 'crash_probe'");
    ck_assert_contains(out, "died with SIGSEGV");
}
END_TEST

TP_TEST_SUITE(tpc_crash) {
    Suite *suite = suite_create("registry.tpc_crash");
    TCase *crash = tcase_create("crash");
    tcase_add_test(crash, crash_in_a_backend_names_backend_phase_and_graph_and_keeps_the_signal);
    tcase_add_test(crash, isolated_run_reports_the_crash_and_fails_normally);
    suite_add_tcase(suite, crash);
    return suite;
}
