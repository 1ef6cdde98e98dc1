/* stax's scratch arena (stax_arena.c): the offset assignment on hand-made
 * live ranges (no two ranges live at a common step share a byte, checked by
 * brute force; disjoint ones reuse bytes), and graphs whose intermediates
 * the arena packs (long chains, a value read much later, a value read by a
 * matmul and a kernel, convs, a fused attention, a gather with its status
 * word, dynamic sizes) compared with double-precision oracles computed here,
 * with STAX_ARENA on and off. */
#include "registry/registry_internal.h"
#include "stax_arena.h"
#include "stax_harness.h"

/* ---- offset assignment ---- */

static size_t aligned(size_t bytes) {
    return (bytes ? bytes + STAX_ARENA_ALIGN - 1 : STAX_ARENA_ALIGN) / STAX_ARENA_ALIGN *
           STAX_ARENA_ALIGN;
}

/* Every pair of ranges live at a common step has disjoint bytes, offsets are
 * aligned and inside the total. */
static void expect_valid_layout(const stax_live_range *ranges, int32_t count, const size_t *offsets,
                                size_t total) {
    for (int32_t i = 0; i < count; i++) {
        ck_assert_msg(offsets[i] % STAX_ARENA_ALIGN == 0, "range %d at %zu is not aligned", i,
                      offsets[i]);
        ck_assert_msg(offsets[i] + ranges[i].bytes <= total, "range %d ends past the arena", i);
        for (int32_t j = 0; j < i; j++) {
            bool live_together =
                ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last;
            bool share = offsets[i] < offsets[j] + aligned(ranges[j].bytes) &&
                         offsets[j] < offsets[i] + aligned(ranges[i].bytes);
            ck_assert_msg(!(live_together && share),
                          "ranges %d [%d, %d] and %d [%d, %d] are live together and share bytes "
                          "(%zu+%zu, %zu+%zu)",
                          i, ranges[i].first, ranges[i].last, j, ranges[j].first, ranges[j].last,
                          offsets[i], ranges[i].bytes, offsets[j], ranges[j].bytes);
        }
    }
}

START_TEST(ranges_live_at_a_common_step_never_share_bytes) {
    enum { COUNT = 300, STEPS = 60 };
    static stax_live_range ranges[COUNT];
    static size_t offsets[COUNT];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t state = seed;
        size_t sum = 0;
        for (int32_t i = 0; i < COUNT; i++) {
            int32_t first = (int32_t)(stax_test_next(&state) % STEPS);
            int32_t length = (int32_t)(stax_test_next(&state) % 12);
            ranges[i] =
                (stax_live_range){first, first + length, (size_t)(stax_test_next(&state) % 5000)};
            sum += aligned(ranges[i].bytes);
        }
        size_t total = 0;
        ck_assert_int_eq(stax_arena_assign_offsets(ranges, COUNT, offsets, &total), 0);
        expect_valid_layout(ranges, COUNT, offsets, total);
        /* at least the bytes live at the busiest step, at most no sharing at all */
        size_t busiest = 0;
        for (int32_t step = 0; step < STEPS + 12; step++) {
            size_t live = 0;
            for (int32_t i = 0; i < COUNT; i++)
                if (ranges[i].first <= step && step <= ranges[i].last)
                    live += aligned(ranges[i].bytes);
            if (live > busiest) busiest = live;
        }
        ck_assert_msg(total >= busiest && total < sum, "seed %d: arena %zu, busiest %zu, sum %zu",
                      (int)seed, total, busiest, sum);
    }
}
END_TEST

START_TEST(a_chain_of_one_step_ranges_reuses_one_block) {
    stax_live_range ranges[10];
    size_t offsets[10], total = 0;
    for (int32_t i = 0; i < 10; i++) ranges[i] = (stax_live_range){i, i, 1000};
    ck_assert_int_eq(stax_arena_assign_offsets(ranges, 10, offsets, &total), 0);
    ck_assert_uint_eq(total, 1024);
    for (int32_t i = 0; i < 10; i++) ck_assert_uint_eq(offsets[i], 0);
}
END_TEST

START_TEST(layout_of_three_ranges_by_hand) {
    /* a [0, 1] and c [2, 3] never meet: both at 0; b [1, 2] meets both: above them */
    stax_live_range ranges[3] = {{0, 1, 128}, {1, 2, 64}, {2, 3, 100}};
    size_t offsets[3], total = 0;
    ck_assert_int_eq(stax_arena_assign_offsets(ranges, 3, offsets, &total), 0);
    ck_assert_uint_eq(offsets[0], 0);
    ck_assert_uint_eq(offsets[2], 0);
    ck_assert_uint_eq(offsets[1], 128);
    ck_assert_uint_eq(total, 192);
}
END_TEST

START_TEST(a_small_range_takes_the_smallest_gap_that_fits) {
    /* placed largest first: x [0, 512), y [512, 768), z [768, 1024),
     * w [1024, 1152), v [1152, 1280); y and w end at step 1, so at steps 2-4
     * the 64-byte r sees the gaps [512, 768) and [1024, 1152): the smaller */
    stax_live_range ranges[6] = {{0, 4, 512}, {0, 1, 256}, {0, 4, 200},
                                 {0, 1, 128}, {0, 4, 100}, {2, 4, 64}};
    size_t offsets[6], total = 0;
    ck_assert_int_eq(stax_arena_assign_offsets(ranges, 6, offsets, &total), 0);
    expect_valid_layout(ranges, 6, offsets, total);
    static const size_t expected[6] = {0, 512, 768, 1024, 1152, 1024};
    for (int i = 0; i < 6; i++) ck_assert_uint_eq(offsets[i], expected[i]);
    ck_assert_uint_eq(total, 1280);
}
END_TEST

/* ---- graphs against double-precision oracles ---- */

static void matmul_d(const double *a, const double *b, int64_t m, int64_t k, int64_t n, double *c) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
            c[i * n + j] = s;
        }
}

static void softmax_rows_d(double *x, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        double *row = x + r * cols, max = row[0], sum = 0.0;
        for (int64_t c = 1; c < cols; c++) max = row[c] > max ? row[c] : max;
        for (int64_t c = 0; c < cols; c++) sum += row[c] = exp(row[c] - max);
        for (int64_t c = 0; c < cols; c++) row[c] /= sum;
    }
}

static double *doubles_of(const tp_tensor *t) {
    int64_t n = tp_tensor_numel(t);
    double *out = malloc(sizeof *out * (size_t)(n ? n : 1));
    ck_assert_ptr_nonnull(out);
    for (int64_t i = 0; i < n; i++) out[i] = tp_tensor_get_f64(t, i);
    return out;
}

static void expect_matches(const tp_tensor *got, const double *want, double tol, const char *what) {
    for (int64_t i = 0; i < tp_tensor_numel(got); i++) {
        double a = tp_tensor_get_f64(got, i);
        ck_assert_msg(fabs(a - want[i]) <= tol * (1.0 + fabs(want[i])),
                      "%s: element %lld is %.9g, the oracle gives %.9g", what, (long long)i, a,
                      want[i]);
    }
}

static void set_arena(const char *setting) {
    if (setting)
        setenv("STAX_ARENA", setting, 1);
    else
        unsetenv("STAX_ARENA");
}

static const char *const arena_settings[2] = {NULL, "off"};

/* Runs `g` on stax with the arena on, then off, comparing every output with
 * want[i]. */
static void expect_stax_matches(const tp_graph *g, tp_tensor *const *inputs, int num_inputs,
                                double *const *want, double tol, const char *what) {
    for (int a = 0; a < 2; a++) {
        set_arena(arena_settings[a]);
        tp_tensor *got[8] = {0};
        tp_status status = stax_test_run("stax", g, inputs, num_inputs, NULL, 0, got);
        ck_assert_msg(status == TP_OK, "%s: %s", what, tp_last_error());
        for (int i = 0; i < tp_graph_num_outputs(g); i++) {
            char label[160];
            snprintf(label, sizeof label, "%s (STAX_ARENA=%s), output %d", what, a ? "off" : "on",
                     i);
            expect_matches(got[i], want[i], tol, label);
            tp_tensor_release(got[i]);
        }
    }
    unsetenv("STAX_ARENA");
}

static tp_graph *parse_graph(const char *text, const char *file) {
    tp_graph *g = NULL;
    ck_assert_msg(tp_graph_parse(text, strlen(text), file, &g) == TP_OK, "%s: %s\n%s", file,
                  tp_last_error(), text);
    return g;
}

enum { CHAIN_ROWS = 6, CHAIN_COLS = 20, CHAIN_BLOCKS = 8, CHAIN_LATE = 3 };

/* p0 = x; block i: t = matmul(p, w[i % 2]), u = tanh(t), v = softmax(u),
 * p' = v (+ u of block i - 3 from block 3 on: a value read much later, after
 * a matmul read it as an operand's producer). Returns p8 and u2. */
static tp_graph *chain_graph(void) {
    static char text[8192];
    int used = snprintf(text, sizeof text,
                        "graph chain(%%x: f32[6, 20], %%w0: f32[20, 20], %%w1: f32[20, 20]) {\n");
    char previous[16] = "x";
    for (int i = 0; i < CHAIN_BLOCKS; i++) {
        used += snprintf(text + used, sizeof text - (size_t)used,
                         "  %%t%d: f32[6, 20] = matmul(%%%s, %%w%d)\n"
                         "  %%u%d: f32[6, 20] = tanh(%%t%d)\n"
                         "  %%v%d: f32[6, 20] = softmax(%%u%d) {axis=-1}\n",
                         i, previous, i % 2, i, i, i, i);
        if (i >= CHAIN_LATE) {
            used += snprintf(text + used, sizeof text - (size_t)used,
                             "  %%p%d: f32[6, 20] = add(%%v%d, %%u%d)\n", i + 1, i, i - CHAIN_LATE);
            snprintf(previous, sizeof previous, "p%d", i + 1);
        } else {
            snprintf(previous, sizeof previous, "v%d", i);
        }
    }
    snprintf(text + used, sizeof text - (size_t)used, "  return %%%s, %%u2\n}\n", previous);
    return parse_graph(text, "chain.tpir");
}

static void chain_oracle(const double *x, const double *w0, const double *w1, double *out,
                         double *u2) {
    enum { N = CHAIN_ROWS * CHAIN_COLS };
    static double u[CHAIN_BLOCKS][N];
    double p[N], v[N];
    memcpy(p, x, sizeof p);
    for (int i = 0; i < CHAIN_BLOCKS; i++) {
        matmul_d(p, i % 2 ? w1 : w0, CHAIN_ROWS, CHAIN_COLS, CHAIN_COLS, u[i]);
        for (int e = 0; e < N; e++) v[e] = u[i][e] = tanh(u[i][e]);
        softmax_rows_d(v, CHAIN_ROWS, CHAIN_COLS);
        for (int e = 0; e < N; e++) p[e] = v[e] + (i >= CHAIN_LATE ? u[i - CHAIN_LATE][e] : 0.0);
    }
    memcpy(out, p, sizeof p);
    memcpy(u2, u[2], sizeof p);
}

START_TEST(a_long_chain_with_late_reads_matches_the_oracle) {
    stax_test_cache_dir();
    tp_graph *g = chain_graph();
    int64_t xs[2] = {CHAIN_ROWS, CHAIN_COLS}, ws[2] = {CHAIN_COLS, CHAIN_COLS};
    tp_tensor *in[3] = {stax_test_random(TP_F32, 2, xs, 1), stax_test_random(TP_F32, 2, ws, 2),
                        stax_test_random(TP_F32, 2, ws, 3)};
    double *x = doubles_of(in[0]), *w0 = doubles_of(in[1]), *w1 = doubles_of(in[2]);
    double out[CHAIN_ROWS * CHAIN_COLS], u2[CHAIN_ROWS * CHAIN_COLS];
    chain_oracle(x, w0, w1, out, u2);
    double *want[2] = {out, u2};
    expect_stax_matches(g, in, 3, want, 1e-4, "chain");
    free(x), free(w0), free(w1);
    for (int i = 0; i < 3; i++) tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

/* Direct NCHW conv, square kernel, symmetric padding, groups. */
typedef struct conv_shape {
    int64_t n, cin, h, w, cout, k, stride, pad, group;
} conv_shape;

static int64_t conv_out(const conv_shape *c, int64_t size) {
    return (size + 2 * c->pad - c->k) / c->stride + 1;
}

static void conv_d(const conv_shape *c, const double *x, const double *w, const double *b,
                   double *y) {
    int64_t oh = conv_out(c, c->h), ow = conv_out(c, c->w);
    int64_t cin_g = c->cin / c->group, cout_g = c->cout / c->group;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t co = 0; co < c->cout; co++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double s = b ? b[co] : 0.0;
                    int64_t g = co / cout_g;
                    for (int64_t ci = 0; ci < cin_g; ci++)
                        for (int64_t ki = 0; ki < c->k; ki++)
                            for (int64_t kj = 0; kj < c->k; kj++) {
                                int64_t r = i * c->stride + ki - c->pad,
                                        q = j * c->stride + kj - c->pad;
                                if (r < 0 || r >= c->h || q < 0 || q >= c->w) continue;
                                s += x[((n * c->cin + g * cin_g + ci) * c->h + r) * c->w + q] *
                                     w[((co * cin_g + ci) * c->k + ki) * c->k + kj];
                            }
                    y[((n * c->cout + co) * oh + i) * ow + j] = s;
                }
}

/* max_pool 3x3, stride 2, padding 1 over [n, c, h, w]. */
static void max_pool_d(int64_t planes, int64_t h, int64_t w, const double *x, double *y) {
    int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) / 2 + 1;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double m = -INFINITY;
                for (int64_t ki = 0; ki < 3; ki++)
                    for (int64_t kj = 0; kj < 3; kj++) {
                        int64_t r = i * 2 + ki - 1, q = j * 2 + kj - 1;
                        if (r >= 0 && r < h && q >= 0 && q < w && x[(p * h + r) * w + q] > m)
                            m = x[(p * h + r) * w + q];
                    }
                y[(p * oh + i) * ow + j] = m;
            }
}

static const char conv_text[] =
    "graph convs(%x: f32[2, 3, 9, 9], %w1: f32[8, 3, 3, 3], %b1: f32[8], %w2: f32[8, 8, 3, 3], "
    "%wd: f32[8, 1, 3, 3], %w3: f32[4, 8, 1, 1]) {\n"
    "  %c1: f32[2, 8, 9, 9] = conv(%x, %w1, %b1) {strides=[], pads=[1, 1, 1, 1], dilations=[], "
    "group=1}\n"
    "  %r1: f32[2, 8, 9, 9] = relu(%c1)\n"
    "  %c2: f32[2, 8, 9, 9] = conv(%r1, %w2) {strides=[], pads=[1, 1, 1, 1], dilations=[], "
    "group=1}\n"
    "  %t2: f32[2, 8, 9, 9] = tanh(%c2)\n"
    "  %d: f32[2, 8, 9, 9] = conv(%t2, %wd) {strides=[], pads=[1, 1, 1, 1], dilations=[], "
    "group=8}\n"
    "  %s: f32[2, 8, 9, 9] = add(%d, %r1)\n"
    "  %p: f32[2, 8, 5, 5] = max_pool(%s) {kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, "
    "1], dilations=[], ceil_mode=false}\n"
    "  %c3: f32[2, 4, 5, 5] = conv(%p, %w3) {strides=[], pads=[0, 0, 0, 0], dilations=[], "
    "group=1}\n"
    "  return %c3, %s\n"
    "}\n";

START_TEST(convs_depthwise_pool_and_a_residual_match_the_oracle) {
    stax_test_cache_dir();
    tp_graph *g = parse_graph(conv_text, "convs.tpir");
    int64_t shapes[6][4] = {{2, 3, 9, 9}, {8, 3, 3, 3}, {8},
                            {8, 8, 3, 3}, {8, 1, 3, 3}, {4, 8, 1, 1}};
    int ranks[6] = {4, 4, 1, 4, 4, 4};
    tp_tensor *in[6];
    double *d[6];
    for (int i = 0; i < 6; i++) {
        in[i] = stax_test_random(TP_F32, ranks[i], shapes[i], 10 + (uint64_t)i);
        d[i] = doubles_of(in[i]);
    }
    enum { PLANE = 2 * 8 * 9 * 9 };
    static double c1[PLANE], c2[PLANE], dw[PLANE], s[PLANE], pooled[2 * 8 * 25], c3[2 * 4 * 25];
    conv_shape first = {2, 3, 9, 9, 8, 3, 1, 1, 1}, second = {2, 8, 9, 9, 8, 3, 1, 1, 1},
               depthwise = {2, 8, 9, 9, 8, 3, 1, 1, 8}, last = {2, 8, 5, 5, 4, 1, 1, 0, 1};
    conv_d(&first, d[0], d[1], d[2], c1);
    for (int e = 0; e < PLANE; e++) c1[e] = c1[e] > 0.0 ? c1[e] : 0.0;
    conv_d(&second, c1, d[3], NULL, c2);
    for (int e = 0; e < PLANE; e++) c2[e] = tanh(c2[e]);
    conv_d(&depthwise, c2, d[4], NULL, dw);
    for (int e = 0; e < PLANE; e++) s[e] = dw[e] + c1[e];
    max_pool_d(16, 9, 9, s, pooled);
    conv_d(&last, pooled, d[5], NULL, c3);
    double *want[2] = {c3, s};
    expect_stax_matches(g, in, 6, want, 1e-4, "convs");
    for (int i = 0; i < 6; i++) free(d[i]), tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

enum { ATT_HEADS = 2, ATT_SEQ = 16, ATT_DIM = 8 };

static const char attention_text[] =
    "graph att(%x: f32[1, 2, 16, 8], %k: f32[1, 2, 16, 8], %v: f32[1, 2, 16, 8], "
    "%w: f32[8, 8]) {\n"
    "  %q: f32[1, 2, 16, 8] = tanh(%x)\n"
    "  %kt: f32[1, 2, 8, 16] = transpose(%k) {dim0=2, dim1=3}\n"
    "  %scores: f32[1, 2, 16, 16] = matmul(%q, %kt)\n"
    "  %sc: f32[1] = constant() {value=[0.35]}\n"
    "  %scaled: f32[1, 2, 16, 16] = mul(%scores, %sc)\n"
    "  %p: f32[1, 2, 16, 16] = softmax(%scaled) {axis=-1}\n"
    "  %ctx: f32[1, 2, 16, 8] = matmul(%p, %v)\n"
    "  %o: f32[1, 2, 16, 8] = add(%ctx, %q)\n"
    "  %y: f32[1, 2, 16, 8] = matmul(%o, %w)\n"
    "  %z: f32[1, 2, 16, 8] = relu(%y)\n"
    "  return %z\n"
    "}\n";

START_TEST(an_attention_whose_query_is_read_again_matches_the_oracle) {
    stax_test_cache_dir();
    tp_graph *g = parse_graph(attention_text, "att.tpir");
    int64_t qs[4] = {1, ATT_HEADS, ATT_SEQ, ATT_DIM}, ws[2] = {ATT_DIM, ATT_DIM};
    tp_tensor *in[4] = {stax_test_random(TP_F32, 4, qs, 21), stax_test_random(TP_F32, 4, qs, 22),
                        stax_test_random(TP_F32, 4, qs, 23), stax_test_random(TP_F32, 2, ws, 24)};
    double *x = doubles_of(in[0]), *k = doubles_of(in[1]), *v = doubles_of(in[2]),
           *w = doubles_of(in[3]);
    enum { HEAD = ATT_SEQ * ATT_DIM };
    double z[ATT_HEADS * HEAD];
    for (int h = 0; h < ATT_HEADS; h++) {
        double q[HEAD], kt[HEAD], scores[ATT_SEQ * ATT_SEQ], o[HEAD];
        for (int e = 0; e < HEAD; e++) q[e] = tanh(x[h * HEAD + e]);
        for (int j = 0; j < ATT_SEQ; j++)
            for (int c = 0; c < ATT_DIM; c++) kt[c * ATT_SEQ + j] = k[h * HEAD + j * ATT_DIM + c];
        matmul_d(q, kt, ATT_SEQ, ATT_DIM, ATT_SEQ, scores);
        for (int e = 0; e < ATT_SEQ * ATT_SEQ; e++) scores[e] *= (double)0.35f;
        softmax_rows_d(scores, ATT_SEQ, ATT_SEQ);
        matmul_d(scores, v + h * HEAD, ATT_SEQ, ATT_SEQ, ATT_DIM, o);
        for (int e = 0; e < HEAD; e++) o[e] += q[e];
        matmul_d(o, w, ATT_SEQ, ATT_DIM, ATT_DIM, z + h * HEAD);
    }
    for (int e = 0; e < ATT_HEADS * HEAD; e++) z[e] = z[e] > 0.0 ? z[e] : 0.0;
    double *want[1] = {z};
    expect_stax_matches(g, in, 4, want, 1e-4, "attention");
    free(x), free(k), free(v), free(w);
    for (int i = 0; i < 4; i++) tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

enum { EMB_ROWS = 10, EMB_IDS = 7, EMB_DIM = 6 };

static const char gather_text[] = "graph emb(%table: f32[10, 6], %ids: i64[7], %w: f32[6, 6]) {\n"
                                  "  %h: f32[10, 6] = matmul(%table, %w)\n"
                                  "  %t: f32[10, 6] = tanh(%h)\n"
                                  "  %e: f32[7, 6] = gather(%t, %ids) {axis=0}\n"
                                  "  %s: f32[7, 6] = softmax(%e) {axis=-1}\n"
                                  "  %m: f32[7, 6] = matmul(%s, %w)\n"
                                  "  %o: f32[7, 6] = add(%m, %e)\n"
                                  "  return %o\n"
                                  "}\n";

static void gather_oracle(const double *table, const int64_t *ids, const double *w, double *o) {
    double h[EMB_ROWS * EMB_DIM], e[EMB_IDS * EMB_DIM], s[EMB_IDS * EMB_DIM];
    matmul_d(table, w, EMB_ROWS, EMB_DIM, EMB_DIM, h);
    for (int i = 0; i < EMB_IDS; i++)
        for (int c = 0; c < EMB_DIM; c++) {
            int64_t row = ids[i] < 0 ? ids[i] + EMB_ROWS : ids[i];
            s[i * EMB_DIM + c] = e[i * EMB_DIM + c] = tanh(h[row * EMB_DIM + c]);
        }
    softmax_rows_d(s, EMB_IDS, EMB_DIM);
    matmul_d(s, w, EMB_IDS, EMB_DIM, EMB_DIM, o);
    for (int i = 0; i < EMB_IDS * EMB_DIM; i++) o[i] += e[i];
}

START_TEST(a_gather_reports_a_bad_index_and_the_next_call_is_right_again) {
    stax_test_cache_dir();
    tp_graph *g = parse_graph(gather_text, "emb.tpir");
    int64_t ts[2] = {EMB_ROWS, EMB_DIM}, is[1] = {EMB_IDS}, ws[2] = {EMB_DIM, EMB_DIM};
    tp_tensor *table = stax_test_random(TP_F32, 2, ts, 31),
              *w = stax_test_random(TP_F32, 2, ws, 32);
    tp_tensor *ids = NULL, *bad = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_I64, 1, is, &ids), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_I64, 1, is, &bad), TP_OK);
    int64_t *good_ids = tp_tensor_data_mut(ids), *bad_ids = tp_tensor_data_mut(bad);
    for (int i = 0; i < EMB_IDS; i++) good_ids[i] = bad_ids[i] = (i * 3) % EMB_ROWS - 2;
    bad_ids[4] = EMB_ROWS;
    double *dt = doubles_of(table), *dw = doubles_of(w), want[EMB_IDS * EMB_DIM];
    gather_oracle(dt, good_ids, dw, want);
    for (int a = 0; a < 2; a++) {
        set_arena(arena_settings[a]);
        tp_executable *exe = NULL;
        tp_tensor *in[3] = {table, ids, w}, *in_bad[3] = {table, bad, w};
        ck_assert_msg(tp_backend_compile(stax_test_backend("stax"), g, in, 3, NULL, 0, &exe) ==
                          TP_OK,
                      "%s", tp_last_error());
        for (int call = 0; call < 3; call++) {
            tp_tensor *out[1] = {NULL};
            tp_status status = tp_executable_run(exe, call == 1 ? in_bad : in, 3, out);
            if (call == 1) {
                ck_assert_int_ne(status, TP_OK);
                ck_assert_msg(strstr(tp_last_error(), "%e (gather)") &&
                                  strstr(tp_last_error(), "index 10"),
                              "%s", tp_last_error());
                continue;
            }
            ck_assert_msg(status == TP_OK, "%s", tp_last_error());
            expect_matches(out[0], want, 1e-4, a ? "gather (STAX_ARENA=off)" : "gather");
            tp_tensor_release(out[0]);
        }
        tp_executable_destroy(exe);
    }
    unsetenv("STAX_ARENA");
    free(dt), free(dw);
    tp_tensor_release(table), tp_tensor_release(w), tp_tensor_release(ids), tp_tensor_release(bad);
    tp_graph_destroy(g);
}
END_TEST

/* ---- the plugin table directly: the compile log and dynamic sizes ---- */

static char arena_log[8192];
static void capture_log(const tp_plugin_host *host, int32_t level, const char *message) {
    (void)host, (void)level;
    size_t used = strlen(arena_log);
    snprintf(arena_log + used, sizeof arena_log - used, "%s\n", message);
}

static void direct_parallel_for(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *ctx) {
    (void)grain; /* two chunks, as two threads would take them */
    fn(ctx, 0, n / 2);
    fn(ctx, n / 2, n);
}
static int32_t direct_threads(void) {
    return 2;
}

/* Compiles `g` for `inputs` on the plugin table, with the log captured. */
static tp_plugin_executable *compile_direct(stax_direct *d, const tp_graph *g,
                                            tp_tensor *const *inputs, int num_inputs) {
    tp_graph_view *view = NULL;
    ck_assert_int_eq(tp_graph_view_create(g, &view), TP_OK);
    tp_plugin_tensor_meta meta[8];
    for (int i = 0; i < num_inputs; i++) meta[i] = stax_test_meta(inputs[i]);
    arena_log[0] = 0;
    d->host.log = capture_log;
    char error[512] = "";
    tp_plugin_executable *exe = NULL;
    int32_t status = stax_direct_compile(d, tp_graph_view_get(view), meta, num_inputs, &exe, error,
                                         sizeof error);
    ck_assert_msg(status == TP_PLUGIN_OK, "%s", error);
    tp_graph_view_destroy(view);
    return exe;
}

START_TEST(the_compile_log_says_the_arena_is_smaller_than_the_scratch_it_holds) {
    stax_test_cache_dir();
    tp_graph *g = chain_graph();
    int64_t xs[2] = {CHAIN_ROWS, CHAIN_COLS}, ws[2] = {CHAIN_COLS, CHAIN_COLS};
    tp_tensor *in[3] = {stax_test_random(TP_F32, 2, xs, 1), stax_test_random(TP_F32, 2, ws, 2),
                        stax_test_random(TP_F32, 2, ws, 3)};
    stax_direct d;
    stax_open_direct(&d, direct_parallel_for, direct_threads);
    tp_plugin_executable *exe = compile_direct(&d, g, in, 3);
    const char *line = strstr(arena_log, "scratch arena ");
    ck_assert_msg(line != NULL, "no arena line in the compile log:\n%s", arena_log);
    unsigned long long arena = 0, total = 0;
    int slots = 0;
    ck_assert_int_eq(sscanf(line, "scratch arena %llu bytes for %d scratch slots of %llu bytes",
                            &arena, &slots, &total),
                     3);
    /* 8 blocks of three 480-byte values each: many slots, a few live at once */
    ck_assert_msg(slots >= 3 * CHAIN_BLOCKS && arena > 0 && arena * 3 < total, "%s", line);
    stax_direct_release(&d, exe);
    setenv("STAX_ARENA", "off", 1);
    exe = compile_direct(&d, g, in, 3);
    ck_assert_msg(strstr(arena_log, "STAX_ARENA=off"), "%s", arena_log);
    stax_direct_release(&d, exe);
    setenv("STAX_ARENA", "sometimes", 1);
    tp_graph_view *view = NULL;
    ck_assert_int_eq(tp_graph_view_create(g, &view), TP_OK);
    tp_plugin_tensor_meta meta[3] = {stax_test_meta(in[0]), stax_test_meta(in[1]),
                                     stax_test_meta(in[2])};
    char error[512] = "";
    ck_assert_int_ne(
        stax_direct_compile(&d, tp_graph_view_get(view), meta, 3, &exe, error, sizeof error),
        TP_PLUGIN_OK);
    ck_assert_msg(strstr(error, "STAX_ARENA is 'sometimes'") && strstr(error, "on or off"), "%s",
                  error);
    tp_graph_view_destroy(view);
    unsetenv("STAX_ARENA");
    stax_close_direct(&d);
    for (int i = 0; i < 3; i++) tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

static const char dynamic_text[] = "graph dynchain(%x: f32[n, 8], %w: f32[8, 8]) {\n"
                                   "  %a: f32[n, 8] = matmul(%x, %w)\n"
                                   "  %b: f32[n, 8] = tanh(%a)\n"
                                   "  %s: f32[n, 8] = softmax(%b) {axis=-1}\n"
                                   "  %c: f32[n, 8] = matmul(%s, %w)\n"
                                   "  %d: f32[n, 8] = add(%c, %b)\n"
                                   "  %e: f32[n, 8] = softmax(%d) {axis=-1}\n"
                                   "  %f: f32[n, 8] = matmul(%e, %w)\n"
                                   "  %g: f32[n, 8] = add(%f, %s)\n"
                                   "  return %g\n"
                                   "}\n";

static void dynamic_oracle(const double *x, const double *w, int64_t n, double *g) {
    double *b = malloc(sizeof *b * (size_t)(n * 8 + 1)),
           *s = malloc(sizeof *s * (size_t)(n * 8 + 1)),
           *e = malloc(sizeof *e * (size_t)(n * 8 + 1));
    ck_assert(b && s && e);
    matmul_d(x, w, n, 8, 8, b);
    for (int64_t i = 0; i < n * 8; i++) s[i] = b[i] = tanh(b[i]);
    softmax_rows_d(s, n, 8);
    matmul_d(s, w, n, 8, 8, e);
    for (int64_t i = 0; i < n * 8; i++) e[i] += b[i];
    softmax_rows_d(e, n, 8);
    matmul_d(e, w, n, 8, 8, g);
    for (int64_t i = 0; i < n * 8; i++) g[i] += s[i];
    free(b), free(s), free(e);
}

START_TEST(one_dynamic_executable_grows_its_arena_across_sizes) {
    stax_test_cache_dir();
    tp_graph *g = parse_graph(dynamic_text, "dynchain.tpir");
    static const int64_t sizes[] = {5, 64, 1, 300, 3, 0, 17};
    int64_t ws[2] = {8, 8};
    tp_tensor *w = stax_test_random(TP_F32, 2, ws, 41);
    double *dw = doubles_of(w);
    stax_direct d;
    stax_open_direct(&d, direct_parallel_for, direct_threads);
    for (int a = 0; a < 2; a++) {
        set_arena(arena_settings[a]);
        int64_t first[2] = {sizes[0], 8};
        tp_tensor *example[2] = {stax_test_random(TP_F32, 2, first, 40), w};
        tp_plugin_executable *exe = compile_direct(&d, g, example, 2);
        ck_assert_msg(strstr(arena_log, "one object for every size"),
                      "not compiled for every size:\n%s", arena_log);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            int64_t xs[2] = {sizes[i], 8};
            tp_tensor *x = stax_test_random(TP_F32, 2, xs, 50 + i), *out = NULL;
            ck_assert_int_eq(tp_tensor_create(TP_F32, 2, xs, &out), TP_OK);
            tp_plugin_buffer inputs[2] = {stax_test_buffer(x), stax_test_buffer(w)},
                             outputs[1] = {stax_test_buffer(out)};
            ck_assert_msg(stax_direct_run(&d, exe, inputs, 2, outputs, 1) == TP_PLUGIN_OK,
                          "n=%lld: %s", (long long)sizes[i], stax_direct_error);
            double *dx = doubles_of(x), *want = malloc(sizeof *want * (size_t)(sizes[i] * 8 + 1));
            ck_assert_ptr_nonnull(want);
            dynamic_oracle(dx, dw, sizes[i], want);
            char what[96];
            snprintf(what, sizeof what, "n=%lld (STAX_ARENA=%s)", (long long)sizes[i],
                     a ? "off" : "on");
            expect_matches(out, want, 1e-4, what);
            free(dx), free(want);
            tp_tensor_release(x), tp_tensor_release(out);
        }
        stax_direct_release(&d, exe);
        tp_tensor_release(example[0]);
    }
    unsetenv("STAX_ARENA");
    stax_close_direct(&d);
    free(dw);
    tp_tensor_release(w);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_arena) {
    Suite *s = suite_create("stax_arena");
    TCase *layout = tcase_create("layout");
    tcase_set_timeout(layout, 120);
    tcase_add_test(layout, ranges_live_at_a_common_step_never_share_bytes);
    tcase_add_test(layout, a_chain_of_one_step_ranges_reuses_one_block);
    tcase_add_test(layout, layout_of_three_ranges_by_hand);
    tcase_add_test(layout, a_small_range_takes_the_smallest_gap_that_fits);
    suite_add_tcase(s, layout);
    TCase *graphs = tcase_create("graphs");
    tcase_set_timeout(graphs, 600);
    tcase_add_test(graphs, a_long_chain_with_late_reads_matches_the_oracle);
    tcase_add_test(graphs, convs_depthwise_pool_and_a_residual_match_the_oracle);
    tcase_add_test(graphs, an_attention_whose_query_is_read_again_matches_the_oracle);
    tcase_add_test(graphs, a_gather_reports_a_bad_index_and_the_next_call_is_right_again);
    tcase_add_test(graphs, the_compile_log_says_the_arena_is_smaller_than_the_scratch_it_holds);
    tcase_add_test(graphs, one_dynamic_executable_grows_its_arena_across_sizes);
    suite_add_tcase(s, graphs);
    return s;
}
