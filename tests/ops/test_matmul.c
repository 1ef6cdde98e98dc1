/* matmul through the eager API: numpy.matmul shapes (1-D operands, batch
 * broadcasting), dtypes, empty inner dimension, and error messages. Products
 * are small enough to check by hand. */
#include "eager_harness.h"

START_TEST(matrix_times_matrix) {
    /* [[1 2 3] [4 5 6]] @ [[1 0] [0 1] [1 1]] = [[4 5] [10 11]] */
    tp_tensor *a = T(TP_F32, DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    tp_tensor *b = T(TP_F32, DIMS(3, 2), 1, 0, 0, 1, 1, 1);
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, b));
    harness_assert_shape(y, TP_F32, SHAPE(2, 2));
    ASSERT_VALUES(y, 0, 4, 5, 10, 11);
}
END_TEST

START_TEST(vector_dot_vector_is_0d) {
    tp_tensor *y =
        eager_ok(tp_matmul(ctx, T(TP_I64, DIMS(3), 1, 2, 3), T(TP_I64, DIMS(3), 4, 5, 6)));
    harness_assert_shape(y, TP_I64, 0, NULL);
    ASSERT_VALUES(y, 0, 32);
}
END_TEST

START_TEST(vector_times_matrix_drops_the_prepended_dimension) {
    tp_tensor *b = T(TP_F64, DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    tp_tensor *y = eager_ok(tp_matmul(ctx, T(TP_F64, DIMS(2), 1, -1), b));
    harness_assert_shape(y, TP_F64, SHAPE(3));
    ASSERT_VALUES(y, 0, -3, -3, -3);
}
END_TEST

START_TEST(matrix_times_vector_drops_the_appended_dimension) {
    tp_tensor *a = T(TP_F64, DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, T(TP_F64, DIMS(3), 1, 0, -1)));
    harness_assert_shape(y, TP_F64, SHAPE(2));
    ASSERT_VALUES(y, 0, -2, -2);
}
END_TEST

START_TEST(batch_dimensions_broadcast) {
    /* a: [2, 1, 1, 2] holds rows [1 0] and [0 1]; b: [3, 2, 1] holds
     * columns [c, 10 c] for c = 1, 2, 3. y[i, j] = a_i . b_j. */
    tp_tensor *a = T(TP_I32, DIMS(2, 1, 1, 2), 1, 0, 0, 1);
    tp_tensor *b = T(TP_I32, DIMS(3, 2, 1), 1, 10, 2, 20, 3, 30);
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, b));
    harness_assert_shape(y, TP_I32, SHAPE(2, 3, 1, 1));
    ASSERT_VALUES(y, 0, 1, 2, 3, 10, 20, 30);
}
END_TEST

START_TEST(batched_matrix_times_vector) {
    tp_tensor *a = T(TP_F32, DIMS(2, 2, 2), 1, 0, 0, 1, 2, 0, 0, 2);
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, T(TP_F32, DIMS(2), 3, 4)));
    harness_assert_shape(y, TP_F32, SHAPE(2, 2));
    ASSERT_VALUES(y, 0, 3, 4, 6, 8);
}
END_TEST

START_TEST(empty_inner_dimension_gives_zeros) {
    tp_tensor *a = eager_values(TP_F32, SHAPE(2, 0), NULL);
    tp_tensor *b = eager_values(TP_F32, SHAPE(0, 3), NULL);
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, b));
    harness_assert_shape(y, TP_F32, SHAPE(2, 3));
    ASSERT_VALUES(y, 0, 0, 0, 0, 0, 0, 0);
}
END_TEST

START_TEST(mixed_dtypes_promote) {
    tp_tensor *y =
        eager_ok(tp_matmul(ctx, T(TP_I32, DIMS(1, 2), 1, 2), T(TP_F32, DIMS(2, 1), 0.5, 0.25)));
    harness_assert_shape(y, TP_F32, SHAPE(1, 1));
    ASSERT_VALUES(y, 0, 1);
}
END_TEST

START_TEST(integer_products_wrap_around) {
    tp_tensor *y = eager_ok(tp_matmul(ctx, T(TP_I32, DIMS(1), 65536), T(TP_I32, DIMS(1), 65536)));
    ASSERT_VALUES(y, 0, 0); /* 2^32 mod 2^32 */
}
END_TEST

START_TEST(inner_dimension_mismatch_names_both_shapes) {
    tp_tensor *a = eager_values(TP_F32, SHAPE(2, 3), VALUES(0, 0, 0, 0, 0, 0));
    tp_tensor *b = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(4, 5)));
    eager_assert_error(tp_matmul(ctx, a, b), TP_ERR_SHAPE,
                       "matmul: inner dimensions differ: f32[2, 3] @ f32[4, 5] (3 vs 4)", NULL);
}
END_TEST

START_TEST(batch_mismatch_is_an_error) {
    tp_tensor *a = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(2, 2, 2)));
    tp_tensor *b = tp_ctx_adopt(ctx, harness_iota(TP_F32, SHAPE(3, 2, 2)));
    eager_assert_error(tp_matmul(ctx, a, b), TP_ERR_SHAPE,
                       "matmul: batch dimensions do not broadcast: f32[2, 2, 2] @ f32[3, 2, 2]",
                       NULL);
}
END_TEST

START_TEST(a_0d_operand_is_an_error) {
    eager_assert_error(tp_matmul(ctx, SCALAR(TP_F32, 2), T(TP_F32, DIMS(2), 1, 2)), TP_ERR_SHAPE,
                       "matmul: both operands must be at least 1-D", "f32[] @ f32[2]");
}
END_TEST

START_TEST(bool_operands_are_an_error) {
    tp_tensor *a = T(TP_BOOL, DIMS(2), 1, 1);
    eager_assert_error(tp_matmul(ctx, a, a), TP_ERR_DTYPE, "matmul: not defined for bool",
                       "bool[2] @ bool[2]");
}
END_TEST

START_TEST(larger_product_against_the_definition) {
    /* a[i, p] = i + p, b[p, j] = p - j: y[i, j] = sum_p (i + p)(p - j) */
    enum { M = 17, K = 33, N = 9 };
    tp_tensor *a = tp_ctx_adopt(ctx, harness_iota(TP_F64, SHAPE(M, K)));
    tp_tensor *b = tp_ctx_adopt(ctx, harness_iota(TP_F64, SHAPE(K, N)));
    double *av = a->data, *bv = b->data;
    for (int i = 0; i < M; i++)
        for (int p = 0; p < K; p++) av[i * K + p] = i + p;
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) bv[p * N + j] = p - j;
    tp_tensor *y = eager_ok(tp_matmul(ctx, a, b));
    const double *yv = y->data;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            /* sum_p (i p - i j + p^2 - p j) with S1 = sum p, S2 = sum p^2 */
            double s1 = K * (K - 1) / 2.0, s2 = (K - 1) * K * (2.0 * K - 1) / 6.0;
            ck_assert_double_eq(yv[i * N + j], i * s1 - (double)i * j * K + s2 - j * s1);
        }
}
END_TEST

TP_TEST_SUITE(matmul) {
    Suite *suite = suite_create("ops.matmul");
    TCase *tc = eager_tcase("matmul");
    tcase_add_test(tc, matrix_times_matrix);
    tcase_add_test(tc, vector_dot_vector_is_0d);
    tcase_add_test(tc, vector_times_matrix_drops_the_prepended_dimension);
    tcase_add_test(tc, matrix_times_vector_drops_the_appended_dimension);
    tcase_add_test(tc, batch_dimensions_broadcast);
    tcase_add_test(tc, batched_matrix_times_vector);
    tcase_add_test(tc, empty_inner_dimension_gives_zeros);
    tcase_add_test(tc, mixed_dtypes_promote);
    tcase_add_test(tc, integer_products_wrap_around);
    tcase_add_test(tc, inner_dimension_mismatch_names_both_shapes);
    tcase_add_test(tc, batch_mismatch_is_an_error);
    tcase_add_test(tc, a_0d_operand_is_an_error);
    tcase_add_test(tc, bool_operands_are_an_error);
    tcase_add_test(tc, larger_product_against_the_definition);
    suite_add_tcase(suite, tc);
    return suite;
}
