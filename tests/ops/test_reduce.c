/* Reductions through the eager API: axes lists (empty, negative, repeated,
 * out of range), keepdim, empty inputs, NaN, dtype rules, f32 accumulation
 * in double, and argmax's first-index and NaN rules. Inputs are iotas or
 * literals whose sums are checked by hand. */
#include "eager_harness.h"

#define AXES(...) DIMS(__VA_ARGS__), RANK(__VA_ARGS__)

/* x[i, j, k] = 12 i + 4 j + k, shape [2, 3, 4]. */
static tp_tensor *iota_234(tp_dtype dtype) {
    return tp_ctx_adopt(ctx, harness_iota(dtype, SHAPE(2, 3, 4)));
}

START_TEST(sum_over_all_axes_with_an_empty_list) {
    tp_tensor *y = eager_ok(tp_sum(ctx, iota_234(TP_F32), NULL, 0, false));
    harness_assert_shape(y, TP_F32, 0, NULL);
    ASSERT_VALUES(y, 0, 276); /* 0 + 1 + ... + 23 */
}
END_TEST

START_TEST(sum_over_the_middle_axis) {
    /* sum_j (12 i + 4 j + k) = 36 i + 12 + 3 k */
    tp_tensor *y = eager_ok(tp_sum(ctx, iota_234(TP_F64), AXES(1), false));
    harness_assert_shape(y, TP_F64, SHAPE(2, 4));
    ASSERT_VALUES(y, 0, 12, 15, 18, 21, 48, 51, 54, 57);
}
END_TEST

START_TEST(sum_over_outer_and_inner_axes_with_keepdim) {
    /* sum_{i,k} (12 i + 4 j + k) = 8 (4 j) + 4 * 12 + 2 * 6 = 32 j + 60 */
    tp_tensor *y = eager_ok(tp_sum(ctx, iota_234(TP_I32), AXES(0, 2), true));
    harness_assert_shape(y, TP_I64, SHAPE(1, 3, 1));
    ASSERT_VALUES(y, 0, 60, 92, 124);
}
END_TEST

START_TEST(negative_axes_count_from_the_end) {
    /* sum_k = 4 (12 i + 4 j) + 6 */
    tp_tensor *y = eager_ok(tp_sum(ctx, iota_234(TP_I64), AXES(-1), false));
    harness_assert_shape(y, TP_I64, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, 6, 22, 38, 54, 70, 86);
}
END_TEST

START_TEST(repeated_axes_are_an_error) {
    eager_assert_error(tp_sum(ctx, iota_234(TP_F32), AXES(1, -2), false), TP_ERR_INVALID_ARGUMENT,
                       "sum: axis 1 appears twice in axes [1, -2]", "f32[2, 3, 4]");
}
END_TEST

START_TEST(out_of_range_axis_is_an_error) {
    eager_assert_error(tp_mean(ctx, iota_234(TP_F32), AXES(3), false), TP_ERR_INVALID_ARGUMENT,
                       "mean: axis 3 is out of range for f32[2, 3, 4]", NULL);
}
END_TEST

START_TEST(sum_of_bools_counts_in_i64) {
    tp_tensor *y = eager_ok(tp_sum(ctx, T(TP_BOOL, DIMS(5), 1, 0, 1, 1, 0), NULL, 0, false));
    harness_assert_shape(y, TP_I64, 0, NULL);
    ASSERT_VALUES(y, 0, 3);
}
END_TEST

START_TEST(sum_of_empty_is_zero_and_mean_of_empty_is_nan) {
    tp_tensor *empty = eager_values(TP_F32, SHAPE(0, 2), NULL);
    tp_tensor *s = eager_ok(tp_sum(ctx, empty, AXES(0), false));
    harness_assert_shape(s, TP_F32, SHAPE(2));
    ASSERT_VALUES(s, 0, 0, 0);
    ASSERT_VALUES(eager_ok(tp_mean(ctx, empty, AXES(0), false)), 0, NAN, NAN);
    harness_assert_shape(eager_ok(tp_sum(ctx, empty, AXES(1), false)), TP_F32, SHAPE(0));
}
END_TEST

START_TEST(mean_of_integers_gives_f32) {
    tp_tensor *y = eager_ok(tp_mean(ctx, T(TP_I32, DIMS(2, 2), 1, 2, 4, 7), AXES(1), false));
    harness_assert_shape(y, TP_F32, SHAPE(2));
    ASSERT_VALUES(y, 0, 1.5, 5.5);
}
END_TEST

START_TEST(f32_sum_accumulates_in_double) {
    /* In f32, 1e8 + 1 rounds back to 1e8 and the sum would be 0. */
    tp_tensor *y = eager_ok(tp_sum(ctx, T(TP_F32, DIMS(3), 1e8, 1, -1e8), NULL, 0, false));
    ASSERT_VALUES(y, 0, 1);
}
END_TEST

START_TEST(max_and_min_keep_dtype) {
    tp_tensor *x = T(TP_I32, DIMS(2, 3), 4, -1, 9, 0, 7, -3);
    tp_tensor *mx = eager_ok(tp_max(ctx, x, AXES(1), false));
    harness_assert_shape(mx, TP_I32, SHAPE(2));
    ASSERT_VALUES(mx, 0, 9, 7);
    ASSERT_VALUES(eager_ok(tp_min(ctx, x, AXES(0), false)), 0, 0, -1, -3);
    ASSERT_VALUES(eager_ok(tp_max(ctx, x, NULL, 0, false)), 0, 9);
}
END_TEST

START_TEST(max_and_min_propagate_nan) {
    tp_tensor *x = T(TP_F32, DIMS(2, 3), 1, NAN, 3, -INFINITY, 2, 0);
    ASSERT_VALUES(eager_ok(tp_max(ctx, x, AXES(1), false)), 0, NAN, 2);
    ASSERT_VALUES(eager_ok(tp_min(ctx, x, AXES(1), false)), 0, NAN, -INFINITY);
}
END_TEST

START_TEST(max_of_bools_is_any) {
    tp_tensor *x = T(TP_BOOL, DIMS(2, 2), 0, 0, 0, 1);
    tp_tensor *y = eager_ok(tp_max(ctx, x, AXES(1), false));
    harness_assert_shape(y, TP_BOOL, SHAPE(2));
    ASSERT_VALUES(y, 0, 0, 1);
}
END_TEST

START_TEST(max_over_a_zero_size_axis_is_an_error) {
    tp_tensor *empty = eager_values(TP_F64, SHAPE(3, 0), NULL);
    eager_assert_error(tp_max(ctx, empty, AXES(1), false), TP_ERR_SHAPE, "max: zero-size reduction",
                       "f64[3, 0]");
    tp_ctx_clear_error(ctx);
    /* Reducing the non-empty axis leaves an empty result: fine. */
    harness_assert_shape(eager_ok(tp_min(ctx, empty, AXES(0), false)), TP_F64, SHAPE(0));
}
END_TEST

START_TEST(reduction_of_a_0d_tensor_is_itself) {
    tp_tensor *y = eager_ok(tp_sum(ctx, SCALAR(TP_F64, 2.5), NULL, 0, true));
    harness_assert_shape(y, TP_F64, 0, NULL);
    ASSERT_VALUES(y, 0, 2.5);
}
END_TEST

START_TEST(argmax_gives_the_first_maximum) {
    tp_tensor *x = T(TP_I32, DIMS(2, 4), 1, 5, 5, 0, 9, 2, 9, 9);
    tp_tensor *y = eager_ok(tp_argmax(ctx, x, 1, false));
    harness_assert_shape(y, TP_I64, SHAPE(2));
    ASSERT_VALUES(y, 0, 1, 0);
    tp_tensor *z = eager_ok(tp_argmax(ctx, x, 0, true));
    harness_assert_shape(z, TP_I64, SHAPE(1, 4));
    ASSERT_VALUES(z, 0, 1, 0, 1, 1);
}
END_TEST

START_TEST(argmax_treats_the_first_nan_as_the_maximum) {
    tp_tensor *x = T(TP_F64, DIMS(5), 1, 7, NAN, 9, NAN);
    ASSERT_VALUES(eager_ok(tp_argmax(ctx, x, -1, false)), 0, 2);
}
END_TEST

START_TEST(argmax_over_a_zero_size_axis_is_an_error) {
    eager_assert_error(tp_argmax(ctx, eager_values(TP_F32, SHAPE(0, 3), NULL), 0, false),
                       TP_ERR_SHAPE, "argmax: zero-size reduction", "f32[0, 3]");
}
END_TEST

START_TEST(argmax_axis_out_of_range_is_an_error) {
    eager_assert_error(tp_argmax(ctx, T(TP_F32, DIMS(2), 1, 2), 1, false), TP_ERR_INVALID_ARGUMENT,
                       "argmax: axis 1 is out of range for f32[2]", NULL);
}
END_TEST

TP_TEST_SUITE(reduce) {
    Suite *suite = suite_create("ops.reduce");
    TCase *tc = eager_tcase("reduce");
    tcase_add_test(tc, sum_over_all_axes_with_an_empty_list);
    tcase_add_test(tc, sum_over_the_middle_axis);
    tcase_add_test(tc, sum_over_outer_and_inner_axes_with_keepdim);
    tcase_add_test(tc, negative_axes_count_from_the_end);
    tcase_add_test(tc, repeated_axes_are_an_error);
    tcase_add_test(tc, out_of_range_axis_is_an_error);
    tcase_add_test(tc, sum_of_bools_counts_in_i64);
    tcase_add_test(tc, sum_of_empty_is_zero_and_mean_of_empty_is_nan);
    tcase_add_test(tc, mean_of_integers_gives_f32);
    tcase_add_test(tc, f32_sum_accumulates_in_double);
    tcase_add_test(tc, max_and_min_keep_dtype);
    tcase_add_test(tc, max_and_min_propagate_nan);
    tcase_add_test(tc, max_of_bools_is_any);
    tcase_add_test(tc, max_over_a_zero_size_axis_is_an_error);
    tcase_add_test(tc, reduction_of_a_0d_tensor_is_itself);
    tcase_add_test(tc, argmax_gives_the_first_maximum);
    tcase_add_test(tc, argmax_treats_the_first_nan_as_the_maximum);
    tcase_add_test(tc, argmax_over_a_zero_size_axis_is_an_error);
    tcase_add_test(tc, argmax_axis_out_of_range_is_an_error);
    suite_add_tcase(suite, tc);
    return suite;
}
