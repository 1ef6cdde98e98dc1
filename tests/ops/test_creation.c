/* Creation ops (constant, full, arange): payload copies, value conversion,
 * NumPy's arange length and fill rules, and every error path. */
#include "kernel_harness.h"

static tp_tensor *create_ok(tp_op_id id, tp_attrs attrs) {
    return harness_run_ok(id, NULL, 0, &attrs);
}

static tp_status create_status(tp_op_id id, tp_attrs attrs) {
    tp_tensor *out = NULL;
    tp_status status = harness_run(id, NULL, 0, &attrs, &out);
    tp_tensor_release(out);
    return status;
}

static tp_attrs full_attrs(tp_dtype dtype, int ndim, const int64_t *shape, double value) {
    tp_attrs attrs = harness_shape_attrs(ndim, shape);
    attrs.dtype = dtype;
    attrs.value = value;
    return attrs;
}

static tp_attrs arange_attrs(tp_dtype dtype, double start, double stop, double step) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    attrs.range_start = start;
    attrs.range_stop = stop;
    attrs.range_step = step;
    return attrs;
}

/* ---- constant ---- */

START_TEST(constant_copies_its_payload_with_its_type) {
    const int64_t values[] = {7, -8, 9, 10, 11, 12};
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.data = harness_tensor(TP_I64, SHAPE(3, 2), values);
    tp_tensor *out = create_ok(TP_OP_CONSTANT, attrs);
    harness_assert_shape(out, TP_I64, SHAPE(3, 2));
    ASSERT_VALUES(out, 0, 7, -8, 9, 10, 11, 12);
    ck_assert_ptr_ne(out->data, attrs.data->data);
    tp_tensor_release(out);
    tp_tensor_release(attrs.data);
}
END_TEST

START_TEST(constant_without_payload_is_rejected) {
    tp_attrs attrs = TP_ATTRS_INIT;
    harness_assert_error(create_status(TP_OP_CONSTANT, attrs), TP_ERR_INVALID_ARGUMENT,
                         "constant: no payload");
}
END_TEST

/* ---- full ---- */

START_TEST(full_fills_every_element) {
    tp_tensor *out = create_ok(TP_OP_FULL, full_attrs(TP_F32, SHAPE(2, 2), 1.5));
    harness_assert_shape(out, TP_F32, SHAPE(2, 2));
    ASSERT_VALUES(out, 0, 1.5, 1.5, 1.5, 1.5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(full_of_rank_zero_is_a_scalar) {
    tp_tensor *out = create_ok(TP_OP_FULL, full_attrs(TP_F64, 0, NULL, -2.25));
    ck_assert_int_eq(out->ndim, 0);
    ASSERT_VALUES(out, 0, -2.25);
    tp_tensor_release(out);
}
END_TEST

START_TEST(full_truncates_toward_zero_for_integers_like_numpy) {
    /* numpy.full(2, 1.7, int32) == [1, 1]; numpy.full(2, -1.7, int64) == [-1, -1] */
    tp_tensor *i32 = create_ok(TP_OP_FULL, full_attrs(TP_I32, SHAPE(2), 1.7));
    tp_tensor *i64 = create_ok(TP_OP_FULL, full_attrs(TP_I64, SHAPE(2), -1.7));
    ASSERT_VALUES(i32, 0, 1, 1);
    ASSERT_VALUES(i64, 0, -1, -1);
    tp_tensor_release(i32);
    tp_tensor_release(i64);
}
END_TEST

START_TEST(full_of_bool_is_true_for_nonzero) {
    tp_tensor *yes = create_ok(TP_OP_FULL, full_attrs(TP_BOOL, SHAPE(3), 2.0));
    tp_tensor *no = create_ok(TP_OP_FULL, full_attrs(TP_BOOL, SHAPE(1), 0.0));
    ASSERT_VALUES(yes, 0, 1, 1, 1);
    ASSERT_VALUES(no, 0, 0);
    tp_tensor_release(yes);
    tp_tensor_release(no);
}
END_TEST

START_TEST(full_with_a_zero_size_is_empty) {
    tp_tensor *out = create_ok(TP_OP_FULL, full_attrs(TP_I32, SHAPE(3, 0), 4));
    harness_assert_shape(out, TP_I32, SHAPE(3, 0));
    tp_tensor_release(out);
}
END_TEST

START_TEST(full_rejects_a_value_its_integer_dtype_cannot_hold) {
    harness_assert_error(create_status(TP_OP_FULL, full_attrs(TP_I32, SHAPE(1), 3e9)),
                         TP_ERR_INVALID_ARGUMENT, "full: value 3e+09 does not fit in i32");
    harness_assert_error(create_status(TP_OP_FULL, full_attrs(TP_I64, SHAPE(1), NAN)),
                         TP_ERR_INVALID_ARGUMENT, "does not fit in i64");
}
END_TEST

START_TEST(full_rejects_a_negative_size_and_a_bad_dtype) {
    harness_assert_error(create_status(TP_OP_FULL, full_attrs(TP_F32, SHAPE(2, -1), 0)),
                         TP_ERR_INVALID_ARGUMENT, "full: shape [2, -1] has a negative size");
    harness_assert_error(create_status(TP_OP_FULL, full_attrs((tp_dtype)9, SHAPE(1), 0)),
                         TP_ERR_DTYPE, "full: dtype 9");
}
END_TEST

/* ---- arange (expected values: numpy.arange) ---- */

START_TEST(arange_counts_up_by_one) {
    tp_tensor *out = create_ok(TP_OP_ARANGE, arange_attrs(TP_F32, 0, 5, 1));
    harness_assert_shape(out, TP_F32, SHAPE(5));
    ASSERT_VALUES(out, 0, 0, 1, 2, 3, 4);
    tp_tensor_release(out);
}
END_TEST

START_TEST(arange_with_a_fractional_step_rounds_the_length_up) {
    /* ceil((2 - 1) / 0.25) = 4; ceil((1 - 0) / 0.3) = 4 */
    tp_tensor *quarters = create_ok(TP_OP_ARANGE, arange_attrs(TP_F64, 1, 2, 0.25));
    tp_tensor *tenths = create_ok(TP_OP_ARANGE, arange_attrs(TP_F64, 0, 1, 0.3));
    ASSERT_VALUES(quarters, 0, 1, 1.25, 1.5, 1.75);
    ASSERT_VALUES(tenths, 1e-15, 0, 0.3, 0.6, 0.9);
    tp_tensor_release(quarters);
    tp_tensor_release(tenths);
}
END_TEST

START_TEST(arange_counts_down_with_a_negative_step) {
    tp_tensor *out = create_ok(TP_OP_ARANGE, arange_attrs(TP_I64, 5, 0, -2));
    ASSERT_VALUES(out, 0, 5, 3, 1);
    tp_tensor_release(out);
}
END_TEST

START_TEST(arange_of_integers_steps_by_the_converted_delta_like_numpy) {
    /* numpy.arange(0.5, 3, 1, int32) == [0, 1, 2];
       numpy.arange(0, 1, 0.3, int32) == [0, 0, 0, 0] (delta int(0.3) - 0 == 0);
       numpy.arange(-2.5, 2, 1.5, int64) == [-2, -1, 0] */
    tp_tensor *half = create_ok(TP_OP_ARANGE, arange_attrs(TP_I32, 0.5, 3, 1));
    tp_tensor *zero_delta = create_ok(TP_OP_ARANGE, arange_attrs(TP_I32, 0, 1, 0.3));
    tp_tensor *negative = create_ok(TP_OP_ARANGE, arange_attrs(TP_I64, -2.5, 2, 1.5));
    ASSERT_VALUES(half, 0, 0, 1, 2);
    ASSERT_VALUES(zero_delta, 0, 0, 0, 0, 0);
    ASSERT_VALUES(negative, 0, -2, -1, 0);
    tp_tensor_release(half);
    tp_tensor_release(zero_delta);
    tp_tensor_release(negative);
}
END_TEST

START_TEST(arange_past_its_stop_is_empty) {
    tp_tensor *out = create_ok(TP_OP_ARANGE, arange_attrs(TP_F32, 3, 1, 1));
    harness_assert_shape(out, TP_F32, SHAPE(0));
    tp_tensor_release(out);
}
END_TEST

START_TEST(arange_rejects_a_zero_step) {
    harness_assert_error(create_status(TP_OP_ARANGE, arange_attrs(TP_F32, 0, 1, 0)),
                         TP_ERR_INVALID_ARGUMENT, "arange: step must be nonzero");
}
END_TEST

START_TEST(arange_rejects_bool_non_finite_and_overflow) {
    harness_assert_error(create_status(TP_OP_ARANGE, arange_attrs(TP_BOOL, 0, 2, 1)), TP_ERR_DTYPE,
                         "arange: dtype bool");
    harness_assert_error(create_status(TP_OP_ARANGE, arange_attrs(TP_F64, 0, INFINITY, 1)),
                         TP_ERR_INVALID_ARGUMENT, "must be finite");
    harness_assert_error(
        create_status(TP_OP_ARANGE, arange_attrs(TP_I32, 2147483000.0, 2147484000.0, 1)),
        TP_ERR_INVALID_ARGUMENT, "arange: last value 2.14748e+09 does not fit in i32");
    harness_assert_error(create_status(TP_OP_ARANGE, arange_attrs(TP_F64, 0, 1e300, 1e-300)),
                         TP_ERR_INVALID_ARGUMENT, "too many elements");
}
END_TEST

TP_TEST_SUITE(creation) {
    Suite *suite = suite_create("ops.creation");
    TCase *constant = tcase_create("constant");
    tcase_add_test(constant, constant_copies_its_payload_with_its_type);
    tcase_add_test(constant, constant_without_payload_is_rejected);
    suite_add_tcase(suite, constant);

    TCase *full = tcase_create("full");
    tcase_add_test(full, full_fills_every_element);
    tcase_add_test(full, full_of_rank_zero_is_a_scalar);
    tcase_add_test(full, full_truncates_toward_zero_for_integers_like_numpy);
    tcase_add_test(full, full_of_bool_is_true_for_nonzero);
    tcase_add_test(full, full_with_a_zero_size_is_empty);
    tcase_add_test(full, full_rejects_a_value_its_integer_dtype_cannot_hold);
    tcase_add_test(full, full_rejects_a_negative_size_and_a_bad_dtype);
    suite_add_tcase(suite, full);

    TCase *arange = tcase_create("arange");
    tcase_add_test(arange, arange_counts_up_by_one);
    tcase_add_test(arange, arange_with_a_fractional_step_rounds_the_length_up);
    tcase_add_test(arange, arange_counts_down_with_a_negative_step);
    tcase_add_test(arange, arange_of_integers_steps_by_the_converted_delta_like_numpy);
    tcase_add_test(arange, arange_past_its_stop_is_empty);
    tcase_add_test(arange, arange_rejects_a_zero_step);
    tcase_add_test(arange, arange_rejects_bool_non_finite_and_overflow);
    suite_add_tcase(suite, arange);
    return suite;
}
