/* Composite ops (softmax, log_softmax, layer_norm, gelu, silu, softplus,
 * linear): the reference kernels on hand-checkable inputs, the dtype and
 * shape rules, their error paths, and the equivalence of each decomposition
 * with its composite (both graphs run by tp_graph_run on random inputs). */
#include <stdlib.h>

#include "kernel_harness.h"
#include "tensorplay/graph.h"

/* f32 results: the decomposition rounds every step to f32 while the
 * reference kernel computes in double and rounds once. */
#define F32_TOLERANCE 2e-5
#define F64_TOLERANCE 1e-12

static const double LN2 = 0.69314718055994530942, LN3 = 1.09861228866810969140,
                    LN6 = 1.79175946922805500081;

static tp_attrs axis_attrs(int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return attrs;
}

static tp_tensor *run_f64(tp_op_id id, int ndim, const int64_t *shape, const double *values,
                          tp_attrs attrs) {
    tp_tensor *in = harness_tensor(TP_F64, ndim, shape, values);
    tp_tensor *out = harness_run_ok(id, &in, 1, &attrs);
    tp_tensor_release(in);
    return out;
}

/* ---- softmax and log_softmax ---- */

START_TEST(softmax_of_logs_is_the_normalised_values) {
    /* exp([0, ln 2, ln 3]) = [1, 2, 3], sum 6 */
    tp_tensor *out = run_f64(TP_OP_SOFTMAX, SHAPE(3), VALUES(0, LN2, LN3), axis_attrs(0));
    ASSERT_VALUES(out, 1e-15, 1.0 / 6, 2.0 / 6, 3.0 / 6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softmax_along_the_first_axis) {
    /* columns [0, ln 3] -> [1/4, 3/4] and [0, 0] -> [1/2, 1/2] */
    tp_tensor *out = run_f64(TP_OP_SOFTMAX, SHAPE(2, 2), VALUES(0, 0, LN3, 0), axis_attrs(-2));
    ASSERT_VALUES(out, 1e-15, 0.25, 0.5, 0.75, 0.5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softmax_of_large_values_does_not_overflow) {
    tp_tensor *out = run_f64(TP_OP_SOFTMAX, SHAPE(2), VALUES(1000, 1000), axis_attrs(0));
    ASSERT_VALUES(out, 0, 0.5, 0.5);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softmax_of_integers_gives_f32) {
    const int32_t values[] = {7, 7, 7, 7};
    tp_tensor *in = harness_tensor(TP_I32, SHAPE(4), values);
    tp_attrs attrs = axis_attrs(0);
    tp_tensor *out = harness_run_ok(TP_OP_SOFTMAX, &in, 1, &attrs);
    harness_assert_shape(out, TP_F32, SHAPE(4));
    ASSERT_VALUES(out, 0, 0.25, 0.25, 0.25, 0.25);
    tp_tensor_release(in);
    tp_tensor_release(out);
}
END_TEST

START_TEST(log_softmax_of_logs_is_the_log_of_the_normalised_values) {
    tp_tensor *out = run_f64(TP_OP_LOG_SOFTMAX, SHAPE(3), VALUES(0, LN2, LN3), axis_attrs(-1));
    ASSERT_VALUES(out, 1e-15, -LN6, LN2 - LN6, LN3 - LN6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(log_softmax_of_large_values_is_finite) {
    tp_tensor *out = run_f64(TP_OP_LOG_SOFTMAX, SHAPE(2), VALUES(1000, 1000), axis_attrs(0));
    ASSERT_VALUES(out, 1e-15, -LN2, -LN2);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softmax_rejects_an_out_of_range_axis) {
    tp_type in = harness_type(TP_F32, SHAPE(2, 3)), out;
    tp_attrs attrs = axis_attrs(2);
    harness_assert_error(harness_infer(TP_OP_SOFTMAX, &in, 1, &attrs, &out),
                         TP_ERR_INVALID_ARGUMENT, "softmax: axis 2 is out of range for f32[2, 3]");
    attrs.axis = -3;
    harness_assert_error(harness_infer(TP_OP_LOG_SOFTMAX, &in, 1, &attrs, &out),
                         TP_ERR_INVALID_ARGUMENT, "log_softmax: axis -3");
}
END_TEST

/* ---- layer_norm ---- */

START_TEST(layer_norm_of_a_row_has_zero_mean_and_unit_variance) {
    /* mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25 */
    tp_attrs attrs = axis_attrs(-1);
    attrs.eps = 0;
    tp_tensor *out = run_f64(TP_OP_LAYER_NORM, SHAPE(4), VALUES(1, 2, 3, 4), attrs);
    double s = sqrt(1.25);
    ASSERT_VALUES(out, 1e-15, -1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s);
    tp_tensor_release(out);
}
END_TEST

START_TEST(layer_norm_applies_weight_and_bias_per_position) {
    /* rows [1, 3] -> [-1, 1] and [5, 5] -> [0, 0]; then * [2, 3] + [10, 20] */
    tp_tensor *inputs[] = {harness_tensor(TP_F64, SHAPE(2, 2), VALUES(1, 3, 5, 5)),
                           harness_tensor(TP_F64, SHAPE(2), VALUES(2, 3)),
                           harness_tensor(TP_F64, SHAPE(2), VALUES(10, 20))};
    tp_attrs attrs = axis_attrs(1); /* default eps 1e-5: the constant row divides 0 by it */
    tp_tensor *out = harness_run_ok(TP_OP_LAYER_NORM, inputs, 3, &attrs);
    double first = 1.0 / sqrt(1.0 + 1e-5);
    ASSERT_VALUES(out, 1e-15, 10 - 2 * first, 20 + 3 * first, 10, 20);
    tp_tensor_release(out);
    for (int i = 0; i < 3; i++) tp_tensor_release(inputs[i]);
}
END_TEST

START_TEST(layer_norm_from_axis_zero_normalises_everything) {
    /* [[1, 3], [5, 7]]: mean 4, variance (9 + 1 + 1 + 9) / 4 = 5 */
    tp_attrs attrs = axis_attrs(0);
    attrs.eps = 0;
    tp_tensor *out = run_f64(TP_OP_LAYER_NORM, SHAPE(2, 2), VALUES(1, 3, 5, 7), attrs);
    double s = sqrt(5.0);
    ASSERT_VALUES(out, 1e-15, -3 / s, -1 / s, 1 / s, 3 / s);
    tp_tensor_release(out);
}
END_TEST

START_TEST(layer_norm_rejects_a_weight_of_the_wrong_shape) {
    tp_type inputs[] = {harness_type(TP_F32, SHAPE(2, 3)), harness_type(TP_F32, SHAPE(2, 3))};
    tp_type out;
    tp_attrs attrs = axis_attrs(-1);
    harness_assert_error(harness_infer(TP_OP_LAYER_NORM, inputs, 2, &attrs, &out), TP_ERR_SHAPE,
                         "layer_norm: weight f32[2, 3] must have the shape of x f32[2, 3] from "
                         "axis 1 on");
}
END_TEST

START_TEST(layer_norm_result_dtype_promotes_and_stays_floating) {
    tp_type inputs[] = {harness_type(TP_I32, SHAPE(2, 3)), harness_type(TP_I64, SHAPE(3)),
                        harness_type(TP_F64, SHAPE(3))};
    tp_type out;
    tp_attrs attrs = axis_attrs(-1);
    ck_assert_int_eq(harness_infer(TP_OP_LAYER_NORM, inputs, 2, &attrs, &out), TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(2, 3));
    ck_assert_int_eq(harness_infer(TP_OP_LAYER_NORM, inputs, 3, &attrs, &out), TP_OK);
    harness_assert_type(&out, TP_F64, SHAPE(2, 3));
}
END_TEST

/* ---- gelu, silu, softplus (expected values: Python's math module) ---- */

START_TEST(gelu_is_x_times_the_normal_cdf) {
    tp_tensor *out = run_f64(TP_OP_GELU, SHAPE(3), VALUES(0, 1, -1), (tp_attrs)TP_ATTRS_INIT);
    ASSERT_VALUES(out, 1e-15, 0, 0.8413447460685429, -0.15865525393145707);
    tp_tensor_release(out);
}
END_TEST

START_TEST(gelu_tanh_uses_the_tanh_approximation) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.approximate = TP_GELU_TANH;
    tp_tensor *out = run_f64(TP_OP_GELU, SHAPE(2), VALUES(1, -2), attrs);
    ASSERT_VALUES(out, 1e-15, 0.8411919906082768, -0.04540230591222494);
    tp_tensor_release(out);
}
END_TEST

START_TEST(gelu_rejects_an_unknown_approximation) {
    tp_type in = harness_type(TP_F32, SHAPE(2)), out;
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.approximate = (tp_gelu_approximate)5;
    harness_assert_error(harness_infer(TP_OP_GELU, &in, 1, &attrs, &out), TP_ERR_INVALID_ARGUMENT,
                         "gelu: approximate 5");
}
END_TEST

START_TEST(silu_is_x_times_sigmoid) {
    /* sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4 */
    tp_tensor *out = run_f64(TP_OP_SILU, SHAPE(3), VALUES(0, LN3, -LN3), (tp_attrs)TP_ATTRS_INIT);
    ASSERT_VALUES(out, 1e-15, 0, 0.75 * LN3, -0.25 * LN3);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softplus_is_log_one_plus_exp) {
    /* log(1 + e^0) = ln 2; log(1 + e^ln3) = ln 4; log(1 + e^-50) ~ e^-50 - e^-100 / 2 */
    tp_tensor *out =
        run_f64(TP_OP_SOFTPLUS, SHAPE(3), VALUES(0, LN3, -50), (tp_attrs)TP_ATTRS_INIT);
    ASSERT_VALUES(out, 1e-15, LN2, 2 * LN2, 1.9287498479639178e-22);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softplus_scales_by_beta_and_is_linear_past_the_threshold) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.beta = 2;
    attrs.threshold = 3;
    /* 0 -> ln 2 / 2; 1.4 -> beta x = 2.8 <= 3 -> log(1 + e^2.8) / 2; 1.6 -> 3.2 > 3 -> 1.6 */
    tp_tensor *out = run_f64(TP_OP_SOFTPLUS, SHAPE(3), VALUES(0, 1.4, 1.6), attrs);
    ASSERT_VALUES(out, 1e-15, LN2 / 2, 1.4 + log(1 + exp(-2.8)) / 2, 1.6);
    tp_tensor_release(out);
}
END_TEST

START_TEST(softplus_rejects_a_zero_beta) {
    tp_type in = harness_type(TP_F32, SHAPE(2)), out;
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.beta = 0;
    harness_assert_error(harness_infer(TP_OP_SOFTPLUS, &in, 1, &attrs, &out),
                         TP_ERR_INVALID_ARGUMENT, "softplus: beta 0 must be finite and nonzero");
}
END_TEST

START_TEST(pointwise_composites_of_integers_give_f32) {
    const tp_op_id ops[] = {TP_OP_GELU, TP_OP_SILU, TP_OP_SOFTPLUS};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        tp_type in = harness_type(TP_BOOL, SHAPE(2, 3)), out;
        ck_assert_int_eq(harness_infer(ops[i], &in, 1, NULL, &out), TP_OK);
        harness_assert_type(&out, TP_F32, SHAPE(2, 3));
        in.dtype = TP_F64;
        ck_assert_int_eq(harness_infer(ops[i], &in, 1, NULL, &out), TP_OK);
        harness_assert_type(&out, TP_F64, SHAPE(2, 3));
    }
}
END_TEST

/* ---- linear ---- */

START_TEST(linear_is_x_times_weight_transposed_plus_bias) {
    /* x [[1, 2]], weight [[1, 0], [0, 1], [1, 1]], bias [10, 20, 30] -> [[11, 22, 33]] */
    tp_tensor *inputs[] = {harness_tensor(TP_F32, SHAPE(1, 2), (const float[]){1, 2}),
                           harness_tensor(TP_F32, SHAPE(3, 2), (const float[]){1, 0, 0, 1, 1, 1}),
                           harness_tensor(TP_F32, SHAPE(3), (const float[]){10, 20, 30})};
    tp_tensor *out = harness_run_ok(TP_OP_LINEAR, inputs, 3, NULL);
    harness_assert_shape(out, TP_F32, SHAPE(1, 3));
    ASSERT_VALUES(out, 0, 11, 22, 33);
    tp_tensor_release(out);
    for (int i = 0; i < 3; i++) tp_tensor_release(inputs[i]);
}
END_TEST

START_TEST(linear_of_a_vector_without_bias_in_integers) {
    tp_tensor *inputs[] = {harness_tensor(TP_I32, SHAPE(2), (const int32_t[]){3, -2}),
                           harness_tensor(TP_I32, SHAPE(2, 2), (const int32_t[]){1, 1, 2, 5})};
    tp_tensor *out = harness_run_ok(TP_OP_LINEAR, inputs, 2, NULL);
    harness_assert_shape(out, TP_I32, SHAPE(2));
    ASSERT_VALUES(out, 0, 1, -4);
    tp_tensor_release(out);
    for (int i = 0; i < 2; i++) tp_tensor_release(inputs[i]);
}
END_TEST

START_TEST(linear_rejects_mismatched_features_and_bias) {
    tp_type inputs[] = {harness_type(TP_F32, SHAPE(4, 3)), harness_type(TP_F32, SHAPE(5, 2)),
                        harness_type(TP_F32, SHAPE(5))};
    tp_type out;
    harness_assert_error(harness_infer(TP_OP_LINEAR, inputs, 2, NULL, &out), TP_ERR_SHAPE,
                         "linear: x f32[4, 3], weight f32[5, 2], bias none: x's last dimension");
    inputs[1] = harness_type(TP_F32, SHAPE(5, 3));
    inputs[2] = harness_type(TP_F32, SHAPE(4));
    harness_assert_error(harness_infer(TP_OP_LINEAR, inputs, 3, NULL, &out), TP_ERR_SHAPE,
                         "bias f32[4]: bias must be 1-D [out_features]");
    inputs[1] = harness_type(TP_F32, SHAPE(3));
    harness_assert_error(harness_infer(TP_OP_LINEAR, inputs, 2, NULL, &out), TP_ERR_SHAPE,
                         "weight must be 2-D");
}
END_TEST

START_TEST(linear_follows_matmul_dtype_rules) {
    tp_type inputs[] = {harness_type(TP_I64, SHAPE(2, 3)), harness_type(TP_F32, SHAPE(4, 3)),
                        harness_type(TP_F64, SHAPE(4))};
    tp_type out;
    ck_assert_int_eq(harness_infer(TP_OP_LINEAR, inputs, 2, NULL, &out), TP_OK);
    harness_assert_type(&out, TP_F32, SHAPE(2, 4));
    ck_assert_int_eq(harness_infer(TP_OP_LINEAR, inputs, 3, NULL, &out), TP_OK);
    harness_assert_type(&out, TP_F64, SHAPE(2, 4));
    inputs[0].dtype = inputs[1].dtype = TP_BOOL;
    harness_assert_error(harness_infer(TP_OP_LINEAR, inputs, 2, NULL, &out), TP_ERR_DTYPE,
                         "bool x bool");
}
END_TEST

/* ---- decompositions ---- */

/* Deterministic inputs: uniform in [-4, 4) for floats (integers truncate to
 * -4..3; bool is nonzero). */
static double random_value(int64_t index, void *user) {
    uint64_t *state = user;
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return 8 * ((double)(*state >> 11) / 9007199254740992.0) - 4;
}

static tp_tensor *random_tensor(const tp_type *type, uint64_t *state) {
    return harness_generate(type->dtype, type->ndim, type->dims, random_value, state);
}

/* A graph with one input per type whose output is op(inputs): the composite
 * node itself, or (decomposed) what the op's decomposition builds. */
static tp_graph *single_op_graph(tp_op_id id, const tp_type *types, int count,
                                 const tp_attrs *attrs, bool decomposed) {
    const tp_op_def *op = tp_op_get(id);
    tp_graph *graph = NULL;
    tp_value_id inputs[3], out;
    ck_assert_int_eq(tp_graph_create(decomposed ? "decomposed" : "composite", &graph), TP_OK);
    for (int i = 0; i < count; i++) {
        char name[8] = {'x', (char)('0' + i), 0};
        ck_assert_msg(tp_graph_add_input(graph, name, &types[i], &inputs[i]) == TP_OK, "%s",
                      tp_last_error());
    }
    tp_status status = decomposed
                           ? op->decompose(graph, inputs, count, attrs, &out)
                           : tp_graph_add_node(graph, op->name, inputs, count, attrs, NULL, &out);
    ck_assert_msg(status == TP_OK, "%s: %s", op->name, tp_last_error());
    ck_assert_int_eq(tp_graph_set_outputs(graph, &out, 1), TP_OK);
    ck_assert_msg(tp_graph_verify(graph) == TP_OK, "%s", tp_last_error());
    return graph;
}

static void assert_no_composite_nodes(const tp_graph *graph, const char *op_name) {
    for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++) {
        const char *node_op = tp_graph_value_op(graph, v);
        if (!node_op) continue;
        ck_assert_msg(tp_op_find(node_op)->kind != TP_KIND_COMPOSITE,
                      "the decomposition of %s contains %s", op_name, node_op);
    }
}

/* Runs the composite and its decomposition on the same random inputs and
 * compares the results within `tolerance` (absolute + relative). */
static void assert_decomposition_matches(tp_op_id id, const tp_type *types, int count,
                                         const tp_attrs *attrs, double tolerance) {
    tp_graph *composite = single_op_graph(id, types, count, attrs, false);
    tp_graph *decomposed = single_op_graph(id, types, count, attrs, true);
    const char *op_name = tp_op_get(id)->name;
    assert_no_composite_nodes(decomposed, op_name);
    tp_type want = *tp_graph_value_type(composite, tp_graph_output(composite, 0));
    tp_type got = *tp_graph_value_type(decomposed, tp_graph_output(decomposed, 0));
    bool same_type = want.dtype == got.dtype && want.ndim == got.ndim &&
                     memcmp(want.dims, got.dims, sizeof(int64_t) * (size_t)want.ndim) == 0;
    ck_assert_msg(same_type, "%s: the decomposition's type differs from the composite's", op_name);

    uint64_t state = 0x9e3779b97f4a7c15ull;
    tp_tensor *inputs[3], *expected = NULL, *actual = NULL;
    for (int i = 0; i < count; i++) inputs[i] = random_tensor(&types[i], &state);
    ck_assert_msg(tp_graph_run(composite, inputs, count, &expected) == TP_OK, "%s",
                  tp_last_error());
    ck_assert_msg(tp_graph_run(decomposed, inputs, count, &actual) == TP_OK, "%s", tp_last_error());
    ck_assert_int_eq(actual->dtype, expected->dtype);
    ck_assert_int_eq(actual->numel, expected->numel);
    for (int64_t i = 0; i < expected->numel; i++) {
        double a = tp_tensor_get_f64(expected, i), b = tp_tensor_get_f64(actual, i);
        ck_assert_msg(fabs(a - b) <= tolerance * (1 + fabs(a)),
                      "%s element %lld: composite %.9g, decomposition %.9g", op_name, (long long)i,
                      a, b);
    }
    tp_tensor_release(expected);
    tp_tensor_release(actual);
    for (int i = 0; i < count; i++) tp_tensor_release(inputs[i]);
    tp_graph_destroy(composite);
    tp_graph_destroy(decomposed);
}

START_TEST(softmax_decomposition_matches) {
    tp_type f32 = harness_type(TP_F32, SHAPE(4, 7)), f64 = harness_type(TP_F64, SHAPE(3, 4, 5)),
            i32 = harness_type(TP_I32, SHAPE(2, 3));
    for (int64_t axis = -2; axis < 2; axis++) {
        tp_attrs attrs = axis_attrs(axis);
        assert_decomposition_matches(TP_OP_SOFTMAX, &f32, 1, &attrs, F32_TOLERANCE);
        assert_decomposition_matches(TP_OP_LOG_SOFTMAX, &f32, 1, &attrs, F32_TOLERANCE);
    }
    tp_attrs middle = axis_attrs(1);
    assert_decomposition_matches(TP_OP_SOFTMAX, &f64, 1, &middle, F64_TOLERANCE);
    assert_decomposition_matches(TP_OP_LOG_SOFTMAX, &f64, 1, &middle, F64_TOLERANCE);
    assert_decomposition_matches(TP_OP_SOFTMAX, &i32, 1, &middle, F32_TOLERANCE);
    assert_decomposition_matches(TP_OP_LOG_SOFTMAX, &i32, 1, &middle, F32_TOLERANCE);
}
END_TEST

START_TEST(layer_norm_decomposition_matches) {
    tp_type with_params[] = {harness_type(TP_F32, SHAPE(4, 6)), harness_type(TP_F32, SHAPE(6)),
                             harness_type(TP_F32, SHAPE(6))};
    tp_attrs last = axis_attrs(-1);
    assert_decomposition_matches(TP_OP_LAYER_NORM, with_params, 3, &last, F32_TOLERANCE);
    tp_type three_d = harness_type(TP_F32, SHAPE(2, 3, 4));
    tp_attrs from_one = axis_attrs(1);
    from_one.eps = 1e-3;
    assert_decomposition_matches(TP_OP_LAYER_NORM, &three_d, 1, &from_one, F32_TOLERANCE);
    tp_type f64_weight[] = {harness_type(TP_F64, SHAPE(3, 5)), harness_type(TP_F64, SHAPE(5))};
    assert_decomposition_matches(TP_OP_LAYER_NORM, f64_weight, 2, &last, F64_TOLERANCE);
    tp_type integers[] = {harness_type(TP_I32, SHAPE(3, 4)), harness_type(TP_I64, SHAPE(4)),
                          harness_type(TP_F64, SHAPE(4))};
    assert_decomposition_matches(TP_OP_LAYER_NORM, integers, 2, &last, F32_TOLERANCE);
    assert_decomposition_matches(TP_OP_LAYER_NORM, integers, 3, &last, F32_TOLERANCE);
}
END_TEST

START_TEST(pointwise_composite_decompositions_match) {
    tp_type f32 = harness_type(TP_F32, SHAPE(8, 16)), f64 = harness_type(TP_F64, SHAPE(50)),
            i32 = harness_type(TP_I32, SHAPE(11));
    tp_attrs plain = TP_ATTRS_INIT, tanh_gelu = TP_ATTRS_INIT, steep = TP_ATTRS_INIT;
    tanh_gelu.approximate = TP_GELU_TANH;
    steep.beta = 2;
    steep.threshold = 5;
    const tp_type *types[] = {&f32, &f64, &i32};
    const double tolerances[] = {F32_TOLERANCE, F64_TOLERANCE, F32_TOLERANCE};
    for (int i = 0; i < 3; i++) {
        assert_decomposition_matches(TP_OP_GELU, types[i], 1, &plain, tolerances[i]);
        assert_decomposition_matches(TP_OP_GELU, types[i], 1, &tanh_gelu, tolerances[i]);
        assert_decomposition_matches(TP_OP_SILU, types[i], 1, &plain, tolerances[i]);
        assert_decomposition_matches(TP_OP_SOFTPLUS, types[i], 1, &plain, tolerances[i]);
        assert_decomposition_matches(TP_OP_SOFTPLUS, types[i], 1, &steep, tolerances[i]);
    }
}
END_TEST

START_TEST(linear_decomposition_matches) {
    tp_type batch[] = {harness_type(TP_F32, SHAPE(5, 3)), harness_type(TP_F32, SHAPE(4, 3)),
                       harness_type(TP_F32, SHAPE(4))};
    tp_type three_d[] = {harness_type(TP_F64, SHAPE(2, 5, 3)), harness_type(TP_F64, SHAPE(4, 3)),
                         harness_type(TP_F64, SHAPE(4))};
    tp_type vector[] = {harness_type(TP_F32, SHAPE(3)), harness_type(TP_F32, SHAPE(2, 3))};
    tp_type integers[] = {harness_type(TP_I32, SHAPE(3, 2)), harness_type(TP_I32, SHAPE(4, 2)),
                          harness_type(TP_I64, SHAPE(4))};
    assert_decomposition_matches(TP_OP_LINEAR, batch, 3, NULL, F32_TOLERANCE);
    assert_decomposition_matches(TP_OP_LINEAR, batch, 2, NULL, F32_TOLERANCE);
    assert_decomposition_matches(TP_OP_LINEAR, three_d, 3, NULL, F64_TOLERANCE);
    assert_decomposition_matches(TP_OP_LINEAR, vector, 2, NULL, F32_TOLERANCE);
    assert_decomposition_matches(TP_OP_LINEAR, integers, 3, NULL, 0);
}
END_TEST

START_TEST(decomposition_of_a_symbolic_batch_runs_at_any_size) {
    tp_graph *graph = NULL;
    int64_t n;
    tp_value_id x, out;
    ck_assert_int_eq(tp_graph_create("symbolic", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_symbol(graph, "n", &n), TP_OK);
    tp_type type = harness_type(TP_F32, SHAPE(n, 4));
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_attrs attrs = axis_attrs(-1);
    ck_assert_msg(tp_op_get(TP_OP_SOFTMAX)->decompose(graph, &x, 1, &attrs, &out) == TP_OK, "%s",
                  tp_last_error());
    harness_assert_type(tp_graph_value_type(graph, out), TP_F32, SHAPE(n, 4));
    ck_assert_int_eq(tp_graph_set_outputs(graph, &out, 1), TP_OK);
    tp_tensor *in =
        harness_tensor(TP_F32, SHAPE(3, 4), (const float[]){0, 0, 0, 0, 1, 1, 1, 1, 5, 5, 5, 5});
    tp_tensor *result = NULL;
    ck_assert_msg(tp_graph_run(graph, &in, 1, &result) == TP_OK, "%s", tp_last_error());
    harness_assert_shape(result, TP_F32, SHAPE(3, 4));
    for (int64_t i = 0; i < 12; i++)
        ck_assert_double_eq_tol(tp_tensor_get_f64(result, i), 0.25, 1e-7);
    tp_tensor_release(result);
    tp_tensor_release(in);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(every_composite_has_a_decomposition) {
    for (int id = 0; id < TP_OP_COUNT; id++) {
        const tp_op_def *op = tp_op_get((tp_op_id)id);
        if (op->kind == TP_KIND_COMPOSITE)
            ck_assert_msg(op->decompose != NULL, "%s has no decomposition", op->name);
    }
}
END_TEST

TP_TEST_SUITE(composite) {
    Suite *suite = suite_create("ops.composite");
    TCase *softmax = tcase_create("softmax");
    tcase_add_test(softmax, softmax_of_logs_is_the_normalised_values);
    tcase_add_test(softmax, softmax_along_the_first_axis);
    tcase_add_test(softmax, softmax_of_large_values_does_not_overflow);
    tcase_add_test(softmax, softmax_of_integers_gives_f32);
    tcase_add_test(softmax, log_softmax_of_logs_is_the_log_of_the_normalised_values);
    tcase_add_test(softmax, log_softmax_of_large_values_is_finite);
    tcase_add_test(softmax, softmax_rejects_an_out_of_range_axis);
    suite_add_tcase(suite, softmax);

    TCase *layer_norm = tcase_create("layer_norm");
    tcase_add_test(layer_norm, layer_norm_of_a_row_has_zero_mean_and_unit_variance);
    tcase_add_test(layer_norm, layer_norm_applies_weight_and_bias_per_position);
    tcase_add_test(layer_norm, layer_norm_from_axis_zero_normalises_everything);
    tcase_add_test(layer_norm, layer_norm_rejects_a_weight_of_the_wrong_shape);
    tcase_add_test(layer_norm, layer_norm_result_dtype_promotes_and_stays_floating);
    suite_add_tcase(suite, layer_norm);

    TCase *pointwise = tcase_create("pointwise");
    tcase_add_test(pointwise, gelu_is_x_times_the_normal_cdf);
    tcase_add_test(pointwise, gelu_tanh_uses_the_tanh_approximation);
    tcase_add_test(pointwise, gelu_rejects_an_unknown_approximation);
    tcase_add_test(pointwise, silu_is_x_times_sigmoid);
    tcase_add_test(pointwise, softplus_is_log_one_plus_exp);
    tcase_add_test(pointwise, softplus_scales_by_beta_and_is_linear_past_the_threshold);
    tcase_add_test(pointwise, softplus_rejects_a_zero_beta);
    tcase_add_test(pointwise, pointwise_composites_of_integers_give_f32);
    suite_add_tcase(suite, pointwise);

    TCase *linear = tcase_create("linear");
    tcase_add_test(linear, linear_is_x_times_weight_transposed_plus_bias);
    tcase_add_test(linear, linear_of_a_vector_without_bias_in_integers);
    tcase_add_test(linear, linear_rejects_mismatched_features_and_bias);
    tcase_add_test(linear, linear_follows_matmul_dtype_rules);
    suite_add_tcase(suite, linear);

    TCase *decompose = tcase_create("decompose");
    tcase_add_test(decompose, every_composite_has_a_decomposition);
    tcase_add_test(decompose, softmax_decomposition_matches);
    tcase_add_test(decompose, layer_norm_decomposition_matches);
    tcase_add_test(decompose, pointwise_composite_decompositions_match);
    tcase_add_test(decompose, linear_decomposition_matches);
    tcase_add_test(decompose, decomposition_of_a_symbolic_batch_runs_at_any_size);
    suite_add_tcase(suite, decompose);
    return suite;
}
