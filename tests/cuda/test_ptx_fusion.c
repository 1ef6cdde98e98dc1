/* Fusion and the compile path: kernel counts of known graphs (a pointwise
 * chain is one kernel, softmax three, matmul + bias + relu one with the
 * epilogue on the accumulators), random fusion graphs from the passes'
 * generator compile for compute_75 and compute_90, options are checked,
 * NVRTC failures carry the log and the saved source, and a PTX-only
 * executable refuses to run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../passes/random_graph.h"
#include "cuda_harness.h"
#include "registry/registry_internal.h"

static tp_graph *parse(const char *text) {
    tp_graph *graph;
    ck_assert_int_eq(tp_graph_parse(text, strlen(text), NULL, &graph), TP_OK);
    return graph;
}

START_TEST(pointwise_chain_is_one_kernel) {
    tp_graph *graph = parse("graph chain(%x: f32[64, 32], %b: f32[32]) {\n"
                            "  %a: f32[64, 32] = add(%x, %b)\n"
                            "  %e: f32[64, 32] = exp(%a)\n"
                            "  %t: f32[64, 32] = tanh(%e)\n"
                            "  %m: f32[64, 32] = mul(%t, %x)\n"
                            "  return %m\n"
                            "}\n");
    ck_assert_int_eq(cuda_compile_ptx(graph, "compute_75"), 1);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(softmax_is_three_kernels_with_the_exponentials_fused) {
    tp_graph *graph = parse("graph sm(%x: f32[16, 100]) {\n"
                            "  %s: f32[16, 100] = softmax(%x) {axis=1}\n"
                            "  return %s\n"
                            "}\n");
    ck_assert_int_eq(cuda_compile_ptx(graph, "compute_75"), 3); /* max, sum(exp), exp / sum */
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(matmul_bias_relu_is_one_kernel_with_an_epilogue) {
    tp_graph *graph = parse("graph mlp(%x: f32[64, 128], %w: f32[128, 32], %b: f32[32]) {\n"
                            "  %m: f32[64, 32] = matmul(%x, %w)\n"
                            "  %a: f32[64, 32] = add(%m, %b)\n"
                            "  %r: f32[64, 32] = relu(%a)\n"
                            "  return %r\n"
                            "}\n");
    char error[4096], *source = NULL;
    int kernels = 0;
    ck_assert_msg(
        cuda_try_compile_ptx(graph, "compute_90", NULL, 0, error, sizeof error, &kernels, &source),
        "%s", error);
    ck_assert_int_eq(kernels, 1);
    ck_assert_ptr_nonnull(strstr(source, "acc[ti][tj]"));
    ck_assert_ptr_nonnull(strstr(source, "__shared__"));
    free(source);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(reductions_use_warp_shuffles) {
    tp_graph *graph = parse("graph r(%x: f32[8, 1000]) {\n"
                            "  %s: f32[8] = sum(%x) {axes=[1], keepdim=false}\n"
                            "  return %s\n"
                            "}\n");
    char error[4096], *source = NULL;
    ck_assert_msg(
        cuda_try_compile_ptx(graph, "compute_75", NULL, 0, error, sizeof error, NULL, &source),
        "%s", error);
    ck_assert_ptr_nonnull(strstr(source, "__shfl_down_sync"));
    free(source);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(random_fusion_graphs_compile_for_both_architectures) {
    int compiled = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        tp_graph *graph = NULL;
        ck_assert_int_eq(random_graph(seed, 14, &graph), TP_OK);
        char error[8192];
        bool ok75 =
            cuda_try_compile_ptx(graph, "compute_75", NULL, 0, error, sizeof error, NULL, NULL);
        ck_assert_msg(ok75, "seed %llu: %s", (unsigned long long)seed, error);
        bool ok90 =
            cuda_try_compile_ptx(graph, "compute_90", NULL, 0, error, sizeof error, NULL, NULL);
        ck_assert_msg(ok90, "seed %llu: %s", (unsigned long long)seed, error);
        tp_graph_destroy(graph);
        compiled++;
    }
    ck_assert_int_eq(compiled, 40);
}
END_TEST

START_TEST(unknown_option_is_named_with_the_known_ones) {
    tp_graph *graph = parse("graph g(%x: f32[4]) {\n  %y: f32[4] = neg(%x)\n  return %y\n}\n");
    const char *options[] = {"tile=32"};
    char error[1024];
    ck_assert(
        !cuda_try_compile_ptx(graph, "compute_75", options, 1, error, sizeof error, NULL, NULL));
    ck_assert_str_eq(error, "unknown option 'tile' (known: target, device, cache, dump)");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(target_below_compute_75_is_refused) {
    tp_graph *graph = parse("graph g(%x: f32[4]) {\n  %y: f32[4] = neg(%x)\n  return %y\n}\n");
    char error[1024];
    ck_assert(!cuda_try_compile_ptx(graph, "compute_50", NULL, 0, error, sizeof error, NULL, NULL));
    ck_assert_msg(strstr(error, "target=ptx:compute_50") && strstr(error, "XY >= 75"), "%s", error);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(nvrtc_error_carries_the_log_and_the_saved_source) {
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/nvrtc-cache", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", cache, 1);
    char error[8192] = "";
    int32_t result = cuda_plugin_get()->testing->compile_source(
        "extern \"C\" __global__ void broken(float *x) { x[0] = undeclared_name; }\n", "compute_75",
        error, sizeof error);
    unsetenv("TP_CACHE_DIR");
    ck_assert_int_eq(result, TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(error, "undeclared_name") && strstr(error, "source saved to "), "%s",
                  error);
    char *path = strstr(error, "source saved to ") + strlen("source saved to ");
    char *end = strchr(path, ')');
    ck_assert_ptr_nonnull(end);
    *end = '\0';
    ck_assert_msg(access(path, R_OK) == 0, "saved source %s is missing", path);
}
END_TEST

START_TEST(ptx_only_executable_refuses_to_run) {
    tp_graph *graph = parse("graph g(%x: f32[4]) {\n  %y: f32[4] = neg(%x)\n  return %y\n}\n");
    cuda_plugin_get();
    tp_graph_view *view;
    ck_assert_int_eq(tp_graph_view_create(graph, &view), TP_OK);
    tp_plugin_tensor_meta meta = {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    tp_plugin_option target = {"target", "ptx:compute_75"};
    tp_plugin_executable *exe = NULL;
    char error[2048];
    ck_assert_int_eq(cuda_plugin_compile(tp_graph_view_get(view), &meta, 1, &target, 1, &exe, error,
                                         sizeof error),
                     TP_PLUGIN_OK);
    float in[4] = {1, 2, 3, 4}, out[4];
    tp_plugin_buffer input = {
        .data = in, .nbytes = 16, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    tp_plugin_buffer output = {
        .data = out, .nbytes = 16, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    tp_host_clear_error();
    ck_assert_int_eq(cuda_plugin_run(exe, &input, 1, &output, 1), TP_PLUGIN_ERROR);
    ck_assert_msg(strstr(tp_host_take_error(), "target=device"), "%s", tp_host_take_error());
    cuda_plugin_release(exe);
    tp_graph_view_destroy(view);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(cuda_ptx_fusion) {
    Suite *suite = suite_create("cuda_ptx_fusion");
    TCase *cases = tcase_create("fusion");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, pointwise_chain_is_one_kernel);
    tcase_add_test(cases, softmax_is_three_kernels_with_the_exponentials_fused);
    tcase_add_test(cases, matmul_bias_relu_is_one_kernel_with_an_epilogue);
    tcase_add_test(cases, reductions_use_warp_shuffles);
    tcase_add_test(cases, random_fusion_graphs_compile_for_both_architectures);
    tcase_add_test(cases, unknown_option_is_named_with_the_known_ones);
    tcase_add_test(cases, target_below_compute_75_is_refused);
    tcase_add_test(cases, nvrtc_error_carries_the_log_and_the_saved_source);
    tcase_add_test(cases, ptx_only_executable_refuses_to_run);
    suite_add_tcase(suite, cases);
    return suite;
}
