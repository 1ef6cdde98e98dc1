/* Capture never serves a stale result: every public read of a traced
 * tensor's values or sizes is either recorded (a guard) or makes the
 * function run uncompiled with the reason (an error under fullgraph); a
 * wrapper called inside a capture is traced into the outer graph; ops on a
 * second ctx are an error naming it; captured constants are frozen on every
 * backend; a wrapper called from inside its own function is an error. Each
 * expected value is worked out by hand in the test. */
#include "compile_fixtures.h"

static tp_compiled *compile_on(tp_fn fn, const char *backend, tp_dynamic dynamic, bool fullgraph,
                               void *user_data) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    options.dynamic = dynamic;
    options.fullgraph = fullgraph;
    options.user_data = user_data;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(fn, &options, &compiled), TP_OK);
    return compiled;
}

/* Calls `compiled` on a [n] ramp from `start` and returns element `index`. */
static float call_ramp(tp_compiled *compiled, int64_t n, float start, int64_t index) {
    tp_tensor *x = fixture_ramp(n, start, 1.0f);
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    ck_assert_msg(tp_call(compiled, &arg, 1, &y) == TP_OK, "%s", tp_last_error());
    float value = fixture_floats(y)[index];
    tp_tensor_release(y);
    tp_tensor_release(x);
    return value;
}

/* y = x * x[0], the scale read with tp_tensor_get_f64. */
static void scale_by_first_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                              int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    double first = tp_tensor_get_f64(args[0].tensor, 0);
    outputs[0] = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, first));
}

START_TEST(test_get_f64_of_a_traced_input_gives_fresh_values) {
    tp_compiled *compiled = compile_on(scale_by_first_fn, "eager", TP_DYNAMIC_UNSET, false, NULL);
    ck_assert_float_eq(call_ramp(compiled, 1, 2.0f, 0), 4.0f);  /* 2 * 2 */
    ck_assert_float_eq(call_ramp(compiled, 1, 5.0f, 0), 25.0f); /* 5 * 5 */
    const char *reason = tp_compiled_uncompiled_reason(compiled);
    ck_assert_ptr_nonnull(reason);
    ck_assert_ptr_nonnull(strstr(reason, "tp_tensor_get_f64"));
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_get_f64_of_a_traced_input_fails_capture_under_fullgraph) {
    tp_compiled *compiled = compile_on(scale_by_first_fn, "eager", TP_DYNAMIC_UNSET, true, NULL);
    tp_tensor *x = fixture_ramp(1, 2.0f, 1.0f);
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, &arg, 1, &y), TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "tp_tensor_get_f64"));
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

/* y = x * N, N read with tp_tensor_dim / numel / shape (user_data picks). */
static void scale_by_size_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                             int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs;
    const tp_tensor *x = args[0].tensor;
    int which = *(const int *)user_data;
    int64_t n = which == 0   ? tp_tensor_dim(x, 0)
                : which == 1 ? tp_tensor_numel(x)
                             : tp_tensor_shape(x)[0];
    outputs[0] = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, (double)n));
}

START_TEST(test_size_reads_in_dynamic_mode_become_guards) {
    for (int which = 0; which < 3; which++) {
        tp_compiled *compiled =
            compile_on(scale_by_size_fn, "eager", TP_DYNAMIC_DYNAMIC, false, &which);
        /* element 1 of a ramp from 1 is 2: y[1] = 2 * N */
        ck_assert_float_eq(call_ramp(compiled, 4, 1.0f, 1), 8.0f);
        ck_assert_float_eq(call_ramp(compiled, 6, 1.0f, 1), 12.0f);
        ck_assert_float_eq(call_ramp(compiled, 7, 1.0f, 1), 14.0f);
        tp_compiled_free(compiled);
    }
}
END_TEST

/* inner: y = x + x; outer: y = inner(x), called through its wrapper. */
static void double_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                      int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, args[0].tensor);
}

typedef struct nested_call {
    tp_compiled *inner;
    tp_status status;
} nested_call;

static void call_inner_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                          int num_outputs, void *user_data) {
    (void)num_outputs;
    nested_call *nested = user_data;
    tp_tensor *result = NULL;
    nested->status = tp_call(nested->inner, args, num_args, &result);
    if (nested->status == TP_OK) outputs[0] = tp_ctx_adopt(ctx, result);
}

START_TEST(test_a_wrapper_called_inside_a_capture_is_traced_into_the_outer_graph) {
    nested_call nested = {compile_on(double_fn, "eager", TP_DYNAMIC_UNSET, false, NULL), TP_OK};
    tp_compiled *outer = compile_on(call_inner_fn, "eager", TP_DYNAMIC_UNSET, true, &nested);
    ck_assert_float_eq(call_ramp(outer, 1, 1.5f, 0), 3.0f);
    ck_assert_float_eq(call_ramp(outer, 1, 2.5f, 0), 5.0f);
    ck_assert_float_eq(call_ramp(outer, 1, 3.5f, 0), 7.0f);
    ck_assert_int_eq(tp_compiled_num_compiles(outer), 1); /* compiled, not run uncompiled */
    tp_compiled_free(outer);
    tp_compiled_free(nested.inner);
}
END_TEST

START_TEST(test_a_wrapper_called_from_inside_its_own_function_is_a_state_error) {
    nested_call self = {NULL, TP_OK};
    self.inner = compile_on(call_inner_fn, "eager", TP_DYNAMIC_UNSET, false, &self);
    tp_tensor *x = fixture_ramp(1, 1.0f, 1.0f);
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    ck_assert_int_ne(tp_call(self.inner, &arg, 1, &y), TP_OK); /* returns: no deadlock */
    ck_assert_int_eq(self.status, TP_ERR_STATE);
    tp_tensor_release(x);
    tp_compiled_free(self.inner);
}
END_TEST

/* Runs x + x on a ctx of its own. */
static void second_ctx_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                          int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_ctx *other = tp_ctx_create();
    tp_tensor *sum = tp_add(other, args[0].tensor, args[0].tensor);
    outputs[0] = sum ? tp_ctx_adopt(ctx, tp_tensor_retain(sum)) : tp_scalar(ctx, TP_F32, 0.0);
    tp_ctx_destroy(other);
}

START_TEST(test_ops_on_a_second_ctx_with_traced_tensors_are_an_error) {
    tp_compiled *compiled = compile_on(second_ctx_fn, "eager", TP_DYNAMIC_UNSET, false, NULL);
    tp_tensor *x = fixture_ramp(1, 1.0f, 1.0f);
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, &arg, 1, &y), TP_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "tp_ctx other than the one it was given"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'add'"));
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

/* y = x + g, g a global. */
static tp_tensor *global_offset;

static void add_global_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                          int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, global_offset);
}

static void check_global_frozen_on(const char *backend) {
    global_offset = fixture_ramp(1, 1.0f, 0.0f);
    tp_compiled *compiled = compile_on(add_global_fn, backend, TP_DYNAMIC_UNSET, false, NULL);
    ck_assert_float_eq(call_ramp(compiled, 1, 2.0f, 0), 3.0f); /* 2 + 1, captured */
    ck_assert_int_eq(tp_tensor_fill(global_offset, 50.0), TP_OK);
    ck_assert_msg(call_ramp(compiled, 1, 4.0f, 0) == 5.0f, "%s: 4 + the frozen 1", backend);
    tp_compiled_free(compiled);
    tp_tensor_release(global_offset);
}

START_TEST(test_captured_globals_are_frozen_on_every_backend) {
    check_global_frozen_on("eager");
    tp_backend *stax;
    if (tp_backend_lookup("stax", &stax) == TP_OK) check_global_frozen_on("stax");
}
END_TEST

TP_TEST_SUITE(compile_capture_holes) {
    Suite *suite = suite_create("compile_capture_holes");
    TCase *tc = tcase_create("capture_holes");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_get_f64_of_a_traced_input_gives_fresh_values);
    tcase_add_test(tc, test_get_f64_of_a_traced_input_fails_capture_under_fullgraph);
    tcase_add_test(tc, test_size_reads_in_dynamic_mode_become_guards);
    tcase_add_test(tc, test_a_wrapper_called_inside_a_capture_is_traced_into_the_outer_graph);
    tcase_add_test(tc, test_a_wrapper_called_from_inside_its_own_function_is_a_state_error);
    tcase_add_test(tc, test_ops_on_a_second_ctx_with_traced_tensors_are_an_error);
    tcase_add_test(tc, test_captured_globals_are_frozen_on_every_backend);
    suite_add_tcase(suite, tc);
    return suite;
}
