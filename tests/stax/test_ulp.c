/* The documented ulp bounds of stax's vectorized f32 transcendentals
 * (plugins/stax-llvm/stax_mathlib.c) against the C library: each function runs
 * through stax on 2^20 (> 1e6) samples spanning its domain and every result
 * is compared with the double-precision libm value rounded to f32. */
#include <stdint.h>

#include "stax_harness.h"

#define SAMPLES (1 << 20)

static int64_t ordered(float x) {
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits < 0 ? (int64_t)INT32_MIN - bits : bits;
}

static double ulp_distance(float got, float want) {
    if (isnan(want)) return isnan(got) ? 0 : 1e30;
    if (isinf(want) || isinf(got)) return got == want ? 0 : 1e30;
    return (double)llabs(ordered(got) - ordered(want));
}

static double reference(const char *op, double x) {
    if (!strcmp(op, "exp")) return exp(x);
    if (!strcmp(op, "log")) return log(x);
    if (!strcmp(op, "tanh")) return tanh(x);
    if (!strcmp(op, "sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(op, "erf")) return erf(x);
    if (!strcmp(op, "sin")) return sin(x);
    return cos(x);
}

/* Sample i of op's domain: a mix of a uniform range and a wide one. */
static float sample(const char *op, uint64_t *state, int64_t i) {
    double u = (double)(stax_test_next(state) % 100000007) / 100000007.0;
    if (!strcmp(op, "exp")) return (float)(u * 190.0 - 100.0);
    if (!strcmp(op, "log")) {
        uint32_t bits = (uint32_t)(stax_test_next(state) % 0x7F800000u); /* every positive float */
        float x;
        memcpy(&x, &bits, sizeof x);
        return i % 2 ? x : (float)(u * 4.0);
    }
    if (!strcmp(op, "tanh")) return (float)(i % 2 ? u * 20.0 - 10.0 : u * 2.0 - 1.0);
    if (!strcmp(op, "sigmoid")) return (float)(u * 200.0 - 100.0);
    if (!strcmp(op, "erf")) return (float)(i % 2 ? u * 10.0 - 5.0 : u * 2.0 - 1.0);
    return (float)(i % 2 ? u * 2e5 - 1e5 : u * 20.0 - 10.0); /* sin, cos: |x| <= 1e5 */
}

static void check_bound(const char *op, double bound) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("ulp", &g), TP_OK);
    tp_type t = {.dtype = TP_F32, .ndim = 1, .dims = {SAMPLES}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &t, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, op, &x, 1, NULL, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *input = NULL, *output[1] = {NULL};
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, t.dims, &input), TP_OK);
    float *xs = tp_tensor_data_mut(input);
    uint64_t state = 12345;
    for (int64_t i = 0; i < SAMPLES; i++) xs[i] = sample(op, &state, i);
    ck_assert_int_eq(stax_test_run("stax", g, &input, 1, NULL, 0, output), TP_OK);
    const float *ys = tp_tensor_data(output[0]);
    double worst = 0;
    int64_t worst_at = 0;
    for (int64_t i = 0; i < SAMPLES; i++) {
        double d = ulp_distance(ys[i], (float)reference(op, xs[i]));
        if (d > worst) worst = d, worst_at = i;
    }
    fprintf(stderr, "stax %-8s max error %.0f ulp over %d samples (bound %.0f)\n", op, worst,
            SAMPLES, bound);
    ck_assert_msg(worst <= bound, "%s(%.9g) = %.9g, libm gives %.9g: %.0f ulp > %.0f", op,
                  xs[worst_at], ys[worst_at], (float)reference(op, xs[worst_at]), worst, bound);
    tp_tensor_release(input);
    tp_tensor_release(output[0]);
    tp_graph_destroy(g);
}

START_TEST(exp_is_within_2_ulp) {
    check_bound("exp", 2);
}
END_TEST
START_TEST(log_is_within_2_ulp) {
    check_bound("log", 2);
}
END_TEST
START_TEST(tanh_is_within_3_ulp) {
    check_bound("tanh", 3);
}
END_TEST
START_TEST(tanh_keeps_sign_and_special_values) {
    /* The edges of stax_tanhf's branches and clamp, and IEEE's special
     * cases: tanh(+-0) = +-0, tanh(+-inf) = +-1, NaN stays NaN. */
    const float xs[] = {0.0f,   -0.0f,   1e-45f,   -1e-45f,   1e-30f, -1e-30f, 0.62499f,
                        0.625f, -0.625f, 4.0f,     9.0f,      -9.01f, 9.25f,   9.3f,
                        -20.0f, 1e30f,   INFINITY, -INFINITY, NAN};
    enum { N = sizeof xs / sizeof xs[0] };
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("tanh_special", &g), TP_OK);
    tp_type t = {.dtype = TP_F32, .ndim = 1, .dims = {N}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &t, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "tanh", &x, 1, NULL, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *input = NULL, *output[1] = {NULL};
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, t.dims, &input), TP_OK);
    memcpy(tp_tensor_data_mut(input), xs, sizeof xs);
    ck_assert_int_eq(stax_test_run("stax", g, &input, 1, NULL, 0, output), TP_OK);
    const float *ys = tp_tensor_data(output[0]);
    for (int i = 0; i < N; i++) {
        float want = (float)tanh((double)xs[i]);
        ck_assert_msg(!!signbit(ys[i]) == !!signbit(want), "tanh(%g) = %g has the wrong sign",
                      (double)xs[i], (double)ys[i]);
        ck_assert_msg(ulp_distance(ys[i], want) <= 3, "tanh(%g) = %.9g, libm gives %.9g",
                      (double)xs[i], (double)ys[i], (double)want);
    }
    tp_tensor_release(input);
    tp_tensor_release(output[0]);
    tp_graph_destroy(g);
}
END_TEST
START_TEST(sigmoid_is_within_3_ulp) {
    check_bound("sigmoid", 3);
}
END_TEST
START_TEST(erf_is_within_4_ulp) {
    check_bound("erf", 4);
}
END_TEST
START_TEST(sin_is_within_1_ulp) {
    check_bound("sin", 1);
}
END_TEST
START_TEST(cos_is_within_1_ulp) {
    check_bound("cos", 1);
}
END_TEST

TP_TEST_SUITE(stax_ulp) {
    Suite *s = suite_create("stax_ulp");
    TCase *c = tcase_create("ulp");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, exp_is_within_2_ulp);
    tcase_add_test(c, log_is_within_2_ulp);
    tcase_add_test(c, tanh_is_within_3_ulp);
    tcase_add_test(c, tanh_keeps_sign_and_special_values);
    tcase_add_test(c, sigmoid_is_within_3_ulp);
    tcase_add_test(c, erf_is_within_4_ulp);
    tcase_add_test(c, sin_is_within_1_ulp);
    tcase_add_test(c, cos_is_within_1_ulp);
    suite_add_tcase(s, c);
    return s;
}
