/* The "cuda.testing" extension (plugins/cuda/cuda_testing.h) and the shared
 * symbol binder's errors in the cuda backend. Without libcuda.so.1 the
 * probe fails, so the registry cannot load cuda.so (tp_backend_lookup gives
 * the reason): the extension is then checked through the direct-plugin
 * harness (cuda_harness.h, the table's calls.get_extension); with a driver it
 * is also reached through tp_backend_extension (backend.h). The binder is
 * reached at compile with target=ptx, which needs no driver. */
#include <dlfcn.h>
#include <string.h>

#include "cuda_harness.h"
#include "hand_views.h"
#include "tensorplay/backend.h"

static bool driver_present(void) {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library) dlclose(library);
    return library != NULL;
}

static void check_testing_extension(const tp_cuda_testing_extension *testing) {
    ck_assert_ptr_nonnull(testing);
    ck_assert_uint_eq(testing->header.version, 1);
    ck_assert_uint_ge(testing->header.struct_size, sizeof(tp_cuda_testing_extension));
    ck_assert_ptr_nonnull(testing->executable_source);
    ck_assert_ptr_nonnull(testing->compile_source);
    ck_assert_ptr_nonnull(testing->bench_kernels);
}

START_TEST(testing_extension_through_the_table_compiles_and_inspects) {
    const cuda_plugin *p = cuda_plugin_get();
    const tp_cuda_testing_extension *testing =
        (const tp_cuda_testing_extension *)p->table->calls.get_extension(p->context,
                                                                         TP_CUDA_TESTING_EXTENSION);
    check_testing_extension(testing);
    ck_assert_ptr_null(p->table->calls.get_extension(p->context, "cuda.no-such-extension"));
    ck_assert_ptr_null(p->table->calls.get_extension(p->context, ""));

    char error[4096] = "";
    ck_assert_msg(testing->compile_source("extern \"C\" __global__ void k(float *x) { x[0] = 1; }",
                                          "compute_75", error, sizeof error) == TP_PLUGIN_OK,
                  "%s", error);
    ck_assert_int_eq(
        testing->compile_source("__global__ void k( {", "compute_75", error, sizeof error),
        TP_PLUGIN_ERROR);
    ck_assert_msg(*error, "a syntax error gives NVRTC's log");

    hand_unary_view g; /* %y = neg(%x): one kernel, its source and PTX readable */
    hand_unary_view_build(&g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32,
                          TP_PLUGIN_F32);
    tp_plugin_tensor_meta meta = hand_meta(TP_PLUGIN_F32, 1, 4);
    tp_plugin_option target = {"target", "ptx:compute_75"};
    tp_plugin_executable *exe = NULL;
    ck_assert_msg(cuda_plugin_compile(&g.graph, &meta, 1, &target, 1, &exe, error, sizeof error) ==
                      TP_PLUGIN_OK,
                  "%s", error);
    ck_assert_int_eq(testing->executable_kernels(exe), 1);
    ck_assert_ptr_nonnull(strstr(testing->executable_source(exe), "__global__"));
    ck_assert_ptr_nonnull(strstr(testing->executable_ptx(exe), ".entry"));
    ck_assert(testing->bench_kernels(exe, 1) < 0); /* a PTX-only executable cannot run */
    cuda_plugin_release(exe);
}
END_TEST

START_TEST(testing_extension_through_the_registry) {
    tp_backend *backend = NULL;
    tp_status status = tp_backend_lookup("cuda", &backend);
    if (!driver_present()) { /* this machine: the registry explains why it cannot load cuda */
        ck_assert_int_ne(status, TP_OK);
        ck_assert_msg(strstr(tp_last_error(), "libcuda.so.1"), "%s", tp_last_error());
        return;
    }
    if (status != TP_OK) return; /* a driver without a usable device: probe refused */
    check_testing_extension(tp_backend_extension(backend, TP_CUDA_TESTING_EXTENSION));
    ck_assert_ptr_null(tp_backend_extension(backend, "cuda.no-such-extension"));
}
END_TEST

static int32_t compile_binder(const tp_plugin_tensor_meta *metas, char *error, size_t size) {
    hand_symbol_view g;
    hand_symbol_view_build(&g);
    tp_plugin_option target = {"target", "ptx:compute_75"};
    tp_plugin_executable *exe = NULL;
    int32_t status = cuda_plugin_compile(&g.graph, metas, 2, &target, 1, &exe, error, size);
    if (exe) cuda_plugin_release(exe);
    return status;
}

START_TEST(binder_refuses_an_input_of_the_wrong_dtype) {
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_I32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 1, 4)};
    char error[1024] = "";
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "input 0 (%x) is declared f32[N] but was given i32 with 1 dims"),
                  "%s", error);
}
END_TEST

START_TEST(binder_refuses_an_input_of_the_wrong_rank) {
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 2, 4)};
    char error[1024] = "";
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "input 1 (%y) is declared f32[N] but was given f32 with 2 dims"),
                  "%s", error);
}
END_TEST

START_TEST(binder_refuses_two_sizes_for_one_symbol) {
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 4),
                                      hand_meta(TP_PLUGIN_F32, 1, 5)};
    char error[1024] = "";
    ck_assert_int_eq(compile_binder(metas, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "symbol 'N' is 4 in an earlier input but 5 in input 1 (%y) dim 0"),
                  "%s", error);
}
END_TEST

START_TEST(binder_accepts_one_size_for_the_symbol) {
    tp_plugin_tensor_meta metas[2] = {hand_meta(TP_PLUGIN_F32, 1, 5),
                                      hand_meta(TP_PLUGIN_F32, 1, 5)};
    char error[4096] = "";
    ck_assert_msg(compile_binder(metas, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
}
END_TEST

TP_TEST_SUITE(cuda_extension_binder) {
    Suite *suite = suite_create("cuda_extension_binder");
    TCase *cases = tcase_create("extension_binder");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, testing_extension_through_the_table_compiles_and_inspects);
    tcase_add_test(cases, testing_extension_through_the_registry);
    tcase_add_test(cases, binder_refuses_an_input_of_the_wrong_dtype);
    tcase_add_test(cases, binder_refuses_an_input_of_the_wrong_rank);
    tcase_add_test(cases, binder_refuses_two_sizes_for_one_symbol);
    tcase_add_test(cases, binder_accepts_one_size_for_the_symbol);
    suite_add_tcase(suite, cases);
    return suite;
}
