/* What the cuda backend refuses, and how it says so: supports refuses an op
 * id newer than the plugin, a composite (the core decomposes it), a
 * pointwise op at a dtype it has no expression for, an unknown dtype,
 * f16/bf16 values (no code generation for them yet), each
 * with TP_PLUGIN_UNSUPPORTED and a reason naming op and value; compile
 * refuses the same with TP_PLUGIN_UNSUPPORTED, and a malformed option value
 * (TP_PLUGIN_ERROR) with the option and what is expected. The graph views
 * are built by hand here, so the ops and dtypes can be ones no core would
 * produce. */
#include <string.h>

#include "cuda_harness.h"
#include "hand_views.h"
#include "tensorplay/plugin_ops.h"

/* One input %x: f32[4] and one node %y = op(%x) of result dtype `dtype`
 * (hand_views.h), with the input metadata compile needs. */
typedef struct one_node_graph {
    hand_unary_view view;
    tp_plugin_tensor_meta meta;
} one_node_graph;

static void build_node(one_node_graph *g, const char *op, int32_t op_id, int32_t kind,
                       int32_t dtype, int32_t compute) {
    hand_unary_view_build(&g->view, op, op_id, kind, dtype, compute);
    g->meta = (tp_plugin_tensor_meta){.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
}

/* %y = neg(%x), of result dtype `dtype`. */
static void build(one_node_graph *g, int32_t dtype) {
    build_node(g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, dtype, dtype);
}

static int32_t supports(const one_node_graph *g, char *why, size_t size) {
    return cuda_plugin_supports(&g->view.graph, 1, why, size);
}

/* Compiles for PTX with `extra` as a second option; returns the status. */
static int32_t compile(const one_node_graph *g, const char *extra_key, const char *extra_value,
                       char *error, size_t error_size) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_plugin_option options[2] = {{"target", "ptx:compute_75"}, {extra_key, extra_value}};
    tp_plugin_executable *exe = NULL;
    (void)p;
    int32_t status = cuda_plugin_compile(&g->view.graph, &g->meta, 1, options, extra_key ? 2 : 1,
                                         &exe, error, error_size);
    if (exe) cuda_plugin_release(exe);
    return status;
}

START_TEST(op_id_newer_than_the_plugin_is_refused_naming_op_and_id) {
    one_node_graph g;
    build_node(&g, "frobnicate", TP_PLUGIN_OP_COUNT, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32,
               TP_PLUGIN_F32);
    char why[1024] = "";
    ck_assert_int_eq(supports(&g, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    char expected[128];
    snprintf(expected, sizeof expected,
             "op 'frobnicate' (%%y, op id %d) is newer than the cuda plugin", TP_PLUGIN_OP_COUNT);
    ck_assert_msg(strstr(why, expected), "%s", why);
}
END_TEST

START_TEST(composite_is_refused_so_the_core_decomposes_it) {
    one_node_graph g;
    build_node(&g, "softmax", TP_PLUGIN_OP_SOFTMAX, TP_PLUGIN_KIND_COMPOSITE, TP_PLUGIN_F32,
               TP_PLUGIN_F32);
    char why[1024] = "";
    ck_assert_int_eq(supports(&g, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(why, "op 'softmax' (%y) is a composite"), "%s", why);
    ck_assert_int_eq(compile(&g, NULL, NULL, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(why, "op 'softmax' (%y)"), "%s", why);
}
END_TEST

START_TEST(pointwise_op_without_an_expression_at_its_dtype_is_refused) {
    one_node_graph g; /* exp has no integer expression: the core's rule computes it in f32 */
    build_node(&g, "exp", TP_PLUGIN_OP_EXP, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_I32, TP_PLUGIN_I32);
    char why[1024] = "";
    ck_assert_int_eq(supports(&g, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_str_eq(why, "op 'exp' (%y) computing in i32: no CUDA C expression");
}
END_TEST

START_TEST(unknown_result_dtype_is_refused_as_unsupported) {
    one_node_graph g;
    build(&g, 42); /* a dtype code from a newer core */
    char why[1024] = "";
    ck_assert_int_eq(supports(&g, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(why, "op 'neg' (%y): result dtype 42 is unknown"), "%s", why);
    ck_assert_int_eq(compile(&g, NULL, NULL, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strncmp(why, "op 'neg' (%y)", 13) == 0, "%s", why);
}
END_TEST

/* f16/bf16 have no CUDA code generation yet: refused, so partitioning runs
 * them on the fallback backend. */
START_TEST(storage_float_values_are_refused_naming_the_value) {
    static const int32_t storage[] = {TP_PLUGIN_F16, TP_PLUGIN_BF16};
    for (int i = 0; i < 2; i++) {
        one_node_graph g;
        build_node(&g, "neg", TP_PLUGIN_OP_NEG, TP_PLUGIN_KIND_POINTWISE, storage[i],
                   TP_PLUGIN_F32);
        char why[1024] = "";
        ck_assert_int_eq(supports(&g, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
        ck_assert_msg(strstr(why, "op 'neg' (%y) reads or writes f16/bf16"), "%s", why);
        ck_assert_int_eq(compile(&g, NULL, NULL, why, sizeof why), TP_PLUGIN_UNSUPPORTED);
        ck_assert_msg(strstr(why, "%y reads or writes f16/bf16"), "%s", why);
    }
}
END_TEST

START_TEST(known_op_on_known_dtypes_is_claimed_and_compiles) {
    one_node_graph g;
    build(&g, TP_PLUGIN_F32);
    char error[4096] = "";
    ck_assert_msg(supports(&g, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
    ck_assert_msg(compile(&g, NULL, NULL, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
}
END_TEST

START_TEST(cache_option_other_than_on_or_off_is_refused) {
    one_node_graph g;
    build(&g, TP_PLUGIN_F32);
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, "cache", "maybe", error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_str_eq(error, "option cache=maybe: expected on or off");
}
END_TEST

START_TEST(device_option_out_of_range_is_refused) {
    one_node_graph g;
    build(&g, TP_PLUGIN_F32);
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, "device", "16", error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_str_eq(error, "option device=16: expected an integer from 0 to 15");
}
END_TEST

TP_TEST_SUITE(cuda_refusals) {
    Suite *suite = suite_create("cuda_refusals");
    TCase *cases = tcase_create("refusals");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, op_id_newer_than_the_plugin_is_refused_naming_op_and_id);
    tcase_add_test(cases, composite_is_refused_so_the_core_decomposes_it);
    tcase_add_test(cases, pointwise_op_without_an_expression_at_its_dtype_is_refused);
    tcase_add_test(cases, unknown_result_dtype_is_refused_as_unsupported);
    tcase_add_test(cases, storage_float_values_are_refused_naming_the_value);
    tcase_add_test(cases, known_op_on_known_dtypes_is_claimed_and_compiles);
    tcase_add_test(cases, cache_option_other_than_on_or_off_is_refused);
    tcase_add_test(cases, device_option_out_of_range_is_refused);
    suite_add_tcase(suite, cases);
    return suite;
}
