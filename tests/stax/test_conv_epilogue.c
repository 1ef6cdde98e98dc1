/* stax runs a conv's pointwise consumers (relu, clip, sigmoid, a residual
 * add then relu) as an epilogue of the conv's window step, on each block of
 * the output it finishes: the packed im2col path, the 1x1 path whose input is
 * B, the depthwise kernel and the legacy 6x16 pair. Each case is compared
 * with a double-precision direct convolution and epilogue computed here (f16
 * rounded where the graph's values are f16), and the profile shows that the
 * activation is not a kernel of its own; STAX_CONV_EPILOGUE=off brings that
 * kernel back. A conv that is also returned is still stored. */
#include "stax_harness.h"
#include "tensorplay/compile.h"
#include "tensorplay/profile.h"

typedef enum epilogue_kind {
    EPILOGUE_RELU,
    EPILOGUE_CLIP, /* clip(y, 0, 6): MobileNetV2's relu6 */
    EPILOGUE_SIGMOID,
    EPILOGUE_ADD_RELU, /* relu(y + residual): ResNet's block end */
} epilogue_kind;

typedef struct conv_case {
    const char *what;
    int64_t batch, in_channels, out_channels, group;
    int64_t in[2], kernel[2], stride[2], pads[4]; /* pads: top, left, bottom, right */
} conv_case;

static int64_t output_size(const conv_case *c, int a) {
    return (c->in[a] + c->pads[a] + c->pads[2 + a] - c->kernel[a]) / c->stride[a] + 1;
}

static int64_t output_numel(const conv_case *c) {
    return c->batch * c->out_channels * output_size(c, 0) * output_size(c, 1);
}

static double round_to(tp_dtype dtype, double value) {
    return dtype == TP_F16 ? (double)tp_f16_to_f32(tp_f16_from_f32((float)value)) : value;
}

/* y[n][co][oh][ow] = b[co] + sum over ci in co's group, kh, kw of
 * x[n][ci][ih][iw] * w[co][ci - group start][kh][kw], in double. */
static double *direct_conv(const conv_case *c, const tp_tensor *x, const tp_tensor *w,
                           const tp_tensor *b) {
    int64_t oh_n = output_size(c, 0), ow_n = output_size(c, 1);
    int64_t cin_g = c->in_channels / c->group, cout_g = c->out_channels / c->group;
    double *y = calloc((size_t)output_numel(c), sizeof *y);
    ck_assert_ptr_nonnull(y);
    for (int64_t n = 0; n < c->batch; n++)
        for (int64_t co = 0; co < c->out_channels; co++)
            for (int64_t oh = 0; oh < oh_n; oh++)
                for (int64_t ow = 0; ow < ow_n; ow++) {
                    double sum = tp_tensor_get_f64(b, co);
                    for (int64_t i = 0; i < cin_g; i++) {
                        int64_t ci = co / cout_g * cin_g + i;
                        for (int64_t kh = 0; kh < c->kernel[0]; kh++)
                            for (int64_t kw = 0; kw < c->kernel[1]; kw++) {
                                int64_t ih = oh * c->stride[0] + kh - c->pads[0];
                                int64_t iw = ow * c->stride[1] + kw - c->pads[1];
                                if (ih < 0 || ih >= c->in[0] || iw < 0 || iw >= c->in[1]) continue;
                                sum += tp_tensor_get_f64(x, ((n * c->in_channels + ci) * c->in[0] +
                                                             ih) * c->in[1] +
                                                                iw) *
                                       tp_tensor_get_f64(w, ((co * cin_g + i) * c->kernel[0] + kh) *
                                                                    c->kernel[1] +
                                                                kw);
                            }
                    }
                    y[((n * c->out_channels + co) * oh_n + oh) * ow_n + ow] = sum;
                }
    return y;
}

/* The epilogue on the conv's value `y` (already rounded to the graph's dtype). */
static double apply_epilogue(epilogue_kind kind, double y, double residual) {
    switch (kind) {
    case EPILOGUE_RELU:
        return y > 0.0 ? y : 0.0;
    case EPILOGUE_CLIP:
        return y < 0.0 ? 0.0 : y > 6.0 ? 6.0 : y;
    case EPILOGUE_SIGMOID:
        return 1.0 / (1.0 + exp(-y));
    case EPILOGUE_ADD_RELU:
        return y + residual > 0.0 ? y + residual : 0.0;
    }
    return y;
}

/* graph(x, w, b[, residual]) { y = conv(x, w, b); return EPILOGUE(y)[, y] }. */
static tp_graph *epilogue_graph(const conv_case *c, epilogue_kind kind, tp_dtype dtype,
                                tp_tensor *const *operands, bool return_conv) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("epilogue_case", &g), TP_OK);
    static const char *const names[] = {"x", "w", "b", "residual"};
    tp_value_id ids[4];
    int inputs = kind == EPILOGUE_ADD_RELU ? 4 : 3;
    for (int i = 0; i < inputs; i++) {
        tp_type type = {.dtype = dtype, .ndim = tp_tensor_ndim(operands[i])};
        for (int d = 0; d < type.ndim; d++) type.dims[d] = tp_tensor_dim(operands[i], d);
        ck_assert_int_eq(tp_graph_add_input(g, names[i], &type, &ids[i]), TP_OK);
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = c->group;
    memcpy(attrs.strides, c->stride, sizeof c->stride);
    memcpy(attrs.pads, c->pads, sizeof c->pads);
    attrs.dilations[0] = attrs.dilations[1] = 1;
    attrs.nstrides = attrs.ndilations = 2;
    attrs.npads = 4;
    tp_value_id y = stax_test_named_node(g, "conv", ids, 3, &attrs, "y"), out = y;
    tp_attrs clip = TP_ATTRS_INIT;
    clip.min = 0.0, clip.max = 6.0;
    switch (kind) {
    case EPILOGUE_RELU:
        out = stax_test_named_node(g, "relu", &y, 1, NULL, "out");
        break;
    case EPILOGUE_CLIP:
        out = stax_test_named_node(g, "clip", &y, 1, &clip, "out");
        break;
    case EPILOGUE_SIGMOID:
        out = stax_test_named_node(g, "sigmoid", &y, 1, NULL, "out");
        break;
    case EPILOGUE_ADD_RELU: {
        tp_value_id sum_operands[2] = {y, ids[3]};
        tp_value_id sum = stax_test_named_node(g, "add", sum_operands, 2, NULL, "sum");
        out = stax_test_named_node(g, "relu", &sum, 1, NULL, "out");
        break;
    }
    }
    tp_value_id outputs[2] = {out, y};
    ck_assert_int_eq(tp_graph_set_outputs(g, outputs, return_conv ? 2 : 1), TP_OK);
    return g;
}

/* Inputs in [-2, 2) of `dtype` (f16: rounded from the f32 draws). */
static tp_tensor *random_of(tp_dtype dtype, int ndim, const int64_t *shape, uint64_t seed) {
    tp_tensor *f32 = stax_test_random(TP_F32, ndim, shape, seed);
    if (dtype == TP_F32) return f32;
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    uint16_t *bits = tp_tensor_data_mut(t);
    const float *values = tp_tensor_data(f32);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) bits[i] = tp_f16_from_f32(values[i]);
    tp_tensor_release(f32);
    return t;
}

typedef struct kernel_count {
    int total, conv, fused_conv;
} kernel_count;

static void count_kernel(const tp_profile_event *event, void *user) {
    kernel_count *seen = user;
    if (strcmp(event->phase, "kernel")) return;
    seen->total++;
    if (!strncmp(event->detail, "conv_", 5)) {
        seen->conv++;
        if (strstr(event->detail, "+")) seen->fused_conv++;
    }
}

/* Runs the case on stax and checks every output against the direct conv;
 * returns the kernels the run executed. */
/* x, w, b and a residual of the case's shapes, in `dtype`. */
static void make_operands(const conv_case *c, tp_dtype dtype, uint64_t seed, tp_tensor **operands) {
    int64_t x_shape[4] = {c->batch, c->in_channels, c->in[0], c->in[1]};
    int64_t w_shape[4] = {c->out_channels, c->in_channels / c->group, c->kernel[0], c->kernel[1]};
    int64_t b_shape[1] = {c->out_channels};
    int64_t y_shape[4] = {c->batch, c->out_channels, output_size(c, 0), output_size(c, 1)};
    operands[0] = random_of(dtype, 4, x_shape, seed);
    operands[1] = random_of(dtype, 4, w_shape, seed + 1);
    operands[2] = random_of(dtype, 1, b_shape, seed + 2);
    operands[3] = random_of(dtype, 4, y_shape, seed + 3);
}

/* got[0] (and got[1], the conv, with return_conv) against the direct conv
 * and epilogue in double. */
static void expect_direct_conv(const conv_case *c, epilogue_kind kind, tp_dtype dtype,
                               tp_tensor *const *operands, tp_tensor *const *got, bool return_conv,
                               const char *how) {
    ck_assert_int_eq(tp_tensor_numel(got[0]), output_numel(c));
    double *conv = direct_conv(c, operands[0], operands[1], operands[2]);
    int64_t taps = c->in_channels / c->group * c->kernel[0] * c->kernel[1];
    /* f32: sums of up to a few hundred products in f32; f16: the conv and
     * the result each rounded once (the f32 sum may round the other way) */
    double rtol = dtype == TP_F16 ? 4e-3 : 1e-5, atol = dtype == TP_F16 ? 4e-3 : 1e-6 * taps + 1e-5;
    for (int64_t i = 0; i < output_numel(c); i++) {
        double y = round_to(dtype, conv[i]);
        double want = round_to(dtype, apply_epilogue(kind, y, tp_tensor_get_f64(operands[3], i)));
        double a = tp_tensor_get_f64(got[0], i);
        ck_assert_msg(fabs(a - want) <= atol + rtol * fabs(want),
                      "%s (epilogue %d, %s, %s): element %lld is %.9g, the direct conv and "
                      "epilogue give %.9g",
                      c->what, (int)kind, dtype == TP_F16 ? "f16" : "f32", how, (long long)i, a,
                      want);
        if (return_conv) {
            double stored = tp_tensor_get_f64(got[1], i);
            ck_assert_msg(
                fabs(stored - y) <= atol + rtol * fabs(y),
                "%s: the returned conv's element %lld is %.9g, the direct conv gives %.9g", c->what,
                (long long)i, stored, y);
        }
    }
    free(conv);
}

/* Runs the case on stax (STAX_GEMM_KERNEL=family when given, the compile
 * option `threads` when given) and checks every output against the direct
 * conv; returns the kernels the run executed. */
static kernel_count check_case_on(const conv_case *c, epilogue_kind kind, tp_dtype dtype,
                                  const char *family, bool return_conv, const char *threads) {
    tp_tensor *operands[4];
    make_operands(c, dtype, 31, operands);
    int inputs = kind == EPILOGUE_ADD_RELU ? 4 : 3;
    tp_graph *g = epilogue_graph(c, kind, dtype, operands, return_conv);
    if (family) setenv("STAX_GEMM_KERNEL", family, 1);
    kernel_count seen = {0};
    tp_tensor *got[2] = {NULL, NULL};
    tp_profile_set_handler(count_kernel, &seen);
    const char *options[1] = {threads};
    tp_status status = stax_test_run("stax", g, operands, inputs, options, threads ? 1 : 0, got);
    tp_profile_set_handler(NULL, NULL);
    unsetenv("STAX_GEMM_KERNEL");
    ck_assert_msg(status == TP_OK, "%s: %s", c->what, tp_last_error());
    char how[64];
    snprintf(how, sizeof how, "STAX_GEMM_KERNEL=%s, %s", family ? family : "auto",
             threads ? threads : "the pool's threads");
    expect_direct_conv(c, kind, dtype, operands, got, return_conv, how);
    for (int i = 0; i < 2; i++) tp_tensor_release(got[i]);
    for (int i = 0; i < 4; i++) tp_tensor_release(operands[i]);
    tp_graph_destroy(g);
    return seen;
}

/* check_case_on with the host pool's threads. */
static kernel_count check_case(const conv_case *c, epilogue_kind kind, tp_dtype dtype,
                               const char *family, bool return_conv) {
    return check_case_on(c, kind, dtype, family, return_conv, NULL);
}

static const conv_case cases[] = {
    {"3x3 pad 1 (im2col)", 1, 5, 7, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    {"3x3 stride 2, pads on one side, batch 3",
     3,
     6,
     13,
     1,
     {17, 15},
     {3, 3},
     {2, 2},
     {0, 1, 1, 0}},
    {"k past one k block (kc), batch 2", 2, 32, 20, 1, {7, 9}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    {"group 3, batch 2", 2, 9, 12, 3, {7, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    {"1x1 (the input is B), batch 2", 2, 17, 25, 1, {6, 5}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"1x1 wide (columns split between threads)",
     1,
     16,
     24,
     1,
     {40, 41},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"1x1 to many channels (A larger than C: rows split on one thread)",
     1,
     20,
     600,
     1,
     {5, 8},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"depthwise 3x3 stride 2, batch 2", 2, 8, 8, 8, {15, 17}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
    {"depthwise 3x3, rows longer than one epilogue block",
     1,
     3,
     3,
     3,
     {70, 90},
     {3, 3},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise 3x3 stride 2, rows of 16 and more (even and odd columns split)",
     2,
     3,
     3,
     3,
     {12, 71},
     {3, 3},
     {2, 2},
     {1, 1, 0, 1}},
    {"depthwise 5x5 stride 2 pad 2", 1, 4, 4, 4, {9, 11}, {5, 5}, {2, 2}, {2, 2, 2, 2}},
    /* stride 1 on planes narrower than 32 columns: every row of a plane in
     * one run along the bordered plane (MobileNet's 7x7, 14x14 and 28x28),
     * with a channel multiplier, asymmetric pads, a one-row and a one-pixel
     * output, the widest such rows, and a plane whose rows span two
     * epilogue blocks (2048 / 7 = 292 rows a block) */
    {"depthwise 3x3, 7x7 planes in one run, batch 2",
     2,
     5,
     5,
     5,
     {7, 7},
     {3, 3},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise 3x3, 14x14 planes in one run, multiplier 2",
     1,
     4,
     8,
     4,
     {14, 14},
     {3, 3},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise 3x3 in one run, pads on the top and left only, one output row",
     1,
     3,
     3,
     3,
     {2, 9},
     {3, 3},
     {1, 1},
     {1, 1, 0, 0}},
    {"depthwise 3x3 in one run, one pixel", 1, 2, 2, 2, {1, 1}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    {"depthwise 3x3 in one run, 31 columns, no pads",
     1,
     2,
     2,
     2,
     {6, 33},
     {3, 3},
     {1, 1},
     {0, 0, 0, 0}},
    /* stride 2 with fewer than 16 output columns: one run too (MobileNet's
     * 28x28 -> 14x14 and 14x14 -> 7x7) */
    {"depthwise 3x3 stride 2 in one run, 14x14 -> 7x7, batch 2",
     2,
     3,
     3,
     3,
     {14, 14},
     {3, 3},
     {2, 2},
     {1, 1, 1, 1}},
    {"depthwise 3x3 stride 2 in one run, odd sizes, bottom and right pads only",
     1,
     4,
     8,
     4,
     {13, 9},
     {3, 3},
     {2, 2},
     {0, 0, 1, 1}},
    {"depthwise 3x3 stride 2 in one run, 300 rows of 7 (two epilogue blocks)",
     1,
     2,
     2,
     2,
     {600, 14},
     {3, 3},
     {2, 2},
     {1, 1, 1, 1}},
    {"depthwise 3x3 in one run, 300 rows of 7 (two epilogue blocks)",
     1,
     2,
     2,
     2,
     {300, 7},
     {3, 3},
     {1, 1},
     {1, 1, 1, 1}},
    /* the split plane written straight from the image: no left pad with an
     * even width (a right border only), MobileNet's pad 1 on an even width,
     * and an odd width with the left pad alone at the 16-column threshold */
    {"depthwise 3x3 stride 2, split, right and bottom pads only",
     1,
     2,
     2,
     2,
     {10, 64},
     {3, 3},
     {2, 2},
     {0, 0, 1, 1}},
    {"depthwise 3x3 stride 2, split, pad 1 on an even width",
     1,
     3,
     3,
     3,
     {14, 112},
     {3, 3},
     {2, 2},
     {1, 1, 1, 1}},
    {"depthwise 3x3 stride 2, split, left pad only, 16 output columns",
     2,
     2,
     2,
     2,
     {9, 33},
     {3, 3},
     {2, 2},
     {1, 1, 0, 0}},
};
#define NUM_CASES (sizeof cases / sizeof *cases)

static const epilogue_kind kinds[] = {EPILOGUE_RELU, EPILOGUE_CLIP, EPILOGUE_SIGMOID,
                                      EPILOGUE_ADD_RELU};
#define NUM_KINDS (sizeof kinds / sizeof *kinds)

START_TEST(f32_conv_epilogues_match_a_direct_convolution) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++)
        for (size_t k = 0; k < NUM_KINDS; k++) check_case(&cases[i], kinds[k], TP_F32, NULL, false);
}
END_TEST

START_TEST(f32_conv_epilogues_match_on_the_generic_and_legacy_kernels) {
    stax_test_cache_dir();
    static const char *const families[] = {"generic", "legacy"};
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < NUM_CASES; i++)
            check_case(&cases[i], kinds[i % NUM_KINDS], TP_F32, families[f], false);
}
END_TEST

/* One thread takes other paths through the packed driver (a few panels at a
 * time through every k block) than the pool's. */
START_TEST(f32_conv_epilogues_match_on_one_thread) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++)
        for (size_t k = 0; k < NUM_KINDS; k++)
            check_case_on(&cases[i], kinds[k], TP_F32, NULL, false, "threads=1");
}
END_TEST

/* A conv of several units of columns or rows and of channels: blocks of
 * the output that end and start inside an output row. */
static const conv_case wide = {"3x3 pad 1, 40 channels at 30x41, batch 2",
                               2,
                               16,
                               40,
                               1,
                               {30, 41},
                               {3, 3},
                               {1, 1},
                               {1, 1, 1, 1}};

/* Every case in f32 on the pool and on one thread, and `and_wide`: the
 * wide conv too (on the host's family and on avx2's narrower tiles). */
static void check_f32_cases_on_the_pool_and_one_thread(bool and_wide) {
    for (size_t i = 0; i < NUM_CASES; i++)
        for (size_t k = 0; k < NUM_KINDS; k++) {
            check_case(&cases[i], kinds[k], TP_F32, NULL, k == 0);
            check_case_on(&cases[i], kinds[k], TP_F32, NULL, false, "threads=1");
        }
    for (size_t k = 0; and_wide && k < NUM_KINDS; k++) {
        check_case(&wide, kinds[k], TP_F32, NULL, false);
        check_case_on(&wide, kinds[k], TP_F32, "avx2", false, "threads=1");
    }
}

/* STAX_CONV_SHIFTED=on: the stride-1 group-1 cases as one product per tap
 * over the padded input (stax_conv_shifted.c): the bias added as each
 * block is copied out, then the epilogue on each channel's finished
 * pixels, on the pool and one thread. */
START_TEST(f32_conv_epilogues_match_with_shifted_taps) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED", "on", 1);
    setenv("STAX_CONV_PIXEL_ROWS", "off", 1);
    check_f32_cases_on_the_pool_and_one_thread(true);
    unsetenv("STAX_CONV_PIXEL_ROWS");
    unsetenv("STAX_CONV_SHIFTED");
}
END_TEST

/* STAX_CONV_PIXEL_ROWS=on: the group-1 cases with the output pixels as the
 * product's rows (stax_conv_pixel_rows.c): the bias added and the epilogue
 * run after C^T is transposed into the output, on the pool and one thread. */
START_TEST(f32_conv_epilogues_match_with_pixel_rows) {
    stax_test_cache_dir();
    setenv("STAX_CONV_PIXEL_ROWS", "on", 1);
    check_f32_cases_on_the_pool_and_one_thread(false);
    unsetenv("STAX_CONV_PIXEL_ROWS");
}
END_TEST

/* STAX_CONV_SHIFTED_ROWS=on: the group-1 cases with the output pixels as
 * the product's rows read in place (stax_conv_shifted_rows.c): each unit's
 * stage transposed into the output with the bias, then the epilogue on
 * its channels' runs, on the pool and one thread; units of a few rows
 * (the epilogue a channel at a time) and of whole images. */
START_TEST(f32_conv_epilogues_match_with_shifted_rows) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED_ROWS", "on", 1);
    check_f32_cases_on_the_pool_and_one_thread(true);
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* A dynamic compile of each case's graph (the sizes are run-time arguments
 * of the kernels, the plan's decisions replayed at run time). */
START_TEST(conv_epilogues_in_a_dynamic_build_match) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++) {
        epilogue_kind kind = kinds[i % NUM_KINDS];
        tp_tensor *operands[4];
        make_operands(&cases[i], TP_F32, 41, operands);
        tp_graph *g = epilogue_graph(&cases[i], kind, TP_F32, operands, false);
        tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
        options.backend = "stax";
        options.dynamic = TP_DYNAMIC_DYNAMIC;
        tp_compiled *compiled = NULL;
        ck_assert_msg(tp_compile_graph(g, &options, &compiled) == TP_OK, "%s: %s", cases[i].what,
                      tp_last_error());
        int inputs = kind == EPILOGUE_ADD_RELU ? 4 : 3;
        tp_arg args[4];
        for (int k = 0; k < inputs; k++) args[k] = tp_arg_tensor(operands[k]);
        tp_tensor *got[2] = {NULL, NULL};
        ck_assert_msg(tp_call(compiled, args, inputs, got) == TP_OK, "%s: %s", cases[i].what,
                      tp_last_error());
        expect_direct_conv(&cases[i], kind, TP_F32, operands, got, false, "dynamic");
        tp_tensor_release(got[0]);
        tp_compiled_free(compiled);
        for (int k = 0; k < 4; k++) tp_tensor_release(operands[k]);
        tp_graph_destroy(g);
    }
}
END_TEST

/* 1x1 convs whose k is one k block: their finished blocks are staged in
 * cache, get the bias and the epilogue there and are copied (or streamed)
 * into the output (STAX_CONV_STAGING). Tails everywhere: 23 and 13 output
 * channels (12 + 8 + 2 + 1 and 8 + 4 + 1 row tiles), 143 and 2257 pixels (a
 * partial panel; rows that start off a 16-byte boundary, so the streamed
 * copy's head and tail), many stage blocks, and k from 1 to past avx512's
 * k block (129: staged on avx2 and generic, not on avx512). */
static const conv_case staged_cases[] = {
    {"1x1 staged, 23 channels at 13x11, batch 2",
     2,
     5,
     23,
     1,
     {13, 11},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"1x1 staged, k 1", 1, 1, 13, 1, {9, 7}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"1x1 staged, 16 to 40 channels at 37x61",
     1,
     16,
     40,
     1,
     {37, 61},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"1x1 k 129, batch 2", 2, 129, 13, 1, {5, 9}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
};
#define NUM_STAGED_CASES (sizeof staged_cases / sizeof *staged_cases)

START_TEST(f32_1x1_conv_epilogues_match_in_every_staging_mode) {
    stax_test_cache_dir();
    static const char *const modes[] = {"off", "cache", "stream"};
    static const char *const families[] = {NULL, "avx2", "generic"};
    static const char *const threads[] = {"threads=1", NULL};
    static const epilogue_kind staged_kinds[] = {EPILOGUE_CLIP, EPILOGUE_ADD_RELU};
    for (size_t m = 0; m < 3; m++) {
        setenv("STAX_CONV_STAGING", modes[m], 1);
        for (size_t f = 0; f < 3; f++)
            for (size_t t = 0; t < 2; t++)
                for (size_t i = 0; i < NUM_STAGED_CASES; i++) {
                    epilogue_kind kind = staged_kinds[(i + f + t) % 2];
                    check_case_on(&staged_cases[i], kind, TP_F32, families[f], false, threads[t]);
                    /* returned too: not fused, the bias alone in the stage */
                    check_case_on(&staged_cases[i], kind, TP_F32, families[f], true, threads[t]);
                }
    }
    unsetenv("STAX_CONV_STAGING");
}
END_TEST

/* Pixel rows: C^T goes into the output sixteen channels of an image at a
 * time (4x4 transposes, the edges one by one), each block then through the
 * epilogue: 40 channels (16 + 16 + 8) over 7x7 maps of three images, 33
 * over 14x14 (a block of one), a 3x3 conv over 5x7 (35 pixels: a tail of
 * three). */
static const conv_case pixel_rows_cases[] = {
    {"pixel rows, 40 channels at 7x7, batch 3", 3, 24, 40, 1, {7, 7}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"pixel rows, 33 channels at 14x14", 1, 8, 33, 1, {14, 14}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"pixel rows, 3x3 to 20 channels at 5x7", 2, 6, 20, 1, {5, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
};

START_TEST(f32_pixel_rows_epilogues_match_across_channel_blocks) {
    stax_test_cache_dir();
    setenv("STAX_CONV_PIXEL_ROWS", "on", 1);
    static const epilogue_kind pixel_kinds[] = {EPILOGUE_CLIP, EPILOGUE_ADD_RELU, EPILOGUE_SIGMOID};
    for (size_t i = 0; i < sizeof pixel_rows_cases / sizeof *pixel_rows_cases; i++)
        for (size_t k = 0; k < 3; k++) {
            check_case(&pixel_rows_cases[i], pixel_kinds[k], TP_F32, NULL, k == 2);
            check_case_on(&pixel_rows_cases[i], pixel_kinds[k], TP_F32, "avx2", false, "threads=1");
        }
    unsetenv("STAX_CONV_PIXEL_ROWS");
}
END_TEST

START_TEST(staged_1x1_conv_is_logged_with_its_stores) {
    stax_test_cache_dir();
    static const char *const modes[] = {"cache", "stream", "off"};
    static const char *const needles[] = {"copied into the output with plain stores",
                                          "copied into the output with non-temporal stores",
                                          "blocks finished in a stage"};
    static const int expected[] = {1, 1, 0};
    const conv_case *c = &staged_cases[0];
    for (size_t m = 0; m < 3; m++) {
        tp_tensor *operands[4];
        make_operands(c, TP_F32, 5, operands);
        tp_graph *g = epilogue_graph(c, EPILOGUE_CLIP, TP_F32, operands, false);
        setenv("STAX_CONV_STAGING", modes[m], 1);
        setenv("STAX_GEMM_KERNEL", "generic", 1); /* kc 256 > k on every host */
        tp_tensor *got[1] = {NULL};
        int lines = 0;
        ck_assert_int_eq(stax_test_run_counting(needles[m], g, operands, 3, NULL, 0, got, &lines),
                         TP_OK);
        unsetenv("STAX_GEMM_KERNEL");
        unsetenv("STAX_CONV_STAGING");
        ck_assert_msg(lines == expected[m], "STAX_CONV_STAGING=%s: %d lines with '%s'", modes[m],
                      lines, needles[m]);
        expect_direct_conv(c, EPILOGUE_CLIP, TP_F32, operands, got, false, modes[m]);
        tp_tensor_release(got[0]);
        for (int i = 0; i < 4; i++) tp_tensor_release(operands[i]);
        tp_graph_destroy(g);
    }
}
END_TEST

START_TEST(bad_conv_staging_setting_is_refused_with_the_choices) {
    stax_test_cache_dir();
    setenv("STAX_CONV_STAGING", "sometimes", 1);
    const conv_case *c = &staged_cases[0];
    tp_tensor *operands[4];
    make_operands(c, TP_F32, 7, operands);
    tp_graph *g = epilogue_graph(c, EPILOGUE_RELU, TP_F32, operands, false);
    tp_tensor *got[1] = {NULL};
    tp_status status = stax_test_run("stax", g, operands, 3, NULL, 0, got);
    unsetenv("STAX_CONV_STAGING");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_CONV_STAGING") && strstr(tp_last_error(), "stream"),
                  "error: %s", tp_last_error());
    tp_graph_destroy(g);
    for (int i = 0; i < 4; i++) tp_tensor_release(operands[i]);
}
END_TEST

START_TEST(f16_conv_epilogues_round_like_the_unfused_graph) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++)
        for (size_t k = 0; k < NUM_KINDS; k++) check_case(&cases[i], kinds[k], TP_F16, NULL, false);
}
END_TEST

START_TEST(activation_after_a_conv_is_not_a_kernel_of_its_own) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++)
        for (size_t k = 0; k < NUM_KINDS; k++) {
            kernel_count seen = check_case(&cases[i], kinds[k], TP_F32, NULL, false);
            ck_assert_msg(seen.total == 1 && seen.fused_conv == 1,
                          "%s (epilogue %d): %d kernels ran, %d of them a conv with an epilogue; "
                          "want the conv step alone, with the activation fused",
                          cases[i].what, (int)kinds[k], seen.total, seen.fused_conv);
        }
}
END_TEST

START_TEST(conv_epilogue_off_runs_the_activation_as_its_own_kernel) {
    stax_test_cache_dir();
    setenv("STAX_CONV_EPILOGUE", "off", 1);
    kernel_count seen = check_case(&cases[0], EPILOGUE_RELU, TP_F32, NULL, false);
    unsetenv("STAX_CONV_EPILOGUE");
    ck_assert_msg(
        seen.total == 2 && seen.conv == 1 && seen.fused_conv == 0,
        "STAX_CONV_EPILOGUE=off: %d kernels, %d convs, %d fused; want the conv and the relu",
        seen.total, seen.conv, seen.fused_conv);
}
END_TEST

START_TEST(conv_that_is_also_returned_is_stored_and_not_fused) {
    stax_test_cache_dir();
    for (size_t i = 0; i < NUM_CASES; i++) {
        kernel_count seen = check_case(&cases[i], EPILOGUE_CLIP, TP_F32, NULL, true);
        ck_assert_msg(seen.fused_conv == 0, "%s: the returned conv was fused", cases[i].what);
    }
}
END_TEST

/* graph(x, w, b, q) { r = exp(q); t = neg(r); y = conv(x, w, b);
 * out = relu(y + r); return neg(out), exp(out), t }: r and out are scratch,
 * and the conv's epilogue is the last step that reads r, so r's memory must
 * stay r's until the conv step is done (the scratch arena must see the
 * epilogue's reads). */
START_TEST(residual_read_only_by_the_epilogue_stays_live_through_the_conv_step) {
    stax_test_cache_dir();
    const conv_case *c = &cases[0];
    tp_tensor *operands[4];
    make_operands(c, TP_F32, 61, operands);
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("residual_live", &g), TP_OK);
    static const char *const names[] = {"x", "w", "b", "q"};
    tp_value_id ids[4];
    for (int i = 0; i < 4; i++) {
        tp_type type = {.dtype = TP_F32, .ndim = tp_tensor_ndim(operands[i])};
        for (int d = 0; d < type.ndim; d++) type.dims[d] = tp_tensor_dim(operands[i], d);
        ck_assert_int_eq(tp_graph_add_input(g, names[i], &type, &ids[i]), TP_OK);
    }
    tp_value_id r = stax_test_named_node(g, "exp", &ids[3], 1, NULL, "r");
    tp_value_id t = stax_test_named_node(g, "neg", &r, 1, NULL, "t");
    tp_attrs attrs = TP_ATTRS_INIT;
    memcpy(attrs.strides, c->stride, sizeof c->stride);
    memcpy(attrs.pads, c->pads, sizeof c->pads);
    attrs.dilations[0] = attrs.dilations[1] = 1;
    attrs.nstrides = attrs.ndilations = 2;
    attrs.npads = 4;
    tp_value_id y = stax_test_named_node(g, "conv", ids, 3, &attrs, "y");
    tp_value_id sum_operands[2] = {y, r};
    tp_value_id sum = stax_test_named_node(g, "add", sum_operands, 2, NULL, "sum");
    tp_value_id out = stax_test_named_node(g, "relu", &sum, 1, NULL, "out");
    tp_value_id outputs[3] = {stax_test_named_node(g, "neg", &out, 1, NULL, "negated"),
                              stax_test_named_node(g, "exp", &out, 1, NULL, "exponent"), t};
    ck_assert_int_eq(tp_graph_set_outputs(g, outputs, 3), TP_OK);
    tp_tensor *got[3] = {NULL, NULL, NULL};
    ck_assert_msg(stax_test_run("stax", g, operands, 4, NULL, 0, got) == TP_OK, "%s",
                  tp_last_error());
    double *conv = direct_conv(c, operands[0], operands[1], operands[2]);
    for (int64_t i = 0; i < output_numel(c); i++) {
        double residual = exp(tp_tensor_get_f64(operands[3], i));
        double want = -apply_epilogue(EPILOGUE_ADD_RELU, conv[i], residual);
        double a = tp_tensor_get_f64(got[0], i);
        ck_assert_msg(fabs(a - want) <= 1e-4 + 1e-5 * fabs(want),
                      "element %lld of -relu(conv + exp(q)) is %.9g, the direct conv gives %.9g",
                      (long long)i, a, want);
    }
    free(conv);
    for (int i = 0; i < 3; i++) tp_tensor_release(got[i]);
    for (int i = 0; i < 4; i++) tp_tensor_release(operands[i]);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(bad_conv_epilogue_setting_is_refused_with_the_choices) {
    stax_test_cache_dir();
    setenv("STAX_CONV_EPILOGUE", "maybe", 1);
    int64_t shape[4] = {1, 2, 4, 4}, w_shape[4] = {2, 2, 1, 1}, b_shape[1] = {2};
    tp_tensor *operands[3] = {random_of(TP_F32, 4, shape, 1), random_of(TP_F32, 4, w_shape, 2),
                              random_of(TP_F32, 1, b_shape, 3)};
    conv_case c = {"1x1", 1, 2, 2, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0, 0, 0}};
    tp_graph *g = epilogue_graph(&c, EPILOGUE_RELU, TP_F32, operands, false);
    tp_tensor *got[1] = {NULL};
    tp_status status = stax_test_run("stax", g, operands, 3, NULL, 0, got);
    unsetenv("STAX_CONV_EPILOGUE");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_CONV_EPILOGUE") && strstr(tp_last_error(), "off"),
                  "error: %s", tp_last_error());
    tp_graph_destroy(g);
    for (int i = 0; i < 3; i++) tp_tensor_release(operands[i]);
}
END_TEST

TP_TEST_SUITE(stax_conv_epilogue) {
    Suite *s = suite_create("stax_conv_epilogue");
    TCase *c = tcase_create("conv_epilogue");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, f32_conv_epilogues_match_a_direct_convolution);
    tcase_add_test(c, f32_conv_epilogues_match_on_the_generic_and_legacy_kernels);
    tcase_add_test(c, f32_conv_epilogues_match_on_one_thread);
    tcase_add_test(c, f32_conv_epilogues_match_with_pixel_rows);
    tcase_add_test(c, f32_conv_epilogues_match_with_shifted_taps);
    tcase_add_test(c, f32_conv_epilogues_match_with_shifted_rows);
    tcase_add_test(c, conv_epilogues_in_a_dynamic_build_match);
    tcase_add_test(c, f16_conv_epilogues_round_like_the_unfused_graph);
    tcase_add_test(c, activation_after_a_conv_is_not_a_kernel_of_its_own);
    tcase_add_test(c, conv_epilogue_off_runs_the_activation_as_its_own_kernel);
    tcase_add_test(c, conv_that_is_also_returned_is_stored_and_not_fused);
    tcase_add_test(c, residual_read_only_by_the_epilogue_stays_live_through_the_conv_step);
    tcase_add_test(c, bad_conv_epilogue_setting_is_refused_with_the_choices);
    tcase_add_test(c, f32_1x1_conv_epilogues_match_in_every_staging_mode);
    tcase_add_test(c, staged_1x1_conv_is_logged_with_its_stores);
    tcase_add_test(c, f32_pixel_rows_epilogues_match_across_channel_blocks);
    tcase_add_test(c, bad_conv_staging_setting_is_refused_with_the_choices);
    suite_add_tcase(s, c);
    return s;
}
