/* stax's products of a few rows (m <= 3: the gemv kernels, which stream B
 * row by row in place instead of packing it): every micro-kernel family
 * forced through STAX_GEMM_KERNEL (avx512 runs here as pairs of ymm
 * operations), one and two threads, against a double-precision product
 * computed here. n around the vector widths (1, 7, 16, 17) and wide (1000),
 * k around the kernels' steps of 4 rows of B and the vector widths (1, 5)
 * and long (1280); B an input, a transposed input (read by columns), a
 * constant, a transposed constant; a linear's bias and a fused relu;
 * batches; A read through a column stride. The compile log must say
 * which products went through the gemv kernels, so a change that stops
 * taking them (or takes them where B is not row-major) fails here. */
#include <math.h>

#include "stax_harness.h"

/* The most rows the gemv kernels take (STAX_GEMV_MAX_ROWS in stax). */
#define GEMV_MAX_ROWS 3

typedef struct product_case {
    int64_t batch, m, k, n;
    bool w_constant;   /* w a constant node instead of an input */
    bool w_transposed; /* w stored [n, k] and transposed in the graph */
    bool x_transposed; /* x stored [batch, k, m] and transposed in the graph */
    bool w_batched;    /* w [batch, k, n], one per product (else shared) */
    bool linear;       /* linear(x, w [n, k], bias) + relu instead of matmul */
    tp_dtype dtype;
} product_case;

static bool w_stored_transposed(const product_case *c) {
    return c->linear || c->w_transposed;
}

static int x_dims(const product_case *c, int64_t *dims) {
    int nd = 0;
    if (c->batch > 1) dims[nd++] = c->batch;
    dims[nd++] = c->x_transposed ? c->k : c->m;
    dims[nd++] = c->x_transposed ? c->m : c->k;
    return nd;
}

static int w_dims(const product_case *c, int64_t *dims) {
    int nd = 0;
    if (c->w_batched) dims[nd++] = c->batch;
    dims[nd++] = w_stored_transposed(c) ? c->n : c->k;
    dims[nd++] = w_stored_transposed(c) ? c->k : c->n;
    return nd;
}

/* operands: x, w, bias (linear only). */
static tp_graph *build(const product_case *c, tp_tensor *const *operands) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("gemv", &g), TP_OK);
    int64_t dims[3];
    int nd = x_dims(c, dims);
    tp_value_id x = stax_test_input(g, "x", c->dtype, nd, dims), w;
    if (c->x_transposed) x = stax_test_swap_last_two(g, x, nd);
    int w_nd = w_dims(c, dims);
    if (c->w_constant) {
        tp_attrs payload = TP_ATTRS_INIT;
        payload.data = operands[1];
        ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "w", &w), TP_OK);
    } else {
        w = stax_test_input(g, "w", c->dtype, w_nd, dims);
    }
    tp_value_id y;
    if (c->linear) {
        tp_value_id bias = stax_test_input(g, "bias", c->dtype, 1, &c->n);
        y = stax_test_node(g, "linear", (tp_value_id[]){x, w, bias}, 3, NULL);
        y = stax_test_node(g, "relu", &y, 1, NULL);
    } else {
        if (c->w_transposed) w = stax_test_swap_last_two(g, w, w_nd);
        y = stax_test_node(g, "matmul", (tp_value_id[]){x, w}, 2, NULL);
    }
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

static void check_against_double(const product_case *c, tp_tensor *const *operands,
                                 const tp_tensor *y, const char *what) {
    stax_test_product shape = {.batch = c->batch,
                               .m = c->m,
                               .k = c->k,
                               .n = c->n,
                               .dtype = c->dtype,
                               .x_transposed = c->x_transposed,
                               .w_transposed = w_stored_transposed(c),
                               .w_batched = c->w_batched,
                               .bias = c->linear,
                               .relu = c->linear};
    stax_test_check_product(&shape, operands, y, what);
}

/* Compiles and runs case c with `options`, checks the product; returns how
 * many products the compile log says went through the gemv kernels. */
static int run_case(const product_case *c, const char *const *options, int num_options,
                    const char *what) {
    tp_tensor *operands[3] = {NULL, NULL, NULL};
    int64_t dims[3];
    int nd = x_dims(c, dims);
    operands[0] = stax_test_random_rounded(c->dtype, nd, dims, 51);
    nd = w_dims(c, dims);
    operands[1] = stax_test_random_rounded(c->dtype, nd, dims, 52);
    if (c->linear) operands[2] = stax_test_random_rounded(c->dtype, 1, &c->n, 53);
    tp_tensor *inputs[3] = {operands[0]};
    int num_inputs = 1;
    if (!c->w_constant) inputs[num_inputs++] = operands[1];
    if (c->linear) inputs[num_inputs++] = operands[2];
    tp_graph *g = build(c, operands);
    int gemv = 0;
    tp_tensor *y[1] = {NULL};
    tp_status status = stax_test_run_counting("through the gemv kernels", g, inputs, num_inputs,
                                              options, num_options, y, &gemv);
    ck_assert_msg(status == TP_OK, "%s: %s", what, tp_last_error());
    check_against_double(c, operands, y[0], what);
    tp_tensor_release(y[0]);
    tp_graph_destroy(g);
    for (int i = 0; i < 3; i++)
        if (operands[i]) tp_tensor_release(operands[i]);
    return gemv;
}

static const char *const families[] = {"auto", "avx512", "avx2", "generic"};
static const char *const thread_options[][1] = {{"threads=1"}, {"threads=2"}};

/* Every family, one and two threads: the product is right, and it went
 * through the gemv kernels exactly when `want_gemv`. */
static void check_case(const product_case *c, bool want_gemv, const char *label) {
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (int t = 0; t < 2; t++) {
            setenv("STAX_GEMM_KERNEL", families[f], 1);
            char what[256];
            snprintf(what, sizeof what,
                     "%s (%s, batch %lld, m %lld, k %lld, n %lld), STAX_GEMM_KERNEL=%s, %s", label,
                     tp_dtype_name(c->dtype), (long long)c->batch, (long long)c->m, (long long)c->k,
                     (long long)c->n, families[f], thread_options[t][0]);
            int gemv = run_case(c, thread_options[t], 1, what);
            ck_assert_msg(gemv == (want_gemv ? 1 : 0),
                          "%s: the compile log names %d products through the gemv kernels, "
                          "want %d",
                          what, gemv, want_gemv ? 1 : 0);
        }
    unsetenv("STAX_GEMM_KERNEL");
}

static const int64_t widths[] = {1, 7, 16, 17, 1000};
static const int64_t depths[] = {1, 5, 1280};

START_TEST(few_rows_times_an_input_b_stream_b_and_match_a_double_product) {
    stax_test_cache_dir();
    for (int64_t m = 1; m <= 3; m++)
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
            for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
                product_case c = {
                    .batch = 1, .m = m, .k = depths[d], .n = widths[w], .dtype = TP_F32};
                check_case(&c, true, "matmul, w an input");
            }
}
END_TEST

/* Four rows and more go through the packed driver (its four-row tile beat
 * the gemv kernels at four rows). */
START_TEST(three_rows_are_the_most_the_gemv_kernels_take) {
    stax_test_cache_dir();
    product_case most = {.batch = 1, .m = GEMV_MAX_ROWS, .k = 37, .n = 45, .dtype = TP_F32};
    check_case(&most, true, "matmul, the most rows");
    product_case four = most;
    four.m = GEMV_MAX_ROWS + 1;
    check_case(&four, false, "matmul, one row more");
    product_case seven = {.batch = 1, .m = 7, .k = 1280, .n = 1000, .dtype = TP_F32};
    check_case(&seven, false, "matmul, more rows");
    seven.k = 5, seven.n = 17;
    check_case(&seven, false, "matmul, more rows");
}
END_TEST

START_TEST(a_constant_b_is_streamed_row_major_and_matches) {
    stax_test_cache_dir();
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 1280, 1000}, {2, 5, 17}, {3, 130, 7}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        product_case c = {.batch = 1,
                          .m = shapes[s][0],
                          .k = shapes[s][1],
                          .n = shapes[s][2],
                          .w_constant = true,
                          .dtype = TP_F32};
        check_case(&c, true, "matmul, w a constant");
        c.w_transposed = true; /* transposed once at compile */
        check_case(&c, true, "matmul, w a transposed constant");
    }
}
END_TEST

/* The bias and the relu run per finished block of columns: with two
 * threads, on slices of columns. */
START_TEST(a_linear_with_bias_and_relu_matches) {
    stax_test_cache_dir();
    product_case wide = {.batch = 1,
                         .m = 1,
                         .k = 1280,
                         .n = 1000,
                         .w_constant = true,
                         .linear = true,
                         .dtype = TP_F32};
    check_case(&wide, true, "linear + bias + relu, w a constant");
    product_case input = {.batch = 1, .m = 3, .k = 5, .n = 17, .linear = true, .dtype = TP_F32};
    check_case(&input, true, "linear + bias + relu, w an input (read by columns)");
}
END_TEST

START_TEST(batches_of_few_rows_match) {
    stax_test_cache_dir();
    /* one B per product */
    product_case own = {.batch = 3, .m = 2, .k = 70, .n = 33, .w_batched = true, .dtype = TP_F32};
    check_case(&own, true, "batched matmul, a w per product");
    /* x transposed: A read with column stride 2 */
    product_case strided = {
        .batch = 1, .m = 2, .k = 40, .n = 100, .x_transposed = true, .dtype = TP_F32};
    check_case(&strided, true, "matmul, x transposed");
    /* batches sharing w, x transposed: A made contiguous once, the batches
     * folded into one product of 3 * 1 rows */
    product_case folded = strided;
    folded.batch = 3, folded.m = 1, folded.w_constant = true;
    check_case(&folded, true, "batched matmul, x transposed, w a shared constant");
}
END_TEST

/* A transposed B that is an input: the dot kernels read its columns. */
START_TEST(few_rows_times_a_transposed_input_b_read_its_columns_and_match) {
    stax_test_cache_dir();
    static const int64_t columns[] = {1, 7, 17, 1000};
    for (int64_t m = 1; m <= 3; m++)
        for (size_t w = 0; w < sizeof columns / sizeof *columns; w++)
            for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
                product_case c = {.batch = 1,
                                  .m = m,
                                  .k = depths[d],
                                  .n = columns[w],
                                  .w_transposed = true,
                                  .dtype = TP_F32};
                check_case(&c, true, "matmul, w a transposed input");
            }
    /* A read through a column stride as well: the packed driver */
    product_case both = {.batch = 1,
                         .m = 2,
                         .k = 40,
                         .n = 33,
                         .w_transposed = true,
                         .x_transposed = true,
                         .dtype = TP_F32};
    check_case(&both, false, "matmul, x and w transposed inputs");
}
END_TEST

/* f16 and bf16 operands go through the packed driver. */
START_TEST(f16_and_bf16_take_the_packed_driver_and_match) {
    stax_test_cache_dir();
    static const tp_dtype dtypes[2] = {TP_F16, TP_BF16};
    for (int d = 0; d < 2; d++) {
        product_case c = {.batch = 1, .m = 1, .k = 300, .n = 70, .dtype = dtypes[d]};
        check_case(&c, false, "matmul, w an input");
        c.w_constant = true;
        check_case(&c, false, "matmul, w a constant");
    }
}
END_TEST

TP_TEST_SUITE(stax_gemv) {
    Suite *s = suite_create("stax_gemv");
    TCase *c = tcase_create("gemv");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, few_rows_times_an_input_b_stream_b_and_match_a_double_product);
    tcase_add_test(c, three_rows_are_the_most_the_gemv_kernels_take);
    tcase_add_test(c, a_constant_b_is_streamed_row_major_and_matches);
    tcase_add_test(c, a_linear_with_bias_and_relu_matches);
    tcase_add_test(c, batches_of_few_rows_match);
    tcase_add_test(c, few_rows_times_a_transposed_input_b_read_its_columns_and_match);
    tcase_add_test(c, f16_and_bf16_take_the_packed_driver_and_match);
    suite_add_tcase(s, c);
    return s;
}
