/* stax's layer_norm over a residual add, y = (x - mean) / sqrt(var + eps) *
 * w + b with x = a + r (one read of x for the mean and variance, one for
 * the output), against a two-pass double-precision loop written here:
 * rows whose mean is large against their spread (where E[x^2] - E[x]^2
 * cancels), a constant row (variance 0: y is b), a row with a NaN (NaN
 * throughout, as NumPy), rows of one element, and random rows. */
#include "stax_harness.h"

/* y = layer_norm(a + r, w, b) over the last axis of [rows, length]. */
static tp_graph *residual_norm_graph(int64_t rows, int64_t length) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("norm", &g), TP_OK);
    int64_t dims[2] = {rows, length};
    tp_value_id a = stax_test_input(g, "a", TP_F32, 2, dims);
    tp_value_id r = stax_test_input(g, "r", TP_F32, 2, dims);
    tp_value_id w = stax_test_input(g, "w", TP_F32, 1, &length);
    tp_value_id b = stax_test_input(g, "b", TP_F32, 1, &length);
    tp_value_id sum_inputs[2] = {a, r}, x, y;
    ck_assert_int_eq(tp_graph_add_node(g, "add", sum_inputs, 2, NULL, "x", &x), TP_OK);
    tp_value_id norm_inputs[3] = {x, w, b};
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = -1;
    attrs.eps = 1e-5;
    ck_assert_int_eq(tp_graph_add_node(g, "layer_norm", norm_inputs, 3, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* Runs the graph on stax and checks each element against the two-pass
 * double formula on x = a + r (the sum in f32, as the graph computes it). */
static void check_norm(tp_tensor *a, tp_tensor *r, tp_tensor *w, tp_tensor *b, double atol,
                       const char *what) {
    int64_t rows = tp_tensor_dim(a, 0), length = tp_tensor_dim(a, 1);
    tp_graph *g = residual_norm_graph(rows, length);
    tp_tensor *inputs[4] = {a, r, w, b}, *y[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 4, NULL, 0, y), TP_OK);
    const float *ad = tp_tensor_data(a), *rd = tp_tensor_data(r), *wd = tp_tensor_data(w),
                *bd = tp_tensor_data(b), *yd = tp_tensor_data(y[0]);
    for (int64_t i = 0; i < rows; i++) {
        const float *ai = ad + i * length, *ri = rd + i * length;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < length; j++) mean += (double)(ai[j] + ri[j]);
        mean /= (double)length;
        for (int64_t j = 0; j < length; j++) {
            double d = (double)(ai[j] + ri[j]) - mean;
            var += d * d;
        }
        var /= (double)length;
        for (int64_t j = 0; j < length; j++) {
            double want = ((double)(ai[j] + ri[j]) - mean) / sqrt(var + 1e-5) * wd[j] + bd[j];
            double got = yd[i * length + j];
            bool ok = isnan(want) ? isnan(got) : fabs(got - want) <= atol + 1e-5 * fabs(want);
            ck_assert_msg(ok, "%s: row %lld, element %lld is %.9g, the double formula %.9g", what,
                          (long long)i, (long long)j, got, want);
        }
    }
    tp_tensor_release(y[0]);
    tp_graph_destroy(g);
}

static tp_tensor *random_tensor(int ndim, const int64_t *dims, uint64_t seed) {
    return stax_test_random(TP_F32, ndim, dims, seed);
}

START_TEST(random_rows_match_the_double_formula) {
    stax_test_cache_dir();
    int64_t dims[2] = {37, 256}, length = 256;
    tp_tensor *a = random_tensor(2, dims, 1), *r = random_tensor(2, dims, 2);
    tp_tensor *w = random_tensor(1, &length, 3), *b = random_tensor(1, &length, 4);
    check_norm(a, r, w, b, 2e-5, "random rows");
    tp_tensor_release(a), tp_tensor_release(r), tp_tensor_release(w), tp_tensor_release(b);
}
END_TEST

/* Rows at 30000 + a spread of about 1 (multiples of 1/64: exact in f32):
 * their squares sum to ~2e11 per row against a spread of ~256 in all. The
 * output's error is x - mean rounded in f32 (half an ulp of 30000, 0.002)
 * times 1/std; a variance lost to cancellation would be off by far more. */
START_TEST(a_large_mean_against_a_small_spread_keeps_its_variance) {
    stax_test_cache_dir();
    int64_t rows = 9, length = 300, dims[2] = {rows, length};
    tp_tensor *a = NULL, *r = NULL, *w = NULL, *b = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, dims, &a), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, dims, &r), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, &length, &w), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, &length, &b), TP_OK);
    float *ad = tp_tensor_data_mut(a), *rd = tp_tensor_data_mut(r);
    float *wd = tp_tensor_data_mut(w), *bd = tp_tensor_data_mut(b);
    uint64_t state = 11;
    for (int64_t i = 0; i < rows * length; i++) {
        ad[i] = 30000.0f + (float)(i / length) * 1000.0f;
        rd[i] = (float)((int64_t)(stax_test_next(&state) % 129) - 64) / 64.0f;
    }
    for (int64_t j = 0; j < length; j++) wd[j] = 1.0f, bd[j] = 0.25f;
    check_norm(a, r, w, b, 5e-3, "mean 30000, spread 1");
    tp_tensor_release(a), tp_tensor_release(r), tp_tensor_release(w), tp_tensor_release(b);
}
END_TEST

/* Row 0 constant (variance 0: y = b exactly), row 1 with a NaN (all NaN),
 * row 2 random; and rows of a single element (y = b). */
START_TEST(constant_nan_and_single_element_rows) {
    stax_test_cache_dir();
    int64_t dims[2] = {3, 40}, length = 40;
    tp_tensor *a = random_tensor(2, dims, 5), *r = random_tensor(2, dims, 6);
    tp_tensor *w = random_tensor(1, &length, 7), *b = random_tensor(1, &length, 8);
    float *ad = tp_tensor_data_mut(a), *rd = tp_tensor_data_mut(r);
    for (int64_t j = 0; j < length; j++) ad[j] = 7.5f, rd[j] = -2.0f;
    ad[length + 17] = NAN;
    check_norm(a, r, w, b, 2e-5, "constant and NaN rows");
    tp_tensor_release(a), tp_tensor_release(r), tp_tensor_release(w), tp_tensor_release(b);

    int64_t single[2] = {5, 1}, one = 1;
    a = random_tensor(2, single, 9), r = random_tensor(2, single, 10);
    w = random_tensor(1, &one, 11), b = random_tensor(1, &one, 12);
    check_norm(a, r, w, b, 2e-5, "rows of one element");
    tp_tensor_release(a), tp_tensor_release(r), tp_tensor_release(w), tp_tensor_release(b);
}
END_TEST

TP_TEST_SUITE(stax_layer_norm) {
    Suite *s = suite_create("stax_layer_norm");
    TCase *c = tcase_create("layer_norm");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, random_rows_match_the_double_formula);
    tcase_add_test(c, a_large_mean_against_a_small_spread_keeps_its_variance);
    tcase_add_test(c, constant_nan_and_single_element_rows);
    suite_add_tcase(s, c);
    return s;
}
