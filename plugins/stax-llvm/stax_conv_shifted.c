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
 * The batch is shared between threads by stax_conv_padded_run.c: whole
 * images a thread at a batch of at least as many images as threads, else
 * an image at a time split into slices of units. */
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
    bool possible = stax_conv_can_read_padded_input(w, family);
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

typedef struct shifted_task {
    const stax_window *w;
    const stax_gemm_kernels *kernels;
    shifted_geometry split, whole; /* an image split between the threads; run whole by one */
    void **slots;
    const float *weights;     /* the implicit GEMM's packed weights (C_out x K, k blocks of kc) */
    const int64_t *offsets;   /* row k of B: the padded image from this float on */
    stax_gemm_row_tiles rows; /* of C_out */
    const float *bias;        /* or NULL */
    stax_kernel_fn epilogue;
} shifted_task;

/* The runner (stax_conv_padded_run.c) of the task's geometries: a padded
 * image holds nr floats past the image, which the last tile's columns read. */
static stax_padded_runner runner_of(const shifted_task *t, stax_padded_unit_fn run_unit) {
    const stax_gemm_family *family = t->kernels->family;
    return (stax_padded_runner){.w = t->w,
                                .pad = &t->split.pad,
                                .image_floats = t->split.image_floats,
                                .split_units = t->split.column_units * t->split.row_units,
                                .whole_units = t->whole.column_units * t->whole.row_units,
                                .split_stage = stage_floats(&t->split, family),
                                .whole_stage = stage_floats(&t->whole, family),
                                .run_unit = run_unit,
                                .method = t};
}

/* The weights (when not packed at compile), the offsets, the runner's
 * padded images and stages. */
size_t stax_conv_shifted_workspace_bytes(const stax_step *step, const stax_gemm_kernels *kernels,
                                         int64_t threads) {
    const stax_window *w = &step->window;
    shifted_task t = {.w = w,
                      .kernels = kernels,
                      .split = geometry_of(w, kernels->family, threads),
                      .whole = geometry_of(w, kernels->family, 1)};
    stax_padded_runner runner = runner_of(&t, NULL);
    size_t floats = aligned_floats(weight_floats(w)) + aligned_floats(2 * t.split.k) +
                    stax_padded_run_floats(&runner, threads);
    return floats * sizeof(float);
}

/* The output pixels before flat column q: the valid columns of the rows above, then of its own. */
static int64_t pixels_before(const shifted_task *t, int64_t q) {
    int64_t ow = q % t->split.pad.wp;
    return q / t->split.pad.wp * t->w->out[1] + (ow < t->w->out[1] ? ow : t->w->out[1]);
}

/* Rows [r0, r1) of the stage (`width` floats a row, flat columns [qa, qb)
 * from its first) into the output: each output row's valid run plus the
 * bias, then the channel's finished pixels through the epilogue. */
static void finish_unit(const shifted_task *t, const stax_padded_image *image, const float *stage,
                        int64_t width, int64_t r0, int64_t r1, int64_t qa, int64_t qb) {
    const stax_window *w = t->w;
    int64_t ow_n = w->out[1], pixels = w->out[0] * ow_n, wp = t->split.pad.wp;
    int64_t pa = pixels_before(t, qa), pb = pixels_before(t, qb);
    for (int64_t r = r0; r < r1; r++) {
        const float *src = stage + (r - r0) * width;
        float *dst = image->out + r * pixels, bias = t->bias ? t->bias[r] : 0.0f;
        for (int64_t row_start = qa / wp * wp; row_start < qb; row_start += wp) {
            int64_t q0 = row_start > qa ? row_start : qa;
            int64_t q1 = row_start + ow_n < qb ? row_start + ow_n : qb;
            float *to = dst + pixels_before(t, q0);
            stax_copy_floats_plus(to, src + (q0 - qa), bias, q1 - q0);
        }
        if (t->epilogue && pb > pa)
            t->epilogue(t->slots, image->first + r * pixels + pa, image->first + r * pixels + pb);
    }
}

static void run_unit(const void *method, const stax_padded_image *image, bool whole, int64_t unit,
                     float *stage) {
    const shifted_task *t = method;
    const stax_window *w = t->w;
    const stax_gemm_kernels *kernels = t->kernels;
    const stax_gemm_family *family = kernels->family;
    const shifted_geometry *g = whole ? &t->whole : &t->split;
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
                kernels->offset[kernel](a_block + row * kc, image->padded + q,
                                        c_tile + (row - r0) * width, width, kc, pc > 0, cols,
                                        t->offsets + pc);
            }
        }
    }
    int64_t qa = c0 * nr, qb = c1 * nr < g->q_cols ? c1 * nr : g->q_cols;
    finish_unit(t, image, stage, width, r0, r1, qa, qb);
}

void stax_conv_shifted_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                           float *workspace, const stax_gemm_kernels *kernels,
                           stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    shifted_task t = {.w = w,
                      .kernels = kernels,
                      .split = geometry_of(w, kernels->family, threads),
                      .whole = geometry_of(w, kernels->family, 1),
                      .slots = slots,
                      .epilogue = epilogue};
    float *packed = workspace;
    int64_t *offsets = (int64_t *)(packed + aligned_floats(weight_floats(w)));
    float *space = (float *)offsets + aligned_floats(2 * t.split.k);
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc) {
        t.weights = slots[w->packed_w_slot];
    } else {
        stax_window_pack_weights_now(host, step, slots, kernels, threads, packed);
        t.weights = packed;
    }
    stax_padded_tap_offsets(w, &t.split.pad, t.split.pad.hp, offsets);
    t.rows = stax_gemm_split_rows(kernels->family, w->out_channels);
    t.offsets = offsets;
    t.bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL;
    stax_padded_runner runner = runner_of(&t, run_unit);
    stax_padded_run(host, &runner, slots, space, threads);
}
