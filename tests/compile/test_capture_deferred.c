/* Capture records ops without computing them: a gate-free function runs no
 * reference kernel while it is captured; a gate computes the ancestors of
 * the value it reads and nothing else; a raw read, a clone, a tensor kept
 * beyond the function, and a read on another ctx each see or get what eager
 * gives. The reference kernels are counted at their one door
 * (ops/kernel_dispatch.h); each expected count is the number of ops the
 * test names. */
#include <math.h>

#include "capture/capture.h"
#include "compile_fixtures.h"
#include "ops/kernel_dispatch.h"
#include "tensorplay/graph.h"

/* A capture of `fn` on `args`, checked to succeed; returns the reference
 * kernels it ran. */
static uint64_t kernels_while_capturing(tp_fn fn, void *user_data, tp_arg *args, int num_args,
                                        tp_capture_result *result) {
    const char *names[] = {"x", "w", "b"};
    uint64_t before = tp_reference_kernel_calls();
    ck_assert_msg(tp_capture_run(fn, user_data, "f", names, args, num_args, 1, result) == TP_OK,
                  "%s", tp_last_error());
    uint64_t ran = tp_reference_kernel_calls() - before;
    ck_assert_ptr_null(result->raw_access_reason);
    return ran;
}

/* A layer with no value read: linear, layer_norm, softmax, gelu, a residual. */
static void layer_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor, *w = args[1].tensor, *b = args[2].tensor;
    tp_tensor *h = tp_gelu(ctx, tp_linear(ctx, x, w, b), TP_GELU_TANH);
    tp_tensor *p = tp_softmax(ctx, tp_matmul(ctx, h, tp_transpose(ctx, h, 0, 1)), -1);
    outputs[0] = tp_layer_norm(ctx, tp_add(ctx, tp_matmul(ctx, p, x), x), NULL, NULL, -1, 1e-5);
}

/* rows x cols f32 holding start, start + step, ... in row-major order. */
static tp_tensor *ramp_2d(int64_t rows, int64_t cols, float start, float step) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, (int64_t[]){rows, cols}, &tensor), TP_OK);
    float *data = tp_tensor_data_mut(tensor);
    for (int64_t i = 0; i < rows * cols; i++) data[i] = start + step * (float)i;
    return tensor;
}

/* x [4, 8], w [8, 8], b [8] */
static void make_layer_args(tp_arg *args, tp_tensor **tensors) {
    tensors[0] = ramp_2d(4, 8, 0.0f, 0.1f);
    tensors[1] = ramp_2d(8, 8, -1.0f, 0.03f);
    tensors[2] = fixture_ramp(8, 0.5f, 0.0f);
    for (int i = 0; i < 3; i++) args[i] = tp_arg_tensor(tensors[i]);
}

START_TEST(capturing_a_gate_free_function_runs_no_reference_kernel) {
    tp_tensor *tensors[3];
    tp_arg args[3];
    make_layer_args(args, tensors);
    tp_capture_result result;
    ck_assert_uint_eq(kernels_while_capturing(layer_fn, NULL, args, 3, &result), 0);
    /* linear, gelu, transpose, matmul, softmax, matmul, add, layer_norm */
    ck_assert_int_eq(tp_graph_num_values(result.graph) - tp_graph_num_inputs(result.graph), 8);
    tp_capture_result_clear(&result);
    for (int i = 0; i < 3; i++) tp_tensor_release(tensors[i]);
}
END_TEST

START_TEST(the_first_call_on_eager_costs_one_run) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(layer_fn, &options, &compiled), TP_OK);
    tp_tensor *tensors[3];
    tp_arg args[3];
    make_layer_args(args, tensors);
    uint64_t counts[2];
    for (int call = 0; call < 2; call++) {
        tp_tensor_bump_version(tensors[0]); /* no memo: the second call looks up its entry */
        uint64_t before = tp_reference_kernel_calls();
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 3, &y) == TP_OK, "%s", tp_last_error());
        counts[call] = tp_reference_kernel_calls() - before;
        tp_tensor_release(y);
    }
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 1);
    ck_assert_uint_gt(counts[1], 0);         /* the eager backend runs reference kernels */
    ck_assert_uint_eq(counts[0], counts[1]); /* capture + compile added none */
    tp_compiled_free(compiled);
    for (int i = 0; i < 3; i++) tp_tensor_release(tensors[i]);
}
END_TEST

/* gate = sum(exp(x)) > 10; a branch of three ops on w that the gate does
 * not read is traced before it. y = t + exp(x) or t - exp(x). */
static void gated_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor, *w = args[1].tensor;
    tp_tensor *t = tp_relu(ctx, tp_neg(ctx, tp_tanh(ctx, w)));
    tp_tensor *e = tp_exp(ctx, x);
    bool big = tp_item_f64(ctx, tp_sum(ctx, e, NULL, 0, false)) > 10.0;
    outputs[0] = big ? tp_add(ctx, t, e) : tp_sub(ctx, t, e);
}

START_TEST(a_gate_computes_only_the_ancestors_of_the_value_it_reads) {
    tp_tensor *x = fixture_ramp(3, 0.0f, 1.0f); /* sum(exp) = 1 + e + e^2 = 11.1 */
    tp_tensor *w = fixture_ramp(3, -1.0f, 1.0f);
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    tp_capture_result result;
    /* exp and sum; not tanh, neg, relu (traced before) nor add (after) */
    ck_assert_uint_eq(kernels_while_capturing(gated_fn, NULL, args, 2, &result), 2);
    ck_assert_ptr_nonnull(result.gates);
    ck_assert_int_eq(result.gates->num_gates, 1);
    ck_assert_int_eq(result.gates->kinds[0], TP_ITEM_F64);
    tp_capture_result_clear(&result);
    tp_tensor_release(x);
    tp_tensor_release(w);
}
END_TEST

/* The branch each call takes follows its own x (the gate computed at
 * capture is replayed on later inputs). */
START_TEST(a_gated_function_takes_the_branch_of_each_call) {
    tp_compiled *compiled = NULL;
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    ck_assert_int_eq(tp_compile(gated_fn, &options, &compiled), TP_OK);
    tp_tensor *w = fixture_ramp(3, -1.0f, 1.0f); /* t = relu(-tanh(w)) = [tanh 1, 0, 0] */
    for (int call = 0; call < 3; call++) {
        float start = call == 1 ? -5.0f : 0.0f; /* sum(exp): 11.1, 0.02, 11.1 */
        tp_tensor *x = fixture_ramp(3, start, call == 1 ? 0.0f : 1.0f);
        tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(w)};
        tp_tensor *y = NULL;
        ck_assert_msg(tp_call(compiled, args, 2, &y) == TP_OK, "%s", tp_last_error());
        const float *v = fixture_floats(y);
        if (call == 1) { /* t - exp(-5) */
            ck_assert_float_eq_tol(v[0], tanhf(1.0f) - expf(-5.0f), 1e-5f);
            ck_assert_float_eq_tol(v[2], -expf(-5.0f), 1e-6f);
        } else { /* t + exp(x) */
            ck_assert_float_eq_tol(v[0], tanhf(1.0f) + 1.0f, 1e-5f);
            ck_assert_float_eq_tol(v[2], expf(2.0f), 1e-4f);
        }
        tp_tensor_release(y);
        tp_tensor_release(x);
    }
    ck_assert_int_eq(tp_compiled_num_compiles(compiled), 2); /* one per branch */
    tp_tensor_release(w);
    tp_compiled_free(compiled);
}
END_TEST

/* Two gates on exp(x): the second computes only its own reduction. */
static void two_gates_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                         int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *e = tp_exp(ctx, args[0].tensor);
    bool big =
        tp_item_bool(ctx, tp_gt(ctx, tp_sum(ctx, e, NULL, 0, false), tp_scalar(ctx, TP_F32, 10.0)));
    bool peaked =
        tp_item_bool(ctx, tp_gt(ctx, tp_max(ctx, e, NULL, 0, false), tp_scalar(ctx, TP_F32, 5.0)));
    outputs[0] = big && peaked ? tp_neg(ctx, e) : e;
}

START_TEST(a_second_gate_reuses_what_the_first_computed) {
    tp_tensor *x = fixture_ramp(3, 0.0f, 1.0f); /* sum 11.1 > 10, max e^2 = 7.4 > 5 */
    tp_arg arg = tp_arg_tensor(x);
    tp_capture_result result;
    /* gate 1: exp, sum, full, gt; gate 2: max, full, gt (exp is computed) */
    ck_assert_uint_eq(kernels_while_capturing(two_gates_fn, NULL, &arg, 1, &result), 7);
    ck_assert_int_eq(result.gates->num_gates, 2);
    ck_assert_int_eq(result.gates->outcomes[0], 1);
    ck_assert_int_eq(result.gates->outcomes[1], 1);
    tp_capture_result_clear(&result);
    tp_tensor_release(x);
}
END_TEST

static tp_compiled *compile_eager(tp_fn fn, bool fullgraph) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    options.fullgraph = fullgraph;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(fn, &options, &compiled), TP_OK);
    return compiled;
}

static float call_one(tp_compiled *compiled, float value, tp_status expect) {
    tp_tensor *x = fixture_ramp(1, value, 0.0f);
    tp_arg arg = tp_arg_tensor(x);
    tp_tensor *y = NULL;
    tp_status status = tp_call(compiled, &arg, 1, &y);
    ck_assert_msg(status == expect, "%s", tp_last_error());
    float result = y ? fixture_floats(y)[0] : NAN;
    tp_tensor_release(y);
    tp_tensor_release(x);
    return result;
}

/* y = x + v, v = (x * 3)[0] read raw: an op's result, not an input. */
static void raw_read_of_a_result_fn(tp_ctx *ctx, const tp_arg *args, int num_args,
                                    tp_tensor **outputs, int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor;
    double v = tp_tensor_get_f64(tp_mul(ctx, x, tp_scalar(ctx, TP_F32, 3.0)), 0);
    outputs[0] = tp_add(ctx, x, tp_scalar(ctx, TP_F32, v));
}

START_TEST(a_raw_read_of_an_op_result_sees_its_values_and_runs_uncompiled) {
    tp_compiled *compiled = compile_eager(raw_read_of_a_result_fn, false);
    ck_assert_float_eq(call_one(compiled, 2.0f, TP_OK), 8.0f);  /* 2 + 6 */
    ck_assert_float_eq(call_one(compiled, 5.0f, TP_OK), 20.0f); /* 5 + 15 */
    ck_assert_ptr_nonnull(strstr(tp_compiled_uncompiled_reason(compiled), "tp_tensor_get_f64"));
    tp_compiled_free(compiled);
}
END_TEST

/* y = clone(x * 2) + 1: the clone is taken outside the ops. */
static void clone_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                     int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *copy = NULL;
    tp_tensor_clone(tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, 2.0)), &copy);
    outputs[0] = tp_add(ctx, tp_ctx_adopt(ctx, copy), tp_scalar(ctx, TP_F32, 1.0));
}

START_TEST(a_clone_of_a_traced_tensor_runs_uncompiled_with_fresh_values) {
    tp_compiled *compiled = compile_eager(clone_fn, false);
    ck_assert_float_eq(call_one(compiled, 2.0f, TP_OK), 5.0f); /* 2 * 2 + 1 */
    ck_assert_float_eq(call_one(compiled, 7.0f, TP_OK), 15.0f);
    ck_assert_ptr_nonnull(strstr(tp_compiled_uncompiled_reason(compiled), "tp_tensor_clone"));
    tp_compiled_free(compiled);
    compiled = compile_eager(clone_fn, true);
    call_one(compiled, 2.0f, TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "tp_tensor_clone"));
    tp_compiled_free(compiled);
}
END_TEST

/* y = g(x * 2), g = neg run with tp_graph_run: the public interpreter reads
 * the traced tensor's data. */
static void graph_run_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                         int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs;
    tp_tensor *doubled = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, 2.0));
    tp_tensor *negated = NULL;
    if (tp_graph_run(user_data, &doubled, 1, &negated) != TP_OK) return;
    outputs[0] = tp_ctx_adopt(ctx, negated);
}

START_TEST(tp_graph_run_on_a_traced_tensor_runs_uncompiled_with_fresh_values) {
    static const char text[] = "graph g(%x: f32[1]) {\n"
                               "  %y: f32[1] = neg(%x)\n"
                               "  return %y\n"
                               "}\n";
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_parse(text, strlen(text), "g.tpir", &graph), TP_OK);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    options.user_data = graph;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(graph_run_fn, &options, &compiled), TP_OK);
    ck_assert_float_eq(call_one(compiled, 3.0f, TP_OK), -6.0f);
    ck_assert_float_eq(call_one(compiled, -4.0f, TP_OK), 8.0f);
    ck_assert_ptr_nonnull(strstr(tp_compiled_uncompiled_reason(compiled), "tp_graph_run"));
    tp_compiled_free(compiled);
    tp_graph_destroy(graph);
}
END_TEST

/* inner: y = x + 1. outer: tp_call_into(inner) into a tensor of its own,
 * then y * 2. */
static void plus_one_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                        int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, 1.0));
}

static void call_into_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                         int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs;
    tp_tensor *target = tp_full(ctx, TP_F32, 1, (int64_t[]){1}, 0.0);
    if (tp_call_into(user_data, args, 1, &target) != TP_OK) return;
    outputs[0] = tp_mul(ctx, target, tp_scalar(ctx, TP_F32, 2.0));
}

START_TEST(tp_call_into_inside_a_capture_runs_uncompiled_with_fresh_values) {
    tp_compiled *inner = compile_eager(plus_one_fn, false);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "eager";
    options.user_data = inner;
    tp_compiled *outer = NULL;
    ck_assert_int_eq(tp_compile(call_into_fn, &options, &outer), TP_OK);
    ck_assert_float_eq(call_one(outer, 3.0f, TP_OK), 8.0f); /* (3 + 1) * 2 */
    ck_assert_float_eq(call_one(outer, 0.5f, TP_OK), 3.0f);
    ck_assert_ptr_nonnull(strstr(tp_compiled_uncompiled_reason(outer), "tp_call_into"));
    tp_compiled_free(outer);
    tp_compiled_free(inner);
}
END_TEST

/* Keeps a reference of x * 4 beyond the function. */
static tp_tensor *kept;

static void keep_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                    int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *y = tp_mul(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, 4.0));
    tp_tensor_release(kept);
    kept = tp_tensor_retain(y);
    outputs[0] = y;
}

START_TEST(a_traced_tensor_kept_beyond_the_function_holds_its_values) {
    kept = NULL;
    tp_compiled *compiled = compile_eager(keep_fn, false);
    ck_assert_float_eq(call_one(compiled, 3.0f, TP_OK), 12.0f);
    ck_assert_ptr_nonnull(kept);
    ck_assert_float_eq(fixture_floats(kept)[0], 12.0f); /* 3 * 4, computed at capture's end */
    tp_tensor_release(kept);
    kept = NULL;
    tp_compiled_free(compiled);
}
END_TEST

/* tp_item_f64 of a traced tensor on a ctx of the function's own making. */
static void item_on_second_ctx_fn(tp_ctx *ctx, const tp_arg *args, int num_args,
                                  tp_tensor **outputs, int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_ctx *other = tp_ctx_create();
    double v = tp_item_f64(other, args[0].tensor);
    tp_ctx_destroy(other);
    outputs[0] = tp_add(ctx, args[0].tensor, tp_scalar(ctx, TP_F32, isnan(v) ? 0.0 : v));
}

START_TEST(a_value_read_on_a_second_ctx_is_an_error) {
    tp_compiled *compiled = compile_eager(item_on_second_ctx_fn, false);
    call_one(compiled, 1.0f, TP_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "tp_ctx other than the one it was given"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "item_f64"));
    tp_compiled_free(compiled);
}
END_TEST

/* A gate on gather with an index past the data's end. */
static void bad_gather_gate_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                               int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor;
    int64_t index = 5;
    tp_tensor *inputs[2] = {x, tp_constant(ctx, TP_I64, 1, (int64_t[]){1}, &index)};
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 0;
    tp_tensor *picked = tp_op(ctx, "gather", inputs, 2, &attrs);
    outputs[0] = tp_item_f64(ctx, tp_sum(ctx, picked, NULL, 0, false)) > 0 ? x : tp_neg(ctx, x);
}

START_TEST(a_kernel_error_while_computing_a_gate_fails_the_capture_naming_the_op) {
    tp_compiled *compiled = compile_eager(bad_gather_gate_fn, false);
    call_one(compiled, 1.0f, TP_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(tp_last_error(), "failed during capture"), "%s", tp_last_error());
    ck_assert_msg(strstr(tp_last_error(), "gather"), "%s", tp_last_error());
    tp_compiled_free(compiled);
}
END_TEST

TP_TEST_SUITE(compile_capture_deferred) {
    Suite *suite = suite_create("compile_capture_deferred");
    TCase *tc = tcase_create("capture_deferred");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, capturing_a_gate_free_function_runs_no_reference_kernel);
    tcase_add_test(tc, the_first_call_on_eager_costs_one_run);
    tcase_add_test(tc, a_gate_computes_only_the_ancestors_of_the_value_it_reads);
    tcase_add_test(tc, a_gated_function_takes_the_branch_of_each_call);
    tcase_add_test(tc, a_second_gate_reuses_what_the_first_computed);
    tcase_add_test(tc, a_raw_read_of_an_op_result_sees_its_values_and_runs_uncompiled);
    tcase_add_test(tc, a_clone_of_a_traced_tensor_runs_uncompiled_with_fresh_values);
    tcase_add_test(tc, tp_graph_run_on_a_traced_tensor_runs_uncompiled_with_fresh_values);
    tcase_add_test(tc, tp_call_into_inside_a_capture_runs_uncompiled_with_fresh_values);
    tcase_add_test(tc, a_traced_tensor_kept_beyond_the_function_holds_its_values);
    tcase_add_test(tc, a_value_read_on_a_second_ctx_is_an_error);
    tcase_add_test(tc, a_kernel_error_while_computing_a_gate_fails_the_capture_naming_the_op);
    suite_add_tcase(suite, tc);
    return suite;
}
