/* stax-llvm — a conv as one product over its zero-padded input read in
 * place, without im2col (window.shifted; for stax_window.c).
 *
 * With the input padded (phase planes at stride > 1: stax_conv_padded_input.c)
 * and the output computed on the same grid, output pixel (oh, ow) is flat
 * column q = oh * WP + ow, and row k = (c, i, j) of the im2col matrix, over
 * the output's flat columns, is the padded input read from offset[k] on:
 * the B the family's offset tile kernels read (B row k at b + offset[k], nr
 * floats), and C = W x B is the conv. Nothing is packed: the taps read the
 * same few input rows at shifted starts, which stay in L1 while the tiles
 * of C read them.
 *
 * The price: the columns at the end of each output row that fall in the
 * padding's width are computed and dropped, so a map must be wide enough
 * for them to be few (the planner's choice, stax_conv_choose_shifted).
 *
 * The work is cut into units: a run of nr-wide column tiles of the flat
 * output times a run of output channels. A unit accumulates every k block
 * into a stage in cache (one per slice), then copies the valid columns out
 * with the bias and sends each channel's finished range (its valid pixels
 * are consecutive in NCHW) through the fused epilogue. The weights are the
 * implicit GEMM's (stax_window_pack_weights; at compile when constants).
 * A batch of at least as many images as threads runs whole images instead,
 * one per thread at a time, each padded into the thread's own buffer: one
 * job for the batch (ResNet-18-b8's 3x3 convs 0.90-0.95x the split). */
#include <string.h>

#include "stax_internal.h"

/* Floats a unit's stage holds at most (128 KiB of f32, in L2), and the
 * column tiles a unit takes at most (its B rows for one k block: kc rows of
 * 8 * nr floats, shifted reads of a few input rows). */
#define SHIFTED_STAGE_FLOATS 32768
#define SHIFTED_MAX_TILES    8

typedef struct shifted_geometry {
    stax_padded_input pad;
    int64_t k;      /* C_in * KH * KW: the product's k */
    int64_t q_cols; /* flat output columns: (OH - 1) * WP + OW */
    int64_t tiles;  /* nr-wide column tiles over them */
    int64_t taps;
    int64_t image_floats; /* one padded image, plus nr floats the last tile reads past it */
    int64_t row_groups;   /* mr-row groups of C_out (the last one may be short) */
    /* Unit (column unit i, row unit j) takes column tiles [i * tiles /
     * column_units, (i + 1) * tiles / column_units) and row groups likewise:
     * units differ by at most one tile or group. tiles_per_unit and
     * groups_per_unit are the most a unit takes (its stage's size). */
    int64_t tiles_per_unit, groups_per_unit;
    int64_t column_units, row_units;
} shifted_geometry;

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

/* Units of even size, in a count the slices split evenly between the
 * threads (stax_unit_grid.c). */
static void balance_units(shifted_geometry *g, int64_t threads) {
    stax_balance_unit_grid(g->tiles, g->row_groups, threads, &g->column_units, &g->row_units);
    g->tiles_per_unit = ceil_div(g->tiles, g->column_units);
    g->groups_per_unit = ceil_div(g->row_groups, g->row_units);
}

static shifted_geometry geometry_of(const stax_window *w, const stax_gemm_family *family,
                                    int64_t threads) {
    shifted_geometry g;
    int64_t nr = family->nr, mr = family->mr, cout = w->out_channels;
    g.pad = stax_padded_input_of(w);
    g.q_cols = (w->out[0] - 1) * g.pad.wp + w->out[1];
    g.tiles = ceil_div(g.q_cols, nr);
    g.taps = w->kernel[0] * w->kernel[1];
    g.k = w->in_channels * g.taps;
    g.image_floats = g.pad.floats + nr;
    /* all output channels in a unit, as many tiles as the stage holds */
    int64_t rows = ceil_div(cout, mr) * mr;
    g.tiles_per_unit = SHIFTED_STAGE_FLOATS / (rows * nr);
    if (g.tiles_per_unit > SHIFTED_MAX_TILES) g.tiles_per_unit = SHIFTED_MAX_TILES;
    if (g.tiles_per_unit < 1) g.tiles_per_unit = 1;
    if (g.tiles_per_unit > g.tiles) g.tiles_per_unit = g.tiles;
    g.column_units = ceil_div(g.tiles, g.tiles_per_unit);
    /* fewer column units than four per thread (a small map): the channels
     * split too, in whole tiles of mr rows */
    int64_t want = stax_most_slices(threads), row_tiles = ceil_div(cout, mr);
    int64_t row_units = g.column_units >= want ? 1 : ceil_div(want, g.column_units);
    if (row_units > row_tiles) row_units = row_tiles;
    if (rows * g.tiles_per_unit * nr > SHIFTED_STAGE_FLOATS && row_units < 2) row_units = 2;
    g.row_groups = row_tiles;
    g.row_units = ceil_div(row_tiles, ceil_div(row_tiles, row_units));
    balance_units(&g, threads);
    return g;
}

static int64_t stage_floats(const shifted_geometry *g, const stax_gemm_family *family) {
    return g->groups_per_unit * family->mr * g->tiles_per_unit * family->nr;
}

static size_t aligned_floats(int64_t floats) {
    return (size_t)(floats + 15) / 16 * 16;
}

int32_t stax_conv_choose_shifted(const tp_plugin_host *host, const stax_window *w,
                                 const stax_gemm_family *family, bool *chosen, char *error,
                                 size_t error_size) {
    stax_switch setting;
    *chosen = false;
    int32_t status = stax_switch_setting(host, "STAX_CONV_SHIFTED", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    bool possible = w->kind == STAX_WINDOW_CONV && w->method == STAX_WINDOW_GEMM_IM2COL &&
                    w->packed && w->group == 1 && family &&
                    w->stride[0] <= STAX_PADDED_MAX_STRIDE &&
                    w->stride[1] <= STAX_PADDED_MAX_STRIDE && w->kernel[0] * w->kernel[1] > 1;
    if (!possible || setting == STAX_SWITCH_OFF) return TP_PLUGIN_OK;
    if (setting == STAX_SWITCH_ON) {
        *chosen = true;
        return TP_PLUGIN_OK;
    }
    /* auto: where the columns computed and dropped (the padding's width on
     * each row, the last tile's rest) are at most 15% of the work at stride
     * 1 (ResNet's 14x14 maps, 12.5%: 3-10% faster than pixel rows), 10% at
     * a larger stride (whose phase planes cost a pass of their own: its
     * 14x14 map from 28x28 measured 6% slower) */
    shifted_geometry g = geometry_of(w, family, 1);
    double useful = (double)(w->out[0] * w->out[1]) / (double)(g.tiles * family->nr);
    bool unit_stride = w->stride[0] == 1 && w->stride[1] == 1;
    *chosen = useful >= (unit_stride ? 0.85 : 0.9);
    return TP_PLUGIN_OK;
}

static int64_t weight_floats(const stax_window *w) {
    return w->out_channels * w->in_channels * w->kernel[0] * w->kernel[1];
}

/* Images a batch runs whole at once, one per thread (0: none; each image
 * is split between the threads instead). With at least as many images as
 * threads, a thread taking whole images works as it does alone: no split
 * of an image's units (whose shares are rarely equal: a 14x14 map's 12
 * units left one thread 8% longer), one job for the batch instead of two
 * per image, and its padded image stays in its own core's cache. Not for
 * a product of short k (an RGB stem's 27), bound by its stores rather
 * than its multiplies: MobileNetV2-b8's stem measured 6% slower whole. */
static int64_t whole_image_threads(const stax_window *w, int64_t threads) {
    int64_t k = w->in_channels * w->kernel[0] * w->kernel[1];
    return threads > 1 && w->batch >= threads && k >= 64 ? threads : 0;
}

/* A stage's floats in the workspace: room for either way of running (the
 * split's geometry and the whole images'). */
static int64_t stage_stride(const shifted_geometry *split, const shifted_geometry *whole,
                            const stax_gemm_family *family) {
    int64_t a = stage_floats(split, family), b = stage_floats(whole, family);
    return a > b ? a : b;
}

/* The weights (when not packed at compile), the offsets, a padded image
 * per thread that runs whole images (one at least), a stage per slice. */
size_t stax_conv_shifted_workspace_bytes(const stax_step *step, const stax_gemm_kernels *kernels,
                                         int64_t threads) {
    const stax_window *w = &step->window;
    shifted_geometry g = geometry_of(w, kernels->family, threads);
    shifted_geometry whole = geometry_of(w, kernels->family, 1);
    int64_t images = whole_image_threads(w, threads), slices = stax_most_slices(threads);
    size_t floats =
        aligned_floats(weight_floats(w)) + aligned_floats(2 * g.k) +
        (size_t)(images > 1 ? images : 1) * aligned_floats(g.image_floats) +
        (size_t)((slices > images ? slices : images) * stage_stride(&g, &whole, kernels->family));
    return floats * sizeof(float);
}

typedef struct shifted_task {
    const stax_window *w;
    const stax_gemm_kernels *kernels;
    shifted_geometry g;
    void **slots;
    const float *weights;     /* the implicit GEMM's packed weights (C_out x K, k blocks of kc) */
    const int64_t *offsets;   /* row k of B: the padded image from this float on */
    stax_gemm_row_tiles rows; /* of C_out */
    const float *image;       /* this image's input, NCHW */
    float *padded;            /* this image, padded */
    float *stages;            /* one per slice, stage_stride floats apart */
    int64_t stage_stride;
    shifted_geometry whole; /* the geometry of a thread running whole images */
    int64_t whole_threads;  /* threads running whole images (0: none) */
    int64_t whole_images;   /* the batch's first images, run whole */
    const float *bias;      /* or NULL */
    float *out;             /* this image's output */
    int64_t first;          /* the flat index of this image's first output element */
    int64_t grain;          /* units per slice */
    stax_kernel_fn epilogue;
} shifted_task;

/* Planes [begin, end) of the padded image: channel * phases + phase. */
static void pad_planes(void *context, int64_t begin, int64_t end) {
    const shifted_task *t = context;
    stax_pad_input_planes(t->w, &t->g.pad, t->image, begin, end, t->padded);
}

/* The output pixels before flat column q: the valid columns of the rows above, then of its own. */
static int64_t pixels_before(const shifted_task *t, int64_t q) {
    int64_t ow = q % t->g.pad.wp;
    return q / t->g.pad.wp * t->w->out[1] + (ow < t->w->out[1] ? ow : t->w->out[1]);
}

/* Rows [r0, r1) of the stage (`width` floats a row, flat columns [qa, qb)
 * from its first) into the output: each output row's valid run plus the
 * bias, then the channel's finished pixels through the epilogue. */
static void finish_unit(const shifted_task *t, const float *stage, int64_t width, int64_t r0,
                        int64_t r1, int64_t qa, int64_t qb) {
    const stax_window *w = t->w;
    int64_t ow_n = w->out[1], pixels = w->out[0] * ow_n, wp = t->g.pad.wp;
    int64_t pa = pixels_before(t, qa), pb = pixels_before(t, qb);
    for (int64_t r = r0; r < r1; r++) {
        const float *src = stage + (r - r0) * width;
        float *dst = t->out + r * pixels, bias = t->bias ? t->bias[r] : 0.0f;
        for (int64_t row_start = qa / wp * wp; row_start < qb; row_start += wp) {
            int64_t q0 = row_start > qa ? row_start : qa;
            int64_t q1 = row_start + ow_n < qb ? row_start + ow_n : qb;
            float *to = dst + pixels_before(t, q0);
            stax_copy_floats_plus(to, src + (q0 - qa), bias, q1 - q0);
        }
        if (t->epilogue && pb > pa)
            t->epilogue(t->slots, t->first + r * pixels + pa, t->first + r * pixels + pb);
    }
}

static void run_unit(const shifted_task *t, int64_t unit, float *stage) {
    const stax_window *w = t->w;
    const stax_gemm_kernels *kernels = t->kernels;
    const stax_gemm_family *family = kernels->family;
    const shifted_geometry *g = &t->g;
    int64_t nr = family->nr, cout = w->out_channels;
    int64_t column_unit = unit % g->column_units, row_unit = unit / g->column_units;
    int64_t c0 = column_unit * g->tiles / g->column_units;
    int64_t c1 = (column_unit + 1) * g->tiles / g->column_units;
    /* a group boundary is a tile boundary: groups before the tails are full tiles */
    int64_t r0 = row_unit * g->row_groups / g->row_units * family->mr;
    int64_t r1 = (row_unit + 1) * g->row_groups / g->row_units * family->mr;
    if (r1 > cout) r1 = cout;
    int64_t width = (c1 - c0) * nr;
    for (int64_t pc = 0; pc < g->k; pc += kernels->kc) {
        int64_t kc = g->k - pc < kernels->kc ? g->k - pc : kernels->kc;
        const float *a_block = t->weights + cout * pc; /* k block pc: its tiles in order */
        for (int64_t ct = c0; ct < c1; ct++) {
            int64_t q = ct * nr, cols = g->q_cols - q < nr ? g->q_cols - q : nr;
            float *c_tile = stage + (ct - c0) * nr;
            /* r0 is a multiple of mr: it starts tile r0 / mr */
            for (int64_t tile = r0 / family->mr, row = r0; row < r1;
                 row = stax_gemm_tile_row(&t->rows, ++tile)) {
                int32_t kernel = stax_gemm_tile_kernel(&t->rows, tile);
                kernels->offset[kernel](a_block + row * kc, t->padded + q,
                                        c_tile + (row - r0) * width, width, kc, pc > 0, cols,
                                        t->offsets + pc);
            }
        }
    }
    int64_t qa = c0 * nr, qb = c1 * nr < g->q_cols ? c1 * nr : g->q_cols;
    finish_unit(t, stage, width, r0, r1, qa, qb);
}

static void run_slices(void *context, int64_t begin, int64_t end) {
    const shifted_task *t = context;
    int64_t units = t->g.column_units * t->g.row_units;
    for (int64_t s = begin; s < end; s++) {
        float *stage = t->stages + s * t->stage_stride;
        int64_t u1 = (s + 1) * t->grain < units ? (s + 1) * t->grain : units;
        for (int64_t u = s * t->grain; u < u1; u++) run_unit(t, u, stage);
    }
}

/* The padded image of thread share p of the whole images (p = 0: also the
 * split's), one after another in the workspace. */
static float *padded_image(const shifted_task *t, int64_t p) {
    return t->padded + p * (int64_t)aligned_floats(t->g.image_floats);
}

/* The padded image's nr floats past the image, which the last tile's
 * columns read: zeros, never stored. */
static void clear_past_image(const shifted_task *t, float *padded) {
    memset(padded + t->g.pad.floats, 0, sizeof(float) * (size_t)t->kernels->family->nr);
}

/* Sets the task on image n of the batch. */
static void point_at_image(shifted_task *t, void **slots, int64_t n) {
    const stax_window *w = t->w;
    int64_t in_image = w->in_channels * w->in[0] * w->in[1];
    int64_t out_image = w->out_channels * w->out[0] * w->out[1];
    t->image = (const float *)slots[w->x_slot] + w->x_offset + n * in_image;
    t->out = (float *)slots[w->out_slot] + w->out_offset + n * out_image;
    t->first = n * out_image;
}

/* Thread share p of the whole images: its images one after another, each
 * padded into the share's own image and run unit by unit in its stage. */
static void run_whole_images(void *context, int64_t begin, int64_t end) {
    const shifted_task *shared = context;
    for (int64_t p = begin; p < end; p++) {
        shifted_task t = *shared;
        t.g = shared->whole;
        t.padded = padded_image(shared, p);
        float *stage = shared->stages + p * shared->stage_stride;
        int64_t units = t.g.column_units * t.g.row_units;
        int64_t n0 = p * t.whole_images / t.whole_threads;
        int64_t n1 = (p + 1) * t.whole_images / t.whole_threads;
        for (int64_t n = n0; n < n1; n++) {
            point_at_image(&t, t.slots, n);
            pad_planes(&t, 0, t.w->in_channels * t.g.pad.phases);
            for (int64_t u = 0; u < units; u++) run_unit(&t, u, stage);
        }
    }
}

void stax_conv_shifted_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                           float *workspace, const stax_gemm_kernels *kernels,
                           stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    shifted_task t = {.w = w,
                      .kernels = kernels,
                      .g = geometry_of(w, kernels->family, threads),
                      .whole = geometry_of(w, kernels->family, 1),
                      .slots = slots,
                      .epilogue = epilogue};
    t.stage_stride = stage_stride(&t.g, &t.whole, kernels->family);
    bool pool = threads > 1 && host && host->parallel_for;
    t.whole_threads = pool ? whole_image_threads(w, threads) : 0;
    t.whole_images = t.whole_threads ? w->batch / t.whole_threads * t.whole_threads : 0;
    float *packed = workspace;
    int64_t *offsets = (int64_t *)(packed + aligned_floats(weight_floats(w)));
    t.padded = (float *)offsets + aligned_floats(2 * t.g.k);
    int64_t padded_images = t.whole_threads > 1 ? t.whole_threads : 1;
    t.stages = padded_image(&t, padded_images);
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc) {
        t.weights = slots[w->packed_w_slot];
    } else {
        stax_window_pack_weights_now(host, step, slots, kernels, threads, packed);
        t.weights = packed;
    }
    stax_padded_tap_offsets(w, &t.g.pad, offsets);
    t.rows = stax_gemm_split_rows(kernels->family, w->out_channels);
    t.offsets = offsets;
    for (int64_t p = 0; p < padded_images; p++) clear_past_image(&t, padded_image(&t, p));
    t.bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL;
    if (t.whole_images > 0) host->parallel_for(t.whole_threads, 1, run_whole_images, &t);
    if (t.whole_images == w->batch) return;
    int64_t units = t.g.column_units * t.g.row_units;
    t.grain = stax_grain(host, units, 1, threads);
    if (t.grain < ceil_div(units, stax_most_slices(threads)))
        t.grain = ceil_div(units, stax_most_slices(threads));
    int64_t slices = ceil_div(units, t.grain);
    for (int64_t n = t.whole_images; n < w->batch; n++) {
        point_at_image(&t, slots, n);
        stax_parallel_range(host, w->in_channels * t.g.pad.phases, 1, threads, pad_planes, &t);
        if (slices > 1 && pool)
            host->parallel_for(slices, 1, run_slices, &t);
        else
            run_slices(&t, 0, slices);
    }
}
