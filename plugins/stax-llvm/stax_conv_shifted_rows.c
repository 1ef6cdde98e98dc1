/* stax-llvm — a conv with its output pixels as the product's rows, read in
 * place from its padded input (window.shifted_rows; for stax_window.c):
 * C^T[pixels][C_out] = X^T[pixels][K] x W^T[K][C_out], where row (oh, ow)
 * of X^T at column k = tap (c, i, j) is element oh * WP + ow + offset[k] of
 * the padded input (phase planes at stride > 1: stax_conv_padded_input.c).
 * The family's offset-A kernels read it there, h consecutive pixels of one
 * output row per tap; B is W^T packed whole as the pixel-rows conv packs it
 * (at compile when constant).
 *
 * Each output row is cut into ceil(OW / mr) tiles of near-equal heights
 * (56: 12, 11, 11, 11, 11; 7: one of 7), so no pixel of the padding is
 * computed: the shifted conv, whose tiles run nr pixels along the padded
 * rows, computes and drops the padding's columns (3.4% of a 56x56 map,
 * 12.5% of 14x14, 22% of 7x7), and the pixel-rows conv gathers an
 * im2col^T first (7% of a 512-channel 7x7 conv). The price is the output
 * channels as the vector dimension: C_out in whole panels of nr (ResNet's
 * 64 to 512; a 24-channel conv would waste a quarter).
 *
 * The work is cut into units: a run of output rows of an image times a run
 * of W^T's panels (nr output channels each). A unit accumulates every k
 * block into its stage in cache (pixels x channels), then transposes it
 * into the NCHW output with the bias and sends each channel's run through
 * the fused epilogue.
 *
 * Threads: a batch of at least as many images as threads runs whole
 * images, a thread each (stax_conv_padded_run.c). An image split between
 * the threads is cut into one share a thread: where the padded input
 * outweighs the weights, a run of output rows, whose share pads the rows
 * its taps read into its own buffer (padded once by all threads and read
 * in units claimed in turn, a 56x56 conv spent 3% of its time in the
 * padding's copies, 1.3% on one thread, half its rows coming from the
 * other core's cache, and 2-3% waiting between the two passes: 0.95x);
 * else a run of panels, over the image padded by all threads first (a
 * thread then reads only its panels' weights: ResNet's 7x7 maps, 9.4 MB
 * of them against 166 KB; each padding all of it took 4% longer). */
#include "stax_internal.h"

/* Floats a unit's stage holds at most (128 KiB of f32, in L2). */
#define ROWS_STAGE_FLOATS 32768

typedef struct rows_geometry {
    stax_padded_input pad;
    int64_t k;        /* C_in * KH * KW: the product's k */
    int64_t panels;   /* nr-wide panels of C_out */
    int64_t segments; /* tiles per output row, of near-equal heights (at most mr) */
    int64_t reach;    /* phase-plane rows the taps read below an output row's own */
    /* split_rows: the weights weigh no more than the padded input, so the
     * threads' shares and the units take runs of rows with every panel;
     * else runs of panels with every row. A unit takes at most
     * rows_per_unit rows and panels_per_unit panels (its stage's size). */
    bool split_rows;
    int64_t rows_per_unit, panels_per_unit;
} rows_geometry;

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

static int64_t weight_floats(const stax_window *w, const stax_gemm_family *family) {
    return w->in_channels * w->kernel[0] * w->kernel[1] * ceil_div(w->out_channels, family->nr) *
           family->nr;
}

/* The most of `count` items of `floats` each that the stage holds (one at least). */
static int64_t fitting(int64_t count, int64_t floats) {
    int64_t fit = ROWS_STAGE_FLOATS / floats;
    return fit < 1 ? 1 : fit < count ? fit : count;
}

static rows_geometry geometry_of(const stax_window *w, const stax_gemm_family *family) {
    rows_geometry g;
    int64_t nr = family->nr, ow = w->out[1], oh = w->out[0];
    g.pad = stax_padded_input_of(w);
    g.k = w->in_channels * w->kernel[0] * w->kernel[1];
    g.panels = ceil_div(w->out_channels, nr);
    g.segments = ceil_div(ow, family->mr);
    g.reach = (w->kernel[0] - 1) * w->dilation[0] / w->stride[0];
    g.split_rows = weight_floats(w, family) <= g.pad.floats;
    if (g.split_rows) {
        g.panels_per_unit = g.panels;
        g.rows_per_unit = fitting(oh, ow * g.panels * nr);
    } else {
        g.rows_per_unit = oh;
        g.panels_per_unit = fitting(g.panels, oh * ow * nr);
    }
    return g;
}

static int64_t stage_floats(const rows_geometry *g, const stax_window *w,
                            const stax_gemm_family *family) {
    return g->rows_per_unit * w->out[1] * g->panels_per_unit * family->nr;
}

/* The phase-plane rows a share of rows pads into its band: its output
 * rows (at most ceil(OH / shares)) and the rows their taps reach below. */
static int64_t band_rows(const rows_geometry *g, const stax_window *w, int64_t shares) {
    int64_t rows = ceil_div(w->out[0], shares) + g->reach;
    return rows < g->pad.hp ? rows : g->pad.hp;
}

static size_t aligned_floats(int64_t floats) {
    return (size_t)(floats + 15) / 16 * 16;
}

int32_t stax_conv_choose_shifted_rows(const tp_plugin_host *host, const stax_window *w,
                                      const stax_gemm_family *family, bool *chosen, char *error,
                                      size_t error_size) {
    stax_switch setting;
    *chosen = false;
    int32_t status =
        stax_switch_setting(host, "STAX_CONV_SHIFTED_ROWS", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    bool possible = stax_conv_can_read_padded_input(w, family);
    if (!possible || setting == STAX_SWITCH_OFF) return TP_PLUGIN_OK;
    if (setting == STAX_SWITCH_ON) {
        *chosen = true;
        return TP_PLUGIN_OK;
    }
    /* auto: where at least 85% of the panels' columns are output channels
     * (ResNet's 64 to 512 and MobileNetV2's 32-channel stem fill them) and
     * a row's tiles are at least half the family's mr high (7x7 maps: one
     * of 7 on avx512). Measured against the shifted and pixel-rows convs on
     * ResNet-18's 3x3 convs, 2 threads: 56x56 3% faster, 28x28 and 14x14
     * 12-13%, 7x7 6-10%, stride 2 0-10%, its 7x7 stem 3%; batch 8 10-17%. */
    int64_t nr = family->nr, padded = ceil_div(w->out_channels, nr) * nr;
    bool fills_panels = (double)w->out_channels / (double)padded >= 0.85;
    *chosen = fills_panels && 2 * w->out[1] >= family->mr;
    return TP_PLUGIN_OK;
}

size_t stax_conv_shifted_rows_weight_floats(const stax_step *step, const stax_gemm_family *family) {
    return (size_t)weight_floats(&step->window, family);
}

typedef struct rows_task {
    const stax_window *w;
    const stax_gemm_kernels *kernels;
    rows_geometry g;
    void **slots;
    const float *weights;        /* W^T packed whole: k blocks of panels of kc x nr */
    const int64_t *offsets;      /* tap k: the padded image from this float on */
    const int64_t *band_offsets; /* the same in a share's band */
    const float *bias;           /* or NULL */
    stax_kernel_fn epilogue;
} rows_task;

static stax_padded_runner runner_of(const rows_task *t, stax_padded_unit_fn run_unit,
                                    stax_padded_share_fn run_share) {
    const stax_gemm_family *family = t->kernels->family;
    const rows_geometry *g = &t->g;
    int64_t stage = stage_floats(g, t->w, family);
    return (stax_padded_runner){.w = t->w,
                                .pad = &g->pad,
                                .image_floats = g->pad.floats,
                                .whole_units = 1, /* run_whole computes every unit */
                                .split_stage = stage,
                                .whole_stage = stage,
                                .run_unit = run_unit,
                                .run_share = run_share,
                                .shared_padding = !g->split_rows,
                                .method = t};
}

/* The stage (pixels of rows [r0, r1) x channels [c0, c1), ldc floats a
 * pixel) into the image's output with the bias, STAX_TRANSPOSE_MAX_COLUMNS
 * channels at a time, each block then through the fused epilogue while it
 * is in L1: one call for whole planes, else one per channel's run. */
static void finish_block(const rows_task *t, const stax_padded_image *image, const float *stage,
                         int64_t ldc, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    int64_t ow = t->w->out[1], pixels = t->w->out[0] * ow;
    int64_t q0 = r0 * ow, q1 = r1 * ow;
    for (int64_t c = c0; c < c1; c += STAX_TRANSPOSE_MAX_COLUMNS) {
        int64_t count = c1 - c < STAX_TRANSPOSE_MAX_COLUMNS ? c1 - c : STAX_TRANSPOSE_MAX_COLUMNS;
        stax_transpose_plus(stage + (c - c0), ldc, q1 - q0, count, t->bias ? t->bias + c : NULL,
                            image->out + c * pixels + q0, pixels);
        if (!t->epilogue) continue;
        int64_t first = image->first + c * pixels;
        if (q0 == 0 && q1 == pixels)
            t->epilogue(t->slots, first, first + count * pixels);
        else
            for (int64_t j = 0; j < count; j++)
                t->epilogue(t->slots, first + j * pixels + q0, first + j * pixels + q1);
    }
}

/* Output rows [r0, r1) x panels [p0, p1) from `padded` (the image's padded
 * rows from row `row0` on, `offsets` for its layout): every k block into
 * `stage`, per block and panel every tile of the rows, so the panel's kc x
 * nr floats of W^T stay in L1 while the tiles read their taps; then the
 * stage into the output. */
static void compute_block(const rows_task *t, const stax_padded_image *image, const float *padded,
                          int64_t row0, const int64_t *offsets, int64_t r0, int64_t r1, int64_t p0,
                          int64_t p1, float *stage) {
    const stax_window *w = t->w;
    const stax_gemm_kernels *kernels = t->kernels;
    const rows_geometry *g = &t->g;
    int64_t nr = kernels->family->nr, cout = w->out_channels, ow = w->out[1];
    int64_t ldc = (p1 - p0) * nr;
    for (int64_t pc = 0; pc < g->k; pc += kernels->kc) {
        int64_t kc = g->k - pc < kernels->kc ? g->k - pc : kernels->kc;
        const float *block = t->weights + pc * g->panels * nr; /* its panels, kc * nr apart */
        for (int64_t panel = p0; panel < p1; panel++) {
            const float *b = block + panel * kc * nr;
            int64_t cols = cout - panel * nr < nr ? cout - panel * nr : nr;
            for (int64_t oh = r0; oh < r1; oh++)
                for (int64_t s = 0; s < g->segments; s++) {
                    int64_t ow0 = s * ow / g->segments, ow1 = (s + 1) * ow / g->segments;
                    float *c = stage + ((oh - r0) * ow + ow0) * ldc + (panel - p0) * nr;
                    kernels->offset_a[ow1 - ow0](padded + (oh - row0) * g->pad.wp + ow0, b, c, ldc,
                                                 kc, pc > 0, cols, offsets + pc);
                }
        }
    }
    int64_t c1 = p1 * nr < cout ? p1 * nr : cout;
    finish_block(t, image, stage, ldc, r0, r1, p0 * nr, c1);
}

/* Rows [r0, r1) x panels [p0, p1) unit by unit (near-equal runs of the
 * geometry's split dimension, the stage's size at most). */
static void compute_units(const rows_task *t, const stax_padded_image *image, const float *padded,
                          int64_t row0, const int64_t *offsets, int64_t r0, int64_t r1, int64_t p0,
                          int64_t p1, float *stage) {
    const rows_geometry *g = &t->g;
    int64_t count = g->split_rows ? r1 - r0 : p1 - p0;
    int64_t units = ceil_div(count, g->split_rows ? g->rows_per_unit : g->panels_per_unit);
    for (int64_t u = 0; u < units; u++) {
        int64_t a = u * count / units, b = (u + 1) * count / units;
        if (g->split_rows)
            compute_block(t, image, padded, row0, offsets, r0 + a, r0 + b, p0, p1, stage);
        else
            compute_block(t, image, padded, row0, offsets, r0, r1, p0 + a, p0 + b, stage);
    }
}

/* An image that one thread runs whole: its only unit (for the runner)
 * is all of it, in compute_units' units. */
static void run_whole(const void *method, const stax_padded_image *image, bool whole, int64_t unit,
                      float *stage) {
    (void)whole, (void)unit;
    const rows_task *t = method;
    compute_units(t, image, image->padded, 0, t->offsets, 0, t->w->out[0], 0, t->g.panels, stage);
}

/* Share `share` of `shares` of an image: its rows (with every panel) or
 * its panels (with every row), from its own band of the padded image. */
static void run_share(const void *method, const float *input, const stax_padded_image *image,
                      int64_t share, int64_t shares, float *stage) {
    const rows_task *t = method;
    const rows_geometry *g = &t->g;
    int64_t oh = t->w->out[0];
    int64_t r0 = 0, r1 = oh, p0 = 0, p1 = g->panels;
    if (g->split_rows)
        r0 = share * oh / shares, r1 = (share + 1) * oh / shares;
    else
        p0 = share * g->panels / shares, p1 = (share + 1) * g->panels / shares;
    if (r0 == r1 || p0 == p1) return;
    if (!g->split_rows) { /* the image, padded by all threads (the runner's shared_padding) */
        compute_units(t, image, image->padded, 0, t->offsets, r0, r1, p0, p1, stage);
        return;
    }
    stax_pad_input_band(t->w, &g->pad, input, r0, band_rows(g, t->w, shares), image->padded);
    compute_units(t, image, image->padded, r0, t->band_offsets, r0, r1, p0, p1, stage);
}

void stax_conv_shifted_rows_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                                float *workspace, const stax_gemm_kernels *kernels,
                                stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    const stax_gemm_family *family = kernels->family;
    rows_task t = {.w = w,
                   .kernels = kernels,
                   .g = geometry_of(w, family),
                   .slots = slots,
                   .epilogue = epilogue};
    float *packed = workspace;
    int64_t *offsets = (int64_t *)(packed + aligned_floats(weight_floats(w, family)));
    float *space = (float *)offsets + aligned_floats(2 * t.g.k);
    stax_padded_runner runner = runner_of(&t, run_whole, run_share);
    int64_t *band_offsets = (int64_t *)(space + stax_padded_run_floats(&runner, threads));
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc) {
        t.weights = slots[w->packed_w_slot];
    } else {
        stax_conv_pixel_rows_pack_weights(host, step, kernels, threads, slots[w->w_slot], packed);
        t.weights = packed;
    }
    stax_padded_tap_offsets(w, &t.g.pad, t.g.pad.hp, offsets);
    /* shares of rows read bands of fewer rows than the image's (one share: all of them) */
    int64_t band = band_rows(&t.g, w, stax_padded_shares(host, threads));
    t.offsets = offsets, t.band_offsets = offsets;
    if (t.g.split_rows && band < t.g.pad.hp) {
        stax_padded_tap_offsets(w, &t.g.pad, band, band_offsets);
        t.band_offsets = band_offsets;
    }
    t.bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL;
    stax_padded_run(host, &runner, slots, space, threads);
}

/* W^T (when not packed at compile), the offsets (in the image and in a
 * band), the runner's padded images and stages. */
size_t stax_conv_shifted_rows_workspace_bytes(const stax_step *step,
                                              const stax_gemm_kernels *kernels, int64_t threads) {
    const stax_window *w = &step->window;
    rows_task t = {.w = w, .kernels = kernels, .g = geometry_of(w, kernels->family)};
    stax_padded_runner runner = runner_of(&t, run_whole, run_share);
    size_t floats = aligned_floats(weight_floats(w, kernels->family)) +
                    2 * aligned_floats(2 * t.g.k) + stax_padded_run_floats(&runner, threads);
    return floats * sizeof(float);
}
