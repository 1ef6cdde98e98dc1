/* The opencl backend on contract revision 2, loaded through the registry
 * from the build tree's INI: what supports refuses (an op id newer than the
 * plugin, a pointwise op at a dtype it has no OpenCL C expression for, an
 * f16/bf16 value, a view without op ids) with TP_PLUGIN_UNSUPPORTED and a reason naming the
 * op; the probe lowering an INI priority to 50 on PoCL's CPU device and
 * naming the device (and tp_backend_info's priority from the build tree's
 * INI); the shared symbol binder's errors at compile (wrong dtype, wrong
 * rank, two sizes for one symbol). Views are built by hand (hand_views.h)
 * so they can hold what no core produces. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hand_views.h"
#include "ocl_harness.h"
#include "registry/registry_internal.h"
#include "tp_test.h"

static tp_backend *opencl(void) {
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("opencl", &backend) == TP_OK, "%s", tp_last_error());
    return backend;
}

static int32_t supports(const tp_plugin_graph *graph, int32_t value, char *why, size_t size) {
    tp_backend *backend = opencl();
    tp_host_clear_error();
    int32_t status = tp_backend_call_supports(backend, graph, value);
    snprintf(why, size, "%s", tp_host_take_error());
    return status;
}

START_TEST(op_id_newer_than_the_plugin_is_refused_naming_op_and_id) {
    if (!oclt_available()) return;
    hand_unary_view g;
    hand_unary_view_build(&g, "frobnicate", TP_PLUGIN_OP_COUNT, TP_PLUGIN_KIND_POINTWISE,
                          TP_PLUGIN_F32, TP_PLUGIN_F32);
    char why[1024], want[256];
    ck_assert_int_eq(supports(&g.graph, 1, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    snprintf(want, sizeof want, "op 'frobnicate' (%%y, op id %d) is newer than the opencl plugin",
             TP_PLUGIN_OP_COUNT);
    ck_assert_msg(strstr(why, want), "%s", why);
}
END_TEST

START_TEST(pointwise_op_without_an_expression_at_its_dtype_is_refused) {
    if (!oclt_available()) return;
    hand_unary_view g; /* exp has no integer expression: the core computes it in f32 */
    hand_unary_view_build(&g, "exp", TP_PLUGIN_OP_EXP, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_I32,
                          TP_PLUGIN_I32);
    char why[1024];
    ck_assert_int_eq(supports(&g.graph, 1, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_str_eq(why, "op 'exp' (%y) computing in i32: no OpenCL C expression");
}
END_TEST

/* f16/bf16 have no OpenCL code generation yet: refused, so partitioning runs
 * them on the fallback backend. */
START_TEST(storage_float_values_are_refused_naming_the_value) {
    if (!oclt_available()) return;
    static const int32_t storage[] = {TP_PLUGIN_F16, TP_PLUGIN_BF16};
    for (int i = 0; i < 2; i++) {
        hand_unary_view g;
        hand_unary_view_build(&g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, storage[i],
                              TP_PLUGIN_F32);
        char why[1024];
        ck_assert_int_eq(supports(&g.graph, 1, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
        ck_assert_msg(strstr(why, "op 'neg' (%y) reads or writes f16/bf16"), "%s", why);
    }
}
END_TEST

START_TEST(view_without_op_ids_is_refused) {
    if (!oclt_available()) return;
    hand_unary_view g;
    hand_unary_view_build(&g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32,
                          TP_PLUGIN_F32);
    g.graph.nodes = NULL;
    char why[1024];
    ck_assert_int_eq(supports(&g.graph, 1, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(why, "no op ids"), "%s", why);
}
END_TEST

START_TEST(known_op_is_claimed) {
    if (!oclt_available()) return;
    hand_unary_view g;
    hand_unary_view_build(&g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32,
                          TP_PLUGIN_F32);
    char why[1024];
    ck_assert_msg(supports(&g.graph, 1, why, sizeof why) == TP_PLUGIN_OK, "%s", why);
}
END_TEST

/* In a child: an INI naming the build tree's opencl.so with `priority`,
 * loaded through the registry; writes "PRIORITY|DEVICE" (the probe's info
 * on the loaded table) or the lookup error to `out`. */
static void load_with_priority(int priority, char *out, size_t size) {
    char ini[4300];
    snprintf(ini, sizeof ini, "%s/opencl-priority-%d.ini", tp_test_temp_dir(), priority);
    FILE *file = fopen(ini, "w");
    ck_assert_ptr_nonnull(file);
    fprintf(file,
            "[opencl]\nlibrary = %s/plugins/opencl.so\nentry = tp_opencl_backend\n"
            "contract = 2\npriority = %d\n",
            tp_test_build_dir(), priority);
    fclose(file);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(fds[0]);
        setenv("TP_BACKENDS_FILES", ini, 1);
        unsetenv("TP_BACKENDS_PATH");
        char text[1024];
        tp_backend *backend = NULL;
        if (tp_backend_rescan() != TP_OK || tp_backend_lookup("opencl", &backend) != TP_OK) {
            snprintf(text, sizeof text, "lookup failed: %s", tp_last_error());
        } else {
            tp_plugin_probe_info info = {.struct_size = sizeof info, .priority = 1000};
            int32_t status = tp_backend_call_probe(backend, backend->table, &info);
            info.device[sizeof info.device - 1] = '\0';
            snprintf(text, sizeof text, "%d|%s|%d", backend->priority,
                     status == TP_PLUGIN_OK ? info.device : "probe failed", info.priority);
        }
        ssize_t written = write(fds[1], text, strlen(text));
        _exit(written > 0 ? 0 : 1);
    }
    close(fds[1]);
    ssize_t length = read(fds[0], out, size - 1);
    out[length > 0 ? length : 0] = '\0';
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s", out);
}

/* PoCL's device is a CPU: a higher INI priority is lowered to 50, and the
 * device is named as not a GPU. */
START_TEST(probe_on_a_cpu_device_lowers_priority_to_50_and_names_it) {
    if (!oclt_available()) return;
    char text[1024];
    load_with_priority(200, text, sizeof text);
    int priority = 0, probed = 0;
    char device[512] = "";
    ck_assert_msg(sscanf(text, "%d|%511[^|]|%d", &priority, device, &probed) == 3, "%s", text);
    ck_assert_msg(priority == 50, "registry priority %d (want 50): %s", priority, text);
    ck_assert_int_eq(probed, 50);
    ck_assert_msg(strstr(device, "(") && strstr(device, "not a GPU)") && device[0] != ' ' &&
                      device[0] != '(',
                  "device: '%s'", device);
}
END_TEST

/* The probe only lowers: an INI priority under 50 stays. */
START_TEST(probe_keeps_a_priority_below_50) {
    if (!oclt_available()) return;
    char text[1024];
    load_with_priority(20, text, sizeof text);
    int priority = 0;
    ck_assert_msg(sscanf(text, "%d|", &priority) == 1, "%s", text);
    ck_assert_int_eq(priority, 20);
}
END_TEST

/* The build tree's INI ranks opencl 200; once loaded on PoCL's CPU device
 * the registry reports the probe's 50 (what `auto` ranks it by). */
START_TEST(info_reports_the_lowered_priority_from_the_build_tree_ini) {
    if (!oclt_available()) return;
    opencl();
    tp_backend_info *info = NULL;
    ck_assert_msg(tp_backend_info_get("opencl", &info) == TP_OK, "%s", tp_last_error());
    ck_assert_int_eq(info->state, TP_BACKEND_LOADED);
    ck_assert_int_eq(info->priority, 50);
    ck_assert_int_eq(info->revision, 2);
    tp_backend_info_release(info, 1);
}
END_TEST

static int32_t compile_binder(const tp_plugin_tensor_meta *metas, char *error, size_t size) {
    tp_backend *backend = opencl();
    hand_symbol_view g;
    hand_symbol_view_build(&g);
    tp_plugin_executable *executable = NULL;
    tp_host_clear_error();
    int32_t status = tp_backend_call_compile(backend, &g.graph, metas, 2, NULL, 0, &executable);
    snprintf(error, size, "%s", tp_host_take_error());
    if (executable) tp_backend_call_release(backend, executable);
    return status;
}

START_TEST(binder_refuses_an_input_of_the_wrong_dtype) {
    if (!oclt_available()) return;
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_I32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 1, 4)};
    char error[1024];
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "input 0 (%x) is declared f32[N] but was given i32 with 1 dims"),
                  "%s", error);
}
END_TEST

START_TEST(binder_refuses_an_input_of_the_wrong_rank) {
    if (!oclt_available()) return;
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 2, 4)};
    char error[1024];
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "input 1 (%y) is declared f32[N] but was given f32 with 2 dims"),
                  "%s", error);
}
END_TEST

START_TEST(binder_refuses_two_sizes_for_one_symbol) {
    if (!oclt_available()) return;
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 1, 5)};
    char error[1024];
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "symbol 'N' is 4 in an earlier input but 5 in input 1 (%y) dim 0"),
                  "%s", error);
}
END_TEST

START_TEST(binder_accepts_one_size_for_the_symbol) {
    if (!oclt_available()) return;
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 5),
                                      hand_meta(TP_PLUGIN_F32, 1, 5)};
    char error[1024];
    ck_assert_msg(compile_binder(metas, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
}
END_TEST

TP_TEST_SUITE(opencl_claims_probe) {
    oclt_environment();
    Suite *suite = suite_create("opencl_claims_probe");
    TCase *cases = tcase_create("claims_probe");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, op_id_newer_than_the_plugin_is_refused_naming_op_and_id);
    tcase_add_test(cases, pointwise_op_without_an_expression_at_its_dtype_is_refused);
    tcase_add_test(cases, storage_float_values_are_refused_naming_the_value);
    tcase_add_test(cases, view_without_op_ids_is_refused);
    tcase_add_test(cases, known_op_is_claimed);
    tcase_add_test(cases, probe_on_a_cpu_device_lowers_priority_to_50_and_names_it);
    tcase_add_test(cases, probe_keeps_a_priority_below_50);
    tcase_add_test(cases, info_reports_the_lowered_priority_from_the_build_tree_ini);
    tcase_add_test(cases, binder_refuses_an_input_of_the_wrong_dtype);
    tcase_add_test(cases, binder_refuses_an_input_of_the_wrong_rank);
    tcase_add_test(cases, binder_refuses_two_sizes_for_one_symbol);
    tcase_add_test(cases, binder_accepts_one_size_for_the_symbol);
    suite_add_tcase(suite, cases);
    return suite;
}
