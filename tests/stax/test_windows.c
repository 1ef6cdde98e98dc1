/* stax vs eager on the sliding-window ops (conv, conv_transpose, max_pool,
 * avg_pool; the eager kernels are checked against NumPy in tests/numpy),
 * one case per way stax runs them: implicit GEMM through im2col, the 1x1
 * conv whose input is the GEMM's operand, grouped convs, the direct
 * depthwise loop, conv_transpose per output plane, the pools; operands that
 * are not contiguous (a permuted view) and a conv followed by pointwise ops.
 * stax claims f32 only: f64 is refused with a reason. */
#include "stax_harness.h"

static tp_attrs window_attrs(const int64_t *strides, const int64_t *pads, const int64_t *dilations,
                             int spatial, int64_t group) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = group;
    if (strides) memcpy(attrs.strides, strides, sizeof(int64_t) * (size_t)spatial);
    if (strides) attrs.nstrides = spatial;
    if (pads) memcpy(attrs.pads, pads, sizeof(int64_t) * (size_t)(2 * spatial));
    if (pads) attrs.npads = 2 * spatial;
    if (dilations) memcpy(attrs.dilations, dilations, sizeof(int64_t) * (size_t)spatial);
    if (dilations) attrs.ndilations = spatial;
    return attrs;
}

/* graph(x0, x1, ...) { op(x0, x1, ...) } on f32 inputs of `types`, stax vs eager. */
static void compare_op(const char *op, const tp_type *types, int n, const tp_attrs *attrs,
                       const char *what) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("windows", &g), TP_OK);
    tp_value_id ids[3], result;
    tp_tensor *inputs[3];
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        ck_assert_int_eq(tp_graph_add_input(g, name, &types[i], &ids[i]), TP_OK);
        inputs[i] = stax_test_random(TP_F32, types[i].ndim, types[i].dims, 11 + (uint64_t)i);
    }
    ck_assert_msg(tp_graph_add_node(g, op, ids, n, attrs, "y", &result) == TP_OK, "%s: %s", what,
                  tp_last_error());
    ck_assert_int_eq(tp_graph_set_outputs(g, &result, 1), TP_OK);
    stax_test_compare(g, inputs, n, 1e-4, 1e-4, what);
    for (int i = 0; i < n; i++) tp_tensor_release(inputs[i]);
    tp_graph_destroy(g);
}

static tp_type f32_type(int ndim, const int64_t *dims) {
    tp_type type = {.dtype = TP_F32, .ndim = ndim};
    memcpy(type.dims, dims, sizeof(int64_t) * (size_t)ndim);
    return type;
}

static void compare_conv(const char *what, int ndim, const int64_t *x, const int64_t *w, bool bias,
                         const tp_attrs *attrs, bool transpose) {
    tp_type types[3] = {f32_type(ndim, x), f32_type(ndim, w),
                        f32_type(1, (int64_t[]){transpose ? w[1] * attrs->group : w[0]})};
    compare_op(transpose ? "conv_transpose" : "conv", types, bias ? 3 : 2, attrs, what);
}

START_TEST(conv_through_the_packed_gemm_matches_eager) {
    stax_test_cache_dir();
    tp_attrs pad1 = window_attrs(NULL, (int64_t[]){1, 1, 1, 1}, NULL, 2, 1);
    compare_conv("conv 3x3 pad 1 (im2col)", 4, (int64_t[]){2, 5, 9, 11}, (int64_t[]){7, 5, 3, 3},
                 true, &pad1, false);
    tp_attrs strided = window_attrs((int64_t[]){2, 3}, (int64_t[]){1, 0, 2, 1}, NULL, 2, 1);
    compare_conv("conv stride 2x3 asymmetric pads", 4, (int64_t[]){1, 3, 10, 13},
                 (int64_t[]){20, 3, 3, 2}, false, &strided, false);
    tp_attrs dilated = window_attrs(NULL, (int64_t[]){2, 2, 2, 2}, (int64_t[]){2, 2}, 2, 1);
    compare_conv("conv dilation 2", 4, (int64_t[]){1, 4, 8, 8}, (int64_t[]){6, 4, 3, 3}, true,
                 &dilated, false);
    tp_attrs plain = window_attrs(NULL, NULL, NULL, 2, 1);
    compare_conv("conv 1x1 (the input is the gemm's operand)", 4, (int64_t[]){2, 17, 6, 5},
                 (int64_t[]){9, 17, 1, 1}, true, &plain, false);
    tp_attrs groups = window_attrs(NULL, (int64_t[]){1, 1, 1, 1}, NULL, 2, 2);
    compare_conv("conv group 2", 4, (int64_t[]){2, 6, 7, 7}, (int64_t[]){8, 3, 3, 3}, true, &groups,
                 false);
    tp_attrs one_d = window_attrs((int64_t[]){2}, (int64_t[]){1, 2}, NULL, 1, 1);
    compare_conv("conv 1-D", 3, (int64_t[]){2, 4, 19}, (int64_t[]){5, 4, 3}, true, &one_d, false);
}
END_TEST

static void compare_depthwise_cases(void) {
    tp_attrs depthwise = window_attrs(NULL, (int64_t[]){1, 1, 1, 1}, NULL, 2, 8);
    compare_conv("depthwise 3x3 pad 1", 4, (int64_t[]){2, 8, 12, 12}, (int64_t[]){8, 1, 3, 3}, true,
                 &depthwise, false);
    tp_attrs strided = window_attrs((int64_t[]){2, 2}, (int64_t[]){1, 1, 1, 1}, NULL, 2, 8);
    compare_conv("depthwise stride 2", 4, (int64_t[]){1, 8, 11, 9}, (int64_t[]){8, 1, 3, 3}, false,
                 &strided, false);
    /* rows of at least 16 outputs at stride 2, on planes too large for
     * the channels-last blocks (or with a multiplier): the even/odd split
     * rows, with the border on both sides (two wide on the right), on the
     * right only, or two wide on the left */
    tp_attrs wide = window_attrs((int64_t[]){2, 2}, (int64_t[]){1, 1, 1, 2}, NULL, 2, 3);
    compare_conv("depthwise stride 2, 37 outputs a row", 4, (int64_t[]){1, 3, 65, 72},
                 (int64_t[]){3, 1, 3, 3}, true, &wide, false);
    tp_attrs right = window_attrs((int64_t[]){2, 2}, (int64_t[]){0, 0, 1, 1}, NULL, 2, 2);
    compare_conv("depthwise stride 2, odd width, border right only", 4, (int64_t[]){1, 2, 64, 77},
                 (int64_t[]){2, 1, 3, 3}, true, &right, false);
    tp_attrs twice = window_attrs((int64_t[]){2, 2}, (int64_t[]){1, 2, 1, 0}, NULL, 2, 2);
    compare_conv("depthwise stride 2, multiplier 2, border 2 left", 4, (int64_t[]){1, 2, 6, 35},
                 (int64_t[]){4, 1, 3, 3}, false, &twice, false);
    /* the AVX-512 rows read from the image itself (stax_depthwise_direct.c):
     * masks per output vector worked out in the loop past 64 vectors, two
     * padding columns on the left only */
    tp_attrs long_rows = window_attrs(NULL, (int64_t[]){1, 1, 1, 1}, NULL, 2, 2);
    compare_conv("depthwise 3x3, rows of 2100 outputs", 4, (int64_t[]){1, 2, 4, 2100},
                 (int64_t[]){2, 1, 3, 3}, true, &long_rows, false);
    tp_attrs left_only = window_attrs(NULL, (int64_t[]){0, 2, 2, 0}, NULL, 2, 2);
    compare_conv("depthwise 3x3, two padding columns on the left only", 4, (int64_t[]){1, 2, 9, 40},
                 (int64_t[]){2, 1, 3, 3}, false, &left_only, false);
    tp_attrs multiplier = window_attrs(NULL, (int64_t[]){0, 2, 1, 0}, (int64_t[]){1, 2}, 2, 3);
    compare_conv("depthwise multiplier 2, dilation, asymmetric pads", 4, (int64_t[]){1, 3, 7, 9},
                 (int64_t[]){6, 1, 3, 3}, true, &multiplier, false);
}

/* With the AVX-512 direct rows where the host has them, and with the
 * portable rows (bordered copy, split stride-2 rows, flat runs). */
START_TEST(depthwise_conv_matches_eager) {
    stax_test_cache_dir();
    compare_depthwise_cases();
    setenv("STAX_DEPTHWISE_DIRECT", "off", 1);
    compare_depthwise_cases();
    unsetenv("STAX_DEPTHWISE_DIRECT");
}
END_TEST

START_TEST(conv_transpose_matches_eager) {
    stax_test_cache_dir();
    tp_attrs up = window_attrs((int64_t[]){2, 2}, (int64_t[]){1, 1, 1, 1}, NULL, 2, 1);
    up.noutput_padding = 2, up.output_padding[0] = 1, up.output_padding[1] = 1;
    compare_conv("conv_transpose stride 2 pads output_padding", 4, (int64_t[]){2, 4, 5, 6},
                 (int64_t[]){4, 3, 3, 3}, true, &up, true);
    tp_attrs groups = window_attrs((int64_t[]){1, 2}, NULL, (int64_t[]){2, 1}, 2, 2);
    compare_conv("conv_transpose groups dilation", 4, (int64_t[]){1, 4, 4, 4},
                 (int64_t[]){4, 2, 2, 3}, false, &groups, true);
    tp_attrs one_d = window_attrs((int64_t[]){3}, (int64_t[]){1, 0}, NULL, 1, 1);
    compare_conv("conv_transpose 1-D", 3, (int64_t[]){1, 2, 6}, (int64_t[]){2, 3, 4}, true, &one_d,
                 true);
}
END_TEST

/* Max pools with the AVX-512 direct rows where the host has them, and with
 * the portable rows. */
START_TEST(pools_match_eager) {
    stax_test_cache_dir();
    const char *const ops[] = {"max_pool", "avg_pool"};
    for (int o = 0; o < 4; o++) {
        setenv("STAX_POOL_DIRECT", o < 2 ? "auto" : "off", 1);
        tp_type x = f32_type(4, (int64_t[]){2, 3, 11, 10});
        tp_attrs a = window_attrs((int64_t[]){2, 2}, (int64_t[]){1, 1, 1, 1}, NULL, 2, 1);
        a.nkernel_shape = 2, a.kernel_shape[0] = 3, a.kernel_shape[1] = 3;
        compare_op(ops[o % 2], &x, 1, &a, "pool 3x3 stride 2 pad 1");
        a.ceil_mode = true;
        a.count_include_pad = true;
        compare_op(ops[o % 2], &x, 1, &a, "pool ceil_mode count_include_pad");
        tp_attrs d = window_attrs(NULL, NULL, (int64_t[]){2, 3}, 2, 1);
        d.nkernel_shape = 2, d.kernel_shape[0] = 2, d.kernel_shape[1] = 2;
        compare_op(ops[o % 2], &x, 1, &d, "pool dilation");
        tp_type line = f32_type(3, (int64_t[]){2, 3, 17});
        tp_attrs l = window_attrs((int64_t[]){3}, (int64_t[]){2, 1}, NULL, 1, 1);
        l.nkernel_shape = 1, l.kernel_shape[0] = 4;
        compare_op(ops[o % 2], &line, 1, &l, "pool 1-D");
    }
    unsetenv("STAX_POOL_DIRECT");
}
END_TEST

/* conv(permute(x_nhwc), w) then relu(y + 1): the permuted operand is copied
 * into a contiguous buffer, and the pointwise ops after the conv read its
 * result. */
START_TEST(conv_of_a_permuted_view_with_pointwise_after_matches_eager) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("nhwc_conv", &g), TP_OK);
    tp_type x_type = f32_type(4, (int64_t[]){2, 9, 8, 5}),
            w_type = f32_type(4, (int64_t[]){4, 5, 3, 3});
    tp_value_id x, w, nchw, y, one, shifted, out;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &x_type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(g, "w", &w_type, &w), TP_OK);
    tp_attrs perm = TP_ATTRS_INIT;
    perm.nperm = 4, perm.perm[0] = 0, perm.perm[1] = 3, perm.perm[2] = 1, perm.perm[3] = 2;
    ck_assert_int_eq(tp_graph_add_node(g, "permute", &x, 1, &perm, "nchw", &nchw), TP_OK);
    tp_attrs pads = window_attrs(NULL, (int64_t[]){1, 1, 1, 1}, NULL, 2, 1);
    ck_assert_int_eq(tp_graph_add_node(g, "conv", (tp_value_id[]){nchw, w}, 2, &pads, "y", &y),
                     TP_OK);
    tp_attrs full = TP_ATTRS_INIT;
    full.value = 1.0, full.dtype = TP_F32;
    ck_assert_int_eq(tp_graph_add_node(g, "full", NULL, 0, &full, "one", &one), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "add", (tp_value_id[]){y, one}, 2, NULL, "s", &shifted),
                     TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "relu", &shifted, 1, NULL, "out", &out), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 4, x_type.dims, 3),
                            stax_test_random(TP_F32, 4, w_type.dims, 4)};
    stax_test_compare(g, inputs, 2, 1e-4, 1e-4, "relu(conv(permute(x), w) + 1)");
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(f64_conv_is_refused_with_a_reason) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("f64_conv", &g), TP_OK);
    tp_type x_type = {.dtype = TP_F64, .ndim = 4, .dims = {1, 2, 5, 5}};
    tp_type w_type = {.dtype = TP_F64, .ndim = 4, .dims = {3, 2, 3, 3}};
    tp_value_id x, w, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &x_type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(g, "w", &w_type, &w), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    ck_assert_int_eq(tp_graph_add_node(g, "conv", (tp_value_id[]){x, w}, 2, &attrs, "y", &y),
                     TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F64, 4, x_type.dims, 1),
                            stax_test_random(TP_F64, 4, w_type.dims, 2)};
    tp_tensor *outputs[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, outputs);
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "conv") && strstr(tp_last_error(), "f64"), "%s",
                  tp_last_error());
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_windows) {
    Suite *s = suite_create("stax_windows");
    TCase *c = tcase_create("windows");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, conv_through_the_packed_gemm_matches_eager);
    tcase_add_test(c, depthwise_conv_matches_eager);
    tcase_add_test(c, conv_transpose_matches_eager);
    tcase_add_test(c, pools_match_eager);
    tcase_add_test(c, conv_of_a_permuted_view_with_pointwise_after_matches_eager);
    tcase_add_test(c, f64_conv_is_refused_with_a_reason);
    suite_add_tcase(s, c);
    return s;
}
