/* stax's max_pool and avg_pool against a direct double-precision pool
 * computed here: rows wide enough for the vector body and its tail, stride 1
 * and 2 (a network's 3x3 stride-2 pad-1 stem pool), windows 1 to 4 taps wide
 * (each tap of the AVX-512 direct rows) and wider or taller than they take,
 * rows of more vectors than they work out masks for ahead, infinities, NaNs
 * that must reach every window that holds them (as a window's first row in
 * the image and as a later one, at a vector's last lane and in the next
 * vector's columns), and an average that divides by the taps inside the
 * image. Every case runs with the direct rows on (where the host has
 * AVX-512) and off. */
#include "stax_harness.h"

typedef struct pool_case {
    const char *what;
    bool is_max;
    int64_t batch, channels, in[2], kernel, stride, pad;
} pool_case;

/* Marks: a NaN (or with `with_nan` off, +inf and -inf) at plane 0 row 1
 * column 5, and at columns 16 and 31 (the columns of the next vector that a
 * vector's last lane takes at stride 1 and 2 with pad 1) and the last
 * column, in rows further down and in the last plane. */
static void mark(const pool_case *c, float *data, bool with_nan) {
    int64_t h = c->in[0], w = c->in[1], planes = c->batch * c->channels;
    int64_t at[4][3] = {{0, 1, 5}, {0, h / 2, 16}, {planes - 1, h - 1, 31}, {planes - 1, 0, w - 1}};
    for (int i = 0; i < 4; i++) {
        if (at[i][1] >= h || at[i][2] >= w) continue;
        float value = with_nan ? NAN : i % 2 ? INFINITY : -INFINITY;
        data[(at[i][0] * h + at[i][1]) * w + at[i][2]] = value;
    }
}

static int64_t pool_out(const pool_case *c, int a) {
    return (c->in[a] + 2 * c->pad - c->kernel) / c->stride + 1;
}

/* The graph of one pool: x [batch, channels, in] -> y. */
static tp_graph *pool_graph(const pool_case *c) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("pool_rows", &g), TP_OK);
    tp_type type = {.dtype = TP_F32, .ndim = 4};
    int64_t shape[4] = {c->batch, c->channels, c->in[0], c->in[1]};
    memcpy(type.dims, shape, sizeof shape);
    tp_value_id in, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &in), TP_OK);
    tp_attrs a = TP_ATTRS_INIT;
    a.nkernel_shape = a.nstrides = 2, a.npads = 4;
    for (int i = 0; i < 2; i++) a.kernel_shape[i] = c->kernel, a.strides[i] = c->stride;
    for (int i = 0; i < 4; i++) a.pads[i] = c->pad;
    ck_assert_int_eq(tp_graph_add_node(g, c->is_max ? "max_pool" : "avg_pool", &in, 1, &a, "y", &y),
                     TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

static void check_pool(const pool_case *c, bool with_nan) {
    int64_t shape[4] = {c->batch, c->channels, c->in[0], c->in[1]};
    tp_tensor *x = stax_test_random(TP_F32, 4, shape, 31);
    float *data = tp_tensor_data_mut(x);
    mark(c, data, with_nan);
    tp_graph *g = pool_graph(c);
    tp_tensor *got[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, &x, 1, NULL, 0, got), TP_OK);
    int64_t oh_n = pool_out(c, 0), ow_n = pool_out(c, 1);
    ck_assert_int_eq(tp_tensor_numel(got[0]), c->batch * c->channels * oh_n * ow_n);
    for (int64_t p = 0; p < c->batch * c->channels; p++)
        for (int64_t oh = 0; oh < oh_n; oh++)
            for (int64_t ow = 0; ow < ow_n; ow++) {
                double best = -INFINITY, sum = 0.0;
                int64_t taps = 0;
                bool nan_seen = false;
                for (int64_t kh = 0; kh < c->kernel; kh++)
                    for (int64_t kw = 0; kw < c->kernel; kw++) {
                        int64_t ih = oh * c->stride + kh - c->pad,
                                iw = ow * c->stride + kw - c->pad;
                        if (ih < 0 || ih >= c->in[0] || iw < 0 || iw >= c->in[1]) continue;
                        double v = data[(p * c->in[0] + ih) * c->in[1] + iw];
                        nan_seen = nan_seen || isnan(v);
                        best = v > best ? v : best;
                        sum += v, taps++;
                    }
                double want = c->is_max ? (nan_seen ? NAN : best) : sum / (double)taps;
                double have = tp_tensor_get_f64(got[0], (p * oh_n + oh) * ow_n + ow);
                bool ok = isnan(want)   ? isnan(have)
                          : isinf(want) ? have == want
                                        : fabs(have - want) <= 1e-6 + 1e-6 * fabs(want);
                ck_assert_msg(ok,
                              "%s%s (STAX_POOL_DIRECT=%s): plane %lld (%lld, %lld) is %.9g, the "
                              "direct pool gives %.9g",
                              c->what, with_nan ? " with NaNs" : "", getenv("STAX_POOL_DIRECT"),
                              (long long)p, (long long)oh, (long long)ow, have, want);
            }
    tp_tensor_release(got[0]);
    tp_tensor_release(x);
    tp_graph_destroy(g);
}

static const pool_case cases[] = {
    {"max 3x3 stride 2 pad 1 (a network's stem)", true, 2, 3, {23, 45}, 3, 2, 1},
    {"max 2x2 stride 1", true, 1, 2, {9, 37}, 2, 1, 0},
    {"max 3x3 stride 3 pad 1 (a stride past 2)", true, 1, 2, {13, 31}, 3, 3, 1},
    {"max 5x5 stride 2 pad 2, 112-wide rows", true, 1, 2, {9, 112}, 5, 2, 2},
    /* rows of whole vectors only, and a single output column (the max pool
     * computes rows rounded up to 16 outputs and copies them out) */
    {"max 3x3 stride 2 pad 1, 32 outputs a row", true, 2, 2, {7, 64}, 3, 2, 1},
    {"max 3x3 stride 1 pad 1, one column", true, 1, 3, {5, 1}, 3, 1, 1},
    {"max 2x2 stride 2", true, 1, 3, {10, 70}, 2, 2, 0},
    {"max 4x4 stride 2 pad 1", true, 1, 2, {12, 67}, 4, 2, 1},
    {"max 3x3 stride 1 pad 1, 70-wide rows", true, 1, 2, {6, 70}, 3, 1, 1},
    {"max 4x4 stride 1 pad 2", true, 1, 2, {8, 40}, 4, 1, 2},
    {"max 1x1 stride 2", true, 1, 2, {5, 35}, 1, 2, 0},
    {"max 3x3 stride 2 pad 1, 2100-wide rows (past 64 vectors)", true, 1, 1, {5, 2100}, 3, 2, 1},
    {"max 3x3 stride 1, 1100-wide rows (past 64 vectors)", true, 1, 1, {4, 1100}, 3, 1, 0},
    {"max 17x17 stride 1 pad 8 (taller than the direct rows take)", true, 1, 1, {20, 19}, 17, 1, 8},
    {"average 3x3 stride 1 pad 1", false, 1, 3, {8, 41}, 3, 1, 1},
    {"average 3x3 stride 2 pad 1", false, 2, 2, {11, 29}, 3, 2, 1},
};

static const char *const direct_settings[] = {"off", "on"};

START_TEST(pools_match_a_direct_pool) {
    stax_test_cache_dir();
    for (size_t s = 0; s < 2; s++) {
        setenv("STAX_POOL_DIRECT", direct_settings[s], 1);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_pool(&cases[i], false);
    }
    unsetenv("STAX_POOL_DIRECT");
}
END_TEST

START_TEST(max_pool_propagates_a_nan_to_every_window_that_holds_it) {
    stax_test_cache_dir();
    for (size_t s = 0; s < 2; s++) {
        setenv("STAX_POOL_DIRECT", direct_settings[s], 1);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            if (cases[i].is_max) check_pool(&cases[i], true);
    }
    unsetenv("STAX_POOL_DIRECT");
}
END_TEST

START_TEST(an_unknown_pool_setting_is_an_error_that_names_it) {
    stax_test_cache_dir();
    const pool_case c = {"max 2x2 stride 2", true, 1, 1, {6, 6}, 2, 2, 0};
    int64_t shape[4] = {1, 1, 6, 6};
    tp_tensor *x = stax_test_random(TP_F32, 4, shape, 5);
    tp_graph *g = pool_graph(&c);
    setenv("STAX_POOL_DIRECT", "sometimes", 1);
    tp_tensor *got[1] = {NULL};
    tp_status status = stax_test_run("stax", g, &x, 1, NULL, 0, got);
    unsetenv("STAX_POOL_DIRECT");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_POOL_DIRECT is 'sometimes'"), "error: %s",
                  tp_last_error());
    tp_graph_destroy(g);
    tp_tensor_release(x);
}
END_TEST

TP_TEST_SUITE(stax_pool_rows) {
    Suite *s = suite_create("stax_pool_rows");
    TCase *c = tcase_create("pool_rows");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, pools_match_a_direct_pool);
    tcase_add_test(c, max_pool_propagates_a_nan_to_every_window_that_holds_it);
    tcase_add_test(c, an_unknown_pool_setting_is_an_error_that_names_it);
    suite_add_tcase(s, c);
    return s;
}
