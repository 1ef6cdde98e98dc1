/* stax-llvm — a conv on a small output map (ResNet's and MobileNetV2's 7x7
 * maps) with its output pixels as the rows of the product, for
 * stax_window.c: C^T[pixels][C_out] = im2col^T[pixels][K] x W^T[K][C_out],
 * the pixels of every image one after another.
 *
 * The usual conv product (stax_window.c) has the pixels of one image as
 * its columns, and the micro-kernel's panels are nr columns wide: 49
 * pixels fill four 16-wide panels of which the last holds one column, so
 * close to a quarter of the work goes to waste. Here the columns are the
 * output channels (a multiple of 16 in these networks) and the pixels of
 * all images are rows, split into tiles of mr rows and a few smaller ones
 * (no row is padded). W^T is packed whole at compile (the step's
 * packed_w_slot); im2col^T is packed for all k blocks before the product
 * (stax_pixel_rows_pack.c, gathered from a bordered copy of the input);
 * the product writes C^T into the step's col_slot, and each block of it
 * that the product makes final is transposed into the NCHW output with the
 * bias by the thread that computed it (or, with more rows than one chunk
 * of A, after the product as a pass of its own), sixteen channels of an
 * image at a time (4x4 SSE2 transposes), each such run going through the
 * fused epilogue while it is in L1. */
#include <string.h>

#include "stax_internal.h"

static int64_t output_pixels(const stax_window *w) {
    return w->out[0] * w->out[1];
}

static int64_t padded_to(int64_t count, int64_t width) {
    return (count + width - 1) / width * width;
}

/* The product: A (im2col^T) comes packed, B is W^T read through W's slot
 * (W is C_out x K row-major, so B[k][co] = W[co][k]). */
static stax_gemm pixel_rows_gemm(const stax_window *w, int64_t k) {
    stax_gemm gemm;
    memset(&gemm, 0, sizeof gemm);
    gemm.batch = 1;
    gemm.m = w->batch * output_pixels(w);
    gemm.n = w->out_channels;
    gemm.k = k;
    gemm.a_slot = w->w_slot, gemm.a_offset = w->w_offset; /* not read: A is packed */
    gemm.a_rs = k, gemm.a_cs = 1;
    gemm.b_slot = w->w_slot, gemm.b_offset = w->w_offset;
    gemm.b_rs = 1, gemm.b_cs = k;
    gemm.c_slot = w->col_slot;
    gemm.epilogue = -1;
    gemm.packed_b_slot = -1;
    return gemm;
}

/* Panel columns wasted: the pixels of one image over nr-wide panels (the
 * usual product) against the output channels over them (this one); true
 * when the usual product wastes `margin` (a fraction of its columns) more. */
static bool wastes_fewer_columns(const stax_window *w, const stax_gemm_family *family,
                                 double margin) {
    int64_t pixels = output_pixels(w), channels = w->out_channels;
    double waste_now = 1.0 - (double)pixels / (double)padded_to(pixels, family->nr);
    double waste_here = 1.0 - (double)channels / (double)padded_to(channels, family->nr);
    return waste_now >= waste_here + margin;
}

/* Whether a product of m pixel rows fits one chunk of the family's A (mc
 * rows, whole tiles), so that each block it makes final holds whole output
 * planes and the finish transposes them where they were computed. */
static bool fits_one_a_chunk(int64_t m, int64_t mc, const stax_gemm_family *family) {
    return m <= mc / family->mr * family->mr;
}

int32_t stax_conv_choose_pixel_rows(const tp_plugin_host *host, const stax_window *w,
                                    const stax_gemm_family *family, bool *chosen, char *error,
                                    size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_CONV_PIXEL_ROWS") : NULL;
    *chosen = false;
    if (setting && *setting && strcmp(setting, "on") && strcmp(setting, "off"))
        return tpcommon_error(error, error_size,
                              "stax: STAX_CONV_PIXEL_ROWS is '%s'; use on or off (or unset it)",
                              setting);
    bool possible =
        w->kind == STAX_WINDOW_CONV && w->packed && w->group == 1 && family &&
        (w->method == STAX_WINDOW_GEMM_IM2COL || w->method == STAX_WINDOW_GEMM_POINTWISE);
    if (!possible || (setting && !strcmp(setting, "off"))) return TP_PLUGIN_OK;
    if (setting && !strcmp(setting, "on")) {
        *chosen = true;
        return TP_PLUGIN_OK;
    }
    /* a 1x1 conv to fewer channels than it reads (MobileNet's projections)
     * reads its input in place instead: transposing the input and the
     * result cost more than the wasted columns (576 to 96 channels at 14x14
     * 221 -> 160 us, 960 to 160 at 7x7 185 -> 150 us, one thread); one to
     * more channels keeps pixel rows (320 to 1280 at 7x7: 352 against 438) */
    if (w->method == STAX_WINDOW_GEMM_POINTWISE && w->out_channels <= w->in_channels)
        return TP_PLUGIN_OK;
    /* a 1x1 conv whose rows do not fit one chunk of A transposes its result
     * in a pass of its own after the product; reading the input in place
     * costs less there unless it wastes a fifth more columns (MobileNetV2-b8,
     * 2 threads: 64 to 384 channels at 14x14 462 -> 364 us, 96 to 576 860 ->
     * 735 us; its 7x7 maps, 23% wasted in place, keep pixel rows: 320 to
     * 1280 1163 against 1347 us) */
    int64_t kc, mc;
    stax_gemm_family_blocking(host, family, &kc, &mc);
    bool transposed_apart = !fits_one_a_chunk(w->batch * output_pixels(w), mc, family);
    double margin = w->method == STAX_WINDOW_GEMM_POINTWISE && transposed_apart ? 0.2 : 0.1;
    *chosen = wastes_fewer_columns(w, family, margin);
    return TP_PLUGIN_OK;
}

size_t stax_conv_pixel_rows_weight_floats(const stax_step *step, const stax_gemm_family *family) {
    return (size_t)(step->gemm.k * padded_to(step->window.out_channels, family->nr));
}

void stax_conv_pixel_rows_pack_weights(const tp_plugin_host *host, const stax_step *step,
                                       const stax_gemm_kernels *kernels, int64_t threads,
                                       void *weights, float *out) {
    void *slots[1] = {weights};
    stax_gemm gemm = pixel_rows_gemm(&step->window, step->gemm.k);
    gemm.b_slot = 0;
    stax_gemm_pack_whole_b(host, &gemm, slots, kernels, threads, out);
}

int64_t stax_conv_pixel_rows_result_floats(const stax_window *w) {
    return w->batch * output_pixels(w) * w->out_channels;
}

static size_t aligned_floats(size_t floats) {
    return (floats + 15) / 16 * 16;
}

/* W^T packed (when it was not at compile), im2col^T packed, the bordered
 * input it is gathered from, the driver's space. */
size_t stax_conv_pixel_rows_workspace_bytes(const stax_step *step, const stax_gemm_kernels *kernels,
                                            int64_t threads) {
    stax_gemm gemm = pixel_rows_gemm(&step->window, step->gemm.k);
    size_t floats = aligned_floats(stax_gemm_whole_b_floats(&gemm, kernels)) +
                    aligned_floats((size_t)(gemm.m * gemm.k)) +
                    aligned_floats((size_t)stax_pixel_rows_bordered_floats(&step->window));
    return floats * sizeof(float) + stax_gemm_packed_workspace_bytes(&gemm, kernels, threads);
}

typedef struct pixel_rows_task {
    const stax_window *w;
    const stax_gemm_kernels *kernels;
    const float *x;  /* the input, all images */
    float *bordered; /* its bordered copy, or NULL (the pack reads x) */
    const stax_gemm *gemm;
    void **slots;
    float *packed_a;
    const float *result; /* C^T */
    int64_t rows_per_unit;
    stax_kernel_fn epilogue; /* or NULL */
} pixel_rows_task;

static void border_range(void *context, int64_t begin, int64_t end) {
    const pixel_rows_task *t = context;
    stax_pixel_rows_border(t->w, t->x, begin, end, t->bordered);
}

static void pack_a_range(void *context, int64_t begin, int64_t end) {
    const pixel_rows_task *t = context;
    int64_t m = t->gemm->m, row1 = end * t->rows_per_unit < m ? end * t->rows_per_unit : m;
    stax_pixel_rows_pack(t->w, t->x, t->bordered, t->kernels->family, m, t->gemm->k, t->kernels->kc,
                         begin * t->rows_per_unit, row1, t->packed_a);
}

/* Output channels per unit of the transpose: a block of them is a run of
 * whole planes in the output, 16 * 49 floats (7x7) to 16 * 196 (14x14),
 * transposed in L1 and then through the epilogue while still there. */
#define PIXEL_ROWS_CHANNEL_BLOCK STAX_TRANSPOSE_MAX_COLUMNS

/* The driver's finish (stax_gemm_source.finish), on the thread that made
 * the block final while it is in cache: rows [r0, r1) of C^T (the pixels
 * of consecutive images) x output channels [c0, c1) into the NCHW output
 * with the bias, PIXEL_ROWS_CHANNEL_BLOCK channels of an image at a time,
 * each such run then through the fused epilogue while it is in L1: one
 * call for whole planes, else one per channel's run of pixels. (As a pass
 * of its own after the product, the transpose read blocks of C^T that the
 * other core had written, and cost a pool dispatch: 18% of a 96 -> 576
 * conv at 14x14.) */
static void finish_pixel_rows(const void *context, int64_t batch, int64_t r0, int64_t r1,
                              int64_t c0, int64_t c1) {
    (void)batch; /* one product: every image's pixels are its rows */
    const pixel_rows_task *t = context;
    const stax_window *w = t->w;
    int64_t pixels = output_pixels(w), channels = w->out_channels;
    const float *bias = w->b_slot >= 0 ? (const float *)t->slots[w->b_slot] + w->b_offset : NULL;
    float *out = (float *)t->slots[w->out_slot] + w->out_offset;
    for (int64_t row = r0; row < r1;) {
        int64_t image = row / pixels, p0 = row % pixels;
        int64_t p1 = r1 - image * pixels < pixels ? r1 - image * pixels : pixels;
        for (int64_t c = c0; c < c1; c += PIXEL_ROWS_CHANNEL_BLOCK) {
            int64_t count = c1 - c < PIXEL_ROWS_CHANNEL_BLOCK ? c1 - c : PIXEL_ROWS_CHANNEL_BLOCK;
            int64_t first = (image * channels + c) * pixels;
            stax_transpose_plus(t->result + row * channels + c, channels, p1 - p0, count,
                                bias ? bias + c : NULL, out + first + p0, pixels);
            if (!t->epilogue) continue;
            if (p0 == 0 && p1 == pixels)
                t->epilogue(t->slots, first, first + count * pixels);
            else
                for (int64_t q = 0; q < count; q++)
                    t->epilogue(t->slots, first + q * pixels + p0, first + q * pixels + p1);
        }
        row = image * pixels + p1;
    }
}

static int64_t channel_blocks(const stax_window *w) {
    return (w->out_channels + PIXEL_ROWS_CHANNEL_BLOCK - 1) / PIXEL_ROWS_CHANNEL_BLOCK;
}

/* Units [begin, end) (image * channel_blocks + block) of the transpose as a
 * pass of its own: a block of whole output planes from C^T, then the fused
 * epilogue on them. */
static void transpose_planes(void *context, int64_t begin, int64_t end) {
    const pixel_rows_task *t = context;
    int64_t pixels = output_pixels(t->w), channels = t->w->out_channels,
            blocks = channel_blocks(t->w);
    for (int64_t unit = begin; unit < end; unit++) {
        int64_t image = unit / blocks, c0 = unit % blocks * PIXEL_ROWS_CHANNEL_BLOCK;
        int64_t c1 =
            c0 + PIXEL_ROWS_CHANNEL_BLOCK < channels ? c0 + PIXEL_ROWS_CHANNEL_BLOCK : channels;
        finish_pixel_rows(t, 0, image * pixels, (image + 1) * pixels, c0, c1);
    }
}

/* Whether each block the product makes final holds whole output planes
 * (every pixel of its images), so that the driver's finish can transpose it
 * with one epilogue call per sixteen channels: all the rows fit one chunk
 * of the family's A (a 7x7 or 14x14 map at batch 1). With more rows the
 * blocks end inside images, and an epilogue call per channel's part of a
 * plane made MobileNetV2-b8's 384-channel 14x14 convs 5-9% slower than the
 * transpose as a pass of its own after the product. */
static bool finishes_whole_planes(const stax_gemm *gemm, const stax_gemm_kernels *kernels) {
    return fits_one_a_chunk(gemm->m, kernels->mc, kernels->family);
}

/* Rows of im2col^T a unit of its packing takes: a multiple of mr (unit
 * boundaries are tile boundaries), at most eight tiles, and few enough for
 * four units a thread (a 7x7 map's 49 rows are five tiles: packed by one
 * thread in one unit, they kept the second idle for 15% of the conv). */
static int64_t pack_rows_per_unit(const stax_gemm_family *family, int64_t m, int64_t threads) {
    int64_t tiles = (m + family->mr - 1) / family->mr;
    int64_t per_unit = tiles / stax_most_slices(threads);
    per_unit = per_unit < 1 ? 1 : per_unit > 8 ? 8 : per_unit;
    return per_unit * family->mr;
}

void stax_conv_pixel_rows_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                              float *workspace, const stax_gemm_kernels *kernels,
                              stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    stax_gemm gemm = pixel_rows_gemm(w, step->gemm.k);
    float *packed_b = workspace;
    float *packed_a = packed_b + aligned_floats(stax_gemm_whole_b_floats(&gemm, kernels));
    float *bordered = packed_a + aligned_floats((size_t)(gemm.m * gemm.k));
    int64_t bordered_floats = stax_pixel_rows_bordered_floats(w);
    float *driver_space = bordered + aligned_floats((size_t)bordered_floats);
    const float *b_packed = packed_b;
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc)
        b_packed = slots[w->packed_w_slot];
    else
        stax_gemm_pack_whole_b(host, &gemm, slots, kernels, threads, packed_b);
    pixel_rows_task task = {.w = w,
                            .kernels = kernels,
                            .x = (const float *)slots[w->x_slot] + w->x_offset,
                            .bordered = bordered_floats > 0 ? bordered : NULL,
                            .gemm = &gemm,
                            .slots = slots,
                            .packed_a = packed_a,
                            .result = (const float *)slots[w->col_slot],
                            .rows_per_unit = pack_rows_per_unit(kernels->family, gemm.m, threads),
                            .epilogue = epilogue};
    if (task.bordered)
        stax_parallel_range(host, w->batch * w->in_channels, 1, threads, border_range, &task);
    stax_parallel_range(host, (gemm.m + task.rows_per_unit - 1) / task.rows_per_unit, 1, threads,
                        pack_a_range, &task);
    stax_gemm_source source = {.a_packed = packed_a, .b_packed = b_packed};
    if (finishes_whole_planes(&gemm, kernels)) {
        source.finish = finish_pixel_rows, source.finish_context = &task;
        stax_gemm_packed_run_from(host, &gemm, slots, driver_space, kernels, NULL, threads,
                                  &source);
        return;
    }
    stax_gemm_packed_run_from(host, &gemm, slots, driver_space, kernels, NULL, threads, &source);
    stax_parallel_range(host, w->batch * channel_blocks(w), 1, threads, transpose_planes, &task);
}
