/* Pointwise ops through the eager API: hand-checkable values for every op,
 * NaN/Inf semantics, integer wrap-around and pow, casts, broadcasting
 * (including size-0 and size-1 dims and symbols) and dtype errors. */
#include <float.h>

#include "eager_harness.h"
#include "ops/broadcast.h"

#define NAN_ NAN
#define INF  INFINITY

/* ---- unary ---- */

START_TEST(neg_and_abs_keep_dtype) {
    tp_tensor *x = T(TP_I32, DIMS(3), -2, 0, 5);
    tp_tensor *n = eager_ok(tp_neg(ctx, x));
    harness_assert_shape(n, TP_I32, SHAPE(3));
    ASSERT_VALUES(n, 0, 2, 0, -5);
    ASSERT_VALUES(eager_ok(tp_abs(ctx, T(TP_F64, DIMS(3), -1.5, 0, 2))), 0, 1.5, 0, 2);
}
END_TEST

START_TEST(neg_and_abs_of_int_min_wrap_around) {
    tp_tensor *x = T(TP_I32, DIMS(1), INT32_MIN);
    ASSERT_VALUES(eager_ok(tp_neg(ctx, x)), 0, INT32_MIN);
    ASSERT_VALUES(eager_ok(tp_abs(ctx, x)), 0, INT32_MIN);
}
END_TEST

START_TEST(float_functions_at_exact_points) {
    tp_tensor *zero = T(TP_F64, DIMS(1), 0);
    ASSERT_VALUES(eager_ok(tp_exp(ctx, zero)), 0, 1);
    ASSERT_VALUES(eager_ok(tp_log(ctx, T(TP_F64, DIMS(3), 1, 0, -1))), 0, 0, -INF, NAN_);
    ASSERT_VALUES(eager_ok(tp_sqrt(ctx, T(TP_F64, DIMS(2), 4, 2.25))), 0, 2, 1.5);
    ASSERT_VALUES(eager_ok(tp_rsqrt(ctx, T(TP_F64, DIMS(3), 4, 0, 0.25))), 0, 0.5, INF, 2);
    ASSERT_VALUES(eager_ok(tp_sin(ctx, zero)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_cos(ctx, zero)), 0, 1);
    ASSERT_VALUES(eager_ok(tp_tanh(ctx, T(TP_F64, DIMS(3), 0, INF, -INF))), 0, 0, 1, -1);
    ASSERT_VALUES(eager_ok(tp_erf(ctx, T(TP_F64, DIMS(3), 0, INF, -INF))), 0, 0, 1, -1);
}
END_TEST

START_TEST(float_functions_of_integers_give_f32) {
    tp_tensor *y = eager_ok(tp_sqrt(ctx, T(TP_I64, DIMS(2), 9, 16)));
    harness_assert_shape(y, TP_F32, SHAPE(2));
    ASSERT_VALUES(y, 0, 3, 4);
    harness_assert_shape(eager_ok(tp_exp(ctx, T(TP_BOOL, DIMS(1), 1))), TP_F32, SHAPE(1));
}
END_TEST

START_TEST(sigmoid_is_stable_for_large_magnitudes) {
    tp_tensor *x = T(TP_F32, DIMS(5), 0, 1000, -1000, INF, -INF);
    tp_tensor *y = eager_ok(tp_sigmoid(ctx, x));
    ASSERT_VALUES(y, 0, 0.5, 1, 0, 1, 0);
    ASSERT_VALUES(eager_ok(tp_sigmoid(ctx, T(TP_F64, DIMS(1), NAN_))), 0, NAN_);
}
END_TEST

START_TEST(relu_keeps_nan_and_dtype) {
    ASSERT_VALUES(eager_ok(tp_relu(ctx, T(TP_F32, DIMS(4), -2, 3, NAN_, -INF))), 0, 0, 3, NAN_, 0);
    tp_tensor *i = eager_ok(tp_relu(ctx, T(TP_I64, DIMS(2), -7, 7)));
    harness_assert_shape(i, TP_I64, SHAPE(2));
    ASSERT_VALUES(i, 0, 0, 7);
}
END_TEST

START_TEST(floor_and_ceil_round_toward_infinities) {
    tp_tensor *x = T(TP_F32, DIMS(4), -1.5, 1.5, -0.25, 2);
    ASSERT_VALUES(eager_ok(tp_floor(ctx, x)), 0, -2, 1, -1, 2);
    ASSERT_VALUES(eager_ok(tp_ceil(ctx, x)), 0, -1, 2, 0, 2);
}
END_TEST

START_TEST(floor_of_integers_is_the_identity) {
    tp_tensor *y = eager_ok(tp_floor(ctx, T(TP_I32, DIMS(2), -3, 4)));
    harness_assert_shape(y, TP_I32, SHAPE(2));
    ASSERT_VALUES(y, 0, -3, 4);
}
END_TEST

START_TEST(sign_of_nan_is_nan_and_of_zero_is_zero) {
    ASSERT_VALUES(eager_ok(tp_sign(ctx, T(TP_F64, DIMS(5), -3, 0, 2, NAN_, -INF))), 0, -1, 0, 1,
                  NAN_, -1);
    ASSERT_VALUES(eager_ok(tp_sign(ctx, T(TP_I64, DIMS(3), -9, 0, 9))), 0, -1, 0, 1);
}
END_TEST

START_TEST(logical_not_treats_nonzero_and_nan_as_true) {
    tp_tensor *y = eager_ok(tp_logical_not(ctx, T(TP_F32, DIMS(3), 0, 2, NAN_)));
    harness_assert_shape(y, TP_BOOL, SHAPE(3));
    ASSERT_VALUES(y, 0, 1, 0, 0);
}
END_TEST

START_TEST(unary_ops_reject_bool_where_the_rules_say) {
    eager_assert_error(tp_neg(ctx, T(TP_BOOL, DIMS(2), 1, 0)), TP_ERR_DTYPE, "neg:", "bool[2]");
    tp_ctx_clear_error(ctx);
    eager_assert_error(tp_sign(ctx, T(TP_BOOL, DIMS(1), 1)), TP_ERR_DTYPE, "sign:", "bool");
}
END_TEST

/* ---- cast ---- */

START_TEST(cast_float_to_int_truncates_toward_zero) {
    tp_tensor *y = eager_ok(tp_cast(ctx, T(TP_F64, DIMS(4), -1.7, 1.7, -0.5, 3), TP_I32));
    harness_assert_shape(y, TP_I32, SHAPE(4));
    ASSERT_VALUES(y, 0, -1, 1, 0, 3);
}
END_TEST

START_TEST(cast_saturates_and_maps_nan_to_zero) {
    tp_tensor *x = T(TP_F32, DIMS(4), NAN_, 1e10, -1e10, INF);
    ASSERT_VALUES(eager_ok(tp_cast(ctx, x, TP_I32)), 0, 0, INT32_MAX, INT32_MIN, INT32_MAX);
}
END_TEST

START_TEST(cast_to_bool_is_nonzero) {
    tp_tensor *y = eager_ok(tp_cast(ctx, T(TP_F64, DIMS(4), 0, -0.0, 0.1, NAN_), TP_BOOL));
    ASSERT_VALUES(y, 0, 0, 0, 1, 1);
    ASSERT_VALUES(eager_ok(tp_cast(ctx, T(TP_BOOL, DIMS(2), 1, 0), TP_F32)), 0, 1, 0);
}
END_TEST

START_TEST(cast_rejects_an_invalid_dtype) {
    eager_assert_error(tp_cast(ctx, T(TP_F32, DIMS(1), 1), (tp_dtype)42), TP_ERR_INVALID_ARGUMENT,
                       "cast:", NULL);
}
END_TEST

/* ---- binary arithmetic ---- */

START_TEST(add_sub_mul_of_integers) {
    tp_tensor *a = T(TP_I64, DIMS(3), 1, -2, 30), *b = T(TP_I64, DIMS(3), 4, 5, -6);
    ASSERT_VALUES(eager_ok(tp_add(ctx, a, b)), 0, 5, 3, 24);
    ASSERT_VALUES(eager_ok(tp_sub(ctx, a, b)), 0, -3, -7, 36);
    ASSERT_VALUES(eager_ok(tp_mul(ctx, a, b)), 0, 4, -10, -180);
}
END_TEST

START_TEST(integer_overflow_wraps_around) {
    tp_tensor *a = T(TP_I32, DIMS(1), INT32_MAX), *one = T(TP_I32, DIMS(1), 1);
    ASSERT_VALUES(eager_ok(tp_add(ctx, a, one)), 0, INT32_MIN);
    ASSERT_VALUES(eager_ok(tp_mul(ctx, a, T(TP_I32, DIMS(1), 2))), 0, -2);
}
END_TEST

START_TEST(div_of_integers_is_true_division_in_f32) {
    tp_tensor *y = eager_ok(tp_div(ctx, T(TP_I32, DIMS(3), 7, -7, 1), T(TP_I64, DIMS(3), 2, 2, 0)));
    harness_assert_shape(y, TP_F32, SHAPE(3));
    ASSERT_VALUES(y, 0, 3.5, -3.5, INF);
}
END_TEST

START_TEST(div_of_floats_follows_ieee) {
    tp_tensor *y = eager_ok(tp_div(ctx, T(TP_F64, DIMS(3), 1, -1, 0), T(TP_F64, DIMS(3), 0, 0, 0)));
    harness_assert_shape(y, TP_F64, SHAPE(3));
    ASSERT_VALUES(y, 0, INF, -INF, NAN_);
}
END_TEST

START_TEST(pow_of_floats) {
    tp_tensor *y =
        eager_ok(tp_pow(ctx, T(TP_F32, DIMS(3), 2, 9, 0), T(TP_F32, DIMS(3), 10, 0.5, 0)));
    ASSERT_VALUES(y, 0, 1024, 3, 1);
}
END_TEST

START_TEST(pow_of_integers_with_nonnegative_exponent) {
    tp_tensor *y =
        eager_ok(tp_pow(ctx, T(TP_I64, DIMS(4), 3, -2, 0, 7), T(TP_I64, DIMS(4), 4, 3, 0, 1)));
    harness_assert_shape(y, TP_I64, SHAPE(4));
    ASSERT_VALUES(y, 0, 81, -8, 1, 7);
}
END_TEST

START_TEST(pow_of_integers_with_negative_exponent_is_zero_except_for_unit_bases) {
    tp_tensor *base = T(TP_I32, DIMS(5), 2, 1, -1, -1, 0);
    tp_tensor *exponent = T(TP_I32, DIMS(5), -1, -5, -3, -2, -1);
    ASSERT_VALUES(eager_ok(tp_pow(ctx, base, exponent)), 0, 0, 1, -1, 1, 0);
}
END_TEST

START_TEST(maximum_and_minimum_propagate_nan_from_either_side) {
    tp_tensor *a = T(TP_F64, DIMS(4), 1, NAN_, 3, -INF);
    tp_tensor *b = T(TP_F64, DIMS(4), NAN_, 2, -3, 5);
    ASSERT_VALUES(eager_ok(tp_maximum(ctx, a, b)), 0, NAN_, NAN_, 3, 5);
    ASSERT_VALUES(eager_ok(tp_minimum(ctx, a, b)), 0, NAN_, NAN_, -3, -INF);
}
END_TEST

START_TEST(maximum_and_minimum_of_bools_are_or_and_and) {
    tp_tensor *a = T(TP_BOOL, DIMS(4), 0, 0, 1, 1), *b = T(TP_BOOL, DIMS(4), 0, 1, 0, 1);
    tp_tensor *y = eager_ok(tp_maximum(ctx, a, b));
    harness_assert_shape(y, TP_BOOL, SHAPE(4));
    ASSERT_VALUES(y, 0, 0, 1, 1, 1);
    ASSERT_VALUES(eager_ok(tp_minimum(ctx, a, b)), 0, 0, 0, 0, 1);
}
END_TEST

START_TEST(arithmetic_rejects_bool_with_bool) {
    tp_tensor *a = T(TP_BOOL, DIMS(2), 1, 0);
    eager_assert_error(tp_add(ctx, a, a), TP_ERR_DTYPE, "add:", "bool[2] and bool[2]");
}
END_TEST

START_TEST(arithmetic_promotes_mixed_dtypes) {
    tp_tensor *y = eager_ok(tp_add(ctx, T(TP_I32, DIMS(2), 1, 2), T(TP_F64, DIMS(2), 0.5, 0.25)));
    harness_assert_shape(y, TP_F64, SHAPE(2));
    ASSERT_VALUES(y, 0, 1.5, 2.25);
    tp_tensor *z = eager_ok(tp_mul(ctx, T(TP_BOOL, DIMS(2), 1, 0), T(TP_I64, DIMS(2), 5, 5)));
    harness_assert_shape(z, TP_I64, SHAPE(2));
    ASSERT_VALUES(z, 0, 5, 0);
}
END_TEST

/* ---- comparisons and logic ---- */

START_TEST(comparisons_give_bool) {
    tp_tensor *a = T(TP_I32, DIMS(3), 1, 2, 3), *b = T(TP_F32, DIMS(3), 2, 2, 2);
    tp_tensor *lt = eager_ok(tp_lt(ctx, a, b));
    harness_assert_shape(lt, TP_BOOL, SHAPE(3));
    ASSERT_VALUES(lt, 0, 1, 0, 0);
    ASSERT_VALUES(eager_ok(tp_le(ctx, a, b)), 0, 1, 1, 0);
    ASSERT_VALUES(eager_ok(tp_gt(ctx, a, b)), 0, 0, 0, 1);
    ASSERT_VALUES(eager_ok(tp_ge(ctx, a, b)), 0, 0, 1, 1);
    ASSERT_VALUES(eager_ok(tp_eq(ctx, a, b)), 0, 0, 1, 0);
    ASSERT_VALUES(eager_ok(tp_ne(ctx, a, b)), 0, 1, 0, 1);
}
END_TEST

START_TEST(comparisons_with_nan_are_false_except_ne) {
    tp_tensor *a = T(TP_F64, DIMS(1), NAN_), *b = T(TP_F64, DIMS(1), NAN_);
    ASSERT_VALUES(eager_ok(tp_lt(ctx, a, b)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_le(ctx, a, b)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_gt(ctx, a, b)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_ge(ctx, a, b)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_eq(ctx, a, b)), 0, 0);
    ASSERT_VALUES(eager_ok(tp_ne(ctx, a, b)), 0, 1);
}
END_TEST

START_TEST(logical_and_or_treat_nonzero_as_true) {
    tp_tensor *a = T(TP_F32, DIMS(4), 0, 0, -2, NAN_), *b = T(TP_I64, DIMS(4), 0, 3, 0, 7);
    tp_tensor *y = eager_ok(tp_logical_and(ctx, a, b));
    harness_assert_shape(y, TP_BOOL, SHAPE(4));
    ASSERT_VALUES(y, 0, 0, 0, 0, 1);
    ASSERT_VALUES(eager_ok(tp_logical_or(ctx, a, b)), 0, 0, 1, 1, 1);
}
END_TEST

START_TEST(where_selects_by_nonzero_condition_and_promotes) {
    tp_tensor *cond = T(TP_I32, DIMS(2, 1), 0, 5);
    tp_tensor *a = T(TP_I32, DIMS(3), 1, 2, 3);
    tp_tensor *b = T(TP_F64, DIMS(1), -1);
    tp_tensor *y = eager_ok(tp_where(ctx, cond, a, b));
    harness_assert_shape(y, TP_F64, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, -1, -1, -1, 1, 2, 3);
}
END_TEST

/* ---- broadcasting ---- */

START_TEST(broadcast_row_against_matrix) {
    tp_tensor *m = T(TP_F32, DIMS(2, 3), 0, 1, 2, 3, 4, 5);
    tp_tensor *y = eager_ok(tp_add(ctx, m, T(TP_F32, DIMS(3), 10, 20, 30)));
    harness_assert_shape(y, TP_F32, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, 10, 21, 32, 13, 24, 35);
}
END_TEST

START_TEST(broadcast_column_against_row_gives_outer_shape) {
    tp_tensor *y =
        eager_ok(tp_sub(ctx, T(TP_I32, DIMS(2, 1), 10, 20), T(TP_I32, DIMS(1, 3), 1, 2, 3)));
    harness_assert_shape(y, TP_I32, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, 9, 8, 7, 19, 18, 17);
}
END_TEST

START_TEST(broadcast_of_a_middle_size_one_dimension) {
    /* a[i, 0, k] = 10 i + k (2 x 1 x 2), b[0, j, 0] = 100 j (1 x 3 x 1) */
    tp_tensor *a = T(TP_I64, DIMS(2, 1, 2), 0, 1, 10, 11);
    tp_tensor *b = T(TP_I64, DIMS(1, 3, 1), 0, 100, 200);
    tp_tensor *y = eager_ok(tp_add(ctx, a, b));
    harness_assert_shape(y, TP_I64, SHAPE(2, 3, 2));
    ASSERT_VALUES(y, 0, 0, 1, 100, 101, 200, 201, 10, 11, 110, 111, 210, 211);
}
END_TEST

START_TEST(broadcast_of_a_0d_operand) {
    tp_tensor *y = eager_ok(tp_mul(ctx, T(TP_F64, DIMS(2, 2), 1, 2, 3, 4), SCALAR(TP_F64, -2)));
    ASSERT_VALUES(y, 0, -2, -4, -6, -8);
    tp_tensor *z = eager_ok(tp_add(ctx, SCALAR(TP_I32, 1), SCALAR(TP_I32, 2)));
    harness_assert_shape(z, TP_I32, 0, NULL);
    ASSERT_VALUES(z, 0, 3);
}
END_TEST

START_TEST(broadcast_with_size_zero_dimensions) {
    tp_tensor *empty = eager_values(TP_F32, SHAPE(0, 3), NULL);
    tp_tensor *y = eager_ok(tp_add(ctx, empty, T(TP_F32, DIMS(3), 1, 2, 3)));
    harness_assert_shape(y, TP_F32, SHAPE(0, 3));
    tp_tensor *z =
        eager_ok(tp_add(ctx, eager_values(TP_F32, SHAPE(0), NULL), T(TP_F32, DIMS(1), 1)));
    harness_assert_shape(z, TP_F32, SHAPE(0));
    tp_tensor *w =
        eager_ok(tp_mul(ctx, T(TP_F32, DIMS(2, 1), 1, 2), eager_values(TP_F32, SHAPE(0), NULL)));
    harness_assert_shape(w, TP_F32, SHAPE(2, 0));
}
END_TEST

START_TEST(broadcast_mismatch_names_op_shapes_and_dimension) {
    tp_tensor *a = T(TP_F32, DIMS(2, 3), 0, 0, 0, 0, 0, 0), *b = T(TP_F32, DIMS(4), 0, 0, 0, 0);
    eager_assert_error(tp_add(ctx, a, b), TP_ERR_SHAPE,
                       "add: cannot broadcast f32[2, 3] with f32[4] (dimension -1: 3 vs 4)", NULL);
}
END_TEST

START_TEST(broadcast_size_zero_against_size_two_is_an_error) {
    tp_tensor *a = eager_values(TP_F32, SHAPE(0), NULL), *b = T(TP_F32, DIMS(2), 1, 2);
    eager_assert_error(tp_mul(ctx, a, b), TP_ERR_SHAPE, "mul: cannot broadcast", "0 vs 2");
}
END_TEST

START_TEST(broadcast_of_symbols) {
    int64_t n = TP_DIM_SYMBOL(0), m = TP_DIM_SYMBOL(1);
    tp_type a = harness_type(TP_F32, 2, (int64_t[]){n, 3});
    tp_type b = harness_type(TP_F32, 2, (int64_t[]){1, 3});
    tp_type c = harness_type(TP_F32, 1, (int64_t[]){n});
    tp_type out;
    ck_assert_int_eq(tp_broadcast_shapes("add", &a, &b, &out.ndim, out.dims), TP_OK);
    ck_assert_int_eq(out.ndim, 2);
    ck_assert_int_eq(out.dims[0], n);
    ck_assert_int_eq(out.dims[1], 3);
    tp_type same = harness_type(TP_F32, 2, (int64_t[]){n, 1});
    ck_assert_int_eq(tp_broadcast_shapes("add", &same, &c, &out.ndim, out.dims), TP_OK);
    ck_assert_int_eq(out.dims[0], n);
    ck_assert_int_eq(out.dims[1], n);
    tp_type other = harness_type(TP_F32, 1, (int64_t[]){m});
    harness_assert_error(tp_broadcast_shapes("add", &c, &other, &out.ndim, out.dims), TP_ERR_SHAPE,
                         "cannot be decided statically");
    tp_type three = harness_type(TP_F32, 1, (int64_t[]){3});
    harness_assert_error(tp_broadcast_shapes("sub", &c, &three, &out.ndim, out.dims), TP_ERR_SHAPE,
                         "sub: cannot broadcast f32[?] with f32[3]");
}
END_TEST

START_TEST(broadcast_strides_are_zero_on_broadcast_dimensions) {
    int64_t strides[3];
    tp_broadcast_strides(2, (int64_t[]){4, 1}, 3, (int64_t[]){2, 4, 5}, strides);
    ck_assert_int_eq(strides[0], 0);
    ck_assert_int_eq(strides[1], 1);
    ck_assert_int_eq(strides[2], 0);
}
END_TEST

START_TEST(large_contiguous_add_matches_elementwise_sum) {
    enum { N = 100003 }; /* odd length: vector loops and their remainder */
    tp_tensor *a = eager_ok(tp_arange(ctx, TP_F64, 0, N, 1));
    tp_tensor *y = eager_ok(tp_add(ctx, a, a));
    const double *values = y->data;
    for (int64_t i = 0; i < N; i++) ck_assert_double_eq(values[i], 2.0 * (double)i);
}
END_TEST

TP_TEST_SUITE(pointwise) {
    Suite *suite = suite_create("ops.pointwise");
    TCase *unary = eager_tcase("unary");
    tcase_add_test(unary, neg_and_abs_keep_dtype);
    tcase_add_test(unary, neg_and_abs_of_int_min_wrap_around);
    tcase_add_test(unary, float_functions_at_exact_points);
    tcase_add_test(unary, float_functions_of_integers_give_f32);
    tcase_add_test(unary, sigmoid_is_stable_for_large_magnitudes);
    tcase_add_test(unary, relu_keeps_nan_and_dtype);
    tcase_add_test(unary, floor_and_ceil_round_toward_infinities);
    tcase_add_test(unary, floor_of_integers_is_the_identity);
    tcase_add_test(unary, sign_of_nan_is_nan_and_of_zero_is_zero);
    tcase_add_test(unary, logical_not_treats_nonzero_and_nan_as_true);
    tcase_add_test(unary, unary_ops_reject_bool_where_the_rules_say);
    tcase_add_test(unary, cast_float_to_int_truncates_toward_zero);
    tcase_add_test(unary, cast_saturates_and_maps_nan_to_zero);
    tcase_add_test(unary, cast_to_bool_is_nonzero);
    tcase_add_test(unary, cast_rejects_an_invalid_dtype);
    suite_add_tcase(suite, unary);
    TCase *binary = eager_tcase("binary");
    tcase_add_test(binary, add_sub_mul_of_integers);
    tcase_add_test(binary, integer_overflow_wraps_around);
    tcase_add_test(binary, div_of_integers_is_true_division_in_f32);
    tcase_add_test(binary, div_of_floats_follows_ieee);
    tcase_add_test(binary, pow_of_floats);
    tcase_add_test(binary, pow_of_integers_with_nonnegative_exponent);
    tcase_add_test(binary, pow_of_integers_with_negative_exponent_is_zero_except_for_unit_bases);
    tcase_add_test(binary, maximum_and_minimum_propagate_nan_from_either_side);
    tcase_add_test(binary, maximum_and_minimum_of_bools_are_or_and_and);
    tcase_add_test(binary, arithmetic_rejects_bool_with_bool);
    tcase_add_test(binary, arithmetic_promotes_mixed_dtypes);
    tcase_add_test(binary, comparisons_give_bool);
    tcase_add_test(binary, comparisons_with_nan_are_false_except_ne);
    tcase_add_test(binary, logical_and_or_treat_nonzero_as_true);
    tcase_add_test(binary, where_selects_by_nonzero_condition_and_promotes);
    suite_add_tcase(suite, binary);
    TCase *broadcast = eager_tcase("broadcast");
    tcase_add_test(broadcast, broadcast_row_against_matrix);
    tcase_add_test(broadcast, broadcast_column_against_row_gives_outer_shape);
    tcase_add_test(broadcast, broadcast_of_a_middle_size_one_dimension);
    tcase_add_test(broadcast, broadcast_of_a_0d_operand);
    tcase_add_test(broadcast, broadcast_with_size_zero_dimensions);
    tcase_add_test(broadcast, broadcast_mismatch_names_op_shapes_and_dimension);
    tcase_add_test(broadcast, broadcast_size_zero_against_size_two_is_an_error);
    tcase_add_test(broadcast, broadcast_of_symbols);
    tcase_add_test(broadcast, broadcast_strides_are_zero_on_broadcast_dimensions);
    tcase_add_test(broadcast, large_contiguous_add_matches_elementwise_sum);
    suite_add_tcase(suite, broadcast);
    return suite;
}
