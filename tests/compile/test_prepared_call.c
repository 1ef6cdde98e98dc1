/* Prepared calls (tp_prepared_call_run): a cache hit only, with tp_call's
 * guards and gates; a miss runs nothing and leaves the compile to tp_call;
 * array records are re-read on every run; nothing of the caller's memory
 * outlives a run. Expected values come from plain loops in the test. */
#include <stdlib.h>

#include "compile_fixtures.h"

static const char *const x_only[] = {"x"};

/* y = sum(x) > 0 ? x * 2 : -x (a gate on the data) */
static void branch_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                      int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor;
    bool positive =
        tp_item_bool(ctx, tp_gt(ctx, tp_sum(ctx, x, NULL, 0, false), tp_scalar(ctx, TP_F32, 0.0)));
    outputs[0] = positive ? tp_mul(ctx, x, tp_scalar(ctx, TP_F32, 2.0)) : tp_neg(ctx, x);
}

/* y = x (the output is the argument itself) */
static void identity_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                        int num_outputs, void *user_data) {
    (void)ctx, (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = args[0].tensor;
}

static tp_compiled *compile_one_parameter(tp_fn fn, const char *name) {
    tp_compile_options options = fixture_options(name, x_only, 1);
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile(fn, &options, &compiled) == TP_OK, "%s", tp_last_error());
    return compiled;
}

static tp_prepared_arg array_record(float *data, int64_t n) {
    tp_prepared_arg record = {.kind = TP_PREPARED_ARRAY, .dtype = TP_F32, .ndim = 1};
    record.value.data = data;
    record.shape[0] = n;
    return record;
}

/* Runs `call` on `data` (n floats) and returns the output, or NULL when
 * nothing ran. */
static tp_tensor *run_on(tp_prepared_call *call, float *data, int64_t n) {
    tp_prepared_arg record = array_record(data, n);
    tp_tensor *y = (tp_tensor *)(intptr_t)1; /* must be overwritten */
    ck_assert_msg(tp_prepared_call_run(call, &record, &y) == TP_OK, "%s", tp_last_error());
    return y;
}

/* The same call through tp_call (what the caller does when nothing ran). */
static void call_on(tp_compiled *compiled, float *data, int64_t n) {
    tp_tensor *x = NULL, *y = NULL;
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 1, &n, data, NULL, NULL, &x), TP_OK);
    tp_arg args[] = {tp_arg_tensor(x)};
    ck_assert_msg(tp_call(compiled, args, 1, &y) == TP_OK, "%s", tp_last_error());
    tp_tensor_release(y);
    tp_tensor_release(x); /* the memo may keep it: `data` outlives the test's wrapper */
}

static void check_branch_output(const tp_tensor *y, const float *x, int64_t n) {
    ck_assert_ptr_nonnull(y);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += x[i];
    ck_assert_int_eq(tp_tensor_numel(y), n);
    for (int64_t i = 0; i < n; i++) ck_assert(fixture_floats(y)[i] == (sum > 0 ? x[i] * 2 : -x[i]));
}

START_TEST(test_a_miss_runs_nothing_and_compiles_nothing) {
    tp_compiled *compiled = compile_one_parameter(branch_fn, "branch");
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 1, &call), TP_OK);
    float x[4] = {1, 2, 3, 4};
    ck_assert_ptr_null(run_on(call, x, 4));
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 0);
    ck_assert_int_eq(tp_compiled_num_entries(compiled), 0);
    tp_prepared_call_free(call);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_a_hit_runs_and_a_new_size_is_left_to_tp_call) {
    tp_compiled *compiled = compile_one_parameter(branch_fn, "branch");
    float x[5] = {1, 2, 3, 4, 5};
    /* Entries are compiled by tp_call, with its own tensor over x. */
    tp_tensor *keep = NULL;
    int64_t four = 4;
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 1, &four, x, NULL, NULL, &keep), TP_OK);
    tp_arg args[] = {tp_arg_tensor(keep)};
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 1, &y), TP_OK);
    tp_tensor_release(y);
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 1, &call), TP_OK);
    y = run_on(call, x, 4);
    check_branch_output(y, x, 4);
    tp_tensor_release(y);
    ck_assert_ptr_null(run_on(call, x, 5)); /* x.shape[0] == 4 fails: a miss */
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    tp_prepared_call_free(call);
    tp_compiled_free(compiled);
    tp_tensor_release(keep);
}
END_TEST

START_TEST(test_gates_follow_writes_to_the_same_memory) {
    tp_compiled *compiled = compile_one_parameter(branch_fn, "branch");
    float x[4] = {1, 2, 3, 4}; /* sum 10 */
    call_on(compiled, x, 4);
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 1, &call), TP_OK);
    tp_tensor *y = run_on(call, x, 4);
    check_branch_output(y, x, 4);
    tp_tensor_release(y);
    for (int i = 0; i < 4; i++) x[i] = -x[i]; /* same memory, the gate flips */
    ck_assert_ptr_null(run_on(call, x, 4));   /* no entry for that branch yet */
    call_on(compiled, x, 4);                  /* compiles it */
    y = run_on(call, x, 4);
    check_branch_output(y, x, 4); /* -x */
    tp_tensor_release(y);
    for (int i = 0; i < 4; i++) x[i] = -x[i];
    y = run_on(call, x, 4);
    check_branch_output(y, x, 4); /* x * 2 again, from the first entry */
    tp_tensor_release(y);
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 2);
    tp_prepared_call_free(call);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_an_output_that_is_the_argument_comes_back_as_a_copy) {
    tp_compiled *compiled = compile_one_parameter(identity_fn, "identity");
    float x[3] = {7, 8, 9};
    call_on(compiled, x, 3);
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 1, &call), TP_OK);
    tp_tensor *y = run_on(call, x, 3);
    ck_assert_ptr_nonnull(y);
    ck_assert_ptr_ne(tp_tensor_data(y), x);
    for (int i = 0; i < 3; i++) ck_assert(fixture_floats(y)[i] == x[i]);
    x[0] = 100; /* the copy does not see it */
    ck_assert(fixture_floats(y)[0] == 7);
    tp_tensor_release(y);
    tp_prepared_call_free(call);
    tp_compiled_free(compiled);
}
END_TEST

START_TEST(test_malformed_records_fail_naming_the_argument) {
    tp_compiled *compiled = compile_one_parameter(branch_fn, "branch");
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 1, &call), TP_OK);
    float x[4] = {1, 2, 3, 4};
    tp_prepared_arg record = array_record(x, 4);
    record.dtype = 42;
    tp_tensor *y = NULL;
    ck_assert_int_eq(tp_prepared_call_run(call, &record, &y), TP_ERR_DTYPE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'branch' argument 'x'"));
    record = array_record(x, 4);
    record.ndim = TP_MAX_DIMS + 1;
    ck_assert_int_ne(tp_prepared_call_run(call, &record, &y), TP_OK);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "argument 'x'"));
    record = array_record(NULL, 4);
    ck_assert_int_eq(tp_prepared_call_run(call, &record, &y), TP_ERR_INVALID_ARGUMENT);
    record.kind = 99;
    ck_assert_int_eq(tp_prepared_call_run(call, &record, &y), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "record kind 99"));
    ck_assert_ptr_null(y);
    tp_prepared_call_free(call);
    ck_assert_int_eq(tp_prepared_call_create(compiled, 2, &call), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(call);
    tp_compiled_free(compiled);
}
END_TEST

static void add_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                   int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, args[1].tensor);
}

/* y = x + y through the counting backend: tensor handles and scalars in the
 * same records as arrays. */
START_TEST(test_tensor_handles_and_arrays_mix) {
    fixture_register_counting_backend();
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "counting";
    static const char *const xy[] = {"x", "y"};
    options.param_names = xy;
    options.num_params = 2;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(add_fn, &options, &compiled), TP_OK);
    tp_tensor *x = fixture_ramp(4, 1, 1), *y = fixture_ramp(4, 10, 10);
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(y)};
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_call(compiled, args, 2, &out), TP_OK);
    tp_tensor_release(out);
    tp_prepared_call *call = NULL;
    ck_assert_int_eq(tp_prepared_call_create(compiled, 2, &call), TP_OK);
    float other[4] = {0.5f, 0.25f, 0.125f, 0};
    tp_prepared_arg records[2] = {{.kind = TP_ARG_TENSOR}, array_record(other, 4)};
    records[0].value.tensor = x;
    ck_assert_int_eq(tp_prepared_call_run(call, records, &out), TP_OK);
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < 4; i++) ck_assert(fixture_floats(out)[i] == (float)(i + 1) + other[i]);
    tp_tensor_release(out);
    ck_assert_int_eq(fixture_backend_counts.compiles, 1);
    tp_prepared_call_free(call);
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(y);
}
END_TEST

TP_TEST_SUITE(compile_prepared_call) {
    Suite *suite = suite_create("compile_prepared_call");
    TCase *tc = tcase_create("prepared");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_add_test(tc, test_a_miss_runs_nothing_and_compiles_nothing);
    tcase_add_test(tc, test_a_hit_runs_and_a_new_size_is_left_to_tp_call);
    tcase_add_test(tc, test_gates_follow_writes_to_the_same_memory);
    tcase_add_test(tc, test_an_output_that_is_the_argument_comes_back_as_a_copy);
    tcase_add_test(tc, test_malformed_records_fail_naming_the_argument);
    tcase_add_test(tc, test_tensor_handles_and_arrays_mix);
    suite_add_tcase(suite, tc);
    return suite;
}
