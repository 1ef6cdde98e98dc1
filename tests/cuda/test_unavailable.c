/* The cuda backend where it cannot run: this machine's case (no
 * libcuda.so.1) and a driver whose cuInit fails (a fake libcuda.so.1 that
 * behaves like the toolkit's stub library). The tools give the reason,
 * `check` exits non-zero, nothing crashes. Tools run from the build tree. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_harness.h"
#include "registry/registry_internal.h"

static char output[16384];

/* Runs build/tp-backends with args; LD_LIBRARY_PATH=`library_path` when
 * given. Returns the exit status; stdout+stderr in `output`. */
static int run_tool(const char *library_path, const char *a, const char *b) {
    char tool[4096], path[4200];
    snprintf(tool, sizeof tool, "%s/tp-backends", tp_test_build_dir());
    snprintf(path, sizeof path, "%s/tool-output.txt", tp_test_temp_dir());
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(path, "wb", stdout) || dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(126);
        if (library_path) setenv("LD_LIBRARY_PATH", library_path, 1);
        unsetenv("TP_BACKENDS_FILES");
        unsetenv("TP_BACKENDS_PATH");
        execl(tool, tool, a, b, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    FILE *file = fopen(path, "rb");
    size_t length = file ? fread(output, 1, sizeof output - 1, file) : 0;
    output[length] = '\0';
    if (file) fclose(file);
    ck_assert_msg(WIFEXITED(status), "tp-backends %s %s crashed:\n%s", a, b ? b : "", output);
    ck_assert_int_ne(WEXITSTATUS(status), 127);
    return WEXITSTATUS(status);
}

static bool driver_present(void) {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library) dlclose(library);
    return library != NULL;
}

START_TEST(probe_without_the_driver_names_libcuda) {
    if (driver_present()) return; /* a machine with the driver: nothing to check here */
    char why[512] = "";
    ck_assert_int_eq(cuda_plugin_probe(why, sizeof why), TP_PLUGIN_UNAVAILABLE);
    ck_assert_str_eq(why, "libcuda.so.1 not found (install the NVIDIA driver)");
}
END_TEST

START_TEST(list_and_info_give_the_reason_without_the_driver) {
    if (driver_present()) return;
    ck_assert_int_eq(run_tool(NULL, "list", NULL), 0);
    ck_assert_msg(strstr(output, "cuda") && strstr(output, "unavailable") &&
                      strstr(output, "libcuda.so.1 not found"),
                  "%s", output);
    ck_assert_int_eq(run_tool(NULL, "info", "cuda"), 0);
    ck_assert_msg(strstr(output, "unavailable") && strstr(output, "libcuda.so.1"), "%s", output);
}
END_TEST

START_TEST(check_exits_nonzero_with_the_reason_without_the_driver) {
    if (driver_present()) return;
    ck_assert_int_ne(run_tool(NULL, "check", "cuda"), 0);
    ck_assert_msg(strstr(output, "libcuda.so.1 not found"), "%s", output);
}
END_TEST

START_TEST(check_names_the_cuinit_error_of_a_stub_driver) {
    ck_assert_int_ne(run_tool(TP_TEST_FAKE_DRIVER_DIR, "check", "cuda"), 0);
    ck_assert_msg(strstr(output, "cuInit: CUDA_ERROR_STUB_LIBRARY (CUDA driver is a stub library)"),
                  "%s", output);
}
END_TEST

START_TEST(list_with_a_stub_driver_does_not_crash) {
    ck_assert_int_eq(run_tool(TP_TEST_FAKE_DRIVER_DIR, "list", NULL), 0);
    ck_assert_msg(strstr(output, "cuda"), "%s", output);
}
END_TEST

START_TEST(compile_for_the_device_without_the_driver_gives_the_reason) {
    if (driver_present()) return;
    tp_graph *graph;
    static const char text[] = "graph g(%x: f32[4]) {\n  %y: f32[4] = exp(%x)\n  return %y\n}\n";
    ck_assert_int_eq(tp_graph_parse(text, sizeof text - 1, NULL, &graph), TP_OK);
    tp_graph_view *view;
    ck_assert_int_eq(tp_graph_view_create(graph, &view), TP_OK);
    tp_plugin_tensor_meta meta = {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    tp_plugin_executable *exe = NULL;
    char error[1024] = "";
    ck_assert_int_eq(
        cuda_plugin_compile(tp_graph_view_get(view), &meta, 1, NULL, 0, &exe, error, sizeof error),
        TP_PLUGIN_ERROR);
    ck_assert_ptr_null(exe);
    ck_assert_msg(strstr(error, "libcuda.so.1 not found"), "%s", error);
    tp_graph_view_destroy(view);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(cuda_unavailable) {
    Suite *suite = suite_create("cuda_unavailable");
    TCase *cases = tcase_create("unavailable");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, probe_without_the_driver_names_libcuda);
    tcase_add_test(cases, list_and_info_give_the_reason_without_the_driver);
    tcase_add_test(cases, check_exits_nonzero_with_the_reason_without_the_driver);
    tcase_add_test(cases, check_names_the_cuinit_error_of_a_stub_driver);
    tcase_add_test(cases, list_with_a_stub_driver_does_not_crash);
    tcase_add_test(cases, compile_for_the_device_without_the_driver_gives_the_reason);
    suite_add_tcase(suite, cases);
    return suite;
}
