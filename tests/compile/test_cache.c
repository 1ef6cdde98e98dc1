/* The specialization cache: static and dynamic keys, shape guards from
 * metadata reads, gates from value reads, reasons in words, limits, logging,
 * the uncompiled fallback, and reset. Expected values come from plain loops
 * in the test. */
#include <stdlib.h>

#include "compile_fixtures.h"

static const char *const x_only[] = {"x"};

static char *reasons_joined(tp_compiled *compiled) {
    static char text[2048];
    char **reasons = NULL;
    int count = 0;
    ck_assert_int_eq(tp_compiled_last_recompile_reasons(compiled, &reasons, &count), TP_OK);
    text[0] = '\0';
    for (int i = 0; i < count; i++) {
        strncat(text, reasons[i], sizeof text - strlen(text) - 1);
        strncat(text, "|", sizeof text - strlen(text) - 1);
    }
    tp_free(reasons);
    return text;
}

/* y = relu(x) * 2 */
static void relu2_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_mul(ctx, tp_relu(ctx, args[0].tensor), tp_scalar(ctx, TP_F32, 2.0));
}

static void call_relu2_and_check(tp_compiled *compiled, tp_tensor *x) {
    tp_arg args[] = {tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_msg(tp_call(compiled, args, 1, &y) == TP_OK, "%s", tp_last_error());
    ck_assert_int_eq(tp_tensor_numel(y), tp_tensor_numel(x));
    const float *in = fixture_floats(x);
    for (int64_t i = 0; i < tp_tensor_numel(x); i++)
        ck_assert(fixture_floats(y)[i] == (in[i] > 0 ? in[i] * 2 : 0));
    tp_tensor_release(y);
}

static tp_compiled *compile_relu2(tp_dynamic dynamic, int recompile_limit) {
    tp_compile_options options = fixture_options("relu2", x_only, 1);
    options.dynamic = dynamic;
    options.recompile_limit = recompile_limit;
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile(relu2_fn, &options, &compiled) == TP_OK, "%s", tp_last_error());
    return compiled;
}

START_TEST(test_static_recompiles_on_size_change_naming_parameter_and_dimension) {
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    tp_tensor *a = fixture_ramp(4, -2, 1), *b = fixture_ramp(5, -2, 1);
    call_relu2_and_check(compiled, a);
    call_relu2_and_check(compiled, a);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 1);
    call_relu2_and_check(compiled, b);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_str_eq(reasons_joined(compiled), "x.shape[0] == 4, got 5|");
    call_relu2_and_check(compiled, a); /* both stay cached */
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 2);
    tp_compiled_free(compiled);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

START_TEST(test_dtype_change_reason_names_parameter) {
    static const char *const params[] = {"x", "w"};
    tp_compile_options options = fixture_options("f", params, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(relu2_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 0, 1);
    tp_tensor *w32 = fixture_ramp(3, 0, 1), *w64 = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F64, 1, (int64_t[]){3}, &w64), TP_OK);
    tp_arg first[] = {tp_arg_tensor(x), tp_arg_tensor(w32)};
    tp_arg second[] = {tp_arg_tensor(x), tp_arg_tensor(w64)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, first, 2, &y), TP_OK);
    tp_tensor_release(y);
    ck_assert_int_eq(tp_call(compiled, second, 2, &y), TP_OK);
    tp_tensor_release(y);
    ck_assert_str_eq(reasons_joined(compiled), "w.dtype == f32, got f64|");
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(w32);
    tp_tensor_release(w64);
}
END_TEST

START_TEST(test_dynamic_reuses_one_entry_across_sizes_and_recompiles_on_rank_change) {
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_DYNAMIC, 0);
    int64_t sizes[] = {3, 5, 7, 5};
    for (int i = 0; i < 4; i++) {
        tp_tensor *x = fixture_ramp(sizes[i], -3, 1.5f);
        call_relu2_and_check(compiled, x);
        tp_tensor_release(x);
    }
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 1);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    float values[6] = {-1, 2, -3, 4, 5, -6};
    tp_tensor *matrix = fixture_f32(2, (int64_t[]){2, 3}, values);
    call_relu2_and_check(compiled, matrix);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_str_eq(reasons_joined(compiled), "x.ndim == 1, got 2|");
    tp_tensor_release(matrix);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_dynamic_keeps_size_one_dimensions_exact) {
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_DYNAMIC, 0);
    tp_tensor *a = fixture_ramp(4, -1, 1), *b = fixture_ramp(1, 3, 0);
    call_relu2_and_check(compiled, a);
    call_relu2_and_check(compiled, b); /* size 1 broadcasts differently: its own entry */
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_str_eq(reasons_joined(compiled), "x.shape[0] >= 2, got 1|");
    tp_compiled_free(compiled);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

/* y = -a; b and c only take part in the key. */
static void neg_first_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                         int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_neg(ctx, args[0].tensor);
}

static void call_three(tp_compiled *compiled, int64_t a, int64_t b, int64_t c) {
    tp_tensor *x = fixture_ramp(a, 0, 1), *y = fixture_ramp(b, 0, 1), *z = fixture_ramp(c, 0, 1);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(y), tp_arg_tensor(z)};
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 3, &out), TP_OK);
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_tensor_release(z);
}

START_TEST(test_dynamic_reasons_never_list_a_condition_that_holds) {
    static const char *const abc[] = {"a", "b", "c"};
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    options.dynamic = TP_DYNAMIC_DYNAMIC;
    options.param_names = abc;
    options.num_params = 3;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(neg_first_fn, &options, &compiled), TP_OK);
    call_three(compiled, 3, 5, 5); /* b == c, a distinct */
    call_three(compiled, 5, 5, 5); /* c == b still holds; a == b == c is new */
    ck_assert_str_eq(reasons_joined(compiled), "b.shape[0] != a.shape[0], got 5 for both|"
                                               "c.shape[0] != a.shape[0], got 5 for both|");
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_config_dynamic_shapes_applies_when_the_call_does_not_say) {
    ck_assert_int_eq(tp_config_set_bool("dynamic_shapes", true), TP_OK);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_UNSET, 0);
    ck_assert_int_eq(tp_config_set_bool("dynamic_shapes", false), TP_OK); /* snapshot kept */
    tp_tensor *a = fixture_ramp(3, -1, 1), *b = fixture_ramp(6, -1, 1);
    call_relu2_and_check(compiled, a);
    call_relu2_and_check(compiled, b);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 1);
    tp_compiled_free(compiled);
    tp_tensor_release(a);
    tp_tensor_release(b);
}
END_TEST

/* y = x * x.shape[0]: the shape read bakes the size into the graph. */
static void scale_by_length_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                               int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    int64_t n = tp_dim(ctx, args[0].tensor, 0);
    outputs[0] = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, (double)n));
}

START_TEST(test_metadata_read_adds_an_exact_shape_guard_in_dynamic_mode) {
    tp_compile_options options = fixture_options("scale", x_only, 1);
    options.dynamic = TP_DYNAMIC_DYNAMIC;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(scale_by_length_fn, &options, &compiled), TP_OK);
    int64_t sizes[] = {4, 6, 4};
    for (int round = 0; round < 3; round++) {
        tp_tensor *x = fixture_ramp(sizes[round], 1, 1);
        tp_arg args[] = {tp_arg_tensor(x)};
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 1, &y) == TP_OK, "%s", tp_last_error());
        for (int64_t i = 0; i < sizes[round]; i++)
            ck_assert(fixture_floats(y)[i] == (float)((i + 1) * sizes[round]));
        tp_tensor_release(y);
        tp_tensor_release(x);
    }
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_msg(strstr(reasons_joined(compiled), "x.shape[0] == 4, got 6"), "%s",
                  reasons_joined(compiled));
    tp_compiled_free(compiled);
}
END_TEST

/* y = sum(x) > 0 ? x * 2 : -x */
static void branch_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                      int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor;
    bool positive =
        tp_item_bool(ctx, tp_gt(ctx, tp_sum(ctx, x, NULL, 0, false), tp_scalar(ctx, TP_F32, 0.0)));
    outputs[0] = positive ? tp_mul(ctx, x, tp_scalar(ctx, TP_F32, 2.0)) : tp_neg(ctx, x);
}

static void check_branch(tp_compiled *compiled, tp_tensor *x) {
    const float *in = fixture_floats(x);
    double sum = 0;
    for (int64_t i = 0; i < tp_tensor_numel(x); i++) sum += in[i];
    tp_arg args[] = {tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_msg(tp_call(compiled, args, 1, &y) == TP_OK, "%s", tp_last_error());
    for (int64_t i = 0; i < tp_tensor_numel(x); i++)
        ck_assert(fixture_floats(y)[i] == (sum > 0 ? in[i] * 2 : -in[i]));
    tp_tensor_release(y);
}

START_TEST(test_data_dependent_branch_keys_two_entries_and_follows_in_place_writes) {
    tp_compile_options options = fixture_options("branch", x_only, 1);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(branch_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(4, 1, 1); /* sum 10 */
    check_branch(compiled, x);
    check_branch(compiled, x);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 1);
    float *data = tp_tensor_data_mut(x); /* same object, new version: sum -10 */
    for (int i = 0; i < 4; i++) data[i] = -data[i];
    check_branch(compiled, x);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_str_eq(reasons_joined(compiled), "gate #1 took the other branch|");
    data = tp_tensor_data_mut(x);
    for (int i = 0; i < 4; i++) data[i] = -data[i];
    check_branch(compiled, x); /* served by the first entry again */
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 2);
    tp_compiled_free(compiled);
    tp_tensor_release(x);
}
END_TEST

/* y = x * mean(x), the mean read as a number and baked. */
static void numeric_gate_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                            int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    double mean = tp_item_f64(ctx, tp_mean(ctx, args[0].tensor, NULL, 0, false));
    outputs[0] = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, mean));
}

START_TEST(test_numeric_value_read_is_keyed) {
    tp_compile_options options = fixture_options("numeric", x_only, 1);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(numeric_gate_fn, &options, &compiled), TP_OK);
    for (int round = 0; round < 2; round++) {
        tp_tensor *x = fixture_ramp(4, (float)round, 1); /* mean 1.5, then 2.5 */
        tp_arg args[] = {tp_arg_tensor(x)};
        tp_tensor *y = NULL;
        ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_OK);
        double mean = round + 1.5;
        for (int i = 0; i < 4; i++)
            ck_assert_double_eq_tol(fixture_floats(y)[i], (round + i) * mean, 1e-6);
        tp_tensor_release(y);
        tp_tensor_release(x);
    }
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    ck_assert_msg(strstr(reasons_joined(compiled), "gate #1 (tp_item_f64) == 1.5, got 2.5"), "%s",
                  reasons_joined(compiled));
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_scalar_arguments_key_by_value) {
    static const char *const params[] = {"x", "alpha"};
    tp_compile_options options = fixture_options("f", params, 2);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(relu2_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(2, 1, 1);
    for (int64_t alpha = 2; alpha <= 3; alpha++) {
        tp_arg args[] = {tp_arg_tensor(x), tp_arg_int(alpha)};
        tp_tensor *y = NULL;
        ck_assert_int_eq(tp_call(compiled, args, 2, &y), TP_OK);
        tp_tensor_release(y);
    }
    ck_assert_str_eq(reasons_joined(compiled), "alpha == 2, got 3|");
    tp_compiled_free(compiled);
    tp_tensor_release(x);
}
END_TEST

START_TEST(test_recompile_limit_runs_compiled_but_uncached) {
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 2);
    tp_tensor *xs[3] = {fixture_ramp(2, -1, 1), fixture_ramp(3, -1, 1), fixture_ramp(4, -1, 1)};
    for (int i = 0; i < 3; i++) call_relu2_and_check(compiled, xs[i]);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 2);
    call_relu2_and_check(compiled, xs[2]); /* still uncached: compiles again */
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 4);
    call_relu2_and_check(compiled, xs[0]); /* cached */
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 4);
    for (int i = 0; i < 3; i++) tp_tensor_release(xs[i]);
    tp_compiled_free(compiled);
}
END_TEST

static void expect_limit_failure(tp_compiled *compiled) {
    tp_tensor *xs[2] = {fixture_ramp(2, -1, 1), fixture_ramp(3, -1, 1)};
    call_relu2_and_check(compiled, xs[0]);
    tp_arg args[] = {tp_arg_tensor(xs[1])};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_ERR_STATE);
    ck_assert_msg(strstr(tp_last_error(), "recompile_limit (1) reached") &&
                      strstr(tp_last_error(), "x.shape[0] == 2, got 3"),
                  "%s", tp_last_error());
    ck_assert_ptr_null(y);
    for (int i = 0; i < 2; i++) tp_tensor_release(xs[i]);
}

START_TEST(test_fail_on_recompile_limit_hit_fails_past_the_limit) {
    ck_assert_int_eq(tp_config_set_bool("fail_on_recompile_limit_hit", true), TP_OK);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 1);
    expect_limit_failure(compiled);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_fullgraph_fails_past_the_limit) {
    tp_compile_options options = fixture_options("relu2", x_only, 1);
    options.recompile_limit = 1;
    options.fullgraph = true;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(relu2_fn, &options, &compiled), TP_OK);
    expect_limit_failure(compiled);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_accumulated_recompile_limit_fails) {
    ck_assert_int_eq(tp_config_set_int("accumulated_recompile_limit", 3), TP_OK);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    for (int64_t n = 1; n <= 3; n++) {
        tp_tensor *x = fixture_ramp(n, 0, 1);
        call_relu2_and_check(compiled, x);
        tp_tensor_release(x);
    }
    tp_tensor *x = fixture_ramp(4, 0, 1);
    tp_arg args[] = {tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "accumulated recompilation limit reached"));
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_force_disable_caches_compiles_every_call) {
    ck_assert_int_eq(tp_config_set_bool("force_disable_caches", true), TP_OK);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    tp_tensor *x = fixture_ramp(3, -1, 1);
    for (int i = 0; i < 3; i++) call_relu2_and_check(compiled, x);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 3);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 0);
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_log_recompiles_logs_name_and_reasons) {
    setenv("TP_LOG_RECOMPILES", "1", 1);
    fixture_log log = {0};
    tp_set_log_handler(fixture_log_handler, &log);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    tp_tensor *a = fixture_ramp(4, 0, 1), *b = fixture_ramp(5, 0, 1);
    call_relu2_and_check(compiled, a);
    ck_assert_int_eq(log.count, 0); /* a first compile is not a recompile */
    call_relu2_and_check(compiled, b);
    tp_set_log_handler(NULL, NULL);
    const char *line = fixture_log_find(&log, "recompiling");
    ck_assert_ptr_nonnull(line);
    ck_assert_str_eq(line, "recompiling 'relu2': x.shape[0] == 4, got 5");
    tp_tensor_release(a);
    tp_tensor_release(b);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_log_recompiles_zero_is_off) {
    setenv("TP_LOG_RECOMPILES", "0", 1);
    fixture_log log = {0};
    tp_set_log_handler(fixture_log_handler, &log);
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    tp_tensor *a = fixture_ramp(4, 0, 1), *b = fixture_ramp(5, 0, 1);
    call_relu2_and_check(compiled, a);
    call_relu2_and_check(compiled, b);
    tp_set_log_handler(NULL, NULL);
    ck_assert_ptr_null(fixture_log_find(&log, "recompiling"));
    tp_tensor_release(a);
    tp_tensor_release(b);
    tp_compiled_free(compiled);
}
END_TEST

/* Six parameters, all changing shape: six reasons, four shown. */
static void sum6_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                    int num_outputs, void *user_data) {
    (void)num_outputs, (void)user_data;
    tp_tensor *total = tp_sum(ctx, args[0].tensor, NULL, 0, false);
    for (int i = 1; i < num_args; i++)
        total = tp_add(ctx, total, tp_sum(ctx, args[i].tensor, NULL, 0, false));
    outputs[0] = total;
}

START_TEST(test_verbose_log_summarises_reasons_to_four_plus_more) {
    ck_assert_int_eq(tp_config_set_bool("verbose", true), TP_OK);
    unsetenv("TP_LOG_RECOMPILES");
    static const char *const params[] = {"a", "b", "c", "d", "e", "f"};
    tp_compile_options options = fixture_options("six", params, 6);
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(sum6_fn, &options, &compiled), TP_OK);
    fixture_log log = {0};
    tp_set_log_handler(fixture_log_handler, &log);
    for (int64_t n = 2; n <= 3; n++) {
        tp_tensor *xs[6];
        tp_arg args[6];
        for (int i = 0; i < 6; i++) args[i] = tp_arg_tensor(xs[i] = fixture_ramp(n, 1, 0));
        tp_tensor *y = NULL;
        ck_assert_int_eq(tp_call(compiled, args, 6, &y), TP_OK);
        ck_assert_double_eq(tp_tensor_get_f64(y, 0), 6.0 * (double)n);
        tp_tensor_release(y);
        for (int i = 0; i < 6; i++) tp_tensor_release(xs[i]);
    }
    tp_set_log_handler(NULL, NULL);
    ck_assert_str_eq(fixture_log_find(&log, "recompiling"),
                     "recompiling 'six': a.shape[0] == 2, got 3; b.shape[0] == 2, got 3; "
                     "c.shape[0] == 2, got 3; d.shape[0] == 2, got 3 (+2 more)");
    tp_compiled_free(compiled);
}
END_TEST

/* Reads the raw data of its input: cannot be captured. */
static void raw_reader_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                          int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    const float *data = tp_tensor_data(args[0].tensor);
    outputs[0] = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, data[0]));
}

START_TEST(test_raw_data_access_runs_uncompiled_with_the_reason) {
    fixture_register_counting_backend();
    tp_compile_options options = fixture_options("raw", x_only, 1);
    options.backend = "counting";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(raw_reader_fn, &options, &compiled), TP_OK);
    for (int round = 0; round < 2; round++) {
        tp_tensor *x = fixture_ramp(3, (float)(round + 2), 1);
        tp_arg args[] = {tp_arg_tensor(x)};
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 1, &y) == TP_OK, "%s", tp_last_error());
        float first = (float)(round + 2);
        for (int i = 0; i < 3; i++) ck_assert(fixture_floats(y)[i] == (first + i) * first);
        tp_tensor_release(y);
        tp_tensor_release(x);
    }
    ck_assert_int_eq(fixture_backend_counts.compiles, 0);
    const char *reason = tp_compiled_uncompiled_reason(compiled);
    ck_assert_ptr_nonnull(reason);
    ck_assert_ptr_nonnull(strstr(reason, "tp_tensor_data"));
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_raw_data_access_is_an_error_under_fullgraph) {
    tp_compile_options options = fixture_options("raw", x_only, 1);
    options.fullgraph = true;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(raw_reader_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1);
    tp_arg args[] = {tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "tp_tensor_data"));
    ck_assert_ptr_null(tp_compiled_uncompiled_reason(compiled));
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_in_place_write_is_seen_by_the_next_call) {
    tp_compiled *compiled = compile_relu2(TP_DYNAMIC_STATIC, 0);
    tp_tensor *x = fixture_ramp(3, 1, 1);
    call_relu2_and_check(compiled, x);
    ck_assert_int_eq(tp_tensor_fill(x, -4.0), TP_OK);
    call_relu2_and_check(compiled, x);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    tp_tensor_release(x);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_reset_all_clears_every_cache_and_resets_backends) {
    fixture_register_counting_backend();
    static const char *const xw[] = {"x", "w"};
    tp_compile_options options = fixture_options("f", xw, 2);
    options.backend = "counting";
    tp_compiled *first = NULL, *second = NULL;
    ck_assert_int_eq(tp_compile(relu2_fn, &options, &first), TP_OK);
    ck_assert_int_eq(tp_compile(relu2_fn, &options, &second), TP_OK);
    tp_tensor *x = fixture_ramp(3, 1, 1);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(x)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(first, args, 2, &y), TP_OK);
    tp_tensor_release(y);
    ck_assert_int_eq(tp_call(second, args, 2, &y), TP_OK);
    tp_tensor_release(y);
    tp_compile_reset_all();
    ck_assert_int_eq(tp_compiled_num_entries(first), 0);
    ck_assert_int_eq(tp_compiled_num_entries(second), 0);
    ck_assert_int_eq(fixture_backend_counts.resets, 1);
    ck_assert_int_eq(tp_call(first, args, 2, &y), TP_OK); /* compiles again */
    ck_assert(fixture_floats(y)[0] == 2.0f);
    tp_tensor_release(y);
    ck_assert_int_eq(fixture_backend_counts.compiles, 3);
    tp_tensor_release(x);
    tp_compiled_free(first);
    tp_compiled_free(second);
}
END_TEST

TP_TEST_SUITE(compile_cache) {
    Suite *suite = suite_create("compile_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_add_test(tc, test_static_recompiles_on_size_change_naming_parameter_and_dimension);
    tcase_add_test(tc, test_dtype_change_reason_names_parameter);
    tcase_add_test(tc, test_dynamic_reuses_one_entry_across_sizes_and_recompiles_on_rank_change);
    tcase_add_test(tc, test_dynamic_keeps_size_one_dimensions_exact);
    tcase_add_test(tc, test_dynamic_reasons_never_list_a_condition_that_holds);
    tcase_add_test(tc, test_config_dynamic_shapes_applies_when_the_call_does_not_say);
    tcase_add_test(tc, test_metadata_read_adds_an_exact_shape_guard_in_dynamic_mode);
    tcase_add_test(tc, test_data_dependent_branch_keys_two_entries_and_follows_in_place_writes);
    tcase_add_test(tc, test_numeric_value_read_is_keyed);
    tcase_add_test(tc, test_scalar_arguments_key_by_value);
    tcase_add_test(tc, test_recompile_limit_runs_compiled_but_uncached);
    tcase_add_test(tc, test_fail_on_recompile_limit_hit_fails_past_the_limit);
    tcase_add_test(tc, test_fullgraph_fails_past_the_limit);
    tcase_add_test(tc, test_accumulated_recompile_limit_fails);
    tcase_add_test(tc, test_force_disable_caches_compiles_every_call);
    tcase_add_test(tc, test_log_recompiles_logs_name_and_reasons);
    tcase_add_test(tc, test_log_recompiles_zero_is_off);
    tcase_add_test(tc, test_verbose_log_summarises_reasons_to_four_plus_more);
    tcase_add_test(tc, test_raw_data_access_runs_uncompiled_with_the_reason);
    tcase_add_test(tc, test_raw_data_access_is_an_error_under_fullgraph);
    tcase_add_test(tc, test_in_place_write_is_seen_by_the_next_call);
    tcase_add_test(tc, test_reset_all_clears_every_cache_and_resets_backends);
    suite_add_tcase(suite, tc);
    return suite;
}
