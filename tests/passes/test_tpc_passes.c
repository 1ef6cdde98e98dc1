/* `tpc print --passes`: the graph after every pass (fusion is the backends':
 * no plan is printed).
 * Runs the built tpc binary on a small graph written to a temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pass_test_util.h"

/* Runs `tpc ARGS` and returns its stdout (caller frees); *code gets the exit. */
static char *run_tpc(const char *args, int *code) {
    char command[8192];
    snprintf(command, sizeof command, "'%s/tpc' %s 2>/dev/null", tp_test_build_dir(), args);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t size = 0, capacity = 1 << 16;
    char *text = malloc(capacity);
    size_t got;
    while ((got = fread(text + size, 1, capacity - 1 - size, pipe)) > 0) size += got;
    text[size] = '\0';
    int status = pclose(pipe);
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return text;
}

START_TEST(print_passes_shows_each_pass_and_the_plan) {
    char path[4096];
    snprintf(path, sizeof path, "%s/silu.tpir", tp_test_temp_dir());
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("graph t(%x: f32[3]) {\n"
          "  %y: f32[3] = silu(%x)\n"
          "  return %y\n"
          "}\n",
          file);
    fclose(file);
    char args[4200];
    snprintf(args, sizeof args, "print --passes '%s'", path);
    int code = -1;
    char *out = run_tpc(args, &code);
    ck_assert_int_eq(code, 0);
    ck_assert_ptr_nonnull(strstr(out, "# ---- input (1 nodes)"));
    ck_assert_ptr_nonnull(strstr(out, "# ---- after normalize (unchanged"));
    ck_assert_ptr_nonnull(strstr(out, "# ---- after decompose (changed, 2 nodes)"));
    ck_assert_ptr_nonnull(strstr(out, "sigmoid(%x)"));
    ck_assert_ptr_nonnull(strstr(out, "# ---- after shapeprop"));
    ck_assert_ptr_null(strstr(out, "fusion"));
    free(out);
}
END_TEST

START_TEST(print_passes_reports_a_missing_file) {
    int code = -1;
    char *out = run_tpc("print --passes /nonexistent/g.tpir", &code);
    ck_assert_int_eq(code, 1);
    free(out);
}
END_TEST

TP_TEST_SUITE(tpc_passes) {
    Suite *s = suite_create("passes.tpc");
    TCase *c = tcase_create("tpc");
    tcase_add_test(c, print_passes_shows_each_pass_and_the_plan);
    tcase_add_test(c, print_passes_reports_a_missing_file);
    suite_add_tcase(s, c);
    return s;
}
