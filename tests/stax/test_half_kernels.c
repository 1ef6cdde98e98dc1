/* stax on f16 and bf16 beyond the pointwise ops: matmul/linear (the packed
 * gemm widening A and B while packing, the f32 product rounded once in the
 * epilogue), softmax/log_softmax/layer_norm (row kernels), pad/topk/cumsum/
 * resize (dedicated kernels) and conv/pools (window steps bracketed by
 * conversion kernels). Every graph is compiled on stax alone, so a node stax
 * did not claim fails the compile instead of running on the fallback.
 *
 * The oracle: the rounded inputs widened to double, the op computed in
 * double here, rounded once to the dtype. stax computes in f32, so a result
 * may be one unit of the dtype's last place away from that (an f32 error
 * crossing a rounding boundary) plus the f32 error itself, never more:
 * |stax - exact| <= ulp(dtype) * |exact| + f32_bound. Where the f32 math is
 * exact (small integers), stax must equal the oracle and the core's eager
 * result bit for bit. */
#include <stdlib.h>

#include "stax_harness.h"

static float widen(tp_dtype dtype, uint16_t bits) {
    return dtype == TP_F16 ? tp_f16_to_f32(bits) : tp_bf16_to_f32(bits);
}

static uint16_t narrow(tp_dtype dtype, double value) {
    return dtype == TP_F16 ? tp_f16_from_f32((float)value) : tp_bf16_from_f32((float)value);
}

/* The spacing of the dtype's values just above 1 (relative ulp bound). */
static double unit(tp_dtype dtype) {
    return dtype == TP_F16 ? 0x1p-10 : 0x1p-7;
}

/* Values u * scale, u uniform in [-1, 1), rounded to the dtype; integers in
 * [-3, 3] when `integers`. */
static tp_tensor *half_tensor(tp_dtype dtype, int ndim, const int64_t *shape, uint64_t seed,
                              double scale, bool integers) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(t);
    uint64_t state = seed * 2654435761u + 7;
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) {
        double u = (double)(stax_test_next(&state) % 1000003) / 1000003.0 * 2.0 - 1.0;
        bits[i] = narrow(dtype, integers ? (double)((int)(u * 3.5 + 3.5) - 3) : u * scale);
    }
    return t;
}

static double value_at(const tp_tensor *t, int64_t i) {
    return widen(tp_tensor_dtype(t), ((const uint16_t *)tp_tensor_data(t))[i]);
}

/* got[i] against exact[i] within ulp * |exact| + f32_bound[i]. */
static void expect_near(const tp_tensor *got, const double *exact, const double *f32_bound,
                        int64_t n, const char *what) {
    tp_dtype dtype = tp_tensor_dtype(got);
    ck_assert_int_eq(tp_tensor_numel(got), n);
    for (int64_t i = 0; i < n; i++) {
        double g = value_at(got, i), tolerance = unit(dtype) * fabs(exact[i]) + f32_bound[i];
        ck_assert_msg(fabs(g - exact[i]) <= tolerance,
                      "%s (%s) element %lld: stax %.9g, exact %.9g (tolerance %.3g)", what,
                      tp_dtype_name(dtype), (long long)i, g, exact[i], tolerance);
    }
}

/* got bit for bit equal to narrow(exact[i]). */
static void expect_rounded(const tp_tensor *got, const double *exact, int64_t n, const char *what) {
    tp_dtype dtype = tp_tensor_dtype(got);
    const uint16_t *bits = tp_tensor_data(got);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(bits[i] == narrow(dtype, exact[i]),
                      "%s (%s) element %lld: stax 0x%04x, exact %.9g rounds to 0x%04x", what,
                      tp_dtype_name(dtype), (long long)i, bits[i], exact[i],
                      narrow(dtype, exact[i]));
}

static tp_graph *new_graph(const char *name) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create(name, &g), TP_OK);
    return g;
}

/* Compiles on stax alone and runs; one output. */
static tp_tensor *run_on_stax(tp_graph *g, tp_value_id out, tp_tensor *const *inputs, int count) {
    stax_test_cache_dir();
    ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
    tp_tensor *result = NULL;
    tp_status status = stax_test_run("stax", g, inputs, count, NULL, 0, &result);
    ck_assert_msg(status == TP_OK, "stax alone must compile this graph: %s", tp_last_error());
    return result;
}

static tp_tensor *run_on_eager(tp_graph *g, tp_tensor *const *inputs, int count) {
    tp_tensor *result = NULL;
    ck_assert_msg(stax_test_run("eager", g, inputs, count, NULL, 0, &result) == TP_OK, "eager: %s",
                  tp_last_error());
    return result;
}

static void release_all(tp_tensor **tensors, int count) {
    for (int i = 0; i < count; i++) tp_tensor_release(tensors[i]);
}

static const tp_dtype storage_dtypes[2] = {TP_F16, TP_BF16};

/* ---- matmul and linear ---- */

/* C[b] = A[b] (m x k, or shared) * B (k x n, or its transpose), in double;
 * bound[i]: the f32 accumulation's error bound k * 2^-23 * sum |a b|. */
typedef struct product_shape {
    int64_t batch, m, k, n;
    bool b_transposed; /* B given as [n, k] and transposed in the graph */
} product_shape;

static void product_oracle(const product_shape *s, const tp_tensor *a, const tp_tensor *b,
                           double *exact, double *bound) {
    for (int64_t q = 0; q < s->batch; q++)
        for (int64_t i = 0; i < s->m; i++)
            for (int64_t j = 0; j < s->n; j++) {
                double sum = 0, magnitude = 0;
                for (int64_t p = 0; p < s->k; p++) {
                    double x = value_at(a, (q * s->m + i) * s->k + p);
                    double y = value_at(b, s->b_transposed ? j * s->k + p : p * s->n + j);
                    sum += x * y;
                    magnitude += fabs(x * y);
                }
                int64_t at = (q * s->m + i) * s->n + j;
                exact[at] = sum;
                bound[at] = (double)s->k * 0x1p-23 * magnitude;
            }
}

static void check_product(tp_dtype dtype, const product_shape *s, bool integers) {
    tp_graph *g = new_graph("half_matmul");
    int64_t a_dims[3] = {s->batch, s->m, s->k}, b_dims[2] = {s->k, s->n};
    if (s->b_transposed) b_dims[0] = s->n, b_dims[1] = s->k;
    int a_rank = s->batch > 1 ? 3 : 2;
    tp_value_id a = stax_test_input(g, "a", dtype, a_rank, s->batch > 1 ? a_dims : a_dims + 1);
    tp_value_id b = stax_test_input(g, "b", dtype, 2, b_dims);
    if (s->b_transposed) {
        tp_attrs swap = TP_ATTRS_INIT;
        swap.dim0 = 0, swap.dim1 = 1;
        b = stax_test_named_node(g, "transpose", &b, 1, &swap, "bt");
    }
    tp_value_id out = stax_test_named_node(g, "matmul", (tp_value_id[]){a, b}, 2, NULL, "c");
    tp_tensor *inputs[2] = {
        half_tensor(dtype, a_rank, s->batch > 1 ? a_dims : a_dims + 1, 11, 2.0, integers),
        half_tensor(dtype, 2, b_dims, 12, 2.0, integers)};
    tp_tensor *got = run_on_stax(g, out, inputs, 2);
    ck_assert_int_eq(tp_tensor_dtype(got), dtype);
    int64_t n = s->batch * s->m * s->n;
    double *exact = malloc(sizeof(double) * (size_t)n), *bound = malloc(sizeof(double) * (size_t)n);
    product_oracle(s, inputs[0], inputs[1], exact, bound);
    char what[160];
    snprintf(what, sizeof what, "matmul %lldx[%lldx%lld]x[%lldx%lld]%s, STAX_GEMM_KERNEL=%s",
             (long long)s->batch, (long long)s->m, (long long)s->k, (long long)s->k,
             (long long)s->n, s->b_transposed ? " (B transposed)" : "",
             getenv("STAX_GEMM_KERNEL") ? getenv("STAX_GEMM_KERNEL") : "auto");
    if (integers) {
        expect_rounded(got, exact, n, what);
        tp_tensor *want = run_on_eager(g, inputs, 2);
        ck_assert_msg(memcmp(tp_tensor_data(got), tp_tensor_data(want), (size_t)n * 2) == 0,
                      "%s: stax differs from eager on an exact product", what);
        tp_tensor_release(want);
    } else {
        expect_near(got, exact, bound, n, what);
    }
    free(exact);
    free(bound);
    tp_tensor_release(got);
    release_all(inputs, 2);
    tp_graph_destroy(g);
}

/* Every micro-kernel family (tile shapes 6x16, 4x8, 12x32; the JIT splits
 * vectors wider than the host's), and `legacy`, which f16/bf16 products
 * leave for the host's family. */
START_TEST(matmul_of_odd_sizes_is_rounded_from_f32) {
    static const product_shape shapes[] = {
        {1, 37, 29, 45, false}, /* row and column edges of every tile */
        {1, 1, 300, 70, false}, /* one row, two k blocks */
        {1, 130, 300, 70, true},
        {3, 5, 17, 9, false}, /* a batch sharing B */
    };
    static const char *const families[] = {"auto", "avx2", "generic", "avx512", "legacy"};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        setenv("STAX_GEMM_KERNEL", families[f], 1);
        for (int d = 0; d < 2; d++)
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
                check_product(storage_dtypes[d], &shapes[i], false);
    }
    unsetenv("STAX_GEMM_KERNEL");
}
END_TEST

START_TEST(matmul_of_small_integers_equals_eager_bit_for_bit) {
    static const product_shape shapes[] = {{1, 23, 40, 33, false}, {2, 7, 40, 19, true}};
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            check_product(storage_dtypes[d], &shapes[i], true);
}
END_TEST

/* Every bit pattern through the packing: the patterns as one column of A
 * times [[1]], and [[1]] times the patterns as one row of B: each product is the widened pattern
 * times one, rounded back, so the bits come back (NaN stays NaN; a zero may come back with either
 * sign, since the tile kernels start from +0). Covers the element-by-element widening and F16C's
 * runs. */
static void check_patterns_through_packing(tp_dtype dtype, bool patterns_in_b) {
    int64_t a_dims[2] = {patterns_in_b ? 1 : 65536, 1}, b_dims[2] = {1, patterns_in_b ? 65536 : 1};
    tp_graph *g = new_graph("half_patterns");
    tp_value_id a = stax_test_input(g, "a", dtype, 2, a_dims),
                b = stax_test_input(g, "b", dtype, 2, b_dims);
    tp_value_id out = stax_test_named_node(g, "matmul", (tp_value_id[]){a, b}, 2, NULL, "c");
    tp_tensor *inputs[2] = {NULL, NULL};
    ck_assert_int_eq(tp_tensor_create(dtype, 2, a_dims, &inputs[0]), TP_OK);
    ck_assert_int_eq(tp_tensor_create(dtype, 2, b_dims, &inputs[1]), TP_OK);
    uint16_t *patterns = tp_tensor_data_mut(inputs[patterns_in_b ? 1 : 0]);
    for (uint32_t i = 0; i < 65536; i++) patterns[i] = (uint16_t)i;
    *(uint16_t *)tp_tensor_data_mut(inputs[patterns_in_b ? 0 : 1]) = narrow(dtype, 1.0);
    tp_tensor *got = run_on_stax(g, out, inputs, 2);
    const uint16_t *bits = tp_tensor_data(got);
    for (uint32_t i = 0; i < 65536; i++) {
        float want = widen(dtype, (uint16_t)i), have = widen(dtype, bits[i]);
        bool ok = isnan(want) ? isnan(have) : want == 0 ? have == 0 : bits[i] == i;
        ck_assert_msg(ok, "%s pattern 0x%04x (in %s) came back as 0x%04x", tp_dtype_name(dtype), i,
                      patterns_in_b ? "B" : "A", bits[i]);
    }
    tp_tensor_release(got);
    release_all(inputs, 2);
    tp_graph_destroy(g);
}

START_TEST(every_bit_pattern_widens_exactly_in_the_packing) {
    for (int d = 0; d < 2; d++) {
        check_patterns_through_packing(storage_dtypes[d], true);
        check_patterns_through_packing(storage_dtypes[d], false);
    }
}
END_TEST

/* f16 [9, 20] times f32 [20, 11] promotes to f32: A is widened while
 * packed, B copied, and the f32 product stored with no rounding to f16. */
START_TEST(matmul_of_f16_by_f32_gives_the_f32_product) {
    enum { M = 9, K = 20, N = 11 };
    tp_graph *g = new_graph("mixed_matmul");
    tp_value_id a = stax_test_input(g, "a", TP_F16, 2, (int64_t[]){M, K});
    tp_value_id b = stax_test_input(g, "b", TP_F32, 2, (int64_t[]){K, N});
    tp_value_id out = stax_test_named_node(g, "matmul", (tp_value_id[]){a, b}, 2, NULL, "c");
    tp_tensor *inputs[2] = {half_tensor(TP_F16, 2, (int64_t[]){M, K}, 101, 2.0, false),
                            stax_test_random(TP_F32, 2, (int64_t[]){K, N}, 102)};
    tp_tensor *got = run_on_stax(g, out, inputs, 2);
    ck_assert_int_eq(tp_tensor_dtype(got), TP_F32);
    const float *b_values = tp_tensor_data(inputs[1]), *c = tp_tensor_data(got);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0, magnitude = 0;
            for (int p = 0; p < K; p++) {
                double term = value_at(inputs[0], i * K + p) * (double)b_values[p * N + j];
                sum += term;
                magnitude += fabs(term);
            }
            ck_assert_msg(fabs(c[i * N + j] - sum) <= K * 0x1p-23 * magnitude + 0x1p-24 * fabs(sum),
                          "c[%d][%d] = %.9g, exact %.9g", i, j, (double)c[i * N + j], sum);
        }
    tp_tensor_release(got);
    release_all(inputs, 2);
    tp_graph_destroy(g);
}
END_TEST

/* linear(x, w, bias) then add(., shift): the bias is added to the f32
 * product and rounded once (linear computes in f32), the add rounds again. */
static void check_linear_epilogue(tp_dtype dtype) {
    enum { ROWS = 7, IN = 33, OUT = 19 };
    tp_graph *g = new_graph("half_linear");
    tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){ROWS, IN});
    tp_value_id w = stax_test_input(g, "w", dtype, 2, (int64_t[]){OUT, IN});
    tp_value_id bias = stax_test_input(g, "bias", dtype, 1, (int64_t[]){OUT});
    tp_value_id shift = stax_test_input(g, "shift", dtype, 1, (int64_t[]){OUT});
    tp_value_id y = stax_test_named_node(g, "linear", (tp_value_id[]){x, w, bias}, 3, NULL, "y");
    tp_value_id out = stax_test_named_node(g, "add", (tp_value_id[]){y, shift}, 2, NULL, "out");
    tp_tensor *inputs[4] = {half_tensor(dtype, 2, (int64_t[]){ROWS, IN}, 21, 1.0, false),
                            half_tensor(dtype, 2, (int64_t[]){OUT, IN}, 22, 1.0, false),
                            half_tensor(dtype, 1, (int64_t[]){OUT}, 23, 4.0, false),
                            half_tensor(dtype, 1, (int64_t[]){OUT}, 24, 4.0, false)};
    tp_tensor *got = run_on_stax(g, out, inputs, 4);
    double exact[ROWS * OUT], bound[ROWS * OUT];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < OUT; j++) {
            double sum = value_at(inputs[2], j), magnitude = fabs(sum);
            for (int p = 0; p < IN; p++) {
                double term = value_at(inputs[0], i * IN + p) * value_at(inputs[1], j * IN + p);
                sum += term;
                magnitude += fabs(term);
            }
            /* y is stored in the dtype: its rounding may be one ulp off too */
            double y_rounded = widen(dtype, narrow(dtype, sum));
            exact[i * OUT + j] = y_rounded + value_at(inputs[3], j);
            bound[i * OUT + j] = unit(dtype) * fabs(sum) + IN * 0x1p-23 * magnitude;
        }
    expect_near(got, exact, bound, ROWS * OUT, "linear + bias + add");
    tp_tensor_release(got);
    release_all(inputs, 4);
    tp_graph_destroy(g);
}

START_TEST(linear_with_bias_and_a_fused_add_rounds_in_the_epilogue) {
    check_linear_epilogue(TP_F16);
    check_linear_epilogue(TP_BF16);
}
END_TEST

/* ---- rows ---- */

/* softmax / log_softmax along the last axis of [rows, length], in double. */
static void softmax_oracle(const tp_tensor *x, int64_t rows, int64_t length, bool log_form,
                           double *exact) {
    for (int64_t r = 0; r < rows; r++) {
        double max = -INFINITY, sum = 0;
        for (int64_t c = 0; c < length; c++) max = fmax(max, value_at(x, r * length + c));
        for (int64_t c = 0; c < length; c++) sum += exp(value_at(x, r * length + c) - max);
        for (int64_t c = 0; c < length; c++) {
            double shifted = value_at(x, r * length + c) - max;
            exact[r * length + c] = log_form ? shifted - log(sum) : exp(shifted) / sum;
        }
    }
}

static void check_softmax(tp_dtype dtype, const char *op) {
    enum { ROWS = 6, LENGTH = 77 };
    tp_graph *g = new_graph("half_softmax");
    tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){ROWS, LENGTH});
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = -1;
    tp_value_id out = stax_test_named_node(g, op, &x, 1, &attrs, "y");
    tp_tensor *input = half_tensor(dtype, 2, (int64_t[]){ROWS, LENGTH}, 31, 6.0, false);
    tp_tensor *got = run_on_stax(g, out, &input, 1);
    double exact[ROWS * LENGTH], bound[ROWS * LENGTH];
    softmax_oracle(input, ROWS, LENGTH, strcmp(op, "log_softmax") == 0, exact);
    for (int i = 0; i < ROWS * LENGTH; i++) bound[i] = 1e-6 * (1.0 + fabs(exact[i]));
    expect_near(got, exact, bound, ROWS * LENGTH, op);
    tp_tensor_release(got);
    tp_tensor_release(input);
    tp_graph_destroy(g);
}

START_TEST(softmax_and_log_softmax_run_as_row_kernels) {
    for (int d = 0; d < 2; d++) {
        check_softmax(storage_dtypes[d], "softmax");
        check_softmax(storage_dtypes[d], "log_softmax");
    }
}
END_TEST

static void check_layer_norm(tp_dtype dtype) {
    enum { ROWS = 12, LENGTH = 50 };
    tp_graph *g = new_graph("half_layer_norm");
    tp_value_id x = stax_test_input(g, "x", dtype, 3, (int64_t[]){4, 3, LENGTH});
    tp_value_id w = stax_test_input(g, "w", dtype, 1, (int64_t[]){LENGTH});
    tp_value_id b = stax_test_input(g, "b", dtype, 1, (int64_t[]){LENGTH});
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 2;
    attrs.eps = 1e-5;
    tp_value_id out =
        stax_test_named_node(g, "layer_norm", (tp_value_id[]){x, w, b}, 3, &attrs, "y");
    tp_tensor *inputs[3] = {half_tensor(dtype, 3, (int64_t[]){4, 3, LENGTH}, 41, 3.0, false),
                            half_tensor(dtype, 1, (int64_t[]){LENGTH}, 42, 2.0, false),
                            half_tensor(dtype, 1, (int64_t[]){LENGTH}, 43, 1.0, false)};
    tp_tensor *got = run_on_stax(g, out, inputs, 3);
    double exact[ROWS * LENGTH], bound[ROWS * LENGTH];
    for (int r = 0; r < ROWS; r++) {
        double mean = 0, variance = 0;
        for (int c = 0; c < LENGTH; c++) mean += value_at(inputs[0], r * LENGTH + c) / LENGTH;
        for (int c = 0; c < LENGTH; c++) {
            double d = value_at(inputs[0], r * LENGTH + c) - mean;
            variance += d * d / LENGTH;
        }
        for (int c = 0; c < LENGTH; c++) {
            double normal = (value_at(inputs[0], r * LENGTH + c) - mean) / sqrt(variance + 1e-5);
            exact[r * LENGTH + c] = normal * value_at(inputs[1], c) + value_at(inputs[2], c);
            bound[r * LENGTH + c] = 1e-5 * (1.0 + fabs(normal * value_at(inputs[1], c)));
        }
    }
    expect_near(got, exact, bound, ROWS * LENGTH, "layer_norm");
    tp_tensor_release(got);
    release_all(inputs, 3);
    tp_graph_destroy(g);
}

START_TEST(layer_norm_with_weight_and_bias_runs_as_a_row_kernel) {
    check_layer_norm(TP_F16);
    check_layer_norm(TP_BF16);
}
END_TEST

/* ---- dedicated kernels ---- */

/* pad of [[1, 2, 3, 4], [5, 6, 7, 8]] by 2 before and 3 after the last axis:
 * hand-checkable rows (NumPy's np.pad modes). */
START_TEST(pad_constant_and_reflect_move_the_bits) {
    static const double constant[2][9] = {{1.5, 1.5, 1, 2, 3, 4, 1.5, 1.5, 1.5},
                                          {1.5, 1.5, 5, 6, 7, 8, 1.5, 1.5, 1.5}};
    static const double reflect[2][9] = {{3, 2, 1, 2, 3, 4, 3, 2, 1}, {7, 6, 5, 6, 7, 8, 7, 6, 5}};
    for (int d = 0; d < 2; d++)
        for (int mode = 0; mode < 2; mode++) {
            tp_dtype dtype = storage_dtypes[d];
            tp_graph *g = new_graph("half_pad");
            tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){2, 4});
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.mode = mode ? TP_MODE_REFLECT : TP_MODE_CONSTANT;
            attrs.value = 1.5;
            attrs.npad_before = attrs.npad_after = 2;
            attrs.pad_before[1] = 2, attrs.pad_after[1] = 3;
            tp_value_id out = stax_test_named_node(g, "pad", &x, 1, &attrs, "y");
            tp_tensor *input = NULL;
            ck_assert_int_eq(tp_tensor_create(dtype, 2, (int64_t[]){2, 4}, &input), TP_OK);
            uint16_t *bits = tp_tensor_data_mut(input);
            for (int i = 0; i < 8; i++) bits[i] = narrow(dtype, i + 1);
            tp_tensor *got = run_on_stax(g, out, &input, 1);
            expect_rounded(got, mode ? &reflect[0][0] : &constant[0][0], 18,
                           mode ? "pad reflect" : "pad constant");
            tp_tensor_release(got);
            tp_tensor_release(input);
            tp_graph_destroy(g);
        }
}
END_TEST

/* topk (largest 3) and topk_indices of rows with distinct values: the oracle
 * selects by repeated scans here. */
START_TEST(topk_values_and_indices_of_f16_and_bf16_rows) {
    enum { ROWS = 4, LENGTH = 11, K = 3 };
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        for (int indices = 0; indices < 2; indices++) {
            tp_graph *g = new_graph("half_topk");
            tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){ROWS, LENGTH});
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.axis = 1, attrs.k = K;
            tp_value_id out =
                stax_test_named_node(g, indices ? "topk_indices" : "topk", &x, 1, &attrs, "y");
            tp_tensor *input = NULL;
            ck_assert_int_eq(tp_tensor_create(dtype, 2, (int64_t[]){ROWS, LENGTH}, &input), TP_OK);
            uint16_t *bits = tp_tensor_data_mut(input);
            for (int i = 0; i < ROWS * LENGTH; i++) bits[i] = narrow(dtype, (i * 7) % 23 - 11);
            tp_tensor *got = run_on_stax(g, out, &input, 1);
            for (int r = 0; r < ROWS; r++) {
                double previous = INFINITY;
                for (int j = 0; j < K; j++) {
                    int best = -1;
                    for (int c = 0; c < LENGTH; c++) {
                        double v = value_at(input, r * LENGTH + c);
                        if (v < previous && (best < 0 || v > value_at(input, r * LENGTH + best)))
                            best = c;
                    }
                    previous = value_at(input, r * LENGTH + best);
                    if (indices)
                        ck_assert_int_eq(((const int64_t *)tp_tensor_data(got))[r * K + j], best);
                    else
                        ck_assert_msg(value_at(got, r * K + j) == previous,
                                      "topk %s row %d #%d: %g, expected %g", tp_dtype_name(dtype),
                                      r, j, value_at(got, r * K + j), previous);
                }
            }
            tp_tensor_release(got);
            tp_tensor_release(input);
            tp_graph_destroy(g);
        }
    }
}
END_TEST

START_TEST(cumsum_of_f16_and_bf16_rounds_each_prefix_once) {
    enum { ROWS = 3, LENGTH = 40 };
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        tp_graph *g = new_graph("half_cumsum");
        tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){ROWS, LENGTH});
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = 1;
        tp_value_id out = stax_test_named_node(g, "cumsum", &x, 1, &attrs, "y");
        tp_tensor *input = half_tensor(dtype, 2, (int64_t[]){ROWS, LENGTH}, 51, 3.0, false);
        tp_tensor *got = run_on_stax(g, out, &input, 1);
        double exact[ROWS * LENGTH], bound[ROWS * LENGTH];
        for (int r = 0; r < ROWS; r++) {
            double sum = 0, magnitude = 0;
            for (int c = 0; c < LENGTH; c++) {
                sum += value_at(input, r * LENGTH + c);
                magnitude += fabs(value_at(input, r * LENGTH + c));
                exact[r * LENGTH + c] = sum;
                bound[r * LENGTH + c] = 0x1p-23 * magnitude;
            }
        }
        expect_near(got, exact, bound, ROWS * LENGTH, "cumsum");
        tp_tensor_release(got);
        tp_tensor_release(input);
        tp_graph_destroy(g);
    }
}
END_TEST

/* resize linear (half_pixel) of [1, 2, 5, 4] to [1, 2, 9, 7]: bilinear
 * weights in double here, from the half_pixel rule (x + 0.5) / s - 0.5
 * clamped to the edges. */
START_TEST(resize_linear_of_f16_and_bf16_images) {
    enum { IN_H = 5, IN_W = 4, OUT_H = 9, OUT_W = 7, PLANES = 2 };
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        tp_graph *g = new_graph("half_resize");
        tp_value_id x = stax_test_input(g, "x", dtype, 4, (int64_t[]){1, PLANES, IN_H, IN_W});
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.mode = TP_MODE_LINEAR;
        attrs.coordinates = TP_COORDINATES_HALF_PIXEL;
        attrs.shape_ndim = 4;
        attrs.shape[0] = attrs.shape[1] = -1, attrs.shape[2] = OUT_H, attrs.shape[3] = OUT_W;
        tp_value_id out = stax_test_named_node(g, "resize", &x, 1, &attrs, "y");
        tp_tensor *input =
            half_tensor(dtype, 4, (int64_t[]){1, PLANES, IN_H, IN_W}, 61, 4.0, false);
        tp_tensor *got = run_on_stax(g, out, &input, 1);
        double exact[PLANES * OUT_H * OUT_W], bound[PLANES * OUT_H * OUT_W];
        for (int p = 0; p < PLANES; p++)
            for (int i = 0; i < OUT_H; i++)
                for (int j = 0; j < OUT_W; j++) {
                    double ch = fmax((i + 0.5) * IN_H / OUT_H - 0.5, 0.0);
                    double cw = fmax((j + 0.5) * IN_W / OUT_W - 0.5, 0.0);
                    int h0 = (int)ch, w0 = (int)cw;
                    int h1 = h0 + 1 < IN_H ? h0 + 1 : IN_H - 1,
                        w1 = w0 + 1 < IN_W ? w0 + 1 : IN_W - 1;
                    double fh = ch - h0, fw = cw - w0;
#define PIXEL(h, w) value_at(input, (p * IN_H + (h)) * IN_W + (w))
                    double top = PIXEL(h0, w0) * (1 - fw) + PIXEL(h0, w1) * fw;
                    double bottom = PIXEL(h1, w0) * (1 - fw) + PIXEL(h1, w1) * fw;
#undef PIXEL
                    int at = (p * OUT_H + i) * OUT_W + j;
                    exact[at] = top * (1 - fh) + bottom * fh;
                    bound[at] = 1e-6;
                }
        expect_near(got, exact, bound, PLANES * OUT_H * OUT_W, "resize linear");
        tp_tensor_release(got);
        tp_tensor_release(input);
        tp_graph_destroy(g);
    }
}
END_TEST

/* ---- windows ---- */

typedef struct conv_case {
    int64_t batch, cin, cout, group, h, w, kh, kw, stride, pad;
} conv_case;

/* A grouped 2-D conv with symmetric pads and bias, in double. */
static void conv_oracle(const conv_case *c, const tp_tensor *x, const tp_tensor *w,
                        const tp_tensor *b, int64_t oh, int64_t ow, double *exact, double *bound) {
    int64_t cin_g = c->cin / c->group, cout_g = c->cout / c->group;
    for (int64_t n = 0; n < c->batch; n++)
        for (int64_t o = 0; o < c->cout; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double sum = value_at(b, o), magnitude = fabs(sum);
                    int64_t g = o / cout_g;
                    for (int64_t ci = 0; ci < cin_g; ci++)
                        for (int64_t u = 0; u < c->kh; u++)
                            for (int64_t v = 0; v < c->kw; v++) {
                                int64_t y = i * c->stride - c->pad + u,
                                        z = j * c->stride - c->pad + v;
                                if (y < 0 || z < 0 || y >= c->h || z >= c->w) continue;
                                double term =
                                    value_at(x, ((n * c->cin + g * cin_g + ci) * c->h + y) * c->w +
                                                    z) *
                                    value_at(w, ((o * cin_g + ci) * c->kh + u) * c->kw + v);
                                sum += term;
                                magnitude += fabs(term);
                            }
                    int64_t at = ((n * c->cout + o) * oh + i) * ow + j;
                    exact[at] = sum;
                    bound[at] = (double)(cin_g * c->kh * c->kw + 1) * 0x1p-23 * magnitude;
                }
}

static void check_conv(tp_dtype dtype, const conv_case *c, const char *what) {
    int64_t oh = (c->h + 2 * c->pad - c->kh) / c->stride + 1;
    int64_t ow = (c->w + 2 * c->pad - c->kw) / c->stride + 1;
    int64_t x_dims[4] = {c->batch, c->cin, c->h, c->w};
    int64_t w_dims[4] = {c->cout, c->cin / c->group, c->kh, c->kw};
    tp_graph *g = new_graph("half_conv");
    tp_value_id x = stax_test_input(g, "x", dtype, 4, x_dims);
    tp_value_id w = stax_test_input(g, "w", dtype, 4, w_dims);
    tp_value_id b = stax_test_input(g, "b", dtype, 1, &c->cout);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = c->group;
    attrs.nstrides = 2, attrs.strides[0] = attrs.strides[1] = c->stride;
    attrs.npads = 4;
    for (int i = 0; i < 4; i++) attrs.pads[i] = c->pad;
    tp_value_id out = stax_test_named_node(g, "conv", (tp_value_id[]){x, w, b}, 3, &attrs, "y");
    tp_tensor *inputs[3] = {half_tensor(dtype, 4, x_dims, 71, 2.0, false),
                            half_tensor(dtype, 4, w_dims, 72, 1.0, false),
                            half_tensor(dtype, 1, &c->cout, 73, 1.0, false)};
    tp_tensor *got = run_on_stax(g, out, inputs, 3);
    int64_t n = c->batch * c->cout * oh * ow;
    double *exact = malloc(sizeof(double) * (size_t)n), *bound = malloc(sizeof(double) * (size_t)n);
    conv_oracle(c, inputs[0], inputs[1], inputs[2], oh, ow, exact, bound);
    expect_near(got, exact, bound, n, what);
    free(exact);
    free(bound);
    tp_tensor_release(got);
    release_all(inputs, 3);
    tp_graph_destroy(g);
}

START_TEST(conv_of_f16_and_bf16_widens_into_f32_and_rounds_back) {
    static const conv_case im2col = {2, 3, 4, 1, 9, 8, 3, 3, 2, 1};
    static const conv_case pointwise = {1, 8, 6, 1, 5, 5, 1, 1, 1, 0};
    static const conv_case depthwise = {1, 4, 4, 4, 7, 7, 3, 3, 1, 1};
    for (int d = 0; d < 2; d++) {
        check_conv(storage_dtypes[d], &im2col, "conv 3x3 stride 2 (im2col)");
        check_conv(storage_dtypes[d], &pointwise, "conv 1x1 (pointwise gemm)");
        check_conv(storage_dtypes[d], &depthwise, "conv depthwise");
    }
}
END_TEST

/* max_pool 3x3 stride 2 (exact: a max of the dtype's values) and avg_pool
 * 2x2 stride 2 of [1, 2, 9, 9]. */
START_TEST(max_and_avg_pool_of_f16_and_bf16) {
    enum { PLANES = 2, SIZE = 9 };
    for (int d = 0; d < 2; d++)
        for (int average = 0; average < 2; average++) {
            tp_dtype dtype = storage_dtypes[d];
            int64_t k = average ? 2 : 3, out_size = (SIZE - k) / 2 + 1;
            tp_graph *g = new_graph("half_pool");
            tp_value_id x = stax_test_input(g, "x", dtype, 4, (int64_t[]){1, PLANES, SIZE, SIZE});
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.nkernel_shape = 2, attrs.kernel_shape[0] = attrs.kernel_shape[1] = k;
            attrs.nstrides = 2, attrs.strides[0] = attrs.strides[1] = 2;
            tp_value_id out =
                stax_test_named_node(g, average ? "avg_pool" : "max_pool", &x, 1, &attrs, "y");
            tp_tensor *input =
                half_tensor(dtype, 4, (int64_t[]){1, PLANES, SIZE, SIZE}, 81, 5.0, false);
            tp_tensor *got = run_on_stax(g, out, &input, 1);
            double exact[PLANES * 4 * 4];
            for (int p = 0; p < PLANES; p++)
                for (int i = 0; i < out_size; i++)
                    for (int j = 0; j < out_size; j++) {
                        double best = -INFINITY, sum = 0;
                        for (int u = 0; u < k; u++)
                            for (int v = 0; v < k; v++) {
                                double e =
                                    value_at(input, (p * SIZE + 2 * i + u) * SIZE + 2 * j + v);
                                best = fmax(best, e);
                                sum += e;
                            }
                        exact[(p * out_size + i) * out_size + j] =
                            average ? sum / (double)(k * k) : best;
                    }
            int64_t n = PLANES * out_size * out_size;
            if (average) {
                double bound[PLANES * 4 * 4];
                for (int i = 0; i < n; i++) bound[i] = 1e-6;
                expect_near(got, exact, bound, n, "avg_pool");
            } else {
                expect_rounded(got, exact, n, "max_pool");
            }
            tp_tensor_release(got);
            tp_tensor_release(input);
            tp_graph_destroy(g);
        }
}
END_TEST

/* conv_transpose 2-D, stride 2: no oracle of its own here (the scatter form
 * is the reference's); against eager within one ulp of the dtype plus the
 * f32 error. */
START_TEST(conv_transpose_of_f16_and_bf16_matches_eager) {
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        tp_graph *g = new_graph("half_conv_transpose");
        tp_value_id x = stax_test_input(g, "x", dtype, 4, (int64_t[]){1, 3, 5, 4});
        tp_value_id w = stax_test_input(g, "w", dtype, 4, (int64_t[]){3, 2, 3, 3});
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.nstrides = 2, attrs.strides[0] = attrs.strides[1] = 2;
        tp_value_id out =
            stax_test_named_node(g, "conv_transpose", (tp_value_id[]){x, w}, 2, &attrs, "y");
        tp_tensor *inputs[2] = {half_tensor(dtype, 4, (int64_t[]){1, 3, 5, 4}, 91, 2.0, false),
                                half_tensor(dtype, 4, (int64_t[]){3, 2, 3, 3}, 92, 1.0, false)};
        tp_tensor *got = run_on_stax(g, out, inputs, 2);
        tp_tensor *want = run_on_eager(g, inputs, 2);
        int64_t n = tp_tensor_numel(want);
        double *exact = malloc(sizeof(double) * (size_t)n),
               *bound = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++) exact[i] = value_at(want, i), bound[i] = 1e-5;
        expect_near(got, exact, bound, n, "conv_transpose");
        free(exact);
        free(bound);
        tp_tensor_release(got);
        tp_tensor_release(want);
        release_all(inputs, 2);
        tp_graph_destroy(g);
    }
}
END_TEST

/* An f16/bf16 constant (a weight, as the ONNX importer makes them) feeding a
 * linear: stax copies the payload's bits, so the product equals the one with
 * the same weight given as an input, bit for bit. */
START_TEST(constant_weights_of_f16_and_bf16_are_copied_bit_for_bit) {
    enum { ROWS = 5, IN = 12, OUT = 7 };
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        tp_tensor *weight = half_tensor(dtype, 2, (int64_t[]){OUT, IN}, 111, 1.0, false);
        tp_tensor *x = half_tensor(dtype, 2, (int64_t[]){ROWS, IN}, 112, 1.0, false);
        tp_graph *with_constant = new_graph("half_constant_weight");
        tp_value_id xc = stax_test_input(with_constant, "x", dtype, 2, (int64_t[]){ROWS, IN});
        tp_attrs payload = TP_ATTRS_INIT;
        payload.dtype = dtype;
        payload.data = weight;
        tp_value_id wc = stax_test_named_node(with_constant, "constant", NULL, 0, &payload, "w");
        tp_value_id yc =
            stax_test_named_node(with_constant, "linear", (tp_value_id[]){xc, wc}, 2, NULL, "y");
        tp_tensor *from_constant = run_on_stax(with_constant, yc, &x, 1);
        tp_graph *with_input = new_graph("half_input_weight");
        tp_value_id xi = stax_test_input(with_input, "x", dtype, 2, (int64_t[]){ROWS, IN});
        tp_value_id wi = stax_test_input(with_input, "w", dtype, 2, (int64_t[]){OUT, IN});
        tp_value_id yi =
            stax_test_named_node(with_input, "linear", (tp_value_id[]){xi, wi}, 2, NULL, "y");
        tp_tensor *inputs[2] = {x, weight};
        tp_tensor *from_input = run_on_stax(with_input, yi, inputs, 2);
        ck_assert_msg(
            memcmp(tp_tensor_data(from_constant), tp_tensor_data(from_input), ROWS * OUT * 2) == 0,
            "%s: a constant weight gives another product than the same weight as input",
            tp_dtype_name(dtype));
        tp_tensor_release(from_constant);
        tp_tensor_release(from_input);
        tp_tensor_release(weight);
        tp_tensor_release(x);
        tp_graph_destroy(with_constant);
        tp_graph_destroy(with_input);
    }
}
END_TEST

/* ---- claims ---- */

START_TEST(stax_claims_every_f16_and_bf16_kernel_family) {
    for (int d = 0; d < 2; d++) {
        tp_dtype dtype = storage_dtypes[d];
        tp_graph *g = new_graph("half_claims");
        tp_value_id x = stax_test_input(g, "x", dtype, 2, (int64_t[]){4, 8});
        tp_value_id w = stax_test_input(g, "w", dtype, 2, (int64_t[]){8, 8});
        tp_value_id image = stax_test_input(g, "image", dtype, 4, (int64_t[]){1, 2, 6, 6});
        tp_value_id filters = stax_test_input(g, "filters", dtype, 4, (int64_t[]){2, 2, 3, 3});
        tp_attrs none = TP_ATTRS_INIT, last = TP_ATTRS_INIT, pad = TP_ATTRS_INIT;
        last.axis = -1, last.k = 2;
        pad.npad_before = pad.npad_after = 2, pad.pad_before[1] = 1;
        tp_attrs pool = TP_ATTRS_INIT;
        pool.nkernel_shape = 2, pool.kernel_shape[0] = pool.kernel_shape[1] = 2;
        tp_attrs resize = TP_ATTRS_INIT;
        resize.mode = TP_MODE_NEAREST;
        resize.shape_ndim = 4, resize.shape[0] = resize.shape[1] = -1;
        resize.shape[2] = resize.shape[3] = 12;
        tp_value_id nodes[] = {
            stax_test_named_node(g, "matmul", (tp_value_id[]){x, w}, 2, NULL, "mm"),
            stax_test_named_node(g, "linear", (tp_value_id[]){x, w}, 2, NULL, "lin"),
            stax_test_named_node(g, "softmax", &x, 1, &last, "sm"),
            stax_test_named_node(g, "log_softmax", &x, 1, &last, "lsm"),
            stax_test_named_node(g, "layer_norm", &x, 1, &last, "ln"),
            stax_test_named_node(g, "pad", &x, 1, &pad, "pd"),
            stax_test_named_node(g, "cumsum", &x, 1, &last, "cs"),
            stax_test_named_node(g, "topk", &x, 1, &last, "tk"),
            stax_test_named_node(g, "topk_indices", &x, 1, &last, "ti"),
            stax_test_named_node(g, "conv", (tp_value_id[]){image, filters}, 2, &none, "cv"),
            stax_test_named_node(g, "max_pool", &image, 1, &pool, "mp"),
            stax_test_named_node(g, "avg_pool", &image, 1, &pool, "ap"),
            stax_test_named_node(g, "resize", &image, 1, &resize, "rs"),
        };
        int count = (int)(sizeof nodes / sizeof nodes[0]);
        ck_assert_int_eq(tp_graph_set_outputs(g, nodes, count), TP_OK);
        int values = tp_graph_num_values(g);
        bool *claimed = calloc((size_t)values, sizeof(bool));
        char **reasons = calloc((size_t)values, sizeof(char *));
        ck_assert_int_eq(tp_backend_claims(stax_test_backend("stax"), g, claimed, reasons), TP_OK);
        for (int i = 0; i < count; i++)
            ck_assert_msg(claimed[nodes[i]], "stax refused %s node %d: %s", tp_dtype_name(dtype), i,
                          reasons[nodes[i]] ? reasons[nodes[i]] : "(no reason)");
        for (int i = 0; i < values; i++) free(reasons[i]);
        free(reasons);
        free(claimed);
        tp_graph_destroy(g);
    }
}
END_TEST

TP_TEST_SUITE(half_kernels) {
    Suite *suite = suite_create("stax.half_kernels");
    TCase *tc = tcase_create("half_kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, matmul_of_odd_sizes_is_rounded_from_f32);
    tcase_add_test(tc, matmul_of_small_integers_equals_eager_bit_for_bit);
    tcase_add_test(tc, every_bit_pattern_widens_exactly_in_the_packing);
    tcase_add_test(tc, matmul_of_f16_by_f32_gives_the_f32_product);
    tcase_add_test(tc, linear_with_bias_and_a_fused_add_rounds_in_the_epilogue);
    tcase_add_test(tc, softmax_and_log_softmax_run_as_row_kernels);
    tcase_add_test(tc, layer_norm_with_weight_and_bias_runs_as_a_row_kernel);
    tcase_add_test(tc, pad_constant_and_reflect_move_the_bits);
    tcase_add_test(tc, topk_values_and_indices_of_f16_and_bf16_rows);
    tcase_add_test(tc, cumsum_of_f16_and_bf16_rounds_each_prefix_once);
    tcase_add_test(tc, resize_linear_of_f16_and_bf16_images);
    tcase_add_test(tc, conv_of_f16_and_bf16_widens_into_f32_and_rounds_back);
    tcase_add_test(tc, max_and_avg_pool_of_f16_and_bf16);
    tcase_add_test(tc, conv_transpose_of_f16_and_bf16_matches_eager);
    tcase_add_test(tc, constant_weights_of_f16_and_bf16_are_copied_bit_for_bit);
    tcase_add_test(tc, stax_claims_every_f16_and_bf16_kernel_family);
    suite_add_tcase(suite, tc);
    return suite;
}
