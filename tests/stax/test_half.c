/* stax on f16 and bf16: pointwise ops compile natively (tp_backend_compile
 * on stax alone, no fallback), load every one of the 65,536 bit patterns
 * widened to f32 and round every store to nearest even; the oracle is the
 * same arithmetic done here in f32 and rounded with the conversions that
 * tests/tensor checks exhaustively against NumPy. Reductions run natively
 * too; what stax leaves to the fallback (a cast that would round twice) is
 * refused, not miscompiled. The other kernel families: test_half_kernels.c. */
#include <stdlib.h>

#include "stax_harness.h"

/* x: every pattern; y: the patterns in another order (a multiplicative
 * shuffle), so each x meets an unrelated y. */
static tp_tensor *patterns(tp_dtype dtype, uint32_t multiplier) {
    int64_t shape[1] = {65536};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, 1, shape, &t), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(t);
    for (uint32_t i = 0; i < 65536; i++) bits[i] = (uint16_t)(i * multiplier);
    return t;
}

static float widen(tp_dtype dtype, uint16_t bits) {
    return dtype == TP_F16 ? tp_f16_to_f32(bits) : tp_bf16_to_f32(bits);
}

static uint16_t narrow(tp_dtype dtype, float value) {
    return dtype == TP_F16 ? tp_f16_from_f32(value) : tp_bf16_from_f32(value);
}

/* out = (x + y) * x - y / x, each op's result stored in the dtype. */
static uint16_t oracle(tp_dtype dtype, uint16_t x_bits, uint16_t y_bits) {
    float x = widen(dtype, x_bits), y = widen(dtype, y_bits);
    float sum = widen(dtype, narrow(dtype, x + y));
    float product = widen(dtype, narrow(dtype, sum * x));
    float quotient = widen(dtype, narrow(dtype, y / x));
    return narrow(dtype, product - quotient);
}

static tp_graph *chain_graph(tp_dtype dtype) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("half_chain", &g), TP_OK);
    tp_type type = {.dtype = dtype, .ndim = 1, .dims = {65536}};
    tp_value_id x, y, sum, product, quotient, out;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(g, "y", &type, &y), TP_OK);
    tp_value_id xy[2] = {x, y};
    ck_assert_int_eq(tp_graph_add_node(g, "add", xy, 2, NULL, "sum", &sum), TP_OK);
    tp_value_id sx[2] = {sum, x};
    ck_assert_int_eq(tp_graph_add_node(g, "mul", sx, 2, NULL, "product", &product), TP_OK);
    tp_value_id yx[2] = {y, x};
    ck_assert_int_eq(tp_graph_add_node(g, "div", yx, 2, NULL, "quotient", &quotient), TP_OK);
    tp_value_id pq[2] = {product, quotient};
    ck_assert_int_eq(tp_graph_add_node(g, "sub", pq, 2, NULL, "out", &out), TP_OK);
    ck_assert_int_eq(tp_graph_value_type(g, out)->dtype, dtype);
    ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
    return g;
}

static void check_chain(tp_dtype dtype) {
    stax_test_cache_dir();
    tp_graph *g = chain_graph(dtype);
    tp_tensor *inputs[2] = {patterns(dtype, 1), patterns(dtype, 40503)};
    tp_tensor *outputs[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, outputs);
    ck_assert_msg(status == TP_OK, "stax alone must compile the %s chain: %s", tp_dtype_name(dtype),
                  tp_last_error());
    ck_assert_int_eq(tp_tensor_dtype(outputs[0]), dtype);
    const uint16_t *x = tp_tensor_data(inputs[0]), *y = tp_tensor_data(inputs[1]);
    const uint16_t *got = tp_tensor_data(outputs[0]);
    for (int64_t i = 0; i < 65536; i++) {
        uint16_t want = oracle(dtype, x[i], y[i]);
        bool want_nan = isnan(widen(dtype, want));
        bool ok = want_nan ? isnan(widen(dtype, got[i])) : got[i] == want;
        ck_assert_msg(ok, "%s: x=0x%04x y=0x%04x: stax gives 0x%04x, expected 0x%04x",
                      tp_dtype_name(dtype), x[i], y[i], got[i], want);
    }
    tp_tensor_release(outputs[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}

START_TEST(f16_pointwise_chain_on_every_pattern_rounds_each_store) {
    check_chain(TP_F16);
}
END_TEST

START_TEST(bf16_pointwise_chain_on_every_pattern_rounds_each_store) {
    check_chain(TP_BF16);
}
END_TEST

/* Widening is exact: cast(f16 -> f32) on stax equals tp_f16_to_f32 bitwise
 * (NaNs stay NaNs). */
START_TEST(cast_from_f16_to_f32_is_exact_on_every_pattern) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("widen", &g), TP_OK);
    tp_type type = {.dtype = TP_F16, .ndim = 1, .dims = {65536}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = TP_F32;
    ck_assert_int_eq(tp_graph_add_node(g, "cast", &x, 1, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *input = patterns(TP_F16, 1), *output = NULL;
    ck_assert_msg(stax_test_run("stax", g, &input, 1, NULL, 0, &output) == TP_OK, "%s",
                  tp_last_error());
    const uint16_t *bits = tp_tensor_data(input);
    const float *got = tp_tensor_data(output);
    for (int i = 0; i < 65536; i++) {
        float want = tp_f16_to_f32(bits[i]);
        ck_assert_msg(isnan(want) ? isnan(got[i]) : memcmp(&got[i], &want, 4) == 0,
                      "0x%04x widens to %a, expected %a", bits[i], (double)got[i], (double)want);
    }
    tp_tensor_release(input);
    tp_tensor_release(output);
    tp_graph_destroy(g);
}
END_TEST

/* sum, max and mean along rows of f16/bf16 on stax alone: the widened values
 * reduced (in f64 for sum and mean, as the f32 reduction does), rounded to
 * f32 and then to the dtype. The oracle sums in double here; the summation
 * order may differ, so a result may differ from it by one unit of the
 * dtype's last place, never more; max is exact. */
static void check_row_reductions(tp_dtype dtype) {
    stax_test_cache_dir();
    enum { ROWS = 8, COLUMNS = 129 };
    static const char *const ops[] = {"sum", "max", "mean"};
    int64_t shape[2] = {ROWS, COLUMNS};
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, 2, shape, &x), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(x);
    uint64_t state = 12345;
    for (int i = 0; i < ROWS * COLUMNS; i++) {
        double u = (double)(stax_test_next(&state) % 1000003) / 1000003.0;
        bits[i] = narrow(dtype, (float)(u * 4.0 - 2.0));
    }
    for (int o = 0; o < 3; o++) {
        tp_graph *g = NULL;
        ck_assert_int_eq(tp_graph_create("rows", &g), TP_OK);
        tp_type type = {.dtype = dtype, .ndim = 2, .dims = {ROWS, COLUMNS}};
        tp_value_id in, out;
        ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &in), TP_OK);
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.naxes = 1;
        attrs.axes[0] = 1;
        ck_assert_int_eq(tp_graph_add_node(g, ops[o], &in, 1, &attrs, "y", &out), TP_OK);
        ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
        tp_tensor *y = NULL;
        ck_assert_msg(stax_test_run("stax", g, &x, 1, NULL, 0, &y) == TP_OK,
                      "stax alone must compile %s over %s: %s", ops[o], tp_dtype_name(dtype),
                      tp_last_error());
        ck_assert_int_eq(tp_tensor_dtype(y), dtype);
        const uint16_t *got = tp_tensor_data(y);
        for (int r = 0; r < ROWS; r++) {
            double total = 0, best = -INFINITY;
            for (int c = 0; c < COLUMNS; c++) {
                double v = widen(dtype, bits[r * COLUMNS + c]);
                total += v;
                best = v > best ? v : best;
            }
            double exact = o == 0 ? total : o == 1 ? best : total / COLUMNS;
            uint16_t want = narrow(dtype, (float)exact);
            int distance = abs((int)(int16_t)got[r] - (int)(int16_t)want);
            ck_assert_msg(o == 1 ? got[r] == want : distance <= 1,
                          "%s(%s) row %d: stax 0x%04x, expected 0x%04x", ops[o],
                          tp_dtype_name(dtype), r, got[r], want);
        }
        tp_tensor_release(y);
        tp_graph_destroy(g);
    }
    tp_tensor_release(x);
}

START_TEST(f16_row_reductions_run_natively) {
    check_row_reductions(TP_F16);
}
END_TEST

START_TEST(bf16_row_reductions_run_natively) {
    check_row_reductions(TP_BF16);
}
END_TEST

/* A shape op alone is a copy kernel: the elements come back bit for bit. */
static void check_transpose_copies_bits(tp_dtype dtype) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("transpose", &g), TP_OK);
    tp_type type = {.dtype = dtype, .ndim = 2, .dims = {3, 5}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = 0;
    attrs.dim1 = 1;
    ck_assert_int_eq(tp_graph_add_node(g, "transpose", &x, 1, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    int64_t shape[2] = {3, 5};
    tp_tensor *input = NULL, *output = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, 2, shape, &input), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(input);
    for (int i = 0; i < 15; i++) bits[i] = (uint16_t)(0x3C00 + 17 * i);
    ck_assert_msg(stax_test_run("stax", g, &input, 1, NULL, 0, &output) == TP_OK, "%s",
                  tp_last_error());
    const uint16_t *got = tp_tensor_data(output);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 3; c++)
            ck_assert_msg(got[r * 3 + c] == bits[c * 5 + r],
                          "%s y[%d][%d] = 0x%04x, x[%d][%d] = 0x%04x", tp_dtype_name(dtype), r, c,
                          got[r * 3 + c], c, r, bits[c * 5 + r]);
    tp_tensor_release(input);
    tp_tensor_release(output);
    tp_graph_destroy(g);
}

START_TEST(transpose_of_f16_and_bf16_copies_the_bits) {
    check_transpose_copies_bits(TP_F16);
    check_transpose_copies_bits(TP_BF16);
}
END_TEST

/* A cast from f64 to f16 would round twice on stax (f64 -> f32 -> f16): it
 * is refused and runs on the fallback, while the nodes around it stay. */
START_TEST(cast_from_f64_to_f16_is_left_to_the_fallback) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("refused", &g), TP_OK);
    tp_type wide = {.dtype = TP_F64, .ndim = 2, .dims = {4, 4}};
    tp_type half = {.dtype = TP_F16, .ndim = 2, .dims = {4, 4}};
    tp_value_id x, a, narrowed, total, doubled;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &wide, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(g, "a", &half, &a), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = TP_F16;
    ck_assert_int_eq(tp_graph_add_node(g, "cast", &x, 1, &attrs, "narrowed", &narrowed), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "sum", &narrowed, 1, NULL, "total", &total), TP_OK);
    tp_value_id aa[2] = {a, a};
    ck_assert_int_eq(tp_graph_add_node(g, "add", aa, 2, NULL, "doubled", &doubled), TP_OK);
    tp_value_id outs[2] = {total, doubled};
    ck_assert_int_eq(tp_graph_set_outputs(g, outs, 2), TP_OK);
    bool claimed[8] = {false};
    char *reasons[8] = {NULL};
    ck_assert_int_eq(tp_backend_claims(stax_test_backend("stax"), g, claimed, reasons), TP_OK);
    ck_assert_msg(!claimed[narrowed], "stax claimed a cast from f64 to f16");
    ck_assert_msg(reasons[narrowed] && strstr(reasons[narrowed], "f16"), "reason: %s",
                  reasons[narrowed] ? reasons[narrowed] : "(none)");
    ck_assert_msg(claimed[total], "stax refused an f16 sum: %s",
                  reasons[total] ? reasons[total] : "(none)");
    ck_assert_msg(claimed[doubled], "stax refused an f16 add: %s",
                  reasons[doubled] ? reasons[doubled] : "(none)");
    for (int i = 0; i < 8; i++) free(reasons[i]);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(half) {
    Suite *suite = suite_create("stax.half");
    TCase *tc = tcase_create("half");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, f16_pointwise_chain_on_every_pattern_rounds_each_store);
    tcase_add_test(tc, bf16_pointwise_chain_on_every_pattern_rounds_each_store);
    tcase_add_test(tc, cast_from_f16_to_f32_is_exact_on_every_pattern);
    tcase_add_test(tc, f16_row_reductions_run_natively);
    tcase_add_test(tc, bf16_row_reductions_run_natively);
    tcase_add_test(tc, transpose_of_f16_and_bf16_copies_the_bits);
    tcase_add_test(tc, cast_from_f64_to_f16_is_left_to_the_fallback);
    suite_add_tcase(suite, tc);
    return suite;
}
