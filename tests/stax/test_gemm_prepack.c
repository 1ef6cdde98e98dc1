/* stax's matmul and linear whose weight is a constant of the graph: the
 * weight is packed into the micro-kernel's B panels once, at compile, and
 * every call reads those panels. Checked against a double-precision product
 * computed here (the stored f16/bf16 values widened first), for every
 * micro-kernel family forced through STAX_GEMM_KERNEL, one and two threads:
 * plain and transposed weights, linear with bias and relu, batches sharing
 * the weight (folded into rows, and not), f16/bf16 weights, one-row and
 * few-row products, n and k off the panel and k-block edges. The compile log
 * must say that the weight was packed at compile, so a change that stops
 * prepacking fails here, except for an f32 product of at most three rows,
 * whose weight the gemv kernels stream row-major instead (test_gemv.c);
 * max-autotune (whose tiles may differ from the prepacked ones) must still
 * compute the same product. */
#include <math.h>

#include "stax_harness.h"

typedef struct weight_case {
    tp_dtype dtype; /* of x, w, bias and the result */
    int64_t batch, m, k, n;
    bool linear;       /* linear(x, w [n, k][, bias]) instead of matmul(x, w) */
    bool w_transposed; /* matmul: w stored [n, k], transposed in the graph */
    bool x_transposed; /* x stored [batch, k, m], transposed in the graph */
    bool bias, relu;   /* bias: linear only */
    bool w_is_input;   /* w an input of the graph instead of a constant */
} weight_case;

static int x_dims(const weight_case *c, int64_t *dims) {
    int nd = 0;
    if (c->batch > 1) dims[nd++] = c->batch;
    dims[nd++] = c->x_transposed ? c->k : c->m;
    dims[nd++] = c->x_transposed ? c->m : c->k;
    return nd;
}

/* w as stored: [n, k] for linear and a transposed matmul weight, else [k, n]. */
static bool w_stored_transposed(const weight_case *c) {
    return c->linear || c->w_transposed;
}

/* operands: x, w, bias (when present); the graph reads w as a constant
 * node holding operands[1] unless c->w_is_input. */
static tp_graph *build(const weight_case *c, tp_tensor *const *operands) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("prepack", &g), TP_OK);
    int64_t dims[3];
    int nd = x_dims(c, dims);
    tp_value_id x = stax_test_input(g, "x", c->dtype, nd, dims), w;
    if (c->x_transposed) x = stax_test_swap_last_two(g, x, nd);
    int64_t w_dims[2] = {w_stored_transposed(c) ? c->n : c->k,
                         w_stored_transposed(c) ? c->k : c->n};
    if (c->w_is_input) {
        w = stax_test_input(g, "w", c->dtype, 2, w_dims);
    } else {
        tp_attrs payload = TP_ATTRS_INIT;
        payload.data = operands[1];
        ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "w", &w), TP_OK);
    }
    tp_value_id y;
    if (c->linear) {
        tp_value_id in[3] = {x, w, 0};
        if (c->bias) in[2] = stax_test_input(g, "bias", c->dtype, 1, &c->n);
        y = stax_test_node(g, "linear", in, c->bias ? 3 : 2, NULL);
    } else {
        if (c->w_transposed) w = stax_test_swap_last_two(g, w, 2);
        y = stax_test_node(g, "matmul", (tp_value_id[]){x, w}, 2, NULL);
    }
    if (c->relu) y = stax_test_node(g, "relu", &y, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

static void check_against_double(const weight_case *c, tp_tensor *const *operands,
                                 const tp_tensor *y, const char *what) {
    stax_test_product shape = {.batch = c->batch,
                               .m = c->m,
                               .k = c->k,
                               .n = c->n,
                               .dtype = c->dtype,
                               .x_transposed = c->x_transposed,
                               .w_transposed = w_stored_transposed(c),
                               .bias = c->bias,
                               .relu = c->relu};
    stax_test_check_product(&shape, operands, y, what);
}

/* Compiles and runs case c with `options`; returns how many products the
 * compile log says were prepacked. */
static int run_case(const weight_case *c, tp_tensor *const *operands, const char *const *options,
                    int num_options, const char *what) {
    tp_graph *g = build(c, operands);
    tp_tensor *inputs[3] = {operands[0], operands[1], operands[2]};
    int num_inputs = 1;
    if (c->w_is_input) inputs[num_inputs++] = operands[1];
    if (c->bias) inputs[num_inputs++] = operands[2];
    int prepacked = 0;
    tp_tensor *y[1] = {NULL};
    tp_status status = stax_test_run_counting("constant B packed at compile", g, inputs, num_inputs,
                                              options, num_options, y, &prepacked);
    ck_assert_msg(status == TP_OK, "%s: %s", what, tp_last_error());
    check_against_double(c, operands, y[0], what);
    tp_tensor_release(y[0]);
    tp_graph_destroy(g);
    return prepacked;
}

static void make_operands(const weight_case *c, tp_tensor **operands) {
    int64_t dims[3];
    int nd = x_dims(c, dims);
    operands[0] = stax_test_random_rounded(c->dtype, nd, dims, 41);
    int64_t w_dims[2] = {w_stored_transposed(c) ? c->n : c->k,
                         w_stored_transposed(c) ? c->k : c->n};
    operands[1] = stax_test_random_rounded(c->dtype, 2, w_dims, 42);
    operands[2] = c->bias ? stax_test_random_rounded(c->dtype, 1, &c->n, 43) : NULL;
}

static void release_operands(tp_tensor **operands) {
    for (int i = 0; i < 3; i++)
        if (operands[i]) tp_tensor_release(operands[i]);
}

static const char *const families[] = {"auto", "avx512", "avx2", "generic"};

/* How many weights the compile log should report packed at compile: none
 * for an f32 product of at most three rows (STAX_GEMV_MAX_ROWS in stax),
 * which streams its weight row-major. */
static int want_prepacked(const weight_case *c) {
    return c->dtype == TP_F32 && c->batch == 1 && c->m <= 3 ? 0 : 1;
}

/* Every family, one and two threads: the product is right and was prepacked. */
static void check_case(const weight_case *c, const char *label) {
    tp_tensor *operands[3];
    make_operands(c, operands);
    static const char *const thread_options[][1] = {{"threads=1"}, {"threads=2"}};
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (int t = 0; t < 2; t++) {
            setenv("STAX_GEMM_KERNEL", families[f], 1);
            char what[256];
            snprintf(what, sizeof what,
                     "%s (%s, batch %lld, m %lld, k %lld, n %lld), STAX_GEMM_KERNEL=%s, %s", label,
                     tp_dtype_name(c->dtype), (long long)c->batch, (long long)c->m, (long long)c->k,
                     (long long)c->n, families[f], thread_options[t][0]);
            int prepacked = run_case(c, operands, thread_options[t], 1, what);
            ck_assert_msg(prepacked == want_prepacked(c),
                          "%s: the compile log reports %d prepacked weights, want %d", what,
                          prepacked, want_prepacked(c));
        }
    unsetenv("STAX_GEMM_KERNEL");
    release_operands(operands);
}

/* m = 1 and few rows, n and k around the panels (8, 16, 32 columns) and the
 * k blocks (128, 256) of the families. */
static const int64_t shapes[][3] = {
    {1, 1, 1},   {1, 7, 33},   {1, 300, 65},  {2, 129, 31}, {3, 257, 100},
    {5, 17, 16}, {13, 37, 47}, {23, 513, 70}, {64, 130, 9}, {1, 1280, 1000},
};

START_TEST(matmul_with_a_constant_weight_matches_a_double_product) {
    stax_test_cache_dir();
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        weight_case c = {
            .dtype = TP_F32, .batch = 1, .m = shapes[s][0], .k = shapes[s][1], .n = shapes[s][2]};
        check_case(&c, "matmul");
    }
}
END_TEST

START_TEST(a_transposed_constant_weight_matches_a_double_product) {
    stax_test_cache_dir();
    weight_case rows = {
        .dtype = TP_F32, .batch = 1, .m = 29, .k = 130, .n = 45, .w_transposed = true};
    check_case(&rows, "matmul, w transposed");
    weight_case one = {
        .dtype = TP_F32, .batch = 1, .m = 1, .k = 300, .n = 77, .w_transposed = true};
    check_case(&one, "matmul, one row, w transposed");
}
END_TEST

START_TEST(linear_with_bias_and_relu_matches_a_double_product) {
    stax_test_cache_dir();
    weight_case plain = {.dtype = TP_F32, .batch = 1, .m = 37, .k = 150, .n = 53, .linear = true};
    check_case(&plain, "linear");
    weight_case fused = {.dtype = TP_F32,
                         .batch = 1,
                         .m = 1,
                         .k = 257,
                         .n = 100,
                         .linear = true,
                         .bias = true,
                         .relu = true};
    check_case(&fused, "linear + bias + relu, one row");
    weight_case few = fused;
    few.m = 3, few.k = 64, few.n = 33;
    check_case(&few, "linear + bias + relu, three rows");
}
END_TEST

START_TEST(batches_sharing_a_constant_weight_match_a_double_product) {
    stax_test_cache_dir();
    /* rows continue from batch to batch: one product of batch * m rows */
    weight_case folded = {.dtype = TP_F32, .batch = 4, .m = 6, .k = 40, .n = 35, .linear = true};
    check_case(&folded, "batched linear");
    /* x transposed: the batches stay separate products that read one packed B */
    weight_case separate = {
        .dtype = TP_F32, .batch = 3, .m = 40, .k = 33, .n = 20, .x_transposed = true};
    check_case(&separate, "batched matmul, x transposed");
}
END_TEST

/* Enough rows for at least 16 row tiles per thread in every family (389:
 * 32 tiles of 12 and a tail): the product splits by rows, each slice
 * taking its tiles through every k block (k 300: two blocks and a partial
 * one) without waiting for the other; separate batches (x transposed) and
 * a fused bias and relu on the last block too. */
START_TEST(many_rows_times_a_constant_weight_split_by_rows_match) {
    stax_test_cache_dir();
    weight_case plain = {.dtype = TP_F32, .batch = 1, .m = 389, .k = 300, .n = 70};
    check_case(&plain, "matmul, many rows");
    weight_case fused = {.dtype = TP_F32,
                         .batch = 1,
                         .m = 400,
                         .k = 520,
                         .n = 45,
                         .linear = true,
                         .bias = true,
                         .relu = true};
    check_case(&fused, "linear + bias + relu, many rows");
    weight_case separate = {
        .dtype = TP_F32, .batch = 2, .m = 400, .k = 300, .n = 150, .x_transposed = true};
    check_case(&separate, "batched matmul, many rows, x transposed");
}
END_TEST

START_TEST(f16_and_bf16_constant_weights_are_widened_once_and_match) {
    stax_test_cache_dir();
    static const tp_dtype dtypes[2] = {TP_F16, TP_BF16};
    for (int d = 0; d < 2; d++) {
        weight_case mm = {.dtype = dtypes[d], .batch = 1, .m = 1, .k = 300, .n = 70};
        check_case(&mm, "matmul");
        weight_case lin = {.dtype = dtypes[d],
                           .batch = 2,
                           .m = 9,
                           .k = 130,
                           .n = 33,
                           .linear = true,
                           .bias = true,
                           .relu = true};
        check_case(&lin, "batched linear + bias + relu");
    }
}
END_TEST

START_TEST(a_weight_given_as_an_input_is_not_prepacked) {
    stax_test_cache_dir();
    weight_case c = {.dtype = TP_F32, .batch = 1, .m = 5, .k = 40, .n = 30, .w_is_input = true};
    tp_tensor *operands[3];
    make_operands(&c, operands);
    int prepacked = run_case(&c, operands, NULL, 0, "matmul, w an input");
    ck_assert_int_eq(prepacked, 0);
    release_operands(operands);
}
END_TEST

/* A product of at most two row tiles whose weight is an input reads the
 * weight in place (the strided tile kernels) but for the last partial panel;
 * m around one and two tiles of every family (4, 6, 12 rows), n around the
 * panel widths. */
START_TEST(few_rows_times_an_input_weight_match_a_double_product) {
    stax_test_cache_dir();
    static const int64_t rows[] = {1, 2, 3, 5, 6, 7, 8, 9, 12, 13, 24, 25};
    static const int64_t sizes[][2] = {{1, 1}, {300, 31}, {40, 64}, {257, 100}};
    static const char *const thread_options[][1] = {{"threads=1"}, {"threads=2"}};
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            weight_case c = {.dtype = TP_F32,
                             .batch = rows[r] == 2 ? 3 : 1,
                             .m = rows[r],
                             .k = sizes[z][0],
                             .n = sizes[z][1],
                             .w_is_input = true};
            tp_tensor *operands[3];
            make_operands(&c, operands);
            for (size_t f = 0; f < sizeof families / sizeof *families; f++)
                for (int t = 0; t < 2; t++) {
                    setenv("STAX_GEMM_KERNEL", families[f], 1);
                    char what[256];
                    snprintf(what, sizeof what,
                             "w an input (batch %lld, m %lld, k %lld, n %lld), "
                             "STAX_GEMM_KERNEL=%s, %s",
                             (long long)c.batch, (long long)c.m, (long long)c.k, (long long)c.n,
                             families[f], thread_options[t][0]);
                    ck_assert_int_eq(run_case(&c, operands, thread_options[t], 1, what), 0);
                }
            unsetenv("STAX_GEMM_KERNEL");
            release_operands(operands);
        }
}
END_TEST

/* max-autotune may pick a k block other than the one B was packed for: such
 * a step packs B itself per call, and the product stays right. */
START_TEST(max_autotune_with_a_constant_weight_matches_a_double_product) {
    char path[4200];
    snprintf(path, sizeof path, "%s/prepack-autotune", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", path, 1);
    const char *options[] = {"mode=max-autotune", "threads=2"};
    weight_case shapes_to_tune[] = {
        {.dtype = TP_F32, .batch = 1, .m = 64, .k = 520, .n = 100, .linear = true, .bias = true},
        {.dtype = TP_F32, .batch = 1, .m = 1, .k = 700, .n = 300},
    };
    for (size_t i = 0; i < sizeof shapes_to_tune / sizeof *shapes_to_tune; i++) {
        tp_tensor *operands[3];
        make_operands(&shapes_to_tune[i], operands);
        int prepacked = run_case(&shapes_to_tune[i], operands, options, 2, "max-autotune");
        ck_assert_int_eq(prepacked, want_prepacked(&shapes_to_tune[i]));
        release_operands(operands);
    }
}
END_TEST

TP_TEST_SUITE(stax_gemm_prepack) {
    Suite *s = suite_create("stax_gemm_prepack");
    TCase *c = tcase_create("prepack");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, matmul_with_a_constant_weight_matches_a_double_product);
    tcase_add_test(c, a_transposed_constant_weight_matches_a_double_product);
    tcase_add_test(c, linear_with_bias_and_relu_matches_a_double_product);
    tcase_add_test(c, batches_sharing_a_constant_weight_match_a_double_product);
    tcase_add_test(c, many_rows_times_a_constant_weight_split_by_rows_match);
    tcase_add_test(c, f16_and_bf16_constant_weights_are_widened_once_and_match);
    tcase_add_test(c, a_weight_given_as_an_input_is_not_prepacked);
    tcase_add_test(c, few_rows_times_an_input_weight_match_a_double_product);
    tcase_add_test(c, max_autotune_with_a_constant_weight_matches_a_double_product);
    suite_add_tcase(s, c);
    return s;
}
