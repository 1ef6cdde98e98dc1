/* Every pointwise op on every dtype it accepts (one graph per dtype, one
 * output per op, so each dtype is one OpenCL program), mixed-dtype
 * promotion with broadcasting, where, and casts between all dtypes with the
 * edge values the reference defines (NaN, infinities, out-of-range). */
#include <check.h>
#include <math.h>

#include "ocl_harness.h"
#include "tp_test.h"

static const char *const unary_ops[] = {
    "neg",  "abs", "exp",   "log",  "sqrt", "rsqrt",       "sin",  "cos",  "tanh",    "sigmoid",
    "relu", "erf", "floor", "ceil", "sign", "logical_not", "gelu", "silu", "softplus"};
static const char *const binary_ops[] = {"add",     "sub",     "mul", "div",         "pow",
                                         "maximum", "minimum", "lt",  "le",          "gt",
                                         "ge",      "eq",      "ne",  "logical_and", "logical_or"};
static const tp_dtype all_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};

/* Every unary op the op table defines for `dtype`, on an odd-sized input. */
static void check_unary(tp_dtype dtype) {
    tp_graph *graph = oclt_graph("unary");
    const int64_t dims[] = {3, 37};
    tp_value_id x = oclt_input(graph, "x", dtype, 2, dims);
    tp_value_id outputs[32];
    int count = 0;
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++) {
        tp_attrs attrs = TP_ATTRS_INIT;
        if (unary_ops[i][0] == 'g') attrs.approximate = (i & 1) ? TP_GELU_TANH : TP_GELU_NONE;
        tp_value_id y = oclt_try_node(graph, unary_ops[i], &x, 1, &attrs);
        if (y != TP_NO_VALUE) outputs[count++] = y;
    }
    tp_attrs tanh_gelu = TP_ATTRS_INIT;
    tanh_gelu.approximate = TP_GELU_TANH;
    outputs[count++] = oclt_node(graph, "gelu", &x, 1, &tanh_gelu);
    oclt_outputs(graph, outputs, count);
    oclt_check_graph(graph, 11 + (uint32_t)dtype);
    tp_graph_destroy(graph);
}

START_TEST(unary_ops_match_eager_on_every_dtype) {
    check_unary(all_dtypes[_i]);
}
END_TEST

/* Every binary op on same-dtype operands, one of them broadcast. */
static void check_binary(tp_dtype dtype) {
    tp_graph *graph = oclt_graph("binary");
    const int64_t a_dims[] = {5, 1, 7}, b_dims[] = {4, 7};
    tp_value_id a = oclt_input(graph, "a", dtype, 3, a_dims);
    tp_value_id b = oclt_input(graph, "b", dtype, 2, b_dims);
    tp_value_id outputs[32];
    int count = 0;
    for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++) {
        tp_value_id operands[2] = {a, b};
        tp_value_id y = oclt_try_node(graph, binary_ops[i], operands, 2, NULL);
        if (y != TP_NO_VALUE) outputs[count++] = y;
    }
    oclt_outputs(graph, outputs, count);
    oclt_check_graph(graph, 23 + (uint32_t)dtype);
    tp_graph_destroy(graph);
}

START_TEST(binary_ops_match_eager_on_every_dtype) {
    check_binary(all_dtypes[_i]);
}
END_TEST

/* Mixed dtypes promote as tensor.h says (i32+f32 -> f32, bool+i64 -> i64,
 * i64+f64 -> f64, i32/i32 -> f32, comparisons of mixed dtypes). */
START_TEST(mixed_dtypes_promote_like_eager) {
    tp_graph *graph = oclt_graph("mixed");
    const int64_t dims[] = {9}, row[] = {2, 1};
    tp_value_id f = oclt_input(graph, "f", TP_F32, 1, dims);
    tp_value_id d = oclt_input(graph, "d", TP_F64, 2, row);
    tp_value_id i = oclt_input(graph, "i", TP_I32, 1, dims);
    tp_value_id l = oclt_input(graph, "l", TP_I64, 2, row);
    tp_value_id b = oclt_input(graph, "b", TP_BOOL, 1, dims);
    tp_value_id outputs[] = {
        oclt_binary(graph, "add", i, f),     oclt_binary(graph, "mul", b, l),
        oclt_binary(graph, "sub", l, d),     oclt_binary(graph, "div", i, i),
        oclt_binary(graph, "div", b, l),     oclt_binary(graph, "lt", i, d),
        oclt_binary(graph, "maximum", b, i), oclt_binary(graph, "pow", l, i),
        oclt_binary(graph, "eq", f, l),      oclt_binary(graph, "minimum", b, b),
    };
    oclt_outputs(graph, outputs, (int)(sizeof outputs / sizeof outputs[0]));
    oclt_check_graph(graph, 5);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(where_picks_by_any_condition_dtype) {
    tp_graph *graph = oclt_graph("where");
    const int64_t dims[] = {3, 4}, col[] = {3, 1};
    tp_value_id c = oclt_input(graph, "c", TP_BOOL, 2, dims);
    tp_value_id n = oclt_input(graph, "n", TP_I32, 2, col);
    tp_value_id a = oclt_input(graph, "a", TP_F32, 2, dims);
    tp_value_id b = oclt_input(graph, "b", TP_I64, 1, &dims[1]);
    tp_value_id first[3] = {c, a, b}, second[3] = {n, b, b};
    tp_value_id outputs[] = {oclt_node(graph, "where", first, 3, NULL),
                             oclt_node(graph, "where", second, 3, NULL)};
    oclt_outputs(graph, outputs, 2);
    oclt_check_graph(graph, 9);
    tp_graph_destroy(graph);
}
END_TEST

/* Casts from `from` to every dtype; the input holds NaN, infinities and
 * values outside i32/i64 (floats saturate, NaN gives 0). */
static void check_casts(tp_dtype from) {
    tp_graph *graph = oclt_graph("casts");
    const int64_t dims[] = {12};
    tp_value_id x = oclt_input(graph, "x", from, 1, dims);
    tp_value_id outputs[5];
    for (int to = 0; to < 5; to++) {
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.dtype = all_dtypes[to];
        outputs[to] = oclt_node(graph, "cast", &x, 1, &attrs);
    }
    oclt_outputs(graph, outputs, 5);
    const double values[12] = {NAN,   INFINITY, -INFINITY, 3e9, -3e9, 1e19,
                               -1e19, 2.75,     -2.75,     0.0, 1.0,  -0.5};
    tp_tensor *input = oclt_random(from, 1, dims, 3);
    if (tp_dtype_is_float(from)) {
        void *data = tp_tensor_data_mut(input);
        for (int k = 0; k < 12; k++) {
            if (from == TP_F32)
                ((float *)data)[k] = (float)values[k];
            else
                ((double *)data)[k] = values[k];
        }
    }
    oclt_check_against_eager(graph, &input, 1, NULL, 0);
    tp_tensor_release(input);
    tp_graph_destroy(graph);
}

START_TEST(casts_between_all_dtypes_match_eager) {
    check_casts(all_dtypes[_i]);
}
END_TEST

/* NaN: maximum/minimum propagate it, sign keeps it, relu keeps it. */
START_TEST(nan_rules_match_eager) {
    tp_graph *graph = oclt_graph("nans");
    const int64_t dims[] = {6};
    tp_value_id a = oclt_input(graph, "a", TP_F32, 1, dims);
    tp_value_id b = oclt_input(graph, "b", TP_F32, 1, dims);
    tp_value_id outputs[] = {oclt_binary(graph, "maximum", a, b),
                             oclt_binary(graph, "minimum", a, b), oclt_unary(graph, "sign", a),
                             oclt_unary(graph, "relu", a), oclt_unary(graph, "sigmoid", a)};
    oclt_outputs(graph, outputs, 5);
    const float a_values[6] = {NAN, 1.0f, NAN, -0.0f, -1000.0f, 1000.0f};
    const float b_values[6] = {1.0f, NAN, NAN, 0.0f, 2.0f, -2.0f};
    tp_tensor *inputs[2] = {NULL, NULL};
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, dims, a_values, &inputs[0]), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, dims, b_values, &inputs[1]), TP_OK);
    oclt_check_against_eager(graph, inputs, 2, NULL, 0);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(opencl_pointwise) {
    oclt_environment();
    Suite *suite = suite_create("opencl_pointwise");
    TCase *tc = tcase_create("pointwise");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, unary_ops_match_eager_on_every_dtype, 0, 5);
    tcase_add_loop_test(tc, binary_ops_match_eager_on_every_dtype, 0, 5);
    tcase_add_test(tc, mixed_dtypes_promote_like_eager);
    tcase_add_test(tc, where_picks_by_any_condition_dtype);
    tcase_add_loop_test(tc, casts_between_all_dtypes_match_eager, 0, 5);
    tcase_add_test(tc, nan_rules_match_eager);
    suite_add_tcase(suite, tc);
    return suite;
}
