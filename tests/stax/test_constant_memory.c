/* stax keeps only the graph constants a run reads. While a graph is planned,
 * its constants are read in place from the graph; afterwards each one some
 * step reads at run time is copied into the executable, and the raw weights
 * of a conv or matmul packed at compile (whose steps read only the packed
 * copy) are let go: the compile's debug log says how many and how many
 * bytes. Each case checks that count and bytes and the results, against a
 * double-precision product or the eager backend: a weight also read by
 * another step is kept, and so is every constant under max-autotune (whose
 * candidates of other blocking pack the raw weights themselves). */
#include <math.h>

#include "stax_harness.h"

#define K 130
#define N 70

static tp_graph *matmul_graph(tp_tensor *w, bool relu_of_w_too) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("constants", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, (int64_t[]){64, K}), wv;
    tp_attrs payload = TP_ATTRS_INIT;
    payload.data = w;
    ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "w", &wv), TP_OK);
    tp_value_id out[2];
    out[0] = stax_test_node(g, "matmul", (tp_value_id[]){x, wv}, 2, NULL);
    if (relu_of_w_too) out[1] = stax_test_node(g, "relu", &wv, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, out, relu_of_w_too ? 2 : 1), TP_OK);
    return g;
}

/* Runs the matmul graph; returns how many log lines carry `needle`. */
static int run_matmul(bool relu_of_w_too, const char *const *options, int num_options,
                      const char *needle, const char *what) {
    stax_test_cache_dir();
    tp_tensor *x = stax_test_random(TP_F32, 2, (int64_t[]){64, K}, 11);
    tp_tensor *w = stax_test_random(TP_F32, 2, (int64_t[]){K, N}, 12);
    tp_graph *g = matmul_graph(w, relu_of_w_too);
    tp_tensor *y[2] = {NULL, NULL}, *operands[3] = {x, w, NULL};
    int lines = 0;
    tp_status status = stax_test_run_counting(needle, g, &x, 1, options, num_options, y, &lines);
    ck_assert_msg(status == TP_OK, "%s: %s", what, tp_last_error());
    stax_test_product shape = {.batch = 1, .m = 64, .k = K, .n = N, .dtype = TP_F32};
    stax_test_check_product(&shape, operands, y[0], what);
    if (relu_of_w_too)
        for (int64_t i = 0; i < K * N; i++) {
            double v = tp_tensor_get_f64(w, i);
            ck_assert_msg(tp_tensor_get_f64(y[1], i) == (v > 0 ? v : 0.0),
                          "%s: relu(w)[%lld] is %g, want %g", what, (long long)i,
                          tp_tensor_get_f64(y[1], i), v > 0 ? v : 0.0);
        }
    for (int i = 0; i < 2; i++)
        if (y[i]) tp_tensor_release(y[i]);
    tp_graph_destroy(g);
    tp_tensor_release(x);
    tp_tensor_release(w);
    return lines;
}

START_TEST(raw_weight_of_a_matmul_packed_at_compile_is_not_kept) {
    char needle[64];
    snprintf(needle, sizeof needle, "1 constant (%d bytes) not kept", K * N * 4);
    ck_assert_int_eq(run_matmul(false, NULL, 0, needle, "matmul, w a constant"), 1);
}
END_TEST

START_TEST(a_weight_another_step_reads_is_kept) {
    ck_assert_int_eq(run_matmul(true, NULL, 0, "not kept", "matmul and relu of the same w"), 0);
}
END_TEST

START_TEST(max_autotune_keeps_every_constant) {
    char path[4200];
    snprintf(path, sizeof path, "%s/constants-autotune", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", path, 1);
    const char *options[] = {"mode=max-autotune", "autotune_budget_ms=200"};
    ck_assert_int_eq(run_matmul(false, options, 2, "not kept", "max-autotune"), 0);
    unsetenv("TP_CACHE_DIR");
}
END_TEST

/* conv(x, w, b) with w and b constants: the packed conv reads w's packed
 * copy, and b itself (kept). */
START_TEST(raw_weights_of_a_packed_conv_are_not_kept_and_its_bias_is) {
    stax_test_cache_dir();
    static const int64_t x_dims[4] = {2, 16, 12, 12}, w_dims[4] = {32, 16, 3, 3}, b_dims[1] = {32};
    tp_tensor *x = stax_test_random(TP_F32, 4, x_dims, 21);
    tp_tensor *w = stax_test_random(TP_F32, 4, w_dims, 22);
    tp_tensor *b = stax_test_random(TP_F32, 1, b_dims, 23);
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("conv_constants", &g), TP_OK);
    tp_value_id ids[3], y;
    ids[0] = stax_test_input(g, "x", TP_F32, 4, x_dims);
    tp_attrs payload = TP_ATTRS_INIT;
    payload.data = w;
    ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "w", &ids[1]), TP_OK);
    payload.data = b;
    ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "b", &ids[2]), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = 1;
    attrs.npads = 4;
    for (int i = 0; i < 4; i++) attrs.pads[i] = 1;
    ck_assert_int_eq(tp_graph_add_node(g, "conv", ids, 3, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    char needle[64];
    snprintf(needle, sizeof needle, "1 constant (%d bytes) not kept", 32 * 16 * 9 * 4);
    tp_tensor *got[1] = {NULL}, *want[1] = {NULL};
    int lines = 0;
    ck_assert_msg(stax_test_run_counting(needle, g, &x, 1, NULL, 0, got, &lines) == TP_OK, "%s",
                  tp_last_error());
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(stax_test_run("eager", g, &x, 1, NULL, 0, want) == TP_OK, "%s", tp_last_error());
    stax_test_expect_close(got[0], want[0], 1e-4, 1e-4, "conv with constant w and b");
    tp_tensor_release(got[0]);
    tp_tensor_release(want[0]);
    tp_graph_destroy(g);
    tp_tensor_release(x);
    tp_tensor_release(w);
    tp_tensor_release(b);
}
END_TEST

TP_TEST_SUITE(stax_constant_memory) {
    Suite *s = suite_create("stax_constant_memory");
    TCase *c = tcase_create("constant_memory");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, raw_weight_of_a_matmul_packed_at_compile_is_not_kept);
    tcase_add_test(c, a_weight_another_step_reads_is_kept);
    tcase_add_test(c, max_autotune_keeps_every_constant);
    tcase_add_test(c, raw_weights_of_a_packed_conv_are_not_kept_and_its_bias_is);
    suite_add_tcase(s, c);
    return s;
}
