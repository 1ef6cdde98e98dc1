/* stax-llvm — a stride-1 conv as a sum over its taps of products that read
 * the zero-padded input in place (window.shifted; for stax_window.c).
 *
 * With the input padded into planes of HP x WP (the padding made real) and
 * the output computed on the same grid, output pixel (oh, ow) is flat column
 * q = oh * WP + ow, and tap (i, j) of input channel c reads padded element
 * c * HP * WP + (i * WP + j) * dilation + q. So for one tap the product is
 *     C[co][q] += sum over c of W[co][c][i][j] * P[c * plane + offset + q],
 * a product whose B rows are the padded planes, `plane` floats apart, each
 * read from the tap's offset on: exactly what the family's strided tile
 * kernels read in place (B rows ldb apart, nr floats each). No im2col
 * column is ever packed: the KH * KW taps read the same few input rows at
 * shifted starts, which stay in L1 while the tiles of C read them.
 *
 * The price: the WP - OW columns at the end of each output row (the
 * padding's width) are computed and dropped, so a map must be wide enough
 * for them to be few (the planner's choice, stax_conv_choose_shifted).
 *
 * The work is cut into units: a run of nr-wide column tiles of the flat
 * output times a run of output channels. A unit accumulates every k block
 * and tap into a stage in cache (one per slice), then copies the valid
 * columns out with the bias and sends each channel's finished range (its
 * valid pixels are consecutive in NCHW) through the fused epilogue. The
 * weights are packed per tap (stax_gemm_pack_whole_a over W[:, :, i, j]),
 * at compile when they are constants. */
#include <string.h>

#include "stax_internal.h"

/* Floats a unit's stage holds at most (128 KiB of f32, in L2), and the
 * column tiles a unit takes at most (its B rows for one tap and k block:
 * kc rows of 8 * nr floats). */
#define SHIFTED_STAGE_FLOATS 32768
#define SHIFTED_MAX_TILES    8
/* Taps of the largest kernel taken (11 x 11). */
#define SHIFTED_MAX_TAPS 128

typedef struct shifted_geometry {
    int64_t hp, wp, plane; /* the padded input plane */
    int64_t q_cols;        /* flat output columns: (OH - 1) * WP + OW */
    int64_t tiles;         /* nr-wide column tiles over them */
    int64_t taps;
    int64_t image_floats; /* one padded image, plus nr floats the last tile reads past it */
    int64_t tiles_per_unit, rows_per_unit; /* rows: a multiple of mr, or all of C_out */
    int64_t column_units, row_units;
} shifted_geometry;

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

static shifted_geometry geometry_of(const stax_window *w, const stax_gemm_family *family,
                                    int64_t threads) {
    shifted_geometry g;
    int64_t nr = family->nr, mr = family->mr, cout = w->out_channels;
    g.hp = stax_padded_extent(w, 0), g.wp = stax_padded_extent(w, 1);
    g.plane = g.hp * g.wp;
    g.q_cols = (w->out[0] - 1) * g.wp + w->out[1];
    g.tiles = ceil_div(g.q_cols, nr);
    g.taps = w->kernel[0] * w->kernel[1];
    g.image_floats = w->in_channels * g.plane + nr;
    /* all output channels in a unit, as many tiles as the stage holds */
    int64_t rows = ceil_div(cout, mr) * mr;
    g.tiles_per_unit = SHIFTED_STAGE_FLOATS / (rows * nr);
    if (g.tiles_per_unit > SHIFTED_MAX_TILES) g.tiles_per_unit = SHIFTED_MAX_TILES;
    if (g.tiles_per_unit < 1) g.tiles_per_unit = 1;
    if (g.tiles_per_unit > g.tiles) g.tiles_per_unit = g.tiles;
    g.column_units = ceil_div(g.tiles, g.tiles_per_unit);
    /* fewer column units than four per thread (a small map): the channels
     * split too, in whole tiles of mr rows */
    int64_t want = 4 * (threads > 1 ? threads : 1), row_tiles = ceil_div(cout, mr);
    int64_t row_units = g.column_units >= want ? 1 : ceil_div(want, g.column_units);
    if (row_units > row_tiles) row_units = row_tiles;
    if (rows * g.tiles_per_unit * nr > SHIFTED_STAGE_FLOATS && row_units < 2) row_units = 2;
    g.rows_per_unit = ceil_div(row_tiles, row_units) * mr;
    g.row_units = ceil_div(cout, g.rows_per_unit);
    return g;
}

static int64_t stage_floats(const shifted_geometry *g, const stax_gemm_family *family) {
    return g->rows_per_unit * g->tiles_per_unit * family->nr;
}

static size_t aligned_floats(int64_t floats) {
    return (size_t)(floats + 15) / 16 * 16;
}

static int64_t most_slices(int64_t threads) {
    return 4 * (threads > 1 ? threads : 1);
}

int32_t stax_conv_choose_shifted(const tp_plugin_host *host, const stax_window *w,
                                 const stax_gemm_family *family, bool *chosen, char *error,
                                 size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_CONV_SHIFTED") : NULL;
    *chosen = false;
    if (setting && *setting && strcmp(setting, "auto") && strcmp(setting, "on") &&
        strcmp(setting, "off"))
        return tpcommon_error(error, error_size,
                              "stax: STAX_CONV_SHIFTED is '%s'; use auto, on or off (or unset it)",
                              setting);
    bool possible = w->kind == STAX_WINDOW_CONV && w->method == STAX_WINDOW_GEMM_IM2COL &&
                    w->packed && w->group == 1 && family && w->stride[0] == 1 &&
                    w->stride[1] == 1 && w->kernel[0] * w->kernel[1] > 1 &&
                    w->kernel[0] * w->kernel[1] <= SHIFTED_MAX_TAPS;
    if (!possible || (setting && !strcmp(setting, "off"))) return TP_PLUGIN_OK;
    if (setting && !strcmp(setting, "on")) {
        *chosen = true;
        return TP_PLUGIN_OK;
    }
    /* auto: where the columns computed and dropped (the padding's width on
     * each row, the last tile's rest) are at most a tenth of the work */
    shifted_geometry g = geometry_of(w, family, 1);
    double useful = (double)(w->out[0] * w->out[1]) / (double)(g.tiles * family->nr);
    *chosen = useful >= 0.9;
    return TP_PLUGIN_OK;
}

size_t stax_conv_shifted_weight_floats(const stax_window *w) {
    return (size_t)(w->out_channels * w->in_channels * w->kernel[0] * w->kernel[1]);
}

/* The product of tap t: A = W[:, :, i, j] (C_out x C_in, a row K floats,
 * the channels KH * KW apart). */
static stax_gemm tap_gemm(const stax_step *step, int64_t t) {
    const stax_window *w = &step->window;
    stax_gemm gemm = step->gemm;
    int64_t taps = w->kernel[0] * w->kernel[1];
    gemm.batch = 1, gemm.batch_ndim = 0;
    gemm.m = w->out_channels, gemm.k = w->in_channels;
    gemm.a_rs = w->in_channels * taps, gemm.a_cs = taps;
    gemm.a_offset = w->w_offset + t;
    gemm.b_slot = gemm.a_slot, gemm.b_offset = 0; /* B is not read */
    return gemm;
}

static void pack_weights_on(const tp_plugin_host *host, const stax_step *step, void **slots,
                            const stax_gemm_kernels *kernels, int64_t threads, float *out) {
    const stax_window *w = &step->window;
    int64_t taps = w->kernel[0] * w->kernel[1], per_tap = w->out_channels * w->in_channels;
    for (int64_t t = 0; t < taps; t++) {
        stax_gemm gemm = tap_gemm(step, t);
        stax_gemm_pack_whole_a(host, &gemm, slots, kernels, threads, out + t * per_tap);
    }
}

void stax_conv_shifted_pack_weights(const stax_step *step, const stax_gemm_kernels *kernels,
                                    void *weights, float *out) {
    void *slots[1] = {weights};
    stax_step one_slot = *step; /* the weights as slot 0 */
    one_slot.gemm.a_slot = 0;
    pack_weights_on(NULL, &one_slot, slots, kernels, 1, out);
}

/* The weights (when not packed at compile), one padded image, the stages. */
size_t stax_conv_shifted_workspace_bytes(const stax_step *step, const stax_gemm_kernels *kernels,
                                         int64_t threads) {
    const stax_window *w = &step->window;
    shifted_geometry g = geometry_of(w, kernels->family, threads);
    size_t floats = aligned_floats((int64_t)stax_conv_shifted_weight_floats(w)) +
                    aligned_floats(g.image_floats) +
                    (size_t)(most_slices(threads) * stage_floats(&g, kernels->family));
    return floats * sizeof(float);
}

typedef struct shifted_task {
    const stax_window *w;
    const stax_gemm_kernels *kernels;
    shifted_geometry g;
    void **slots;
    const float *weights; /* per tap: stax_gemm_pack_whole_a's layout for C_out x C_in */
    const float *image;   /* this image's input, NCHW */
    float *padded;        /* this image, padded */
    float *stages;        /* one per slice */
    const float *bias;    /* or NULL */
    float *out;           /* this image's output */
    int64_t first;        /* the flat index of this image's first output element */
    int64_t tap_offset[SHIFTED_MAX_TAPS];
    int64_t grain; /* units per slice */
    stax_kernel_fn epilogue;
} shifted_task;

static void pad_channels(void *context, int64_t begin, int64_t end) {
    const shifted_task *t = context;
    const stax_window *w = t->w;
    int64_t in_plane = w->in[0] * w->in[1];
    for (int64_t c = begin; c < end; c++)
        stax_fill_padded_plane(w, t->image + c * in_plane, t->g.hp, t->g.wp,
                               t->padded + c * t->g.plane);
}

/* The output pixels before flat column q: the valid columns of the rows above, then of its own. */
static int64_t pixels_before(const shifted_task *t, int64_t q) {
    int64_t ow = q % t->g.wp;
    return q / t->g.wp * t->w->out[1] + (ow < t->w->out[1] ? ow : t->w->out[1]);
}

/* Rows [r0, r1) of the stage (`width` floats a row, flat columns [qa, qb)
 * from its first) into the output: each output row's valid run plus the
 * bias, then the channel's finished pixels through the epilogue. */
static void finish_unit(const shifted_task *t, const float *stage, int64_t width, int64_t r0,
                        int64_t r1, int64_t qa, int64_t qb) {
    const stax_window *w = t->w;
    int64_t ow_n = w->out[1], pixels = w->out[0] * ow_n, wp = t->g.wp;
    int64_t pa = pixels_before(t, qa), pb = pixels_before(t, qb);
    for (int64_t r = r0; r < r1; r++) {
        const float *src = stage + (r - r0) * width;
        float *dst = t->out + r * pixels, bias = t->bias ? t->bias[r] : 0.0f;
        for (int64_t row_start = qa / wp * wp; row_start < qb; row_start += wp) {
            int64_t q0 = row_start > qa ? row_start : qa;
            int64_t q1 = row_start + ow_n < qb ? row_start + ow_n : qb;
            float *to = dst + pixels_before(t, q0);
            const float *from = src + (q0 - qa);
            for (int64_t i = 0; i < q1 - q0; i++) to[i] = from[i] + bias;
        }
        if (t->epilogue && pb > pa)
            t->epilogue(t->slots, t->first + r * pixels + pa, t->first + r * pixels + pb);
    }
}

/* The row tile of C_out at `row`: its height and kernel index. */
static int32_t tile_kernel_at(const stax_gemm_family *family, int64_t m, int64_t row,
                              int64_t *height) {
    *height = stax_gemm_tile_rows(family, m, row);
    for (int32_t i = 0; i < family->num_heights; i++)
        if (family->heights[i] == *height) return i;
    return -1;
}

static void run_unit(const shifted_task *t, int64_t unit, float *stage) {
    const stax_window *w = t->w;
    const stax_gemm_kernels *kernels = t->kernels;
    const stax_gemm_family *family = kernels->family;
    const shifted_geometry *g = &t->g;
    int64_t nr = family->nr, cout = w->out_channels, cin = w->in_channels;
    int64_t column_unit = unit % g->column_units, row_unit = unit / g->column_units;
    int64_t c0 = column_unit * g->tiles_per_unit;
    int64_t c1 = c0 + g->tiles_per_unit < g->tiles ? c0 + g->tiles_per_unit : g->tiles;
    int64_t r0 = row_unit * g->rows_per_unit;
    int64_t r1 = r0 + g->rows_per_unit < cout ? r0 + g->rows_per_unit : cout;
    int64_t width = (c1 - c0) * nr, per_tap = cout * cin;
    for (int64_t pc = 0; pc < cin; pc += kernels->kc) {
        int64_t kc = cin - pc < kernels->kc ? cin - pc : kernels->kc;
        for (int64_t tap = 0; tap < g->taps; tap++) {
            int64_t accumulate = pc > 0 || tap > 0;
            const float *a_block = t->weights + tap * per_tap + cout * pc;
            const float *b_block = t->padded + pc * g->plane + t->tap_offset[tap];
            for (int64_t ct = c0; ct < c1; ct++) {
                int64_t q = ct * nr, cols = g->q_cols - q < nr ? g->q_cols - q : nr;
                float *c_tile = stage + (ct - c0) * nr;
                for (int64_t row = r0, height; row < r1; row += height) {
                    int32_t kernel = tile_kernel_at(family, cout, row, &height);
                    kernels->strided[kernel](a_block + row * kc, b_block + q,
                                             c_tile + (row - r0) * width, width, kc, accumulate,
                                             cols, g->plane);
                }
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
        float *stage = t->stages + s * stage_floats(&t->g, t->kernels->family);
        int64_t u1 = (s + 1) * t->grain < units ? (s + 1) * t->grain : units;
        for (int64_t u = s * t->grain; u < u1; u++) run_unit(t, u, stage);
    }
}

void stax_conv_shifted_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                           float *workspace, const stax_gemm_kernels *kernels,
                           stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    shifted_task t = {.w = w,
                      .kernels = kernels,
                      .g = geometry_of(w, kernels->family, threads),
                      .slots = slots,
                      .epilogue = epilogue};
    float *packed = workspace;
    t.padded = packed + aligned_floats((int64_t)stax_conv_shifted_weight_floats(w));
    t.stages = t.padded + aligned_floats(t.g.image_floats);
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc) {
        t.weights = slots[w->packed_w_slot];
    } else {
        pack_weights_on(host, step, slots, kernels, threads, packed);
        t.weights = packed;
    }
    for (int64_t i = 0; i < w->kernel[0]; i++)
        for (int64_t j = 0; j < w->kernel[1]; j++)
            t.tap_offset[i * w->kernel[1] + j] = i * w->dilation[0] * t.g.wp + j * w->dilation[1];
    /* the last tile's columns past the image read these: zeros, never stored */
    memset(t.padded + w->in_channels * t.g.plane, 0, sizeof(float) * (size_t)kernels->family->nr);
    t.bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL;
    int64_t units = t.g.column_units * t.g.row_units;
    t.grain = stax_grain(host, units, 1, threads);
    if (t.grain < ceil_div(units, most_slices(threads)))
        t.grain = ceil_div(units, most_slices(threads));
    int64_t slices = ceil_div(units, t.grain);
    int64_t in_image = w->in_channels * w->in[0] * w->in[1];
    int64_t out_image = w->out_channels * w->out[0] * w->out[1];
    for (int64_t n = 0; n < w->batch; n++) {
        t.image = (const float *)slots[w->x_slot] + w->x_offset + n * in_image;
        t.out = (float *)slots[w->out_slot] + w->out_offset + n * out_image;
        t.first = n * out_image;
        stax_parallel_range(host, w->in_channels, 1, threads, pad_channels, &t);
        if (slices > 1 && threads > 1 && host && host->parallel_for)
            host->parallel_for(slices, 1, run_slices, &t);
        else
            run_slices(&t, 0, slices);
    }
}
