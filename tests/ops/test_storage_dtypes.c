/* f16 and bf16 as storage dtypes: the promotion table of tensor.h, the
 * compute-dtype rule (f32), and eager ops that compute in f32 and round once
 * on store. Expected values are worked out by hand in the comments. */
#include "eager_harness.h"

static tp_tensor *halves(tp_dtype dtype, int64_t count, const float *values) {
    int64_t shape[1] = {count};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, 1, shape, &t), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(t);
    for (int64_t i = 0; i < count; i++)
        bits[i] = dtype == TP_F16 ? tp_f16_from_f32(values[i]) : tp_bf16_from_f32(values[i]);
    return t;
}

static uint16_t bits_at(const tp_tensor *t, int64_t i) {
    return ((const uint16_t *)tp_tensor_data(t))[i];
}

START_TEST(promotion_table_for_the_storage_dtypes) {
    static const struct {
        tp_dtype a, b, result;
    } table[] = {
        {TP_F16, TP_F16, TP_F16},   {TP_BF16, TP_BF16, TP_BF16}, {TP_F16, TP_BF16, TP_F32},
        {TP_F16, TP_F32, TP_F32},   {TP_BF16, TP_F32, TP_F32},   {TP_F16, TP_F64, TP_F64},
        {TP_BF16, TP_F64, TP_F64},  {TP_F16, TP_I32, TP_F16},    {TP_F16, TP_I64, TP_F16},
        {TP_BF16, TP_I64, TP_BF16}, {TP_F16, TP_BOOL, TP_F16},   {TP_BF16, TP_BOOL, TP_BF16},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        ck_assert_str_eq(tp_dtype_name(tp_dtype_promote(table[i].a, table[i].b)),
                         tp_dtype_name(table[i].result));
        ck_assert_str_eq(tp_dtype_name(tp_dtype_promote(table[i].b, table[i].a)),
                         tp_dtype_name(table[i].result));
    }
}
END_TEST

START_TEST(names_sizes_and_parsing) {
    ck_assert_str_eq(tp_dtype_name(TP_F16), "f16");
    ck_assert_str_eq(tp_dtype_name(TP_BF16), "bf16");
    ck_assert_int_eq(tp_dtype_size(TP_F16), 2);
    ck_assert_int_eq(tp_dtype_size(TP_BF16), 2);
    tp_dtype parsed;
    ck_assert_int_eq(tp_dtype_from_name("bf16", &parsed), TP_OK);
    ck_assert_int_eq(parsed, TP_BF16);
    ck_assert(tp_dtype_is_float(TP_F16) && !tp_dtype_is_integer(TP_BF16));
    ck_assert_int_eq(tp_dtype_compute(TP_F16), TP_F32);
    ck_assert_int_eq(tp_dtype_compute(TP_F64), TP_F64);
}
END_TEST

START_TEST(ops_on_storage_dtypes_compute_in_f32) {
    tp_dtype two_f16[2] = {TP_F16, TP_F16}, one_bf16[1] = {TP_BF16};
    ck_assert_int_eq(tp_op_compute_dtype(tp_op_get(TP_OP_ADD), two_f16, 2, TP_F16), TP_F32);
    ck_assert_int_eq(tp_op_compute_dtype(tp_op_get(TP_OP_EXP), one_bf16, 1, TP_BF16), TP_F32);
    ck_assert_int_eq(tp_op_compute_dtype(tp_op_get(TP_OP_SUM), one_bf16, 1, TP_BF16), TP_F32);
    ck_assert_int_eq(tp_op_compute_dtype(tp_op_get(TP_OP_FULL), NULL, 0, TP_F16), TP_F32);
}
END_TEST

/* f16(0.1) = 0x2E66 = 0.0999755859375, f16(0.2) = 0x3266 = 0.199951171875;
 * their f32 sum 0.2999267578125 is 1228.5 steps of 2^-12: a tie, to the even
 * 1228 -> 0.2998046875 = 0x34CC (NumPy: float16(0.1) + float16(0.2)). */
START_TEST(f16_add_rounds_the_f32_sum_to_nearest_even) {
    tp_tensor *a = halves(TP_F16, 1, (float[]){0.1f}), *b = halves(TP_F16, 1, (float[]){0.2f});
    ck_assert_int_eq(bits_at(a, 0), 0x2E66);
    ck_assert_int_eq(bits_at(b, 0), 0x3266);
    tp_tensor *sum = tp_add(ctx, a, b);
    ck_assert_msg(sum != NULL, "%s", tp_last_error());
    ck_assert_int_eq(tp_tensor_dtype(sum), TP_F16);
    ck_assert_int_eq(bits_at(sum, 0), 0x34CC);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

/* i32 3 + f16 0.5 = f16 3.5 (an integer meets a float: the float's dtype). */
START_TEST(integer_plus_f16_gives_f16) {
    int64_t shape[1] = {1};
    tp_tensor *three = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_I32, 1, shape, (int32_t[]){3}, &three), TP_OK);
    tp_tensor *half = halves(TP_F16, 1, (float[]){0.5f});
    tp_tensor *sum = tp_add(ctx, three, half);
    ck_assert_msg(sum != NULL, "%s", tp_last_error());
    ck_assert_int_eq(tp_tensor_dtype(sum), TP_F16);
    ck_assert(tp_f16_to_f32(bits_at(sum, 0)) == 3.5f);
    tp_tensor_release(three);
    tp_tensor_release(half);
}
END_TEST

/* [2048, 1, 1] . [1, 1, 1]: accumulated in f32 it is 2050, which f16 holds
 * (spacing 2 above 2048); accumulated in f16 it would stay 2048 (2048 + 1 is
 * a tie that rounds to the even 2048, twice). */
START_TEST(f16_matmul_accumulates_in_f32) {
    int64_t row[2] = {1, 3}, column[2] = {3, 1};
    tp_tensor *a = halves(TP_F16, 3, (float[]){2048, 1, 1});
    tp_tensor *b = halves(TP_F16, 3, (float[]){1, 1, 1});
    tp_tensor *a2 = tp_reshape(ctx, a, row, 2), *b2 = tp_reshape(ctx, b, column, 2);
    tp_tensor *product = tp_matmul(ctx, a2, b2);
    ck_assert_msg(product != NULL, "%s", tp_last_error());
    ck_assert_int_eq(tp_tensor_dtype(product), TP_F16);
    ck_assert(tp_f16_to_f32(bits_at(product, 0)) == 2050.0f);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

/* 2^60 + 2^52 + 1 lies just above the midpoint of the bf16 neighbours 2^60
 * and 2^60 + 2^53, so it rounds up; through an f64 (2^60 + 2^52, a tie) it
 * would round to the even 2^60. */
START_TEST(cast_i64_to_bf16_rounds_once) {
    int64_t shape[1] = {1};
    int64_t value = (1ll << 60) + (1ll << 52) + 1;
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_I64, 1, shape, &value, &x), TP_OK);
    tp_tensor *y = tp_cast(ctx, x, TP_BF16);
    ck_assert_msg(y != NULL, "%s", tp_last_error());
    ck_assert(tp_bf16_to_f32(bits_at(y, 0)) == 0x1p60f + 0x1p53f);
    tp_tensor_release(x);
}
END_TEST

/* 1 + 2^-11 + 2^-30 in f64: above the f16 midpoint 1 + 2^-11, so up to
 * 1 + 2^-10 (0x3C01); through f32 it would become the tie 1 + 2^-11 and go
 * to the even 1.0. */
START_TEST(cast_f64_to_f16_rounds_once) {
    int64_t shape[1] = {1};
    double value = 1.0 + 0x1p-11 + 0x1p-30;
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F64, 1, shape, &value, &x), TP_OK);
    tp_tensor *y = tp_cast(ctx, x, TP_F16);
    ck_assert_msg(y != NULL, "%s", tp_last_error());
    ck_assert_int_eq(bits_at(y, 0), 0x3C01);
    tp_tensor_release(x);
}
END_TEST

TP_TEST_SUITE(storage_dtypes) {
    Suite *suite = suite_create("ops.storage_dtypes");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, promotion_table_for_the_storage_dtypes);
    tcase_add_test(rules, names_sizes_and_parsing);
    tcase_add_test(rules, ops_on_storage_dtypes_compute_in_f32);
    suite_add_tcase(suite, rules);
    TCase *eager = tcase_create("eager");
    tcase_add_checked_fixture(eager, eager_setup, eager_teardown);
    tcase_add_test(eager, f16_add_rounds_the_f32_sum_to_nearest_even);
    tcase_add_test(eager, integer_plus_f16_gives_f16);
    tcase_add_test(eager, f16_matmul_accumulates_in_f32);
    tcase_add_test(eager, cast_i64_to_bf16_rounds_once);
    tcase_add_test(eager, cast_f64_to_f16_rounds_once);
    suite_add_tcase(suite, eager);
    return suite;
}
