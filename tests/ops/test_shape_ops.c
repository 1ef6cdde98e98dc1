/* Shape ops (reshape, permute, transpose, expand, slice, concat, squeeze,
 * unsqueeze): hand-checkable kernels, Python slice semantics, every error
 * path, and the rules on symbolic dimensions. */
#include "kernel_harness.h"

#define N TP_DIM_SYMBOL(0) /* a symbolic dimension "n" */
#define M TP_DIM_SYMBOL(1)

static tp_attrs perm_attrs(int ndim, const int64_t *perm) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.nperm = ndim;
    for (int i = 0; i < ndim; i++) attrs.perm[i] = perm[i];
    return attrs;
}

static tp_attrs axes_attrs(int naxes, const int64_t *axes) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = naxes;
    for (int i = 0; i < naxes; i++) attrs.axes[i] = axes[i];
    return attrs;
}

static tp_attrs axis_attrs(int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return attrs;
}

static tp_attrs transpose_attrs(int64_t dim0, int64_t dim1) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = dim0;
    attrs.dim1 = dim1;
    return attrs;
}

static tp_attrs slice_attrs(int64_t axis, int64_t start, int64_t stop, int64_t step) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    attrs.start = start;
    attrs.stop = stop;
    attrs.step = step;
    return attrs;
}

/* Runs a one-input op on `in` and releases `in`. */
static tp_tensor *run1(tp_op_id id, tp_tensor *in, tp_attrs attrs) {
    tp_tensor *out = harness_run_ok(id, &in, 1, &attrs);
    tp_tensor_release(in);
    return out;
}

static tp_status run1_status(tp_op_id id, tp_tensor *in, tp_attrs attrs) {
    tp_tensor *out = NULL;
    tp_status status = harness_run(id, &in, 1, &attrs, &out);
    tp_tensor_release(in);
    tp_tensor_release(out);
    return status;
}

static tp_status infer1(tp_op_id id, tp_type in, tp_attrs attrs, tp_type *out) {
    return harness_infer(id, &in, 1, &attrs, out);
}

/* ---- reshape ---- */

START_TEST(reshape_infers_the_minus_one_and_keeps_order) {
    tp_tensor *out =
        run1(TP_OP_RESHAPE, harness_iota(TP_I32, SHAPE(2, 3)), harness_shape_attrs(SHAPE(3, -1)));
    harness_assert_shape(out, TP_I32, SHAPE(3, 2));
    ASSERT_VALUES(out, 0, 0, 1, 2, 3, 4, 5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(reshape_to_a_scalar) {
    tp_tensor *out =
        run1(TP_OP_RESHAPE, harness_iota(TP_F64, SHAPE(1, 1)), harness_shape_attrs(0, NULL));
    ck_assert_int_eq(out->ndim, 0);
    ASSERT_VALUES(out, 0, 0);
    tp_tensor_release(out);
}
END_TEST

START_TEST(reshape_rejects_a_different_element_count) {
    harness_assert_error(run1_status(TP_OP_RESHAPE, harness_iota(TP_F32, SHAPE(2, 3)),
                                     harness_shape_attrs(SHAPE(4, 2))),
                         TP_ERR_SHAPE, "reshape: cannot reshape f32[2, 3] to [4, 2]");
}
END_TEST

START_TEST(reshape_rejects_an_indivisible_minus_one) {
    harness_assert_error(run1_status(TP_OP_RESHAPE, harness_iota(TP_F32, SHAPE(2, 3)),
                                     harness_shape_attrs(SHAPE(4, -1))),
                         TP_ERR_SHAPE, "f32[2, 3] to [4, -1]");
}
END_TEST

START_TEST(reshape_rejects_two_minus_ones) {
    harness_assert_error(run1_status(TP_OP_RESHAPE, harness_iota(TP_F32, SHAPE(6)),
                                     harness_shape_attrs(SHAPE(-1, -1))),
                         TP_ERR_INVALID_ARGUMENT, "a second -1");
}
END_TEST

START_TEST(reshape_rejects_a_minus_one_beside_a_zero) {
    harness_assert_error(run1_status(TP_OP_RESHAPE, harness_iota(TP_F32, SHAPE(0, 3)),
                                     harness_shape_attrs(SHAPE(0, -1))),
                         TP_ERR_SHAPE, "ambiguous");
}
END_TEST

START_TEST(reshape_rejects_a_negative_size) {
    harness_assert_error(run1_status(TP_OP_RESHAPE, harness_iota(TP_F32, SHAPE(6)),
                                     harness_shape_attrs(SHAPE(-2, -3))),
                         TP_ERR_INVALID_ARGUMENT, "negative size");
}
END_TEST

START_TEST(reshape_minus_one_takes_the_one_symbol) {
    tp_type out;
    ck_assert_int_eq(infer1(TP_OP_RESHAPE, harness_type(TP_F32, SHAPE(N, 4)),
                            harness_shape_attrs(SHAPE(-1, 2, 2)), &out),
                     TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(N, 2, 2));
}
END_TEST

START_TEST(reshape_refuses_a_fixed_target_for_a_symbolic_input) {
    tp_type out;
    harness_assert_error(infer1(TP_OP_RESHAPE, harness_type(TP_F32, SHAPE(N, 4)),
                                harness_shape_attrs(SHAPE(8, 4)), &out),
                         TP_ERR_SHAPE, "dimension 0 is symbolic; use -1");
    harness_assert_error(infer1(TP_OP_RESHAPE, harness_type(TP_F32, SHAPE(N, M)),
                                harness_shape_attrs(SHAPE(-1)), &out),
                         TP_ERR_SHAPE, "symbolic");
}
END_TEST

/* ---- permute and transpose ---- */

START_TEST(permute_moves_every_element_for_every_dtype) {
    for (int dtype = 0; dtype < TP_DTYPE_COUNT; dtype++) {
        tp_tensor *out = run1(TP_OP_PERMUTE, harness_iota((tp_dtype)dtype, SHAPE(2, 3, 4)),
                              perm_attrs(SHAPE(2, 0, 1)));
        harness_assert_shape(out, (tp_dtype)dtype, SHAPE(4, 2, 3));
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 3; j++) {
                    int64_t source = i * 12 + j * 4 + k; /* in[i, j, k] */
                    double expected = dtype == TP_BOOL ? (double)(source % 2) : (double)source;
                    ck_assert_double_eq(tp_tensor_get_f64(out, k * 6 + i * 3 + j), expected);
                }
        tp_tensor_release(out);
    }
}
END_TEST

START_TEST(permute_accepts_negative_entries) {
    tp_tensor *out =
        run1(TP_OP_PERMUTE, harness_iota(TP_I64, SHAPE(2, 3)), perm_attrs(SHAPE(-1, 0)));
    harness_assert_shape(out, TP_I64, SHAPE(3, 2));
    ASSERT_VALUES(out, 0, 0, 3, 1, 4, 2, 5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(permute_rejects_a_repeated_axis) {
    harness_assert_error(
        run1_status(TP_OP_PERMUTE, harness_iota(TP_F32, SHAPE(2, 3)), perm_attrs(SHAPE(1, -1))),
        TP_ERR_INVALID_ARGUMENT, "permute: perm [1, -1] for f32[2, 3] repeats axis 1");
}
END_TEST

START_TEST(permute_rejects_a_wrong_length_or_range) {
    harness_assert_error(
        run1_status(TP_OP_PERMUTE, harness_iota(TP_F32, SHAPE(2, 3)), perm_attrs(SHAPE(0))),
        TP_ERR_INVALID_ARGUMENT, "perm [0] has 1 entries but f32[2, 3] has 2");
    harness_assert_error(
        run1_status(TP_OP_PERMUTE, harness_iota(TP_F32, SHAPE(2, 3)), perm_attrs(SHAPE(0, 2))),
        TP_ERR_INVALID_ARGUMENT, "perm entry 2 is out of range for f32[2, 3]");
}
END_TEST

START_TEST(permute_and_transpose_carry_symbols) {
    tp_type out;
    ck_assert_int_eq(infer1(TP_OP_PERMUTE, harness_type(TP_F32, SHAPE(N, 3, M)),
                            perm_attrs(SHAPE(2, 0, 1)), &out),
                     TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(M, N, 3));
    ck_assert_int_eq(
        infer1(TP_OP_TRANSPOSE, harness_type(TP_I32, SHAPE(N, 3)), transpose_attrs(0, 1), &out),
        TP_OK);
    harness_assert_type(&out, TP_I32, SHAPE(3, N));
}
END_TEST

START_TEST(transpose_swaps_a_matrix) {
    const float values[] = {1, 2, 3, 4, 5, 6};
    tp_tensor *out =
        run1(TP_OP_TRANSPOSE, harness_tensor(TP_F32, SHAPE(2, 3), values), transpose_attrs(0, 1));
    harness_assert_shape(out, TP_F32, SHAPE(3, 2));
    ASSERT_VALUES(out, 0, 1, 4, 2, 5, 3, 6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(transpose_accepts_negative_dims) {
    /* [2, 1, 3] with dims (-1, 0) -> [3, 1, 2]: out[k, 0, i] = in[i, 0, k] */
    tp_tensor *out =
        run1(TP_OP_TRANSPOSE, harness_iota(TP_I32, SHAPE(2, 1, 3)), transpose_attrs(-1, 0));
    harness_assert_shape(out, TP_I32, SHAPE(3, 1, 2));
    ASSERT_VALUES(out, 0, 0, 3, 1, 4, 2, 5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(transpose_rejects_an_out_of_range_dim) {
    harness_assert_error(
        run1_status(TP_OP_TRANSPOSE, harness_iota(TP_F32, SHAPE(2, 3)), transpose_attrs(0, 2)),
        TP_ERR_INVALID_ARGUMENT,
        "transpose: dim1 2 is out of range for f32[2, 3] (expected -2..1)");
}
END_TEST

/* ---- expand ---- */

START_TEST(expand_repeats_a_row) {
    tp_tensor *out =
        run1(TP_OP_EXPAND, harness_iota(TP_F64, SHAPE(3)), harness_shape_attrs(SHAPE(2, 3)));
    harness_assert_shape(out, TP_F64, SHAPE(2, 3));
    ASSERT_VALUES(out, 0, 0, 1, 2, 0, 1, 2);
    tp_tensor_release(out);
}
END_TEST

START_TEST(expand_repeats_a_column_and_keeps_minus_one) {
    tp_tensor *out =
        run1(TP_OP_EXPAND, harness_iota(TP_I32, SHAPE(2, 1)), harness_shape_attrs(SHAPE(-1, 3)));
    harness_assert_shape(out, TP_I32, SHAPE(2, 3));
    ASSERT_VALUES(out, 0, 0, 0, 0, 1, 1, 1);
    tp_tensor_release(out);
}
END_TEST

START_TEST(expand_a_scalar_to_a_matrix) {
    const uint8_t one = 1;
    tp_tensor *out = run1(TP_OP_EXPAND, harness_tensor(TP_BOOL, 0, NULL, &one),
                          harness_shape_attrs(SHAPE(2, 2)));
    harness_assert_shape(out, TP_BOOL, SHAPE(2, 2));
    ASSERT_VALUES(out, 0, 1, 1, 1, 1);
    tp_tensor_release(out);
}
END_TEST

START_TEST(expand_rejects_a_size_that_is_not_one) {
    harness_assert_error(
        run1_status(TP_OP_EXPAND, harness_iota(TP_F32, SHAPE(2)), harness_shape_attrs(SHAPE(3))),
        TP_ERR_SHAPE, "expand: cannot expand f32[2] to [3]");
}
END_TEST

START_TEST(expand_rejects_fewer_dims_and_a_leading_minus_one) {
    harness_assert_error(
        run1_status(TP_OP_EXPAND, harness_iota(TP_F32, SHAPE(1, 2)), harness_shape_attrs(SHAPE(2))),
        TP_ERR_SHAPE, "expand: target has 1 dimensions; f32[1, 2] needs 2 to 8");
    harness_assert_error(run1_status(TP_OP_EXPAND, harness_iota(TP_F32, SHAPE(2)),
                                     harness_shape_attrs(SHAPE(-1, 2))),
                         TP_ERR_INVALID_ARGUMENT, "new leading dimension");
}
END_TEST

START_TEST(expand_keeps_a_symbol_only_through_minus_one) {
    tp_type out;
    ck_assert_int_eq(infer1(TP_OP_EXPAND, harness_type(TP_F32, SHAPE(N, 1)),
                            harness_shape_attrs(SHAPE(2, -1, 3)), &out),
                     TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(2, N, 3));
    harness_assert_error(
        infer1(TP_OP_EXPAND, harness_type(TP_F32, SHAPE(N)), harness_shape_attrs(SHAPE(4)), &out),
        TP_ERR_SHAPE, "symbolic; use -1");
}
END_TEST

/* ---- slice: each case is x[start:stop:step] for x = [0, 1, ..., 9] in Python ---- */

static tp_tensor *slice_range10(int64_t start, int64_t stop, int64_t step) {
    return run1(TP_OP_SLICE, harness_iota(TP_I64, SHAPE(10)), slice_attrs(0, start, stop, step));
}

START_TEST(slice_with_a_step) {
    tp_tensor *out = slice_range10(2, 7, 2); /* [2, 4, 6] */
    ASSERT_VALUES(out, 0, 2, 4, 6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(slice_negative_start_to_the_end) {
    tp_tensor *out = slice_range10(-3, TP_SLICE_END, 1); /* x[-3:] */
    ASSERT_VALUES(out, 0, 7, 8, 9);
    tp_tensor_release(out);
}
END_TEST

START_TEST(slice_clamps_out_of_range_bounds) {
    tp_tensor *low = slice_range10(-100, 3, 1); /* x[-100:3] = [0, 1, 2] */
    tp_tensor *high = slice_range10(7, 100, 1); /* x[7:100] = [7, 8, 9] */
    tp_tensor *past = slice_range10(12, 20, 1); /* x[12:20] = [] */
    ASSERT_VALUES(low, 0, 0, 1, 2);
    ASSERT_VALUES(high, 0, 7, 8, 9);
    ck_assert_int_eq(past->numel, 0);
    tp_tensor_release(low);
    tp_tensor_release(high);
    tp_tensor_release(past);
}
END_TEST

START_TEST(slice_with_stop_before_start_is_empty) {
    tp_tensor *forward = slice_range10(7, 2, 1);    /* x[7:2] = [] */
    tp_tensor *negative = slice_range10(-1, -4, 1); /* x[-1:-4] = [] */
    harness_assert_shape(forward, TP_I64, SHAPE(0));
    harness_assert_shape(negative, TP_I64, SHAPE(0));
    tp_tensor_release(forward);
    tp_tensor_release(negative);
}
END_TEST

START_TEST(slice_negative_stop_with_a_step) {
    tp_tensor *out = slice_range10(1, -1, 4);                   /* x[1:-1:4] = [1, 5] */
    tp_tensor *every_third = slice_range10(0, TP_SLICE_END, 3); /* x[::3] */
    ASSERT_VALUES(out, 0, 1, 5);
    ASSERT_VALUES(every_third, 0, 0, 3, 6, 9);
    tp_tensor_release(out);
    tp_tensor_release(every_third);
}
END_TEST

START_TEST(slice_along_an_inner_axis) {
    /* [[0, 1, 2], [3, 4, 5]][:, 1:] */
    tp_tensor *out =
        run1(TP_OP_SLICE, harness_iota(TP_F32, SHAPE(2, 3)), slice_attrs(-1, 1, TP_SLICE_END, 1));
    harness_assert_shape(out, TP_F32, SHAPE(2, 2));
    ASSERT_VALUES(out, 0, 1, 2, 4, 5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(slice_rejects_a_step_that_is_not_positive) {
    harness_assert_error(
        run1_status(TP_OP_SLICE, harness_iota(TP_F32, SHAPE(4)), slice_attrs(0, 0, 4, 0)),
        TP_ERR_INVALID_ARGUMENT, "slice: step 0 on f32[4] must be positive");
    harness_assert_error(
        run1_status(TP_OP_SLICE, harness_iota(TP_F32, SHAPE(4)), slice_attrs(0, 3, 0, -1)),
        TP_ERR_INVALID_ARGUMENT, "step -1");
}
END_TEST

START_TEST(slice_rejects_an_out_of_range_axis) {
    harness_assert_error(
        run1_status(TP_OP_SLICE, harness_iota(TP_F32, SHAPE(4)), slice_attrs(1, 0, 1, 1)),
        TP_ERR_INVALID_ARGUMENT, "slice: axis 1 is out of range for f32[4]");
}
END_TEST

START_TEST(slice_of_a_symbolic_axis_only_whole) {
    tp_type out;
    ck_assert_int_eq(
        infer1(TP_OP_SLICE, harness_type(TP_F32, SHAPE(N, 6)), slice_attrs(1, 0, 6, 2), &out),
        TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(N, 3));
    ck_assert_int_eq(infer1(TP_OP_SLICE, harness_type(TP_F32, SHAPE(N, 6)),
                            slice_attrs(0, 0, TP_SLICE_END, 1), &out),
                     TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(N, 6));
    harness_assert_error(infer1(TP_OP_SLICE, harness_type(TP_F32, SHAPE(N, 6)),
                                slice_attrs(0, 1, TP_SLICE_END, 1), &out),
                         TP_ERR_SHAPE, "slice: axis 0 of f32[?, 6] is symbolic");
}
END_TEST

/* ---- concat ---- */

static tp_tensor *concat_run(tp_tensor **inputs, int count, int64_t axis, tp_status *status) {
    tp_attrs attrs = axis_attrs(axis);
    tp_tensor *out = NULL;
    *status = harness_run(TP_OP_CONCAT, inputs, count, &attrs, &out);
    for (int i = 0; i < count; i++) tp_tensor_release(inputs[i]);
    return out;
}

START_TEST(concat_joins_vectors_including_an_empty_one) {
    const int32_t a[] = {1, 2}, c[] = {3};
    tp_tensor *inputs[] = {harness_tensor(TP_I32, SHAPE(2), a), harness_iota(TP_I32, SHAPE(0)),
                           harness_tensor(TP_I32, SHAPE(1), c)};
    tp_status status;
    tp_tensor *out = concat_run(inputs, 3, 0, &status);
    ck_assert_int_eq(status, TP_OK);
    ASSERT_VALUES(out, 0, 1, 2, 3);
    tp_tensor_release(out);
}
END_TEST

START_TEST(concat_along_columns_with_a_negative_axis) {
    const double left[] = {1, 2}, right[] = {3, 4, 5, 6};
    tp_tensor *inputs[] = {harness_tensor(TP_F64, SHAPE(2, 1), left),
                           harness_tensor(TP_F64, SHAPE(2, 2), right)};
    tp_status status;
    tp_tensor *out = concat_run(inputs, 2, -1, &status);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    harness_assert_shape(out, TP_F64, SHAPE(2, 3));
    ASSERT_VALUES(out, 0, 1, 3, 4, 2, 5, 6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(concat_promotes_mixed_dtypes) {
    const int32_t ints[] = {1, 2};
    const float floats[] = {0.5f};
    tp_tensor *inputs[] = {harness_tensor(TP_I32, SHAPE(2), ints),
                           harness_tensor(TP_F32, SHAPE(1), floats)};
    tp_status status;
    tp_tensor *out = concat_run(inputs, 2, 0, &status);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    harness_assert_shape(out, TP_F32, SHAPE(3));
    ASSERT_VALUES(out, 0, 1, 2, 0.5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(concat_accepts_its_sixty_four_inputs) {
    tp_tensor *inputs[64];
    for (int i = 0; i < 64; i++) {
        const int32_t value = i * 10;
        inputs[i] = harness_tensor(TP_I32, SHAPE(1, 1), &value);
    }
    tp_status status;
    tp_tensor *out = concat_run(inputs, 64, 1, &status);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    harness_assert_shape(out, TP_I32, SHAPE(1, 64));
    for (int i = 0; i < 64; i++) ck_assert_double_eq(tp_tensor_get_f64(out, i), i * 10);
    tp_tensor_release(out);
}
END_TEST

START_TEST(concat_rejects_a_rank_or_size_mismatch) {
    tp_tensor *ranks[] = {harness_iota(TP_F32, SHAPE(2, 2)), harness_iota(TP_F32, SHAPE(2))};
    tp_status status;
    concat_run(ranks, 2, 0, &status);
    harness_assert_error(status, TP_ERR_SHAPE,
                         "concat: input 1 f32[2] does not fit input 0 f32[2, 2]: the ranks differ");
    tp_tensor *sizes[] = {harness_iota(TP_F32, SHAPE(2, 2)), harness_iota(TP_F32, SHAPE(1, 2)),
                          harness_iota(TP_F32, SHAPE(2, 3))};
    concat_run(sizes, 3, 0, &status);
    harness_assert_error(status, TP_ERR_SHAPE,
                         "input 2 f32[2, 3] does not fit input 0 f32[2, 2]: dimension 1 differs");
}
END_TEST

START_TEST(concat_rejects_a_scalar) {
    tp_tensor *inputs[] = {harness_iota(TP_F32, 0, NULL)};
    tp_status status;
    concat_run(inputs, 1, 0, &status);
    harness_assert_error(status, TP_ERR_INVALID_ARGUMENT,
                         "concat: axis 0 is out of range for f32[]");
}
END_TEST

START_TEST(concat_of_symbolic_values_along_a_fixed_axis) {
    tp_type inputs[] = {harness_type(TP_F32, SHAPE(N, 2)), harness_type(TP_F64, SHAPE(N, 3))}, out;
    tp_attrs attrs = axis_attrs(1);
    ck_assert_int_eq(harness_infer(TP_OP_CONCAT, inputs, 2, &attrs, &out), TP_OK);
    harness_assert_type(&out, TP_F64, SHAPE(N, 5));
    attrs.axis = 0;
    inputs[1] = harness_type(TP_F32, SHAPE(N, 2));
    harness_assert_error(harness_infer(TP_OP_CONCAT, inputs, 2, &attrs, &out), TP_ERR_SHAPE,
                         "axis 0 of input 0 f32[?, 2] is symbolic");
    inputs[1] = harness_type(TP_F32, SHAPE(M, 2));
    attrs.axis = 1;
    harness_assert_error(harness_infer(TP_OP_CONCAT, inputs, 2, &attrs, &out), TP_ERR_SHAPE,
                         "dimension 0 differs");
}
END_TEST

/* ---- squeeze and unsqueeze ---- */

START_TEST(squeeze_without_axes_drops_every_size_one) {
    tp_tensor *out =
        run1(TP_OP_SQUEEZE, harness_iota(TP_I32, SHAPE(1, 2, 1, 3)), axes_attrs(0, NULL));
    harness_assert_shape(out, TP_I32, SHAPE(2, 3));
    ASSERT_VALUES(out, 0, 0, 1, 2, 3, 4, 5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(squeeze_drops_only_the_named_axes) {
    tp_tensor *out =
        run1(TP_OP_SQUEEZE, harness_iota(TP_F32, SHAPE(1, 2, 1, 3)), axes_attrs(SHAPE(-2)));
    harness_assert_shape(out, TP_F32, SHAPE(1, 2, 3));
    tp_tensor_release(out);
}
END_TEST

START_TEST(squeeze_rejects_a_named_axis_that_is_not_one) {
    harness_assert_error(
        run1_status(TP_OP_SQUEEZE, harness_iota(TP_F32, SHAPE(1, 2)), axes_attrs(SHAPE(1))),
        TP_ERR_SHAPE, "squeeze: dimension 1 of f32[1, 2] is not of size 1");
    harness_assert_error(
        run1_status(TP_OP_SQUEEZE, harness_iota(TP_F32, SHAPE(1, 2)), axes_attrs(SHAPE(0, -2))),
        TP_ERR_SHAPE, "named twice");
    harness_assert_error(
        run1_status(TP_OP_SQUEEZE, harness_iota(TP_F32, SHAPE(1, 2)), axes_attrs(SHAPE(2))),
        TP_ERR_INVALID_ARGUMENT, "squeeze: axis 2 is out of range");
}
END_TEST

START_TEST(squeeze_with_symbols_needs_named_fixed_axes) {
    tp_type out;
    ck_assert_int_eq(
        infer1(TP_OP_SQUEEZE, harness_type(TP_F32, SHAPE(N, 1, 3)), axes_attrs(SHAPE(1)), &out),
        TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(N, 3));
    harness_assert_error(
        infer1(TP_OP_SQUEEZE, harness_type(TP_F32, SHAPE(N, 1)), axes_attrs(0, NULL), &out),
        TP_ERR_SHAPE, "dimension 0 of f32[?, 1] is symbolic");
    harness_assert_error(
        infer1(TP_OP_SQUEEZE, harness_type(TP_F32, SHAPE(N, 1)), axes_attrs(SHAPE(0)), &out),
        TP_ERR_SHAPE, "is symbolic");
}
END_TEST

START_TEST(unsqueeze_inserts_at_every_valid_position) {
    static const struct {
        int64_t axis;
        int64_t dims[3];
    } cases[] = {{0, {1, 2, 3}},  {1, {2, 1, 3}},  {2, {2, 3, 1}},
                 {-1, {2, 3, 1}}, {-2, {2, 1, 3}}, {-3, {1, 2, 3}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tp_tensor *out =
            run1(TP_OP_UNSQUEEZE, harness_iota(TP_F64, SHAPE(2, 3)), axis_attrs(cases[i].axis));
        harness_assert_shape(out, TP_F64, 3, cases[i].dims);
        ASSERT_VALUES(out, 0, 0, 1, 2, 3, 4, 5);
        tp_tensor_release(out);
    }
}
END_TEST

START_TEST(unsqueeze_rejects_an_axis_beyond_ndim) {
    harness_assert_error(
        run1_status(TP_OP_UNSQUEEZE, harness_iota(TP_F32, SHAPE(2, 3)), axis_attrs(3)),
        TP_ERR_INVALID_ARGUMENT,
        "unsqueeze: axis 3 is out of range for f32[2, 3] (expected -3..2)");
    harness_assert_error(
        run1_status(TP_OP_UNSQUEEZE, harness_iota(TP_F32, SHAPE(2, 3)), axis_attrs(-4)),
        TP_ERR_INVALID_ARGUMENT, "axis -4");
}
END_TEST

START_TEST(unsqueeze_of_a_scalar_and_of_a_symbolic_value) {
    tp_tensor *out = run1(TP_OP_UNSQUEEZE, harness_iota(TP_I64, 0, NULL), axis_attrs(-1));
    harness_assert_shape(out, TP_I64, SHAPE(1));
    tp_tensor_release(out);
    tp_type type;
    ck_assert_int_eq(infer1(TP_OP_UNSQUEEZE, harness_type(TP_BOOL, SHAPE(N)), axis_attrs(0), &type),
                     TP_OK);
    harness_assert_type(&type, TP_BOOL, SHAPE(1, N));
}
END_TEST

START_TEST(shape_ops_keep_values_of_every_dtype) {
    /* reshape, squeeze and unsqueeze move no element: the bytes are the input's */
    for (int dtype = 0; dtype < TP_DTYPE_COUNT; dtype++) {
        tp_tensor *in = harness_iota((tp_dtype)dtype, SHAPE(2, 1, 3));
        tp_attrs reshape = harness_shape_attrs(SHAPE(3, 2)), squeeze = axes_attrs(0, NULL),
                 unsqueeze = axis_attrs(0);
        tp_tensor *outs[] = {harness_run_ok(TP_OP_RESHAPE, &in, 1, &reshape),
                             harness_run_ok(TP_OP_SQUEEZE, &in, 1, &squeeze),
                             harness_run_ok(TP_OP_UNSQUEEZE, &in, 1, &unsqueeze)};
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(outs[i]->dtype, dtype);
            ck_assert_int_eq(memcmp(outs[i]->data, in->data, in->nbytes), 0);
            tp_tensor_release(outs[i]);
        }
        tp_tensor_release(in);
    }
}
END_TEST

TP_TEST_SUITE(shape_ops) {
    Suite *suite = suite_create("ops.shape");
    TCase *reshape = tcase_create("reshape");
    tcase_add_test(reshape, reshape_infers_the_minus_one_and_keeps_order);
    tcase_add_test(reshape, reshape_to_a_scalar);
    tcase_add_test(reshape, reshape_rejects_a_different_element_count);
    tcase_add_test(reshape, reshape_rejects_an_indivisible_minus_one);
    tcase_add_test(reshape, reshape_rejects_two_minus_ones);
    tcase_add_test(reshape, reshape_rejects_a_minus_one_beside_a_zero);
    tcase_add_test(reshape, reshape_rejects_a_negative_size);
    tcase_add_test(reshape, reshape_minus_one_takes_the_one_symbol);
    tcase_add_test(reshape, reshape_refuses_a_fixed_target_for_a_symbolic_input);
    suite_add_tcase(suite, reshape);

    TCase *permute = tcase_create("permute");
    tcase_add_test(permute, permute_moves_every_element_for_every_dtype);
    tcase_add_test(permute, permute_accepts_negative_entries);
    tcase_add_test(permute, permute_rejects_a_repeated_axis);
    tcase_add_test(permute, permute_rejects_a_wrong_length_or_range);
    tcase_add_test(permute, permute_and_transpose_carry_symbols);
    tcase_add_test(permute, transpose_swaps_a_matrix);
    tcase_add_test(permute, transpose_accepts_negative_dims);
    tcase_add_test(permute, transpose_rejects_an_out_of_range_dim);
    suite_add_tcase(suite, permute);

    TCase *expand = tcase_create("expand");
    tcase_add_test(expand, expand_repeats_a_row);
    tcase_add_test(expand, expand_repeats_a_column_and_keeps_minus_one);
    tcase_add_test(expand, expand_a_scalar_to_a_matrix);
    tcase_add_test(expand, expand_rejects_a_size_that_is_not_one);
    tcase_add_test(expand, expand_rejects_fewer_dims_and_a_leading_minus_one);
    tcase_add_test(expand, expand_keeps_a_symbol_only_through_minus_one);
    suite_add_tcase(suite, expand);

    TCase *slice = tcase_create("slice");
    tcase_add_test(slice, slice_with_a_step);
    tcase_add_test(slice, slice_negative_start_to_the_end);
    tcase_add_test(slice, slice_clamps_out_of_range_bounds);
    tcase_add_test(slice, slice_with_stop_before_start_is_empty);
    tcase_add_test(slice, slice_negative_stop_with_a_step);
    tcase_add_test(slice, slice_along_an_inner_axis);
    tcase_add_test(slice, slice_rejects_a_step_that_is_not_positive);
    tcase_add_test(slice, slice_rejects_an_out_of_range_axis);
    tcase_add_test(slice, slice_of_a_symbolic_axis_only_whole);
    suite_add_tcase(suite, slice);

    TCase *concat = tcase_create("concat");
    tcase_add_test(concat, concat_joins_vectors_including_an_empty_one);
    tcase_add_test(concat, concat_along_columns_with_a_negative_axis);
    tcase_add_test(concat, concat_promotes_mixed_dtypes);
    tcase_add_test(concat, concat_accepts_its_sixty_four_inputs);
    tcase_add_test(concat, concat_rejects_a_rank_or_size_mismatch);
    tcase_add_test(concat, concat_rejects_a_scalar);
    tcase_add_test(concat, concat_of_symbolic_values_along_a_fixed_axis);
    suite_add_tcase(suite, concat);

    TCase *squeeze = tcase_create("squeeze");
    tcase_add_test(squeeze, squeeze_without_axes_drops_every_size_one);
    tcase_add_test(squeeze, squeeze_drops_only_the_named_axes);
    tcase_add_test(squeeze, squeeze_rejects_a_named_axis_that_is_not_one);
    tcase_add_test(squeeze, squeeze_with_symbols_needs_named_fixed_axes);
    tcase_add_test(squeeze, unsqueeze_inserts_at_every_valid_position);
    tcase_add_test(squeeze, unsqueeze_rejects_an_axis_beyond_ndim);
    tcase_add_test(squeeze, unsqueeze_of_a_scalar_and_of_a_symbolic_value);
    tcase_add_test(squeeze, shape_ops_keep_values_of_every_dtype);
    suite_add_tcase(suite, squeeze);
    return suite;
}
