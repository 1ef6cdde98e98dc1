/* tp_ctx and the eager API: sticky first error, NULL inputs, scopes and
 * adoption, metadata and item reads, the capture recorder hook, the generic
 * tp_op path, and that every typed wrapper reaches its op. */
#include "eager_harness.h"
#include "ops/ctx_internal.h"

#define LN2 0.69314718055994530942

static int refcount(tp_tensor *tensor) {
    return atomic_load(&tensor->refcount);
}

/* One more reference to an op's (non-NULL) result, owned by the test. */
static tp_tensor *retained(tp_tensor *tensor) {
    ck_assert_ptr_nonnull(tensor);
    return tp_tensor_retain(tensor);
}

/* ---- sticky errors ---- */

START_TEST(first_error_is_kept_with_op_and_shapes) {
    tp_tensor *a = T(TP_F32, DIMS(2, 3), 0, 0, 0, 0, 0, 0);
    tp_tensor *b = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(4, 5)));
    ck_assert_ptr_null(tp_matmul(ctx, a, b));
    ck_assert_ptr_null(tp_add(ctx, a, b)); /* a second, different failure */
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_SHAPE);
    ck_assert_str_eq(tp_ctx_error(ctx),
                     "matmul: inner dimensions differ: f32[2, 3] @ f32[4, 5] (3 vs 4)");
}
END_TEST

START_TEST(null_input_returns_null_without_touching_the_error) {
    tp_tensor *a = T(TP_F32, DIMS(2), 1, 2);
    ck_assert_ptr_null(tp_add(ctx, a, NULL));
    ck_assert_int_eq(tp_ctx_status(ctx), TP_OK);
    ck_assert_str_eq(tp_ctx_error(ctx), "");
    /* A chain through a failure stays silent after the first error. */
    tp_tensor *bad = tp_reshape(ctx, a, DIMS(3), 1);
    ck_assert_ptr_null(bad);
    char first[512];
    snprintf(first, sizeof first, "%s", tp_ctx_error(ctx));
    ck_assert_ptr_null(tp_exp(ctx, tp_neg(ctx, bad)));
    ck_assert_ptr_null(tp_sum(ctx, bad, NULL, 0, false));
    ck_assert_str_eq(tp_ctx_error(ctx), first);
}
END_TEST

START_TEST(ops_still_run_on_valid_inputs_after_an_error) {
    ck_assert_ptr_null(tp_neg(ctx, T(TP_BOOL, DIMS(1), 1)));
    tp_tensor *y = tp_neg(ctx, T(TP_F32, DIMS(1), 2));
    ck_assert_ptr_nonnull(y);
    ASSERT_VALUES(y, 0, -2);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_DTYPE);
}
END_TEST

START_TEST(clear_error_resets_status_and_message) {
    ck_assert_ptr_null(tp_op(ctx, "no_such_op", NULL, 0, NULL));
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_ctx_error(ctx), "unknown op 'no_such_op'"));
    tp_ctx_clear_error(ctx);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_OK);
    ck_assert_str_eq(tp_ctx_error(ctx), "");
}
END_TEST

START_TEST(generic_op_checks_arity) {
    tp_tensor *a = T(TP_F32, DIMS(1), 1);
    ck_assert_ptr_null(tp_op(ctx, "add", &a, 1, NULL));
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(tp_ctx_error(ctx), "add: expects 2 inputs, got 1");
}
END_TEST

START_TEST(generic_op_runs_by_name_with_attributes) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = 1;
    attrs.axes[0] = 0;
    tp_tensor *x = T(TP_I32, DIMS(2, 2), 1, 2, 3, 4);
    tp_tensor *y = eager_ok(tp_op(ctx, "sum", &x, 1, &attrs));
    ASSERT_VALUES(y, 0, 4, 6);
}
END_TEST

/* ---- scopes ---- */

START_TEST(scope_end_releases_results_made_inside) {
    tp_tensor *x = T(TP_F32, DIMS(1), 1);
    size_t mark = tp_ctx_scope_begin(ctx);
    tp_tensor *y = retained(tp_neg(ctx, x));
    ck_assert_int_eq(refcount(y), 2);
    tp_ctx_scope_end(ctx, mark, NULL, 0);
    ck_assert_int_eq(refcount(y), 1); /* only our own reference is left */
    ck_assert_int_eq(refcount(x), 1); /* the outer scope still holds x */
    tp_tensor_release(y);
}
END_TEST

START_TEST(scope_end_moves_kept_tensors_to_the_enclosing_scope) {
    size_t outer = tp_ctx_scope_begin(ctx);
    tp_tensor *x = T(TP_F32, DIMS(1), 1);
    size_t inner = tp_ctx_scope_begin(ctx);
    tp_tensor *temporary = retained(tp_exp(ctx, x));
    tp_tensor *kept = retained(tp_neg(ctx, x));
    tp_ctx_scope_end(ctx, inner, &kept, 1);
    ck_assert_int_eq(refcount(temporary), 1);
    ck_assert_int_eq(refcount(kept), 2); /* ours + the outer scope's */
    tp_ctx_scope_end(ctx, outer, NULL, 0);
    ck_assert_int_eq(refcount(kept), 1);
    tp_tensor_release(temporary);
    tp_tensor_release(kept);
}
END_TEST

START_TEST(nested_scope_end_with_outer_mark_releases_both) {
    size_t outer = tp_ctx_scope_begin(ctx);
    tp_tensor *a = retained(T(TP_F32, DIMS(1), 1));
    (void)tp_ctx_scope_begin(ctx);
    tp_tensor *b = retained(tp_neg(ctx, a));
    tp_ctx_scope_end(ctx, outer, NULL, 0);
    ck_assert_int_eq(refcount(a), 1);
    ck_assert_int_eq(refcount(b), 1);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

START_TEST(adopt_hands_a_reference_to_the_scope) {
    tp_tensor *own = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 0, NULL, &own), TP_OK);
    tp_tensor_retain(own);
    size_t mark = tp_ctx_scope_begin(ctx);
    ck_assert_ptr_eq(tp_ctx_adopt(ctx, own), own);
    tp_ctx_scope_end(ctx, mark, NULL, 0);
    ck_assert_int_eq(refcount(own), 1);
    tp_tensor_release(own);
}
END_TEST

START_TEST(destroy_releases_everything_left) {
    /* Results stay with the ctx; the sanitizer build checks nothing leaks. */
    tp_ctx *other = tp_ctx_create();
    tp_tensor *x = tp_full(other, TP_F64, SHAPE(3), 2.0);
    ck_assert_ptr_nonnull(tp_mul(other, x, x));
    tp_ctx_destroy(other);
    tp_ctx_destroy(NULL);
}
END_TEST

/* ---- metadata and items ---- */

START_TEST(ndim_and_dim_read_the_shape) {
    tp_tensor *x = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(2, 5)));
    ck_assert_int_eq(tp_ndim(ctx, x), 2);
    ck_assert_int_eq(tp_dim(ctx, x, 1), 5);
    ck_assert_int_eq(tp_dim(ctx, x, -2), 2);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_OK);
}
END_TEST

START_TEST(dim_out_of_range_is_recorded) {
    tp_tensor *x = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(2, 5)));
    ck_assert_int_eq(tp_dim(ctx, x, 2), -1);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_ctx_error(ctx), "axis 2 is out of range for f32[2, 5]"));
}
END_TEST

START_TEST(items_read_one_element) {
    ck_assert(tp_item_bool(ctx, SCALAR(TP_I32, 3)));
    ck_assert(!tp_item_bool(ctx, SCALAR(TP_F64, 0)));
    ck_assert(tp_item_bool(ctx, SCALAR(TP_F32, NAN)));
    /* 2^53 + 1 has no double: an i64 is read exactly, not through a double. */
    tp_tensor *big = tp_constant(ctx, TP_I64, SHAPE(1, 1), (int64_t[]){9007199254740993LL});
    ck_assert_int_eq(tp_item_i64(ctx, big), 9007199254740993LL);
    ck_assert_int_eq(tp_item_i64(ctx, SCALAR(TP_F64, -2.75)), -2);
    ck_assert_double_eq(tp_item_f64(ctx, SCALAR(TP_F32, 0.5)), 0.5);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_OK);
}
END_TEST

START_TEST(item_of_many_elements_is_an_error) {
    ck_assert_int_eq(tp_item_i64(ctx, T(TP_I32, DIMS(2), 1, 2)), 0);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(tp_ctx_error(ctx), "exactly one element, got i32[2]"));
    ck_assert(isnan(tp_item_f64(ctx, eager_values(TP_F32, SHAPE(0), NULL))));
}
END_TEST

START_TEST(item_i64_of_nan_is_an_error) {
    ck_assert_int_eq(tp_item_i64(ctx, SCALAR(TP_F64, NAN)), 0);
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_INVALID_ARGUMENT);
}
END_TEST

/* ---- the recorder hook ---- */

typedef struct counting_recorder {
    tp_ctx_recorder base;
    int ops, metadata, items, last_axis;
    const char *last_op;
    tp_status op_status;
} counting_recorder;

static tp_status count_op(tp_ctx_recorder *recorder, const tp_op_def *op, tp_tensor *const *inputs,
                          int num_inputs, const tp_attrs *attrs, tp_tensor *result) {
    counting_recorder *self = (counting_recorder *)recorder;
    self->ops++;
    self->last_op = op->name;
    ck_assert_ptr_nonnull(result);
    if (self->op_status != TP_OK) return tp_error_set(self->op_status, "recording refused");
    return TP_OK;
}

static void count_metadata(tp_ctx_recorder *recorder, tp_tensor *tensor, int axis) {
    counting_recorder *self = (counting_recorder *)recorder;
    self->metadata++;
    self->last_axis = axis;
}

static tp_status count_item(tp_ctx_recorder *recorder, tp_tensor *tensor, tp_item_kind kind) {
    ((counting_recorder *)recorder)->items++;
    return TP_OK;
}

START_TEST(recorder_sees_ops_metadata_and_items) {
    counting_recorder recorder = {
        {count_op, count_metadata, count_item, NULL}, 0, 0, 0, 0, NULL, TP_OK};
    ck_assert_ptr_null(tp_ctx_set_recorder(ctx, &recorder.base));
    tp_tensor *x = T(TP_F32, DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    tp_tensor *s = tp_sum(ctx, tp_exp(ctx, x), NULL, 0, false);
    ck_assert_int_eq(recorder.ops, 2);
    ck_assert_str_eq(recorder.last_op, "sum");
    tp_ndim(ctx, x);
    tp_dim(ctx, x, -1);
    ck_assert_int_eq(recorder.metadata, 2);
    ck_assert_int_eq(recorder.last_axis, 1);
    tp_item_f64(ctx, s);
    ck_assert_int_eq(recorder.items, 1);
    ck_assert_ptr_eq(tp_ctx_set_recorder(ctx, NULL), &recorder.base);
}
END_TEST

START_TEST(recorder_failure_fails_the_op) {
    counting_recorder recorder = {
        {count_op, NULL, NULL, NULL}, 0, 0, 0, 0, NULL, TP_ERR_UNSUPPORTED};
    tp_ctx_set_recorder(ctx, &recorder.base);
    ck_assert_ptr_null(tp_neg(ctx, T(TP_F32, DIMS(1), 1)));
    ck_assert_int_eq(tp_ctx_status(ctx), TP_ERR_UNSUPPORTED);
    ck_assert_str_eq(tp_ctx_error(ctx), "neg: recording refused");
    tp_ctx_set_recorder(ctx, NULL);
}
END_TEST

/* ---- every typed wrapper reaches its op ---- */

START_TEST(shape_wrappers_reach_their_ops) {
    tp_tensor *x = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(2, 3)));
    harness_assert_shape(eager_ok(tp_reshape(ctx, x, DIMS(3, -1), 2)), TP_F32, SHAPE(3, 2));
    harness_assert_shape(eager_ok(tp_permute(ctx, x, DIMS(1, 0), 2)), TP_F32, SHAPE(3, 2));
    harness_assert_shape(eager_ok(tp_transpose(ctx, x, 0, 1)), TP_F32, SHAPE(3, 2));
    harness_assert_shape(eager_ok(tp_expand(ctx, x, DIMS(4, 2, 3), 3)), TP_F32, SHAPE(4, 2, 3));
    harness_assert_shape(eager_ok(tp_slice(ctx, x, 1, 1, TP_SLICE_END, 1)), TP_F32, SHAPE(2, 2));
    tp_tensor *pair[2] = {x, x};
    harness_assert_shape(eager_ok(tp_concat(ctx, pair, 2, 0)), TP_F32, SHAPE(4, 3));
    tp_tensor *u = eager_ok(tp_unsqueeze(ctx, x, 0));
    harness_assert_shape(u, TP_F32, SHAPE(1, 2, 3));
    harness_assert_shape(eager_ok(tp_squeeze(ctx, u, NULL, 0)), TP_F32, SHAPE(2, 3));
}
END_TEST

START_TEST(creation_wrappers_reach_their_ops) {
    tp_tensor *c = eager_ok(tp_constant(ctx, TP_I32, SHAPE(2), (int32_t[]){4, 5}));
    harness_assert_shape(c, TP_I32, SHAPE(2));
    ASSERT_VALUES(c, 0, 4, 5);
    ASSERT_VALUES(eager_ok(tp_full(ctx, TP_F64, SHAPE(2), 1.5)), 0, 1.5, 1.5);
    ASSERT_VALUES(eager_ok(tp_arange(ctx, TP_I64, 0, 6, 2)), 0, 0, 2, 4);
    tp_tensor *s = eager_ok(tp_scalar(ctx, TP_F32, 3));
    harness_assert_shape(s, TP_F32, 0, NULL);
    ASSERT_VALUES(s, 0, 3);
}
END_TEST

START_TEST(composite_wrappers_reach_their_ops) {
    tp_tensor *x = T(TP_F32, DIMS(2, 2), 0, 0, 1, 1);
    ASSERT_VALUES(eager_ok(tp_softmax(ctx, x, -1)), 1e-6, 0.5, 0.5, 0.5, 0.5);
    ASSERT_VALUES(eager_ok(tp_log_softmax(ctx, x, 1)), 1e-6, -LN2, -LN2, -LN2, -LN2);
    tp_tensor *w = T(TP_F32, DIMS(2), 1, 1), *b = T(TP_F32, DIMS(2), 3, 3);
    ASSERT_VALUES(eager_ok(tp_layer_norm(ctx, x, w, b, 1, 1e-5)), 1e-6, 3, 3, 3, 3);
    harness_assert_shape(eager_ok(tp_layer_norm(ctx, x, NULL, NULL, 1, 1e-5)), TP_F32, SHAPE(2, 2));
    ASSERT_VALUES(eager_ok(tp_gelu(ctx, x, TP_GELU_NONE)), 1e-6, 0, 0, 0.8413447460685429,
                  0.8413447460685429);
    ASSERT_VALUES(eager_ok(tp_silu(ctx, T(TP_F32, DIMS(1), 0))), 0, 0);
    ASSERT_VALUES(eager_ok(tp_softplus(ctx, T(TP_F32, DIMS(1), 0), 1, 20)), 1e-6, LN2);
    tp_tensor *weight = T(TP_F32, DIMS(3, 2), 1, 0, 0, 1, 1, 1);
    tp_tensor *y = eager_ok(tp_linear(ctx, x, weight, T(TP_F32, DIMS(3), 10, 20, 30)));
    harness_assert_shape(y, TP_F32, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, 10, 20, 30, 11, 21, 32);
}
END_TEST

START_TEST(layer_norm_bias_without_weight_is_an_error) {
    tp_tensor *x = T(TP_F32, DIMS(2), 1, 2);
    eager_assert_error(tp_layer_norm(ctx, x, NULL, x, 0, 1e-5), TP_ERR_INVALID_ARGUMENT,
                       "layer_norm: a bias needs a weight", NULL);
}
END_TEST

START_TEST(too_many_axes_is_an_error) {
    int64_t axes[TP_MAX_DIMS + 1] = {0};
    eager_assert_error(tp_sum(ctx, T(TP_F32, DIMS(1), 1), axes, TP_MAX_DIMS + 1, false),
                       TP_ERR_INVALID_ARGUMENT, "sum: 9 axes given", NULL);
}
END_TEST

TP_TEST_SUITE(ctx) {
    Suite *suite = suite_create("ops.ctx");
    TCase *errors = eager_tcase("errors");
    tcase_add_test(errors, first_error_is_kept_with_op_and_shapes);
    tcase_add_test(errors, null_input_returns_null_without_touching_the_error);
    tcase_add_test(errors, ops_still_run_on_valid_inputs_after_an_error);
    tcase_add_test(errors, clear_error_resets_status_and_message);
    tcase_add_test(errors, generic_op_checks_arity);
    tcase_add_test(errors, generic_op_runs_by_name_with_attributes);
    suite_add_tcase(suite, errors);
    TCase *scopes = eager_tcase("scopes");
    tcase_add_test(scopes, scope_end_releases_results_made_inside);
    tcase_add_test(scopes, scope_end_moves_kept_tensors_to_the_enclosing_scope);
    tcase_add_test(scopes, nested_scope_end_with_outer_mark_releases_both);
    tcase_add_test(scopes, adopt_hands_a_reference_to_the_scope);
    tcase_add_test(scopes, destroy_releases_everything_left);
    suite_add_tcase(suite, scopes);
    TCase *reads = eager_tcase("reads");
    tcase_add_test(reads, ndim_and_dim_read_the_shape);
    tcase_add_test(reads, dim_out_of_range_is_recorded);
    tcase_add_test(reads, items_read_one_element);
    tcase_add_test(reads, item_of_many_elements_is_an_error);
    tcase_add_test(reads, item_i64_of_nan_is_an_error);
    tcase_add_test(reads, recorder_sees_ops_metadata_and_items);
    tcase_add_test(reads, recorder_failure_fails_the_op);
    suite_add_tcase(suite, reads);
    TCase *wrappers = eager_tcase("wrappers");
    tcase_add_test(wrappers, shape_wrappers_reach_their_ops);
    tcase_add_test(wrappers, creation_wrappers_reach_their_ops);
    tcase_add_test(wrappers, composite_wrappers_reach_their_ops);
    tcase_add_test(wrappers, layer_norm_bias_without_weight_is_an_error);
    tcase_add_test(wrappers, too_many_axes_is_an_error);
    suite_add_tcase(suite, wrappers);
    return suite;
}
