/* Reductions (work-group and per-item paths, every dtype, axes, keepdim,
 * NaN, empty), matmul (tiled: odd sizes, 1-D operands, broadcast batches,
 * integers, pointwise epilogue) and linear, compared with eager. */
#include <check.h>
#include <math.h>

#include "ocl_harness.h"
#include "tp_test.h"

static const tp_dtype all_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};

static tp_value_id reduce(tp_graph *graph, const char *op, tp_value_id x, const int64_t *axes,
                          int naxes, bool keepdim) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = naxes;
    for (int i = 0; i < naxes; i++) attrs.axes[i] = axes[i];
    attrs.keepdim = keepdim;
    if (op[0] == 'a') attrs.axis = naxes ? axes[0] : 0;
    return oclt_node(graph, op, &x, 1, &attrs);
}

/* sum mean max min argmax over: everything, the long last axis (one
 * work-group per output), a middle axis of many short rows (one work-item
 * per output), two axes with keepdim. */
static void check_reductions(tp_dtype dtype) {
    tp_graph *graph = oclt_graph("reductions");
    const int64_t dims[] = {6, 5, 300};
    tp_value_id x = oclt_input(graph, "x", dtype, 3, dims);
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    const int64_t last[] = {-1}, middle[] = {1}, two[] = {0, 2};
    tp_value_id outputs[24];
    int count = 0;
    for (int i = 0; i < 4; i++) {
        outputs[count++] = reduce(graph, ops[i], x, NULL, 0, false);
        outputs[count++] = reduce(graph, ops[i], x, last, 1, false);
        outputs[count++] = reduce(graph, ops[i], x, middle, 1, true);
        outputs[count++] = reduce(graph, ops[i], x, two, 2, true);
    }
    outputs[count++] = reduce(graph, "argmax", x, last, 1, false);
    outputs[count++] = reduce(graph, "argmax", x, middle, 1, true);
    oclt_outputs(graph, outputs, count);
    oclt_check_graph(graph, 31 + (uint32_t)dtype);
    tp_graph_destroy(graph);
}

START_TEST(reductions_match_eager_on_every_dtype) {
    check_reductions(all_dtypes[_i]);
}
END_TEST

/* max/min give NaN when a row has one; argmax gives the first NaN; sum of
 * an empty axis is 0 and mean NaN. */
START_TEST(reduction_nan_and_empty_rules_match_eager) {
    tp_graph *graph = oclt_graph("nan_rows");
    const int64_t dims[] = {3, 4}, empty_dims[] = {2, 0};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 2, dims);
    tp_value_id e = oclt_input(graph, "e", TP_F32, 2, empty_dims);
    const int64_t last[] = {1};
    tp_value_id outputs[] = {
        reduce(graph, "max", x, last, 1, false), reduce(graph, "min", x, last, 1, false),
        reduce(graph, "argmax", x, last, 1, false), reduce(graph, "sum", e, last, 1, false),
        reduce(graph, "mean", e, last, 1, false)};
    oclt_outputs(graph, outputs, 5);
    const float values[12] = {1, NAN, 3, NAN, 5, 7, 7, 2, -INFINITY, -INFINITY, -INFINITY, -1};
    tp_tensor *inputs[2] = {NULL, NULL};
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 2, dims, values, &inputs[0]), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, empty_dims, &inputs[1]), TP_OK);
    oclt_check_against_eager(graph, inputs, 2, NULL, 0);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}
END_TEST

/* A sum over 100k elements (one work-group, long strided loop). */
START_TEST(large_sum_matches_eager) {
    tp_graph *graph = oclt_graph("large_sum");
    const int64_t dims[] = {100003};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 1, dims);
    tp_value_id y = oclt_unary(graph, "exp", x);
    tp_value_id outputs[] = {reduce(graph, "mean", y, NULL, 0, false),
                             reduce(graph, "max", x, NULL, 0, false)};
    oclt_outputs(graph, outputs, 2);
    oclt_check_graph(graph, 8);
    tp_graph_destroy(graph);
}
END_TEST

static void check_matmul(tp_dtype dtype) {
    tp_graph *graph = oclt_graph("matmuls");
    const int64_t a_dims[] = {33, 47}, b_dims[] = {47, 29}, v_dims[] = {47};
    const int64_t batch_a[] = {2, 1, 5, 17}, batch_b[] = {3, 17, 6};
    tp_value_id a = oclt_input(graph, "a", dtype, 2, a_dims);
    tp_value_id b = oclt_input(graph, "b", dtype, 2, b_dims);
    tp_value_id v = oclt_input(graph, "v", dtype, 1, v_dims);
    tp_value_id p = oclt_input(graph, "p", dtype, 4, batch_a);
    tp_value_id q = oclt_input(graph, "q", dtype, 3, batch_b);
    tp_value_id outputs[] = {oclt_binary(graph, "matmul", a, b), oclt_binary(graph, "matmul", v, b),
                             oclt_binary(graph, "matmul", a, v), oclt_binary(graph, "matmul", v, v),
                             oclt_binary(graph, "matmul", p, q)};
    oclt_outputs(graph, outputs, 5);
    oclt_check_graph(graph, 41 + (uint32_t)dtype);
    tp_graph_destroy(graph);
}

START_TEST(matmul_matches_eager_on_numeric_dtypes) {
    check_matmul(all_dtypes[_i]);
}
END_TEST

/* matmul + bias + relu: the epilogue is fused into the tiled kernel. */
START_TEST(matmul_epilogue_matches_eager) {
    tp_graph *graph = oclt_graph("epilogue");
    const int64_t x_dims[] = {65, 40}, w_dims[] = {40, 70}, b_dims[] = {70};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 2, x_dims);
    tp_value_id w = oclt_input(graph, "w", TP_F32, 2, w_dims);
    tp_value_id b = oclt_input(graph, "b", TP_F32, 1, b_dims);
    tp_value_id product = oclt_binary(graph, "matmul", x, w);
    tp_value_id shifted = oclt_binary(graph, "add", product, b);
    tp_value_id y = oclt_unary(graph, "relu", shifted);
    oclt_outputs(graph, &y, 1);
    oclt_check_graph(graph, 4);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(linear_with_and_without_bias_matches_eager) {
    tp_graph *graph = oclt_graph("linears");
    const int64_t x_dims[] = {3, 5, 19}, w_dims[] = {23, 19}, b_dims[] = {23};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 3, x_dims);
    tp_value_id w = oclt_input(graph, "w", TP_F32, 2, w_dims);
    tp_value_id b = oclt_input(graph, "b", TP_F32, 1, b_dims);
    tp_value_id xi = oclt_input(graph, "xi", TP_I32, 3, x_dims);
    tp_value_id wi = oclt_input(graph, "wi", TP_I64, 2, w_dims);
    tp_value_id with_bias[3] = {x, w, b}, ints[3] = {xi, wi, b};
    tp_value_id outputs[] = {oclt_node(graph, "linear", with_bias, 3, NULL),
                             oclt_node(graph, "linear", with_bias, 2, NULL),
                             oclt_node(graph, "linear", ints, 2, NULL),
                             oclt_node(graph, "linear", ints, 3, NULL)};
    oclt_outputs(graph, outputs, 4);
    oclt_check_graph(graph, 12);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(opencl_reduce_matmul) {
    oclt_environment();
    Suite *suite = suite_create("opencl_reduce_matmul");
    TCase *tc = tcase_create("reduce_matmul");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, reductions_match_eager_on_every_dtype, 0, 5);
    tcase_add_test(tc, reduction_nan_and_empty_rules_match_eager);
    tcase_add_test(tc, large_sum_matches_eager);
    tcase_add_loop_test(tc, matmul_matches_eager_on_numeric_dtypes, 0, 4);
    tcase_add_test(tc, matmul_epilogue_matches_eager);
    tcase_add_test(tc, linear_with_and_without_bias_matches_eager);
    suite_add_tcase(suite, tc);
    return suite;
}
