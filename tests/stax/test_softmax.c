/* stax's softmax and log_softmax (one read for the max and the sum, one for
 * the output) against a double-precision loop written here that follows
 * NumPy's definition, exp(x - max) / sum: rows longer than one chunk with
 * the max in a later chunk (and rows long enough for longer chunks), -inf entries and whole chunks
 * of -inf, a row of -inf (NaN, as NumPy), huge magnitudes, a single element, a middle axis. */
#include "stax_harness.h"

static tp_graph *row_graph(const char *op, const int64_t *dims, int ndim, int64_t axis) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("rows", &g), TP_OK);
    tp_type t = {.dtype = TP_F32, .ndim = ndim};
    for (int d = 0; d < ndim; d++) t.dims[d] = dims[d];
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &t, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    ck_assert_int_eq(tp_graph_add_node(g, op, &x, 1, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* softmax (or log_softmax) of the `length` values at x[offset + i * stride]. */
static void expected_row(const float *x, int64_t offset, int64_t stride, int64_t length,
                         bool take_log, double *out) {
    double max = -INFINITY;
    for (int64_t i = 0; i < length; i++)
        if (x[offset + i * stride] > max) max = x[offset + i * stride];
    /* x - max in f32, as NumPy on f32 arrays (-3e38 - 3e38 is -inf) */
    double sum = 0;
    for (int64_t i = 0; i < length; i++) sum += exp((double)(x[offset + i * stride] - (float)max));
    for (int64_t i = 0; i < length; i++) {
        double shifted = (double)(x[offset + i * stride] - (float)max);
        out[i] = take_log ? shifted - log(sum) : exp(shifted) / sum;
    }
}

/* Runs op over axis 1 of x [rows, length] (or axis 1 of [2, length, 3]
 * when `middle`) and checks every element against expected_row. */
static void check_rows(const char *op, tp_tensor *x, bool middle, const char *what) {
    int ndim = tp_tensor_ndim(x);
    int64_t dims[3];
    for (int d = 0; d < ndim; d++) dims[d] = tp_tensor_dim(x, d);
    tp_graph *g = row_graph(op, dims, ndim, 1);
    tp_tensor *y[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, &x, 1, NULL, 0, y), TP_OK);
    const float *xd = tp_tensor_data(x), *yd = tp_tensor_data(y[0]);
    bool log = !strcmp(op, "log_softmax");
    int64_t length = dims[1], outer = dims[0], inner = middle ? dims[2] : 1;
    double *want = malloc(sizeof *want * (size_t)length);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t offset = o * length * inner + in;
            expected_row(xd, offset, inner, length, log, want);
            for (int64_t i = 0; i < length; i++) {
                double got = yd[offset + i * inner], w = want[i];
                bool ok = isnan(w)   ? isnan(got)
                          : isinf(w) ? got == w
                                     : fabs(got - w) <= 1e-6 + 2e-5 * fabs(w);
                ck_assert_msg(ok, "%s %s: row %lld, element %lld is %.9g, NumPy's formula %.9g", op,
                              what, (long long)(o * inner + in), (long long)i, got, w);
            }
        }
    free(want);
    tp_tensor_release(y[0]);
    tp_graph_destroy(g);
}

static tp_tensor *random_rows(int64_t rows, int64_t length, uint64_t seed) {
    int64_t dims[2] = {rows, length};
    return stax_test_random(TP_F32, 2, dims, seed);
}

static void check_both(tp_tensor *x, bool middle, const char *what) {
    check_rows("softmax", x, middle, what);
    check_rows("log_softmax", x, middle, what);
}

START_TEST(rows_longer_than_a_chunk_match_numpy) {
    stax_test_cache_dir();
    static const int64_t lengths[] = {1, 7, 511, 512, 513, 1500, 4096, 600000};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        tp_tensor *x = random_rows(5, lengths[i], 3 + i);
        float *d = tp_tensor_data_mut(x);
        /* the max in the last chunk of row 0, rising chunk by chunk in row 1 */
        d[lengths[i] - 1] = 30.0f;
        for (int64_t j = 0; j < lengths[i]; j++) d[lengths[i] + j] += (float)(j / 512) * 8.0f;
        char what[64];
        snprintf(what, sizeof what, "length %lld", (long long)lengths[i]);
        check_both(x, false, what);
        tp_tensor_release(x);
    }
}
END_TEST

START_TEST(minus_infinity_entries_and_rows_match_numpy) {
    stax_test_cache_dir();
    int64_t length = 1300;
    tp_tensor *x = random_rows(4, length, 21);
    float *d = tp_tensor_data_mut(x);
    for (int64_t j = 0; j < length; j++) {
        d[j] = -INFINITY;                              /* row 0: all -inf: NaN */
        if (j < 700) d[length + j] = -INFINITY;        /* row 1: first chunk all -inf */
        if (j % 3 == 0) d[2 * length + j] = -INFINITY; /* row 2: scattered */
    }
    d[3 * length + 5] = -INFINITY; /* row 3: one */
    check_both(x, false, "with -inf");
    tp_tensor_release(x);
}
END_TEST

START_TEST(huge_magnitudes_match_numpy) {
    stax_test_cache_dir();
    int64_t length = 1030;
    tp_tensor *x = random_rows(3, length, 5);
    float *d = tp_tensor_data_mut(x);
    for (int64_t j = 0; j < length; j++) {
        d[j] *= 1e30f;                                 /* row 0: +-2e30 */
        d[length + j] = j == 1000 ? 3e38f : -3e38f;    /* row 1: one near FLT_MAX */
        d[2 * length + j] = 88.0f + d[2 * length + j]; /* row 2: exp(x) would overflow */
    }
    check_both(x, false, "huge");
    tp_tensor_release(x);
}
END_TEST

/* Softmax's exp of x - max: within a few f32 roundings of the double
 * formula down to outputs of 1e-37 (x - max = -86), exactly 0 or at most
 * 2.7e-38 below that (where stax flushes to 0), and a NaN anywhere in a row
 * makes the whole row NaN. */
START_TEST(wide_spreads_stay_accurate_and_nan_rows_are_nan) {
    stax_test_cache_dir();
    int64_t rows = 4, length = 2000;
    int64_t dims[2] = {rows, length};
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, dims, &x), TP_OK);
    float *d = tp_tensor_data_mut(x);
    for (int64_t j = 0; j < length; j++) {
        d[j] = 5.0f - 86.0f * (float)j / (float)(length - 1);         /* row 0: 5 .. -81 */
        d[length + j] = (float)((j * 7919) % length) * -0.045f;       /* row 1: 0 .. -90 */
        d[2 * length + j] = j % 2 ? -100.0f - (float)j : 10.0f;       /* row 2: far below */
        d[3 * length + j] = j == 1234 ? NAN : (float)(j % 13) - 6.0f; /* row 3: one NaN */
    }
    tp_graph *g = row_graph("softmax", dims, 2, 1);
    tp_tensor *y[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, &x, 1, NULL, 0, y), TP_OK);
    const float *yd = tp_tensor_data(y[0]);
    double *want = malloc(sizeof *want * (size_t)length);
    for (int64_t r = 0; r < 3; r++) {
        expected_row(d, r * length, 1, length, false, want);
        for (int64_t i = 0; i < length; i++) {
            double got = yd[r * length + i], w = want[i];
            bool ok = w >= 2.7e-38 ? fabs(got - w) <= 2e-6 * w : got >= 0 && got <= 2.7e-38;
            ck_assert_msg(ok, "softmax row %lld, element %lld is %.9g, the double formula %.9g",
                          (long long)r, (long long)i, got, w);
        }
    }
    for (int64_t i = 0; i < length; i++)
        ck_assert_msg(isnan(yd[3 * length + i]), "softmax of a row with a NaN: element %lld is %g",
                      (long long)i, (double)yd[3 * length + i]);
    free(want);
    tp_tensor_release(y[0]);
    tp_tensor_release(x);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(a_middle_axis_matches_numpy) {
    stax_test_cache_dir();
    int64_t dims[3] = {2, 600, 3};
    tp_tensor *x = stax_test_random(TP_F32, 3, dims, 8);
    check_both(x, true, "axis 1 of [2, 600, 3]");
    tp_tensor_release(x);
}
END_TEST

TP_TEST_SUITE(stax_softmax) {
    Suite *s = suite_create("stax_softmax");
    TCase *c = tcase_create("softmax");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, rows_longer_than_a_chunk_match_numpy);
    tcase_add_test(c, minus_infinity_entries_and_rows_match_numpy);
    tcase_add_test(c, huge_magnitudes_match_numpy);
    tcase_add_test(c, a_middle_axis_matches_numpy);
    tcase_add_test(c, wide_spreads_stay_accurate_and_nan_rows_are_nan);
    suite_add_tcase(s, c);
    return s;
}
