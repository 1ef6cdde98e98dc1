/* tp_compile's checks at compile time (in the reference's order), backends
 * chosen by name, options reaching the backend, disable, and compiled
 * results against independent loops. */
#include <math.h>

#include "compile_fixtures.h"

/* y = x + w */
static void add_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                   int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, args[1].tensor);
}

static const char *const xw[] = {"x", "w"};

START_TEST(test_unknown_backend_fails_at_compile_time_with_suggestion) {
    tp_compile_options options = fixture_options("f", xw, 2);
    options.backend = "eagr";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_ERR_NOT_FOUND);
    ck_assert_ptr_null(compiled);
    ck_assert_msg(strstr(tp_last_error(), "did you mean") && strstr(tp_last_error(), "'eager'"),
                  "%s", tp_last_error());
}
END_TEST

START_TEST(test_mode_and_options_together_is_an_error) {
    tp_compile_options options = fixture_options("f", xw, 2);
    const char *backend_options[] = {"threads=2"};
    options.mode = "max-autotune";
    options.options = backend_options;
    options.num_options = 1;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(tp_last_error(), "Either mode or options can be specified, but not both");
}
END_TEST

START_TEST(test_mode_and_options_is_checked_before_the_backend) {
    tp_compile_options options = fixture_options("f", xw, 2);
    const char *backend_options[] = {"threads=2"};
    options.backend = "no_such_backend";
    options.mode = "fast";
    options.options = backend_options;
    options.num_options = 1;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_null_function_is_an_error) {
    tp_compile_options options = fixture_options("f", xw, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(NULL, &options, &compiled), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "expected a function"));
}
END_TEST

START_TEST(test_negative_recompile_limit_is_an_error) {
    tp_compile_options options = fixture_options("f", xw, 2);
    options.recompile_limit = -1;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "recompile_limit"));
}
END_TEST

START_TEST(test_disable_never_compiles_and_never_looks_up_the_backend) {
    fixture_register_counting_backend();
    tp_compile_options options = fixture_options("f", xw, 2);
    options.backend = "no_such_backend";
    options.disable = true;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1), *w = fixture_ramp(3, 10, 0);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    tp_tensor *y = NULL;
    for (int call = 0; call < 2; call++) {
        ck_assert_int_eq(tp_call(compiled, args, 2, &y), TP_OK);
        ck_assert(fixture_floats(y)[2] == 13.0f);
        tp_tensor_release(y);
    }
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 0);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 0);
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w);
}
END_TEST

START_TEST(test_custom_backend_compiles_once_for_two_identical_calls_and_gets_options) {
    fixture_register_counting_backend();
    tp_compile_options options = fixture_options("f", xw, 2);
    const char *backend_options[] = {"unroll=4", "tile="};
    options.backend = "counting";
    options.options = backend_options;
    options.num_options = 2;
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile(add_fn, &options, &compiled) == TP_OK, "%s", tp_last_error());
    ck_assert_int_eq(fixture_backend_counts.compiles, 0); /* compiles on the first call */
    tp_tensor *x = fixture_ramp(4, 0, 1), *w = fixture_ramp(4, 100, 0);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    for (int call = 0; call < 2; call++) {
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 2, &y) == TP_OK, "%s", tp_last_error());
        for (int i = 0; i < 4; i++) ck_assert(fixture_floats(y)[i] == 100.0f + (float)i);
        tp_tensor_release(y);
    }
    ck_assert_int_eq(fixture_backend_counts.compiles, 1);
    ck_assert_int_eq(fixture_backend_counts.runs, 2);
    ck_assert_int_eq(fixture_backend_counts.num_options, 2);
    ck_assert_str_eq(fixture_backend_counts.options[0], "unroll=4");
    ck_assert_str_eq(fixture_backend_counts.options[1], "tile=");
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w);
}
END_TEST

START_TEST(test_mode_reaches_the_backend_as_an_option) {
    fixture_register_counting_backend();
    tp_compile_options options = fixture_options("f", xw, 2);
    options.backend = "counting";
    options.mode = "reduce-overhead";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(2, 0, 1);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 2, &y), TP_OK);
    ck_assert_int_eq(fixture_backend_counts.num_options, 1);
    ck_assert_str_eq(fixture_backend_counts.options[0], "mode=reduce-overhead");
    tp_tensor_release(y);
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

static void check_unknown_mode_is_named_by(const char *backend, const char *mode,
                                           const char *known) {
    tp_compile_options options = fixture_options("f", xw, 2);
    options.backend = backend;
    options.fallback_backend = "none";
    options.mode = mode;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(2, 0, 1);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_ne(tp_call(compiled, args, 2, &y), TP_OK);
    char expected[256];
    snprintf(expected, sizeof expected, "unknown mode '%s' (known modes: %s)", mode, known);
    ck_assert_msg(strstr(tp_last_error(), expected), "%s: %s", backend, tp_last_error());
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}

START_TEST(test_a_backend_refusing_a_mode_names_it_and_lists_its_modes) {
    check_unknown_mode_is_named_by("eager", "max-autotune", "default");
    tp_backend *stax;
    if (tp_backend_lookup("stax", &stax) == TP_OK)
        check_unknown_mode_is_named_by("stax", "reduce-overhead", "default, max-autotune");
}
END_TEST

/* out = relu(x @ w + b) * scale, with a scalar parameter. */
static void mlp_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                   int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *h = tp_add(ctx, tp_matmul(ctx, args[0].tensor, args[1].tensor), args[2].tensor);
    outputs[0] = tp_mul(ctx, tp_relu(ctx, h), tp_scalar(ctx, TP_F32, args[3].f));
}

START_TEST(test_compiled_mlp_equals_loops) {
    static const char *const params[] = {"x", "w", "b", "scale"};
    tp_compile_options options = fixture_options("mlp", params, 4);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(mlp_fn, &options, &compiled), TP_OK);
    enum { M = 3, K = 4, N = 5 };
    float xv[M * K], wv[K * N], bv[N];
    for (int i = 0; i < M * K; i++) xv[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) wv[i] = (float)((i * 5) % 9) * 0.25f - 1.0f;
    for (int i = 0; i < N; i++) bv[i] = (float)i - 2.0f;
    tp_tensor *x = fixture_f32(2, (int64_t[]){M, K}, xv);
    tp_tensor *w = fixture_f32(2, (int64_t[]){K, N}, wv);
    tp_tensor *b = fixture_f32(1, (int64_t[]){N}, bv);
    for (int round = 0; round < 3; round++) {
        double scale = round == 2 ? -0.5 : 1.5;
        tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(w), tp_arg_tensor(b), tp_arg_float(scale)};
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 4, &y) == TP_OK, "%s", tp_last_error());
        ck_assert_int_eq(tp_tensor_ndim(y), 2);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double h = bv[j];
                for (int k = 0; k < K; k++) h += (double)xv[i * K + k] * wv[k * N + j];
                double expected = (h > 0 ? h : 0) * scale;
                ck_assert_double_eq_tol(fixture_floats(y)[i * N + j], expected, 1e-4);
            }
        tp_tensor_release(y);
    }
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2); /* scale 1.5, then -0.5 */
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w);
    tp_tensor_release(b);
}
END_TEST

START_TEST(test_call_into_writes_the_callers_tensor) {
    tp_compile_options options = fixture_options("f", xw, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1), *w = fixture_ramp(3, 1, 0), *out = fixture_ramp(3, 0, 0);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    uint64_t version = tp_tensor_version(out);
    ck_assert_int_eq(tp_call_into(compiled, args, 2, &out), TP_OK);
    ck_assert(fixture_floats(out)[0] == 2.0f && fixture_floats(out)[2] == 4.0f);
    ck_assert_uint_gt(tp_tensor_version(out), version);
    tp_tensor *wrong = fixture_ramp(4, 0, 0);
    ck_assert_int_eq(tp_call_into(compiled, args, 2, &wrong), TP_ERR_SHAPE);
    tp_tensor_release(wrong);
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w);
    tp_tensor_release(out);
}
END_TEST

static void failing_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                       int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_matmul(ctx, args[0].tensor, args[1].tensor); /* [3] @ [4]: fails */
}

START_TEST(test_function_error_is_reported_by_tp_call) {
    tp_compile_options options = fixture_options("bad", xw, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(failing_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1), *w = fixture_ramp(4, 1, 0);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    tp_tensor *y = (tp_tensor *)1;
    ck_assert_int_ne(tp_call(compiled, args, 2, &y), TP_OK);
    ck_assert_ptr_null(y);
    ck_assert_msg(strstr(tp_last_error(), "'bad'") && strstr(tp_last_error(), "matmul"), "%s",
                  tp_last_error());
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w);
}
END_TEST

START_TEST(test_wrong_argument_count_is_an_error) {
    tp_compile_options options = fixture_options("f", xw, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1);
    tp_arg args[] = {tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "takes 2 arguments, got 1"));
    tp_compiled_free(compiled);
    tp_tensor_release(x);
}
END_TEST

TP_TEST_SUITE(compile_frontend) {
    Suite *suite = suite_create("compile_frontend");
    TCase *tc = tcase_create("frontend");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_add_test(tc, test_unknown_backend_fails_at_compile_time_with_suggestion);
    tcase_add_test(tc, test_mode_and_options_together_is_an_error);
    tcase_add_test(tc, test_mode_and_options_is_checked_before_the_backend);
    tcase_add_test(tc, test_null_function_is_an_error);
    tcase_add_test(tc, test_negative_recompile_limit_is_an_error);
    tcase_add_test(tc, test_disable_never_compiles_and_never_looks_up_the_backend);
    tcase_add_test(tc, test_custom_backend_compiles_once_for_two_identical_calls_and_gets_options);
    tcase_add_test(tc, test_mode_reaches_the_backend_as_an_option);
    tcase_add_test(tc, test_a_backend_refusing_a_mode_names_it_and_lists_its_modes);
    tcase_add_test(tc, test_compiled_mlp_equals_loops);
    tcase_add_test(tc, test_call_into_writes_the_callers_tensor);
    tcase_add_test(tc, test_function_error_is_reported_by_tp_call);
    tcase_add_test(tc, test_wrong_argument_count_is_an_error);
    suite_add_tcase(suite, tc);
    return suite;
}
