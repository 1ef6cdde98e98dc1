/* stax's conv paths against a double-precision direct convolution computed
 * here: the implicit GEMM whose im2col columns are packed straight into the
 * micro-kernel's B panels (every family forced through STAX_GEMM_KERNEL,
 * and the legacy im2col matrix), the 1x1 conv whose input is B, grouped and
 * depthwise convs, batch > 1, with the bias and a relu after the conv. The
 * shapes are odd on purpose: panel and tile edges, pads on one side only,
 * strides and dilations that leave taps in the padding. */
#include "stax_harness.h"
#include "tensorplay/profile.h"

typedef struct conv_case {
    const char *what;
    int64_t batch, in_channels, out_channels, group;
    int64_t in[2], kernel[2], stride[2], dilation[2], pads[4]; /* pads: top, left, bottom, right */
    bool bias, relu;
} conv_case;

static int64_t output_size(const conv_case *c, int a) {
    int64_t span = c->dilation[a] * (c->kernel[a] - 1) + 1;
    return (c->in[a] + c->pads[a] + c->pads[2 + a] - span) / c->stride[a] + 1;
}

/* y[n][co][oh][ow] = b[co] + sum over ci in co's group, kh, kw of
 * x[n][ci][ih][iw] * w[co][ci - group start][kh][kw], in double. */
static double *direct_conv(const conv_case *c, const float *x, const float *w, const float *b) {
    int64_t oh_n = output_size(c, 0), ow_n = output_size(c, 1);
    int64_t cin_g = c->in_channels / c->group, cout_g = c->out_channels / c->group;
    double *y = calloc((size_t)(c->batch * c->out_channels * oh_n * ow_n), sizeof *y);
    ck_assert_ptr_nonnull(y);
    for (int64_t n = 0; n < c->batch; n++)
        for (int64_t co = 0; co < c->out_channels; co++)
            for (int64_t oh = 0; oh < oh_n; oh++)
                for (int64_t ow = 0; ow < ow_n; ow++) {
                    double sum = c->bias ? b[co] : 0.0;
                    for (int64_t i = 0; i < cin_g; i++) {
                        int64_t ci = co / cout_g * cin_g + i;
                        for (int64_t kh = 0; kh < c->kernel[0]; kh++)
                            for (int64_t kw = 0; kw < c->kernel[1]; kw++) {
                                int64_t ih = oh * c->stride[0] + kh * c->dilation[0] - c->pads[0];
                                int64_t iw = ow * c->stride[1] + kw * c->dilation[1] - c->pads[1];
                                if (ih < 0 || ih >= c->in[0] || iw < 0 || iw >= c->in[1]) continue;
                                double xv =
                                    x[((n * c->in_channels + ci) * c->in[0] + ih) * c->in[1] + iw];
                                double wv =
                                    w[((co * cin_g + i) * c->kernel[0] + kh) * c->kernel[1] + kw];
                                sum += xv * wv;
                            }
                    }
                    if (c->relu && sum < 0.0) sum = 0.0;
                    y[((n * c->out_channels + co) * oh_n + oh) * ow_n + ow] = sum;
                }
    return y;
}

/* graph(x[, w][, b]) { y = conv(x, w[, b]); relu(y) when asked } on stax;
 * with `constant_weights` w is a constant node of the graph (packed at
 * compile), else an input. */
static tp_tensor *run_on_stax_with(const conv_case *c, tp_tensor *const *operands,
                                   bool constant_weights, const char *option) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("conv_packed", &g), TP_OK);
    tp_value_id ids[3], y;
    tp_tensor *inputs[3];
    int num_inputs = 0;
    static const char *const names[] = {"x", "w", "b"};
    for (int i = 0; i < (c->bias ? 3 : 2); i++) {
        if (i == 1 && constant_weights) {
            tp_attrs payload = TP_ATTRS_INIT;
            payload.data = operands[1];
            ck_assert_int_eq(tp_graph_add_node(g, "constant", NULL, 0, &payload, "w", &ids[1]),
                             TP_OK);
            continue;
        }
        tp_type type = {.dtype = TP_F32, .ndim = tp_tensor_ndim(operands[i])};
        for (int d = 0; d < type.ndim; d++) type.dims[d] = tp_tensor_dim(operands[i], d);
        ck_assert_int_eq(tp_graph_add_input(g, names[i], &type, &ids[i]), TP_OK);
        inputs[num_inputs++] = operands[i];
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = c->group;
    memcpy(attrs.strides, c->stride, sizeof c->stride);
    memcpy(attrs.dilations, c->dilation, sizeof c->dilation);
    memcpy(attrs.pads, c->pads, sizeof c->pads);
    attrs.nstrides = attrs.ndilations = 2;
    attrs.npads = 4;
    ck_assert_msg(tp_graph_add_node(g, "conv", ids, c->bias ? 3 : 2, &attrs, "y", &y) == TP_OK,
                  "%s: %s", c->what, tp_last_error());
    if (c->relu) {
        tp_value_id conv = y;
        ck_assert_msg(tp_graph_add_node(g, "relu", &conv, 1, NULL, "r", &y) == TP_OK, "%s: %s",
                      c->what, tp_last_error());
    }
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *out[1] = {NULL};
    const char *options[1] = {option};
    ck_assert_msg(stax_test_run("stax", g, inputs, num_inputs, options, option ? 1 : 0, out) ==
                      TP_OK,
                  "%s: %s", c->what, tp_last_error());
    tp_graph_destroy(g);
    return out[0];
}

static tp_tensor *run_on_stax(const conv_case *c, tp_tensor *const *operands,
                              bool constant_weights) {
    return run_on_stax_with(c, operands, constant_weights, NULL);
}

/* The case on stax (STAX_GEMM_KERNEL=family unless NULL, `option` a
 * compile option or NULL) against the direct conv. */
static void check_conv_with(const conv_case *c, const char *family, bool constant_weights,
                            const char *option) {
    int64_t x_shape[4] = {c->batch, c->in_channels, c->in[0], c->in[1]};
    int64_t w_shape[4] = {c->out_channels, c->in_channels / c->group, c->kernel[0], c->kernel[1]};
    int64_t b_shape[1] = {c->out_channels};
    tp_tensor *inputs[3] = {stax_test_random(TP_F32, 4, x_shape, 21),
                            stax_test_random(TP_F32, 4, w_shape, 22),
                            stax_test_random(TP_F32, 1, b_shape, 23)};
    if (family) setenv("STAX_GEMM_KERNEL", family, 1);
    tp_tensor *got = run_on_stax_with(c, inputs, constant_weights, option);
    unsetenv("STAX_GEMM_KERNEL");
    double *want = direct_conv(c, tp_tensor_data(inputs[0]), tp_tensor_data(inputs[1]),
                               tp_tensor_data(inputs[2]));
    int64_t oh_n = output_size(c, 0), ow_n = output_size(c, 1);
    ck_assert_int_eq(tp_tensor_numel(got), c->batch * c->out_channels * oh_n * ow_n);
    ck_assert_int_eq(tp_tensor_dim(got, 2), oh_n);
    ck_assert_int_eq(tp_tensor_dim(got, 3), ow_n);
    /* f32 sums of up to a few hundred products of values in [-1, 1) */
    int64_t taps = c->in_channels / c->group * c->kernel[0] * c->kernel[1];
    double atol = 1e-6 * (double)taps + 1e-5;
    for (int64_t i = 0; i < tp_tensor_numel(got); i++) {
        double a = tp_tensor_get_f64(got, i);
        ck_assert_msg(fabs(a - want[i]) <= atol + 1e-5 * fabs(want[i]),
                      "%s (STAX_GEMM_KERNEL=%s, %s weights, %s): element %lld is %.9g, the "
                      "direct conv gives %.9g",
                      c->what, family ? family : "auto", constant_weights ? "constant" : "input",
                      option ? option : "no option", (long long)i, a, want[i]);
    }
    free(want);
    tp_tensor_release(got);
    for (int i = 0; i < 3; i++) tp_tensor_release(inputs[i]);
}

static void check_conv(const conv_case *c, const char *family, bool constant_weights) {
    check_conv_with(c, family, constant_weights, NULL);
}

static const conv_case gemm_cases[] = {
    {"3x3 pad 1, bias, relu",
     1,
     5,
     7,
     1,
     {9, 11},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"3x3 stride 2, odd sizes, batch 3",
     3,
     6,
     13,
     1,
     {17, 15},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"stride 2x3, pads on one side, no bias",
     1,
     3,
     20,
     1,
     {10, 13},
     {3, 2},
     {2, 3},
     {1, 1},
     {0, 2, 1, 0},
     false,
     true},
    {"dilation 2, pad 2", 2, 4, 6, 1, {8, 9}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, true},
    /* no leading padding: pixel rows gather from the input itself, or
     * (padding at the end) from a bordered copy */
    {"3x3 stride 2, no padding, batch 2",
     2,
     5,
     9,
     1,
     {10, 12},
     {3, 3},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     true,
     true},
    {"3x3, padding at the end only",
     1,
     4,
     6,
     1,
     {8, 7},
     {3, 3},
     {1, 1},
     {1, 1},
     {0, 0, 2, 1},
     true,
     false},
    {"7x7 stride 2 pad 3 (a network's stem)",
     1,
     3,
     16,
     1,
     {23, 21},
     {7, 7},
     {2, 2},
     {1, 1},
     {3, 3, 3, 3},
     true,
     true},
    {"1x1 stride 2 (a downsampling shortcut)",
     2,
     9,
     17,
     1,
     {11, 9},
     {1, 1},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     true,
     false},
    {"1x1 (the input is B), batch 2",
     2,
     17,
     25,
     1,
     {6, 5},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     true,
     true},
    {"group 3, batch 2", 2, 9, 12, 3, {7, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true},
    {"k past one k block (kc)",
     1,
     40,
     19,
     1,
     {6, 7},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"batch 2, a product above the pool's small-product size (panels split across images)",
     2,
     32,
     64,
     1,
     {32, 33},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"7x7 map, 3x3 pad 1 (a network's last stage), batch 3",
     3,
     24,
     32,
     1,
     {7, 7},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"14x14 to a 7x7 map, 3x3 stride 2 pad 1",
     1,
     16,
     48,
     1,
     {14, 14},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"1x1 at a 7x7 map (the input is B), batch 2",
     2,
     40,
     64,
     1,
     {7, 7},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     true,
     true},
    {"7x7 map, k past one k block (kc), 20 output channels (a column edge)",
     1,
     64,
     20,
     1,
     {7, 7},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     false,
     true},
    {"taps wholly in the padding",
     1,
     2,
     3,
     1,
     {2, 3},
     {3, 3},
     {1, 1},
     {3, 3},
     {3, 3, 3, 3},
     true,
     false},
};

START_TEST(packed_conv_matches_a_direct_convolution_on_every_family) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512", "legacy"};
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++)
            check_conv(&gemm_cases[i], families[f], false);
}
END_TEST

START_TEST(packed_conv_with_constant_weights_matches_a_direct_convolution) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512"};
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++)
            check_conv(&gemm_cases[i], families[f], true);
}
END_TEST

/* STAX_CONV_PIXEL_ROWS=on: every group-1 case with the output pixels as the
 * product's rows (stax_conv_pixel_rows.c), on every family, with the
 * weights as an input and as a constant (packed at compile). */
START_TEST(pixel_rows_conv_matches_a_direct_convolution_on_every_family) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512"};
    setenv("STAX_CONV_PIXEL_ROWS", "on", 1);
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++) {
            check_conv(&gemm_cases[i], families[f], false);
            check_conv(&gemm_cases[i], families[f], true);
        }
    unsetenv("STAX_CONV_PIXEL_ROWS");
}
END_TEST

/* Cases for the shifted-taps product beyond gemm_cases: row tiles of
 * every height (37 output channels), k blocks with a short last one (300
 * input channels), a tall non-square kernel with pads on some sides only
 * and a column dilation, an output narrower than the padding it drops, a
 * map without padding, a 1x3 kernel. */
static const conv_case shifted_cases[] = {
    {"37 output channels, 300 input channels, batch 2",
     2,
     300,
     37,
     1,
     {20, 23},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"5x3, pads top 2 right 3 bottom 1, column dilation 2",
     1,
     6,
     13,
     1,
     {17, 19},
     {5, 3},
     {1, 1},
     {1, 2},
     {2, 0, 1, 3},
     true,
     false},
    {"a 3x2 output", 1, 5, 24, 1, {5, 4}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, true},
    {"no padding, 16x40", 2, 8, 16, 1, {16, 40}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false},
    {"1x3 pad 0 1", 1, 7, 9, 1, {6, 33}, {1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, true, true},
};

/* STAX_CONV_SHIFTED=on: every stride-1 group-1 case as one product per tap
 * over the padded input (stax_conv_shifted.c), on every family, with the
 * weights as an input (packed per call) and as a constant (at compile). */
START_TEST(shifted_conv_matches_a_direct_convolution_on_every_family) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512"};
    setenv("STAX_CONV_SHIFTED", "on", 1);
    setenv("STAX_CONV_PIXEL_ROWS", "off", 1);
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++)
            check_conv(&gemm_cases[i], families[f], i % 2 == 0);
        for (size_t i = 0; i < sizeof shifted_cases / sizeof *shifted_cases; i++) {
            check_conv(&shifted_cases[i], families[f], false);
            check_conv(&shifted_cases[i], families[f], true);
        }
    }
    unsetenv("STAX_CONV_PIXEL_ROWS");
    unsetenv("STAX_CONV_SHIFTED");
}
END_TEST

/* Shifted-taps convs whose units the split evens out between the
 * threads (stax_unit_grid.c): more column units (a wide map, few output
 * channels), more row units (a small map, many channels), and neither
 * (too few units); each tile and row group must still be computed once. */
static const conv_case balanced_cases[] = {
    {"56x56, 16 to 20 channels (more column units)",
     1,
     16,
     20,
     1,
     {56, 56},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"14x14, 24 to 150 channels (more row units)",
     1,
     24,
     150,
     1,
     {14, 14},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"4x5, 3 to 7 channels (one unit)",
     1,
     3,
     7,
     1,
     {4, 5},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     false,
     true},
};

/* Batches of at least as many images as threads run whole images, one
 * per thread at a time, each padded into that thread's own buffer; the
 * images past the last multiple of the thread count are split between the
 * threads as one image is (5 images: 4 whole and 1 split on 2 and 4
 * threads, 3 and 2 on 3). Stride 2 pads each image into phase planes.
 * Both have k of 64 or more (below, images are always split). */
static const conv_case batch_cases[] = {
    {"batch 5, 14x14, 12 to 40 channels",
     5,
     12,
     40,
     1,
     {14, 14},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"batch 4, stride 2, 15x13, 8 to 13 channels",
     4,
     8,
     13,
     1,
     {15, 13},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
};

/* Each case on 1 to 4 threads (threads=N: 3 and 4 take more than the pool
 * has; the slices are the same), on the host's family and the narrower
 * ones, the weights an input or a constant in turn, against the direct
 * conv. */
static void check_on_every_thread_count(const conv_case *cases, size_t count) {
    static const char *const families[] = {NULL, "avx2", "generic"};
    static const char *const threads[] = {"threads=1", "threads=2", "threads=3", "threads=4"};
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
            for (size_t i = 0; i < count; i++)
                check_conv_with(&cases[i], families[f], (i + t) % 2 == 0, threads[t]);
}

/* check_on_every_thread_count with the shifted taps forced (and pixel rows off). */
static void check_shifted_on_every_thread_count(const conv_case *cases, size_t count) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED", "on", 1);
    setenv("STAX_CONV_PIXEL_ROWS", "off", 1);
    check_on_every_thread_count(cases, count);
    unsetenv("STAX_CONV_PIXEL_ROWS");
    unsetenv("STAX_CONV_SHIFTED");
}

START_TEST(shifted_conv_on_any_thread_count_matches_a_direct_convolution) {
    check_shifted_on_every_thread_count(balanced_cases,
                                        sizeof balanced_cases / sizeof *balanced_cases);
}
END_TEST

START_TEST(shifted_conv_of_a_batch_matches_a_direct_convolution_on_any_thread_count) {
    check_shifted_on_every_thread_count(batch_cases, sizeof batch_cases / sizeof *batch_cases);
}
END_TEST

/* 1x1 convs that read their input in place over several k blocks, on one
 * image: on more than one thread each slice takes its row tiles through
 * every k block (the partial panel of every block packed first), except
 * where the buffers cannot hold every block's partial panel (the last
 * case: nine blocks of the avx512 family's kc on one panel). Output
 * channels that leave row tiles of every height, maps with and without a
 * partial panel, and enough panels for the columns split to compete. */
static const conv_case in_place_cases[] = {
    {"1x1, 300 to 50 channels at 7x7",
     1,
     300,
     50,
     1,
     {7, 7},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     true,
     true},
    {"1x1, 270 to 29 channels at 14x14",
     1,
     270,
     29,
     1,
     {14, 14},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     true,
     false},
    {"1x1, 520 to 100 channels at 8x8 (whole panels)",
     1,
     520,
     100,
     1,
     {8, 8},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     false,
     true},
    {"1x1, 1100 to 16 channels at 5x5 (more k blocks than partial-panel buffers)",
     1,
     1100,
     16,
     1,
     {5, 5},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     true,
     true},
};

START_TEST(pointwise_conv_over_k_blocks_on_any_thread_count_matches_a_direct_convolution) {
    stax_test_cache_dir();
    setenv("STAX_CONV_PIXEL_ROWS", "off", 1);
    check_on_every_thread_count(in_place_cases, sizeof in_place_cases / sizeof *in_place_cases);
    unsetenv("STAX_CONV_PIXEL_ROWS");
}
END_TEST

static void remember_conv_kernel(const tp_profile_event *event, void *user) {
    char *name = user;
    if (!strcmp(event->phase, "kernel") && !strncmp(event->detail, "conv_", 5))
        snprintf(name, 256, "%s", event->detail);
}

/* The profile name of the conv step stax runs for the case. */
static void conv_kernel_of(const conv_case *c, char name[256]) {
    int64_t x_shape[4] = {c->batch, c->in_channels, c->in[0], c->in[1]};
    int64_t w_shape[4] = {c->out_channels, c->in_channels / c->group, c->kernel[0], c->kernel[1]};
    int64_t b_shape[1] = {c->out_channels};
    tp_tensor *inputs[3] = {stax_test_random(TP_F32, 4, x_shape, 21),
                            stax_test_random(TP_F32, 4, w_shape, 22),
                            stax_test_random(TP_F32, 1, b_shape, 23)};
    name[0] = 0;
    tp_profile_set_handler(remember_conv_kernel, name);
    tp_tensor *got = run_on_stax(c, inputs, true);
    tp_profile_set_handler(NULL, NULL);
    tp_tensor_release(got);
    for (int i = 0; i < 3; i++) tp_tensor_release(inputs[i]);
}

/* 64 output channels fill the 16-wide panels; 49 pixels leave 15 of 64
 * panel columns empty, 28 * 28 = 784 none: pixel rows on the 7x7 map only,
 * unless STAX_CONV_PIXEL_ROWS=off. */
START_TEST(pixel_rows_are_chosen_for_a_7x7_map_only) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED_ROWS", "off", 1); /* the choice between the other methods */
    conv_case small = {"7x7",  1,      32,     64,           1,    {7, 7},
                       {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false};
    conv_case large = small;
    large.in[0] = large.in[1] = 28;
    char name[256];
    conv_kernel_of(&small, name);
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_1x64x7x7"), "7x7 map ran as '%s'", name);
    conv_kernel_of(&large, name);
    ck_assert_msg(!strstr(name, "pixel_rows"), "28x28 map ran as '%s'", name);
    setenv("STAX_CONV_PIXEL_ROWS", "off", 1);
    conv_kernel_of(&small, name);
    unsetenv("STAX_CONV_PIXEL_ROWS");
    ck_assert_msg(strstr(name, "conv_im2col_gemm_1x64x7x7"), "pixel rows off: ran as '%s'", name);
    /* a 1x1 conv: pixel rows to more channels than it reads, not to fewer */
    conv_case expand = {"1x1 expand", 1,      16,     64,           1,    {7, 7},
                        {1, 1},       {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false};
    conv_case project = expand;
    project.in_channels = 64, project.out_channels = 16;
    conv_kernel_of(&expand, name);
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_1x64x7x7"), "16 -> 64 ran as '%s'", name);
    conv_kernel_of(&project, name);
    ck_assert_msg(strstr(name, "conv_pointwise_gemm_1x16x7x7"), "64 -> 16 ran as '%s'", name);
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* A 1x1 expand whose pixel rows outgrow one chunk of A (the generic
 * family's 256 rows: its result is transposed in a pass of its own) reads
 * its input in place unless that wastes a fifth more panel columns: on 8-wide
 * panels a 2x7 map wastes 2 of 16 columns (pixel rows at batch 1 only), a
 * 1x5 map 3 of 8 (pixel rows at every batch). */
START_TEST(pixel_rows_of_many_images_need_more_waste_in_place) {
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "generic", 1);
    conv_case expand = {"1x1 expand", 1,      16,     64,           1,    {2, 7},
                        {1, 1},       {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false};
    char name[256];
    conv_kernel_of(&expand, name);
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_1x64x2x7"), "batch 1 ran as '%s'", name);
    expand.batch = 20; /* 280 rows */
    conv_kernel_of(&expand, name);
    ck_assert_msg(strstr(name, "conv_pointwise_gemm_20x64x2x7"), "batch 20 ran as '%s'", name);
    expand.in[0] = 1, expand.in[1] = 5, expand.batch = 60; /* 300 rows */
    conv_kernel_of(&expand, name);
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_60x64x1x5"), "1x5 map ran as '%s'", name);
    unsetenv("STAX_GEMM_KERNEL");
}
END_TEST

/* Shifted taps where few computed columns are dropped: a 3x3 pad-1 conv on
 * a 28x28 map drops 26 + 30 of 864 (the padding's two on each row, the
 * last tile's rest), on 14x14 28 of 224 (12.5%, still taken at stride 1,
 * even over pixel rows), on 7x7 15 of 64 (not: pixel rows); at stride 2
 * from 56x56 the phase planes drop 6% (taken), from 28x28 12.5% (not);
 * never with STAX_CONV_SHIFTED=off; pixel rows asked for by name win. */
START_TEST(shifted_taps_are_chosen_where_few_columns_are_dropped) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED_ROWS", "off", 1); /* the choice between the other methods */
    conv_case c = {"3x3",  1,      16,     64,           1,    {28, 28},
                   {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false};
    static const struct {
        int64_t size, stride;
        const char *expected; /* NULL: not shifted */
    } choices[] = {{28, 1, "conv_shifted_gemm_1x64x28x28"},
                   {14, 1, "conv_shifted_gemm_1x64x14x14"},
                   {7, 1, NULL},
                   {56, 2, "conv_shifted_gemm_1x64x28x28"},
                   {28, 2, NULL}};
    char name[256];
    for (size_t i = 0; i < sizeof choices / sizeof *choices; i++) {
        c.in[0] = c.in[1] = choices[i].size;
        c.stride[0] = c.stride[1] = choices[i].stride;
        conv_kernel_of(&c, name);
        if (choices[i].expected)
            ck_assert_msg(strstr(name, choices[i].expected), "%lldx%lld stride %lld ran as '%s'",
                          (long long)c.in[0], (long long)c.in[1], (long long)c.stride[0], name);
        else
            ck_assert_msg(strstr(name, "conv_") && !strstr(name, "shifted"),
                          "%lldx%lld stride %lld ran as '%s'", (long long)c.in[0],
                          (long long)c.in[1], (long long)c.stride[0], name);
    }
    c.in[0] = c.in[1] = 28, c.stride[0] = c.stride[1] = 1;
    setenv("STAX_CONV_SHIFTED", "off", 1);
    conv_kernel_of(&c, name);
    unsetenv("STAX_CONV_SHIFTED");
    ck_assert_msg(strstr(name, "conv_im2col_gemm_1x64x28x28"), "shifted off: ran as '%s'", name);
    c.in[0] = c.in[1] = 14;
    setenv("STAX_CONV_PIXEL_ROWS", "on", 1);
    conv_kernel_of(&c, name);
    unsetenv("STAX_CONV_PIXEL_ROWS");
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_1x64x14x14"), "pixel rows on: ran as '%s'",
                  name);
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* Runs a 3x3 conv with `variable` set to a value no setting has: compile
 * fails with an error that names the variable and the value. */
static void check_unknown_setting(const char *variable) {
    stax_test_cache_dir();
    conv_case c = {"7x7", 1, 4, 16, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false};
    int64_t x_shape[4] = {1, 4, 7, 7}, w_shape[4] = {16, 4, 3, 3};
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 4, x_shape, 21),
                            stax_test_random(TP_F32, 4, w_shape, 22)};
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("pixel_rows_setting", &g), TP_OK);
    tp_type type = {.dtype = TP_F32, .ndim = 4};
    memcpy(type.dims, x_shape, sizeof x_shape);
    tp_value_id ids[2], y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &type, &ids[0]), TP_OK);
    memcpy(type.dims, w_shape, sizeof w_shape);
    ck_assert_int_eq(tp_graph_add_input(g, "w", &type, &ids[1]), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.group = 1;
    memcpy(attrs.pads, c.pads, sizeof c.pads);
    attrs.npads = 4;
    ck_assert_int_eq(tp_graph_add_node(g, "conv", ids, 2, &attrs, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    setenv(variable, "sometimes", 1);
    tp_tensor *out[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, out);
    unsetenv(variable);
    ck_assert_int_ne(status, TP_OK);
    char expected[128];
    snprintf(expected, sizeof expected, "%s is 'sometimes'", variable);
    ck_assert_msg(strstr(tp_last_error(), expected), "error: %s", tp_last_error());
    tp_graph_destroy(g);
    for (int i = 0; i < 2; i++) tp_tensor_release(inputs[i]);
}

START_TEST(an_unknown_conv_setting_is_an_error_that_names_it) {
    stax_test_cache_dir();
    check_unknown_setting("STAX_CONV_PIXEL_ROWS");
    check_unknown_setting("STAX_CONV_SHIFTED");
    check_unknown_setting("STAX_CONV_SHIFTED_ROWS");
    check_unknown_setting("STAX_DEPTHWISE_CHANNELS_LAST");
    check_unknown_setting("STAX_DEPTHWISE_DIRECT");
}
END_TEST

/* STAX_CONV_SHIFTED_ROWS=on: every group-1 case with its output pixels as
 * the product's rows read in place from the padded input
 * (stax_conv_shifted_rows.c), on every family, with the weights as an
 * input and as a constant (packed at compile). */
START_TEST(shifted_rows_conv_matches_a_direct_convolution_on_every_family) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512"};
    setenv("STAX_CONV_SHIFTED_ROWS", "on", 1);
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++)
            check_conv(&gemm_cases[i], families[f], i % 2 == 0);
        for (size_t i = 0; i < sizeof shifted_cases / sizeof *shifted_cases; i++)
            check_conv(&shifted_cases[i], families[f], (i + f) % 2 == 0);
    }
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* Output rows 1 to 13 pixels wide and 25 wide: one tile a row of every
 * height up to avx512's mr of 12, then rows of two (7 + 6) and three
 * tiles (9 + 8 + 8); on the narrower families rows of more tiles. 33
 * output channels leave a last panel of one column on every family; at
 * stride 3 with a dilation the taps read three phase planes' rows. */
START_TEST(shifted_rows_conv_of_every_row_width_matches_a_direct_convolution) {
    stax_test_cache_dir();
    static const char *const families[] = {NULL, "avx2", "generic", "avx512"};
    setenv("STAX_CONV_SHIFTED_ROWS", "on", 1);
    conv_case c = {"row width", 1,      4,      33,           1,    {3, 1},
                   {3, 3},      {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true};
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        for (int64_t width = 1; width <= 13; width++) {
            c.in[1] = width;
            check_conv(&c, families[f], width % 2 == 0);
        }
        c.in[1] = 25;
        check_conv(&c, families[f], true);
        conv_case strided = {
            "stride 3, dilation 2", 2,    5,    33, 1, {20, 23}, {3, 3}, {3, 3}, {2, 2},
            {2, 1, 0, 2},           true, false};
        check_conv(&strided, families[f], f % 2 == 0);
    }
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* Units of rows and panels split between the threads: the rows first
 * where the padded input outweighs the weights (56x56, 16 to 20
 * channels), the panels first where the weights do (a 7x7 map, 64 to 200
 * channels: a thread reads only its panels' weights), a unit's stage
 * holding fewer panels than the conv has (a 60-wide row of 600 channels:
 * 17 of avx512's 32-wide panels to 7 a unit), and a batch run whole. */
static const conv_case rows_split_cases[] = {
    {"56x56, 16 to 20 channels (rows split)",
     1,
     16,
     20,
     1,
     {56, 56},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"7x7, 64 to 200 channels (panels split)",
     1,
     64,
     200,
     1,
     {7, 7},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"2x60, 3 to 600 channels (a row's panels over several units)",
     1,
     3,
     600,
     1,
     {2, 60},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     false,
     true},
};

START_TEST(shifted_rows_conv_on_any_thread_count_matches_a_direct_convolution) {
    stax_test_cache_dir();
    setenv("STAX_CONV_SHIFTED_ROWS", "on", 1);
    check_on_every_thread_count(rows_split_cases,
                                sizeof rows_split_cases / sizeof *rows_split_cases);
    check_on_every_thread_count(batch_cases, sizeof batch_cases / sizeof *batch_cases);
    unsetenv("STAX_CONV_SHIFTED_ROWS");
}
END_TEST

/* On the avx512 family (32-wide panels, 12-row tiles; forced, so on any
 * host): shifted rows for 64 output channels at 28x28, 7x7 and stride 2,
 * not for 40 (62% of two panels) nor on a 5-wide map (tiles of 5 rows,
 * under half of 12); pixel rows or shifted taps asked for by name win
 * over the automatic choice, not over shifted rows asked for by name. */
START_TEST(shifted_rows_are_chosen_where_the_channels_fill_the_panels) {
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "avx512", 1);
    conv_case c = {"3x3",  1,      16,     64,           1,    {28, 28},
                   {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false};
    static const struct {
        int64_t size, stride, channels;
        bool shifted_rows;
    } choices[] = {{28, 1, 64, true},
                   {7, 1, 64, true},
                   {56, 2, 64, true},
                   {28, 1, 40, false},
                   {5, 1, 64, false}};
    char name[256];
    for (size_t i = 0; i < sizeof choices / sizeof *choices; i++) {
        c.in[0] = c.in[1] = choices[i].size;
        c.stride[0] = c.stride[1] = choices[i].stride;
        c.out_channels = choices[i].channels;
        conv_kernel_of(&c, name);
        ck_assert_msg(strstr(name, "conv_") &&
                          (strstr(name, "shifted_rows") != NULL) == choices[i].shifted_rows,
                      "%lldx%lld stride %lld to %lld channels ran as '%s'", (long long)c.in[0],
                      (long long)c.in[1], (long long)c.stride[0], (long long)c.out_channels, name);
    }
    c.in[0] = c.in[1] = 14, c.stride[0] = c.stride[1] = 1, c.out_channels = 64;
    setenv("STAX_CONV_PIXEL_ROWS", "on", 1);
    conv_kernel_of(&c, name);
    ck_assert_msg(strstr(name, "conv_pixel_rows_gemm_1x64x14x14"), "pixel rows on: ran as '%s'",
                  name);
    setenv("STAX_CONV_SHIFTED_ROWS", "on", 1);
    conv_kernel_of(&c, name);
    ck_assert_msg(strstr(name, "conv_shifted_rows_gemm_1x64x14x14"),
                  "shifted rows and pixel rows on: ran as '%s'", name);
    unsetenv("STAX_CONV_PIXEL_ROWS");
    unsetenv("STAX_CONV_SHIFTED_ROWS");
    setenv("STAX_CONV_SHIFTED", "on", 1);
    conv_kernel_of(&c, name);
    unsetenv("STAX_CONV_SHIFTED");
    ck_assert_msg(strstr(name, "conv_shifted_gemm_1x64x14x14"), "shifted on: ran as '%s'", name);
    setenv("STAX_CONV_SHIFTED_ROWS", "off", 1);
    conv_kernel_of(&c, name);
    unsetenv("STAX_CONV_SHIFTED_ROWS");
    ck_assert_msg(!strstr(name, "shifted_rows"), "shifted rows off: ran as '%s'", name);
    unsetenv("STAX_GEMM_KERNEL");
}
END_TEST

static const conv_case depthwise_cases[] = {
    {"depthwise 3x3 pad 1, bias, relu",
     2,
     8,
     8,
     8,
     {13, 12},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"depthwise 3x3 stride 2, odd sizes",
     1,
     5,
     5,
     5,
     {15, 17},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     true,
     false},
    {"depthwise 5x5 stride 2 pad 2",
     1,
     4,
     4,
     4,
     {9, 11},
     {5, 5},
     {2, 2},
     {1, 1},
     {2, 2, 2, 2},
     true,
     true},
    {"depthwise multiplier 2, dilation 2, pads on one side",
     3,
     3,
     6,
     3,
     {7, 9},
     {3, 3},
     {1, 1},
     {2, 2},
     {0, 2, 2, 0},
     false,
     false},
    {"depthwise wide rows (vector body and tail)",
     1,
     3,
     3,
     3,
     {5, 61},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    /* channels-last blocks: two whole blocks of sixteen and a partial one */
    {"depthwise 37 channels, 7x7 stride 2 pad 1, batch 2",
     2,
     37,
     37,
     37,
     {13, 14},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     true,
     true},
    {"depthwise 20 channels, 5x3 dilation 2, pads on some sides",
     1,
     20,
     20,
     20,
     {11, 9},
     {5, 3},
     {1, 2},
     {2, 1},
     {3, 0, 1, 2},
     false,
     false},
};

/* Every depthwise case a plane at a time, in channels-last blocks
 * (stax_depthwise_channels_last.c; a multiplier of 1), and as the rule
 * picks; each with the AVX-512 direct rows where the host has them
 * (stax_depthwise_direct.c) and with the portable rows. */
START_TEST(depthwise_conv_matches_a_direct_convolution) {
    stax_test_cache_dir();
    static const char *const settings[] = {"off", "on", "auto"};
    static const char *const direct[] = {"auto", "off"};
    for (size_t d = 0; d < sizeof direct / sizeof *direct; d++) {
        setenv("STAX_DEPTHWISE_DIRECT", direct[d], 1);
        for (size_t v = 0; v < sizeof settings / sizeof *settings; v++) {
            setenv("STAX_DEPTHWISE_CHANNELS_LAST", settings[v], 1);
            for (size_t i = 0; i < sizeof depthwise_cases / sizeof *depthwise_cases; i++)
                check_conv(&depthwise_cases[i], NULL, (i + v + d) % 2 == 1);
        }
    }
    unsetenv("STAX_DEPTHWISE_CHANNELS_LAST");
    unsetenv("STAX_DEPTHWISE_DIRECT");
}
END_TEST

TP_TEST_SUITE(stax_conv_packed) {
    Suite *s = suite_create("stax_conv_packed");
    TCase *c = tcase_create("conv_packed");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, packed_conv_matches_a_direct_convolution_on_every_family);
    tcase_add_test(c, packed_conv_with_constant_weights_matches_a_direct_convolution);
    tcase_add_test(c, depthwise_conv_matches_a_direct_convolution);
    tcase_add_test(c, pixel_rows_conv_matches_a_direct_convolution_on_every_family);
    tcase_add_test(c, pixel_rows_are_chosen_for_a_7x7_map_only);
    tcase_add_test(c, pixel_rows_of_many_images_need_more_waste_in_place);
    tcase_add_test(c, an_unknown_conv_setting_is_an_error_that_names_it);
    tcase_add_test(c, shifted_conv_matches_a_direct_convolution_on_every_family);
    tcase_add_test(c, shifted_conv_on_any_thread_count_matches_a_direct_convolution);
    tcase_add_test(c, shifted_conv_of_a_batch_matches_a_direct_convolution_on_any_thread_count);
    tcase_add_test(c, shifted_taps_are_chosen_where_few_columns_are_dropped);
    tcase_add_test(c,
                   pointwise_conv_over_k_blocks_on_any_thread_count_matches_a_direct_convolution);
    tcase_add_test(c, shifted_rows_conv_matches_a_direct_convolution_on_every_family);
    tcase_add_test(c, shifted_rows_conv_of_every_row_width_matches_a_direct_convolution);
    tcase_add_test(c, shifted_rows_conv_on_any_thread_count_matches_a_direct_convolution);
    tcase_add_test(c, shifted_rows_are_chosen_where_the_channels_fill_the_panels);
    suite_add_tcase(s, c);
    return s;
}
