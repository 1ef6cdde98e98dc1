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
 * the fused epilogue. The batch is shared between threads as the shifted
 * conv's is (stax_conv_padded_run.c). */
#include "stax_internal.h"

/* Floats a unit's stage holds at most (128 KiB of f32, in L2). */
#define ROWS_STAGE_FLOATS 32768

typedef struct rows_geometry {
    stax_padded_input pad;
    int64_t k;        /* C_in * KH * KW: the product's k */
    int64_t panels;   /* nr-wide panels of C_out */
    int64_t segments; /* tiles per output row, of near-equal heights (at most mr) */
    /* The unit grid: row unit i takes output rows [i * OH / row_units,
     * (i + 1) * OH / row_units), panel units likewise. rows_split_first:
     * the rows were split first for threads, and unit u is (row unit u /
     * panel_units, panel unit u % panel_units); else the panels were, and
     * the row unit is the fastest. */
    int64_t row_units, panel_units;
    bool rows_split_first;
    int64_t rows_per_unit, panels_per_unit; /* the most a unit takes (its stage's size) */
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

/* Units as few as the stage allows, cut along the dimension whose split
 * saves reading, then split for `threads` threads into an even grid
 * (stax_unit_grid.c) growing that dimension first: the panels where the
 * weights outweigh the padded input (a unit, and a thread, then reads only
 * its panels' weights: ResNet's 7x7 maps, 9.4 MB of them against 166 KB;
 * cut by rows, both threads read all 1.2 MB of its stride-2 conv to
 * 14x14), else the rows (a unit reads its rows' part of the input). */
static rows_geometry geometry_of(const stax_window *w, const stax_gemm_family *family,
                                 int64_t threads) {
    rows_geometry g;
    int64_t nr = family->nr, ow = w->out[1], oh = w->out[0];
    g.pad = stax_padded_input_of(w);
    g.k = w->in_channels * w->kernel[0] * w->kernel[1];
    g.panels = ceil_div(w->out_channels, nr);
    g.segments = ceil_div(ow, family->mr);
    g.rows_split_first = weight_floats(w, family) <= g.pad.floats;
    int64_t rows, panels;
    if (g.rows_split_first) {
        panels = fitting(g.panels, ow * nr);
        rows = fitting(oh, ow * panels * nr);
    } else {
        rows = fitting(oh, ow * nr);
        panels = fitting(g.panels, rows * ow * nr);
    }
    g.row_units = ceil_div(oh, rows);
    g.panel_units = ceil_div(g.panels, panels);
    if (g.rows_split_first)
        stax_balance_unit_grid(g.panels, oh, threads, &g.panel_units, &g.row_units);
    else
        stax_balance_unit_grid(oh, g.panels, threads, &g.row_units, &g.panel_units);
    g.rows_per_unit = ceil_div(oh, g.row_units);
    g.panels_per_unit = ceil_div(g.panels, g.panel_units);
    return g;
}

static int64_t stage_floats(const rows_geometry *g, const stax_window *w,
                            const stax_gemm_family *family) {
    return g->rows_per_unit * w->out[1] * g->panels_per_unit * family->nr;
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
    rows_geometry split, whole; /* an image split between the threads; run whole by one */
    void **slots;
    const float *weights;   /* W^T packed whole: k blocks of panels of kc x nr */
    const int64_t *offsets; /* tap k: the padded image from this float on */
    const float *bias;      /* or NULL */
    stax_kernel_fn epilogue;
} rows_task;

static stax_padded_runner runner_of(const rows_task *t, stax_padded_unit_fn run_unit) {
    const stax_gemm_family *family = t->kernels->family;
    return (stax_padded_runner){.w = t->w,
                                .pad = &t->split.pad,
                                .image_floats = t->split.pad.floats,
                                .split_units = t->split.row_units * t->split.panel_units,
                                .whole_units = t->whole.row_units * t->whole.panel_units,
                                .split_stage = stage_floats(&t->split, t->w, family),
                                .whole_stage = stage_floats(&t->whole, t->w, family),
                                .run_unit = run_unit,
                                .method = t};
}

/* W^T (when not packed at compile), the offsets, the runner's padded
 * images and stages. */
size_t stax_conv_shifted_rows_workspace_bytes(const stax_step *step,
                                              const stax_gemm_kernels *kernels, int64_t threads) {
    const stax_window *w = &step->window;
    rows_task t = {.w = w,
                   .kernels = kernels,
                   .split = geometry_of(w, kernels->family, threads),
                   .whole = geometry_of(w, kernels->family, 1)};
    stax_padded_runner runner = runner_of(&t, NULL);
    size_t floats = aligned_floats(weight_floats(w, kernels->family)) +
                    aligned_floats(2 * t.split.k) + stax_padded_run_floats(&runner, threads);
    return floats * sizeof(float);
}

/* Unit u's output rows [*r0, *r1) and panels [*p0, *p1). */
static void unit_extent(const rows_geometry *g, const stax_window *w, int64_t u, int64_t *r0,
                        int64_t *r1, int64_t *p0, int64_t *p1) {
    int64_t row_unit = g->rows_split_first ? u / g->panel_units : u % g->row_units;
    int64_t panel_unit = g->rows_split_first ? u % g->panel_units : u / g->row_units;
    *r0 = row_unit * w->out[0] / g->row_units;
    *r1 = (row_unit + 1) * w->out[0] / g->row_units;
    *p0 = panel_unit * g->panels / g->panel_units;
    *p1 = (panel_unit + 1) * g->panels / g->panel_units;
}

/* The stage (pixels of rows [r0, r1) x channels [c0, c1), ldc floats a
 * pixel) into the image's output with the bias, STAX_TRANSPOSE_MAX_COLUMNS
 * channels at a time, each block then through the fused epilogue while it
 * is in L1: one call for whole planes, else one per channel's run. */
static void finish_unit(const rows_task *t, const stax_padded_image *image, const float *stage,
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

/* Every k block of unit u into `stage`: per block and panel, every tile
 * of the unit's rows, so the panel's kc x nr floats of W^T stay in L1
 * while the tiles read their taps. */
static void run_unit(const void *method, const stax_padded_image *image, bool whole, int64_t u,
                     float *stage) {
    const rows_task *t = method;
    const stax_window *w = t->w;
    const stax_gemm_kernels *kernels = t->kernels;
    const rows_geometry *g = whole ? &t->whole : &t->split;
    int64_t nr = kernels->family->nr, cout = w->out_channels, ow = w->out[1];
    int64_t r0, r1, p0, p1;
    unit_extent(g, w, u, &r0, &r1, &p0, &p1);
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
                    kernels->offset_a[ow1 - ow0](image->padded + oh * g->pad.wp + ow0, b, c, ldc,
                                                 kc, pc > 0, cols, t->offsets + pc);
                }
        }
    }
    int64_t c1 = p1 * nr < cout ? p1 * nr : cout;
    finish_unit(t, image, stage, ldc, r0, r1, p0 * nr, c1);
}

void stax_conv_shifted_rows_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                                float *workspace, const stax_gemm_kernels *kernels,
                                stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    const stax_gemm_family *family = kernels->family;
    rows_task t = {.w = w,
                   .kernels = kernels,
                   .split = geometry_of(w, family, threads),
                   .whole = geometry_of(w, family, 1),
                   .slots = slots,
                   .epilogue = epilogue};
    float *packed = workspace;
    int64_t *offsets = (int64_t *)(packed + aligned_floats(weight_floats(w, family)));
    float *space = (float *)offsets + aligned_floats(2 * t.split.k);
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc) {
        t.weights = slots[w->packed_w_slot];
    } else {
        stax_conv_pixel_rows_pack_weights(host, step, kernels, threads, slots[w->w_slot], packed);
        t.weights = packed;
    }
    stax_padded_tap_offsets(w, &t.split.pad, offsets);
    t.offsets = offsets;
    t.bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL;
    stax_padded_runner runner = runner_of(&t, run_unit);
    stax_padded_run(host, &runner, slots, space, threads);
}
