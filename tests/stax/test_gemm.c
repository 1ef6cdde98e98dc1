/* stax's f32 matmul against a naive double-precision loop written here, for
 * every micro-kernel family forced through STAX_GEMM_KERNEL (avx512, avx2 and
 * generic run on any host: the JIT splits vectors wider than the host's),
 * the 6x16 pair (legacy) and the host's own choice (auto): odd m, n and k, m
 * = 1, k = 1, k past the k block, transposed operands, batched and
 * broadcast batches, an epilogue, one and two threads. */
#include "stax_harness.h"

#include <math.h>

#include "tensorplay/profile.h"

static const char *const families[] = {"auto", "avx512", "avx2", "generic", "legacy"};
#define NUM_FAMILIES (int)(sizeof families / sizeof *families)

static tp_value_id node(tp_graph *g, const char *op, const tp_value_id *in, int n,
                        const tp_attrs *attrs) {
    tp_value_id id;
    tp_status status = tp_graph_add_node(g, op, in, n, attrs, NULL, &id);
    ck_assert_msg(status == TP_OK, "%s: %s", op, tp_last_error());
    return id;
}

static tp_value_id input(tp_graph *g, const char *name, int ndim, const int64_t *dims) {
    tp_type t = {.dtype = TP_F32, .ndim = ndim};
    for (int d = 0; d < ndim; d++) t.dims[d] = dims[d];
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_input(g, name, &t, &id), TP_OK);
    return id;
}

static tp_value_id swap_last_two(tp_graph *g, tp_value_id x, int ndim) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = ndim - 2, attrs.dim1 = ndim - 1;
    return node(g, "transpose", &x, 1, &attrs);
}

/* One product: A [a_batch..., m, k] (stored [.., k, m] when a_transposed),
 * B likewise with n; the batch dims broadcast as NumPy's. */
typedef struct product {
    int batch_ndim;
    int64_t a_batch[2], b_batch[2];
    int64_t m, k, n;
    bool a_transposed, b_transposed, relu;
} product;

static int stored_dims(const product *p, bool is_a, int64_t *dims) {
    const int64_t *batch = is_a ? p->a_batch : p->b_batch;
    for (int d = 0; d < p->batch_ndim; d++) dims[d] = batch[d];
    int64_t rows = is_a ? p->m : p->k, cols = is_a ? p->k : p->n;
    bool transposed = is_a ? p->a_transposed : p->b_transposed;
    dims[p->batch_ndim] = transposed ? cols : rows;
    dims[p->batch_ndim + 1] = transposed ? rows : cols;
    return p->batch_ndim + 2;
}

static tp_graph *build(const product *p) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("gemm", &g), TP_OK);
    int64_t dims[4];
    int nd = stored_dims(p, true, dims);
    tp_value_id a = input(g, "a", nd, dims);
    nd = stored_dims(p, false, dims);
    tp_value_id b = input(g, "b", nd, dims);
    if (p->a_transposed) a = swap_last_two(g, a, nd);
    if (p->b_transposed) b = swap_last_two(g, b, nd);
    tp_value_id in[2] = {a, b};
    tp_value_id y = node(g, "matmul", in, 2, NULL);
    if (p->relu) y = node(g, "relu", &y, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* A's (or B's) element (row, col) of batch index `index` (per batch dim). */
static double element(const product *p, bool is_a, const float *data, const int64_t *index,
                      int64_t row, int64_t col) {
    int64_t dims[4];
    stored_dims(p, is_a, dims);
    int64_t offset = 0;
    for (int d = 0; d < p->batch_ndim; d++)
        offset = offset * dims[d] + (dims[d] == 1 ? 0 : index[d]);
    bool transposed = is_a ? p->a_transposed : p->b_transposed;
    int64_t r = transposed ? col : row, c = transposed ? row : col;
    int nd = p->batch_ndim;
    return data[(offset * dims[nd] + r) * dims[nd + 1] + c];
}

/* Checks y against the double loop: |y - sum| <= 1e-5 * sum |a||b| + 1e-6. */
static void check_against_loop(const product *p, const tp_tensor *a, const tp_tensor *b,
                               const tp_tensor *y, const char *what) {
    const float *ad = tp_tensor_data(a), *bd = tp_tensor_data(b), *yd = tp_tensor_data(y);
    int64_t batch_dims[2] = {1, 1}, batches = 1;
    for (int d = 0; d < p->batch_ndim; d++) {
        batch_dims[d] = p->a_batch[d] > p->b_batch[d] ? p->a_batch[d] : p->b_batch[d];
        batches *= batch_dims[d];
    }
    ck_assert_int_eq(tp_tensor_numel(y), batches * p->m * p->n);
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t index[2] = {0, 0}, rest = bi;
        for (int d = p->batch_ndim - 1; d >= 0; d--) {
            index[d] = rest % batch_dims[d];
            rest /= batch_dims[d];
        }
        for (int64_t i = 0; i < p->m; i++)
            for (int64_t j = 0; j < p->n; j++) {
                double sum = 0, magnitude = 0;
                for (int64_t k = 0; k < p->k; k++) {
                    double term =
                        element(p, true, ad, index, i, k) * element(p, false, bd, index, k, j);
                    sum += term;
                    magnitude += fabs(term);
                }
                if (p->relu && sum < 0) sum = 0;
                double got = yd[(bi * p->m + i) * p->n + j];
                ck_assert_msg(fabs(got - sum) <= 1e-5 * magnitude + 1e-6,
                              "%s: batch %lld, C[%lld][%lld] is %.9g, the loop gives %.9g", what,
                              (long long)bi, (long long)i, (long long)j, got, sum);
            }
    }
}

static void check_product(const product *p, const char *label) {
    tp_graph *g = build(p);
    int64_t dims[4];
    int nd = stored_dims(p, true, dims);
    tp_tensor *inputs[2];
    inputs[0] = stax_test_random(TP_F32, nd, dims, 11);
    nd = stored_dims(p, false, dims);
    inputs[1] = stax_test_random(TP_F32, nd, dims, 12);
    static const char *const thread_options[][1] = {{"threads=1"}, {"threads=2"}};
    for (int f = 0; f < NUM_FAMILIES; f++)
        for (int t = 0; t < 2; t++) {
            setenv("STAX_GEMM_KERNEL", families[f], 1);
            tp_tensor *y[1] = {NULL};
            tp_status status = stax_test_run("stax", g, inputs, 2, thread_options[t], 1, y);
            ck_assert_msg(status == TP_OK, "%s: %s", label, tp_last_error());
            char what[256];
            snprintf(what, sizeof what, "%s (m %lld, k %lld, n %lld), STAX_GEMM_KERNEL=%s, %s",
                     label, (long long)p->m, (long long)p->k, (long long)p->n, families[f],
                     thread_options[t][0]);
            check_against_loop(p, inputs[0], inputs[1], y[0], what);
            tp_tensor_release(y[0]);
        }
    unsetenv("STAX_GEMM_KERNEL");
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}

/* m, k, n: 1s, primes, the row heights of every family (12, 8, 6, 4, 2, 1
 * and their sums), columns around 8, 16 and 32, k past 128 and 256. */
static const int64_t shapes[][3] = {
    {1, 1, 1},    {1, 7, 33},  {5, 1, 17},    {2, 3, 8},     {13, 37, 31}, {23, 129, 65},
    {12, 64, 32}, {29, 9, 47}, {64, 300, 48}, {1, 257, 300}, {37, 513, 1}, {300, 70, 40},
};

START_TEST(matmul_matches_a_double_loop_for_odd_shapes) {
    stax_test_cache_dir();
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        product p = {.m = shapes[s][0], .k = shapes[s][1], .n = shapes[s][2]};
        check_product(&p, "plain");
    }
}
END_TEST

START_TEST(transposed_operands_match_a_double_loop) {
    stax_test_cache_dir();
    for (int which = 1; which <= 3; which++) {
        product p = {
            .m = 29, .k = 130, .n = 45, .a_transposed = which & 1, .b_transposed = which & 2};
        check_product(&p, which == 1 ? "A^T" : which == 2 ? "B^T" : "A^T B^T");
        product wide = {.m = 3, .k = 40, .n = 300, .b_transposed = true};
        check_product(&wide, "few rows, B^T");
    }
}
END_TEST

START_TEST(batched_and_broadcast_products_match_a_double_loop) {
    stax_test_cache_dir();
    product batched = {
        .batch_ndim = 2, .a_batch = {2, 3}, .b_batch = {2, 3}, .m = 19, .k = 17, .n = 21};
    check_product(&batched, "batched");
    product broadcast = {
        .batch_ndim = 2, .a_batch = {1, 3}, .b_batch = {2, 1}, .m = 7, .k = 33, .n = 18};
    check_product(&broadcast, "broadcast batch");
    product weight = {.batch_ndim = 1, .a_batch = {5}, .b_batch = {1}, .m = 14, .k = 20, .n = 35};
    check_product(&weight, "one B for every batch");
    /* attention's scores: Q [b, h, s, d] @ K^T with K [b, h, s, d] */
    product scores = {.batch_ndim = 2,
                      .a_batch = {2, 4},
                      .b_batch = {2, 4},
                      .m = 40,
                      .k = 16,
                      .n = 40,
                      .b_transposed = true};
    check_product(&scores, "attention scores");
    product big = {.batch_ndim = 1, .a_batch = {3}, .b_batch = {3}, .m = 270, .k = 300, .n = 70};
    check_product(&big, "large batched");
}
END_TEST

/* ---- a weight shared by every batch ---- */

typedef struct gemm_kernels_seen {
    int gemms;
    char names[512];
} gemm_kernels_seen;

static void note_gemm_kernel(const tp_profile_event *event, void *user) {
    gemm_kernels_seen *seen = user;
    if (strcmp(event->phase, "kernel") || strncmp(event->detail, "gemm_", 5)) return;
    seen->gemms++;
    size_t used = strlen(seen->names);
    snprintf(seen->names + used, sizeof seen->names - used, " %s", event->detail);
}

/* x [batch, seq, in], read as [seq, batch, in] (permuted, or stored so),
 * times w [in, out]: the products share w, so stax runs them as one
 * seq*batch-row product (one gemm kernel, named by its m x n x k). */
static void check_shared_weight(bool permuted) {
    const int64_t batch = 4, seq = 6, in = 5, out = 40;
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("shared_weight", &g), TP_OK);
    int64_t x_dims[3] = {permuted ? batch : seq, permuted ? seq : batch, in}, w_dims[2] = {in, out};
    tp_value_id x = input(g, "x", 3, x_dims), w = input(g, "w", 2, w_dims), a = x;
    if (permuted) {
        tp_attrs perm = TP_ATTRS_INIT;
        perm.nperm = 3, perm.perm[0] = 1, perm.perm[1] = 0, perm.perm[2] = 2;
        a = node(g, "permute", &x, 1, &perm);
    }
    tp_value_id operands[2] = {a, w};
    tp_value_id y = node(g, "matmul", operands, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 3, x_dims, 31),
                            stax_test_random(TP_F32, 2, w_dims, 32)};
    tp_tensor *got[1] = {NULL};
    gemm_kernels_seen seen = {0};
    tp_profile_set_handler(note_gemm_kernel, &seen);
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, got);
    tp_profile_set_handler(NULL, NULL);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    const float *xs = tp_tensor_data(inputs[0]), *ws = tp_tensor_data(inputs[1]);
    const float *ys = tp_tensor_data(got[0]);
    double worst = 0;
    for (int64_t s = 0; s < seq; s++)
        for (int64_t b = 0; b < batch; b++)
            for (int64_t o = 0; o < out; o++) {
                double want = 0;
                for (int64_t i = 0; i < in; i++) {
                    int64_t row = permuted ? b * seq + s : s * batch + b;
                    want += (double)xs[row * in + i] * ws[i * out + o];
                }
                double error = fabs(ys[(s * batch + b) * out + o] - want);
                worst = error > worst ? error : worst;
            }
    ck_assert_msg(worst < 1e-5, "%s: worst error %g", permuted ? "permuted" : "stored", worst);
    ck_assert_msg(seen.gemms == 1 && strstr(seen.names, " gemm_24x40x5"),
                  "%s: want one 24-row product, the run reported:%s",
                  permuted ? "permuted" : "stored", seen.names);
    tp_tensor_release(got[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}

START_TEST(a_weight_shared_by_every_batch_is_packed_once) {
    stax_test_cache_dir();
    check_shared_weight(false);
    check_shared_weight(true);
}
END_TEST

START_TEST(epilogues_see_every_element_once) {
    stax_test_cache_dir();
    product rows = {.m = 290, .k = 50, .n = 37, .relu = true};
    check_product(&rows, "relu epilogue, by rows");
    product columns = {.m = 9, .k = 50, .n = 200, .relu = true};
    check_product(&columns, "relu epilogue, by columns");
    product batches = {
        .batch_ndim = 1, .a_batch = {6}, .b_batch = {6}, .m = 11, .k = 20, .n = 23, .relu = true};
    check_product(&batches, "relu epilogue, by batches");
}
END_TEST

START_TEST(an_unknown_kernel_family_is_refused_with_the_variable_named) {
    stax_test_cache_dir();
    product p = {.m = 4, .k = 4, .n = 4};
    tp_graph *g = build(&p);
    int64_t dims[2] = {4, 4};
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, dims, 1),
                            stax_test_random(TP_F32, 2, dims, 2)};
    setenv("STAX_GEMM_KERNEL", "avx1024", 1);
    tp_tensor *y[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, y);
    unsetenv("STAX_GEMM_KERNEL");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_GEMM_KERNEL") != NULL, "%s", tp_last_error());
    ck_assert_msg(strstr(tp_last_error(), "avx1024") != NULL, "%s", tp_last_error());
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_gemm) {
    Suite *s = suite_create("stax_gemm");
    TCase *c = tcase_create("gemm");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, matmul_matches_a_double_loop_for_odd_shapes);
    tcase_add_test(c, transposed_operands_match_a_double_loop);
    tcase_add_test(c, batched_and_broadcast_products_match_a_double_loop);
    tcase_add_test(c, a_weight_shared_by_every_batch_is_packed_once);
    tcase_add_test(c, epilogues_see_every_element_once);
    tcase_add_test(c, an_unknown_kernel_family_is_refused_with_the_variable_named);
    suite_add_tcase(s, c);
    return s;
}
