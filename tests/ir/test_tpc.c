/* The tpc tool, run as a child process from the build tree: exit codes 0 /
 * 1 / 2, what it prints, and the files it writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir_helpers.h"

static char out_text[8192], err_text[8192];

static void read_file(const char *path, char *buffer, size_t size) {
    FILE *file = fopen(path, "rb");
    size_t length = file ? fread(buffer, 1, size - 1, file) : 0;
    buffer[length] = '\0';
    if (file) fclose(file);
}

static char *temp_path(const char *name) {
    static char paths[8][4096];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", tp_test_temp_dir(), name);
    return path;
}

static void write_text(const char *path, const char *text) {
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    fclose(file);
}

/* Runs tpc with NULL-terminated `args`; returns its exit status and fills
 * out_text / err_text. */
static int run_tpc(const char *const *args) {
    char tpc[4096];
    snprintf(tpc, sizeof tpc, "%s/tpc", tp_test_build_dir());
    const char *out_path = temp_path("stdout.txt"), *err_path = temp_path("stderr.txt");
    char *argv[32] = {tpc};
    int argc = 1;
    for (; args[argc - 1] && argc < 31; argc++) argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(out_path, "wb", stdout) || !freopen(err_path, "wb", stderr)) _exit(126);
        execv(tpc, argv);
        _exit(127);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    read_file(out_path, out_text, sizeof out_text);
    read_file(err_path, err_text, sizeof err_text);
    ck_assert_msg(WIFEXITED(status), "tpc did not exit normally");
    ck_assert_msg(WEXITSTATUS(status) != 127, "cannot run %s", tpc);
    return WEXITSTATUS(status);
}

static const char double_graph[] = "graph twice(%x: f32[3]) {\n"
                                   "  %y: f32[3] = add(%x, %x)\n"
                                   "  return %y\n"
                                   "}\n";

static const char *write_graph(void) {
    const char *path = temp_path("twice.tpir");
    write_text(path, double_graph);
    return path;
}

static const char *write_npy(const char *name, int64_t size, const float *values) {
    const char *path = temp_path(name);
    tp_tensor *tensor;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, &size, values, &tensor), TP_OK);
    ck_assert_int_eq(tp_npy_save(path, tensor), TP_OK);
    tp_tensor_release(tensor);
    return path;
}

START_TEST(version_prints_the_core_version) {
    ck_assert_int_eq(run_tpc((const char *[]){"--version", NULL}), 0);
    ck_assert_str_eq(out_text, "tpc (TensorPlay) 0.1.0\n");
}
END_TEST

START_TEST(help_exits_zero_with_usage) {
    ck_assert_int_eq(run_tpc((const char *[]){"--help", NULL}), 0);
    ck_assert_ptr_nonnull(strstr(out_text, "usage: tpc run"));
}
END_TEST

START_TEST(no_command_is_a_usage_error) {
    ck_assert_int_eq(run_tpc((const char *[]){NULL}), 2);
    ck_assert_ptr_nonnull(strstr(err_text, "tpc: no command given"));
}
END_TEST

START_TEST(unknown_command_is_a_usage_error) {
    ck_assert_int_eq(run_tpc((const char *[]){"frobnicate", NULL}), 2);
    ck_assert_ptr_nonnull(strstr(err_text, "unknown command 'frobnicate'"));
}
END_TEST

START_TEST(check_counts_inputs_nodes_outputs) {
    ck_assert_int_eq(run_tpc((const char *[]){"check", write_graph(), NULL}), 0);
    ck_assert_str_eq(out_text, "ok: 1 inputs, 1 nodes, 1 outputs\n");
}
END_TEST

START_TEST(check_of_a_malformed_graph_fails_with_its_location) {
    const char *path = temp_path("bad.tpir");
    write_text(path, "graph g(%x: f32[3]) {\n  %y: f32[3] = ad(%x, %x)\n  return %y\n}\n");
    ck_assert_int_eq(run_tpc((const char *[]){"check", path, NULL}), 1);
    char expected[4200];
    snprintf(expected, sizeof expected, "tpc: %s:2:16: expected an op name, found unknown op 'ad'",
             path);
    ck_assert_msg(strncmp(err_text, expected, strlen(expected)) == 0, "%s", err_text);
}
END_TEST

START_TEST(print_writes_canonical_text) {
    const char *path = temp_path("loose.tpir");
    write_text(path, "graph twice( %x:f32[3] ) { %y:f32[3]=add(%x,%x) return %y }");
    ck_assert_int_eq(run_tpc((const char *[]){"print", path, NULL}), 0);
    ck_assert_str_eq(out_text, double_graph);
}
END_TEST

START_TEST(print_of_a_missing_file_fails) {
    ck_assert_int_eq(run_tpc((const char *[]){"print", "/nonexistent.tpir", NULL}), 1);
    ck_assert_ptr_nonnull(strstr(err_text, "tpc: /nonexistent.tpir: cannot open"));
}
END_TEST

START_TEST(run_prints_checksums_and_writes_outputs) {
    const char *x = write_npy("x.npy", 3, (const float[]){1, -2, 3});
    char arg[4200], out_dir[4200];
    snprintf(arg, sizeof arg, "x=%s", x);
    snprintf(out_dir, sizeof out_dir, "%s/out", tp_test_temp_dir());
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--backend", "eager", "--arg",
                                              arg, "--out", out_dir, NULL}),
                     0);
    ck_assert_str_eq(out_text, "y: f32[3] sum=4 abs_sum=12\n"); /* 2 - 4 + 6 and 2 + 4 + 6 */
    char y_path[4300];
    snprintf(y_path, sizeof y_path, "%s/y.npy", out_dir);
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_npy_load(y_path, &y), TP_OK);
    ck_assert(tp_tensor_get_f64(y, 0) == 2 && tp_tensor_get_f64(y, 1) == -4 &&
              tp_tensor_get_f64(y, 2) == 6);
    tp_tensor_release(y);
}
END_TEST

START_TEST(run_without_an_arg_for_an_input_is_a_usage_error) {
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), NULL}), 2);
    ck_assert_str_eq(err_text, "tpc: missing --arg x=FILE.npy for input %x: f32[3] of graph "
                               "'twice'\n");
}
END_TEST

START_TEST(run_with_an_unknown_arg_name_is_a_usage_error) {
    const char *x = write_npy("x.npy", 3, (const float[]){1, 2, 3});
    char arg[4200];
    snprintf(arg, sizeof arg, "z=%s", x);
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--arg", arg, NULL}), 2);
    ck_assert_str_eq(err_text,
                     "tpc: --arg z: graph 'twice' has no input named %z; its inputs are: %x\n");
}
END_TEST

START_TEST(run_with_a_wrong_shape_fails_naming_the_input) {
    const char *x = write_npy("x.npy", 4, (const float[]){1, 2, 3, 4});
    char arg[4200];
    snprintf(arg, sizeof arg, "%%x=%s", x);
    ck_assert_int_eq(
        run_tpc((const char *[]){"run", write_graph(), "--backend", "eager", "--arg", arg, NULL}),
        1);
    ck_assert_str_eq(err_text, "tpc: graph 'twice': input %x expects f32[3], got f32[4] "
                               "(dimension 0: 3 vs 4)\n");
}
END_TEST

START_TEST(run_with_an_unknown_backend_suggests_names) {
    const char *x = write_npy("x.npy", 3, (const float[]){1, 2, 3});
    char arg[4200];
    snprintf(arg, sizeof arg, "x=%s", x);
    ck_assert_int_eq(
        run_tpc((const char *[]){"run", write_graph(), "--backend", "eagr", "--arg", arg, NULL}),
        1);
    ck_assert_msg(strstr(err_text, "Invalid backend: 'eagr', did you mean: 'eager'?"), "%s",
                  err_text);
}
END_TEST

START_TEST(run_passes_options_to_the_backend_which_rejects_unknown_ones) {
    const char *x = write_npy("x.npy", 3, (const float[]){1, 2, 3});
    char arg[4200];
    snprintf(arg, sizeof arg, "x=%s", x);
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--backend", "eager",
                                              "--option", "frobnicate=1", "--arg", arg, NULL}),
                     1);
    ck_assert_msg(strstr(err_text, "frobnicate"), "%s", err_text);
}
END_TEST

START_TEST(run_passes_the_mode_to_the_backend_which_names_the_modes_it_knows) {
    const char *x = write_npy("x.npy", 3, (const float[]){1, 2, 3});
    char arg[4200];
    snprintf(arg, sizeof arg, "x=%s", x);
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--backend", "eager", "--mode",
                                              "turbo", "--arg", arg, NULL}),
                     1);
    ck_assert_msg(strstr(err_text, "unknown mode 'turbo' (known modes: default)"), "%s", err_text);
}
END_TEST

START_TEST(run_with_a_mode_and_options_is_a_usage_error) {
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--mode", "max-autotune",
                                              "--option", "threads=1", NULL}),
                     2);
    ck_assert_msg(strstr(err_text, "pass --option mode=max-autotune instead"), "%s", err_text);
}
END_TEST

START_TEST(run_with_a_malformed_arg_is_a_usage_error) {
    ck_assert_int_eq(run_tpc((const char *[]){"run", write_graph(), "--arg", "x", NULL}), 2);
    ck_assert_ptr_nonnull(strstr(err_text, "--arg takes NAME=FILE.npy"));
}
END_TEST

TP_TEST_SUITE(ir_tpc) {
    Suite *suite = suite_create("ir.tpc");
    TCase *tc = tcase_create("tpc");
    tcase_add_test(tc, version_prints_the_core_version);
    tcase_add_test(tc, help_exits_zero_with_usage);
    tcase_add_test(tc, no_command_is_a_usage_error);
    tcase_add_test(tc, unknown_command_is_a_usage_error);
    tcase_add_test(tc, check_counts_inputs_nodes_outputs);
    tcase_add_test(tc, check_of_a_malformed_graph_fails_with_its_location);
    tcase_add_test(tc, print_writes_canonical_text);
    tcase_add_test(tc, print_of_a_missing_file_fails);
    tcase_add_test(tc, run_prints_checksums_and_writes_outputs);
    tcase_add_test(tc, run_without_an_arg_for_an_input_is_a_usage_error);
    tcase_add_test(tc, run_with_an_unknown_backend_suggests_names);
    tcase_add_test(tc, run_passes_options_to_the_backend_which_rejects_unknown_ones);
    tcase_add_test(tc, run_with_an_unknown_arg_name_is_a_usage_error);
    tcase_add_test(tc, run_with_a_wrong_shape_fails_naming_the_input);
    tcase_add_test(tc, run_with_a_malformed_arg_is_a_usage_error);
    tcase_add_test(tc, run_passes_the_mode_to_the_backend_which_names_the_modes_it_knows);
    tcase_add_test(tc, run_with_a_mode_and_options_is_a_usage_error);
    suite_add_tcase(suite, tc);
    return suite;
}
