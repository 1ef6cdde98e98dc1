/* stax-llvm — running the sliding-window ops (conv, conv_transpose,
 * max_pool, avg_pool) on f32 NCHW data, 1-D held as height 1. How each is
 * computed was decided by the planner (stax_plan.c, stax_window.method):
 *
 * - regular conv (channels per group > 1): implicit GEMM, per image and
 *   group C[C_out/g, OH*OW] = W[C_out/g, K] x B[K, OH*OW] with K = C/g * kh *
 *   kw. B is the input plane itself for a 1x1 stride-1 unpadded conv (on
 *   a micro-kernel family read in place by the strided tile kernels: its
 *   few rows stay in L1 while every row tile reads them), else the im2col
 *   matrix (zeros for taps in the padding). On a micro-kernel family
 *   (window.packed) the im2col columns are packed straight into the
 *   driver's B panels (stax_im2col.c, stax_gemm_packed_run_from), so the
 *   matrix is never materialised, and the bias is added per output row
 *   while the tile is in cache, then the fused epilogue (the conv's pointwise consumers, as for a
 *   matmul) on that block. With the legacy 6x16 pair (STAX_GEMM_KERNEL=legacy)
 *   the matrix is filled in parallel into a scratch slot and the bias and
 *   the epilogue added afterwards.
 * - regular conv on a small output map (window.pixel_rows): the pixels as
 *   the product's rows instead, stax_conv_pixel_rows.c.
 * - regular conv on a wide enough map (window.shifted): one product whose
 *   B rows are the zero-padded input (phase planes at stride > 1) read in
 *   place at each row's offset, stax_conv_shifted.c.
 * - regular conv with its output channels in whole panels
 *   (window.shifted_rows): the pixels as the product's rows, read in place
 *   from the zero-padded input at each tap's offset, stax_conv_shifted_rows.c.
 * - depthwise conv (one input channel per group): stax_depthwise.c.
 * - conv_transpose: per output plane (no write conflicts between threads),
 *   each input element's taps add into that plane.
 * - pools: stax_pool.c.
 * Planes are split between threads with host->parallel_for. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "stax_internal.h"

/* The direct loops are compiled for the host's vector width, picked when the
 * plugin loads (the JIT's kernels are; these are plain C). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define STAX_VECTOR_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STAX_VECTOR_LOOP
#endif

typedef struct window_task {
    const stax_window *w;
    void **slots;
    float *col;             /* im2col matrix, K x OH*OW */
    const float *x_image;   /* im2col: the image's first channel of the group */
    int64_t col_rows, cols; /* im2col: K, OH*OW */
} window_task;

static const float *slot_f32(void **slots, int32_t slot, int64_t offset) {
    return slot < 0 ? NULL : (const float *)slots[slot] + offset;
}

/* Output indices o in [0, out) with 0 <= o * stride + offset < in: [*lo, *hi). */
static void inside_range(int64_t out, int64_t stride, int64_t offset, int64_t in, int64_t *lo,
                         int64_t *hi) {
    int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t last = in - 1 - offset < 0 ? -1 : (in - 1 - offset) / stride;
    *lo = first < out ? first : out;
    *hi = last + 1 < out ? last + 1 : out;
    if (*hi < *lo) *hi = *lo;
}

/* ---- conv as implicit GEMM ---- */

static void im2col_rows(void *context, int64_t begin, int64_t end) {
    const window_task *t = context;
    const stax_window *w = t->w;
    int64_t kh_n = w->kernel[0], kw_n = w->kernel[1], oh_n = w->out[0], ow_n = w->out[1];
    for (int64_t row = begin; row < end; row++) {
        int64_t c = row / (kh_n * kw_n), kh = row / kw_n % kh_n, kw = row % kw_n;
        const float *image = t->x_image + c * w->in[0] * w->in[1];
        float *dst = t->col + row * t->cols;
        int64_t off_h = kh * w->dilation[0] - w->pad_begin[0];
        int64_t off_w = kw * w->dilation[1] - w->pad_begin[1];
        int64_t lo, hi;
        inside_range(ow_n, w->stride[1], off_w, w->in[1], &lo, &hi);
        for (int64_t oh = 0; oh < oh_n; oh++, dst += ow_n) {
            int64_t ih = oh * w->stride[0] + off_h;
            if (ih < 0 || ih >= w->in[0]) {
                memset(dst, 0, sizeof(float) * (size_t)ow_n);
                continue;
            }
            const float *src = image + ih * w->in[1] + off_w;
            for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
            if (w->stride[1] == 1)
                memcpy(dst + lo, src + lo, sizeof(float) * (size_t)(hi - lo));
            else
                for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[ow * w->stride[1]];
            for (int64_t ow = hi; ow < ow_n; ow++) dst[ow] = 0.0f;
        }
    }
}

double stax_cache_bytes(int level) {
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    long bytes = sysconf(level == 3 ? _SC_LEVEL3_CACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
    return bytes > 0 ? (double)bytes : 0.0;
#else
    (void)level;
    return 0.0;
#endif
}

/* The last-level cache's bytes (L3, else L2; 0 when neither is reported). */
static double last_level_cache_bytes(void) {
    double l3 = stax_cache_bytes(3);
    return l3 > 0 ? l3 : stax_cache_bytes(2);
}

/* With STAX_CONV_STAGING unset, only an output larger than the last-level
 * cache (32 MiB where the C library does not say) is staged, and streamed:
 * the next step reads it from memory either way, and stores that skip the
 * cache write each line once instead of reading it first. One that fits is
 * written by the tiles themselves: a staged copy into cache was one more
 * pass that, on an Emerald Rapids host with a 480 MiB L3 and 2 MiB of L2,
 * made MobileNetV2 slower at 2 threads (b1 5.47-5.85 ms a call against
 * 5.47-5.74, the 16->96 conv 386 us against 323; b8 39.2-41.6 against
 * 38.1-40.2 ms) and at b1 on one thread (7.56-8.14 against 7.11-7.89 ms);
 * only b8 on one thread gained (70.7-73.0 against 71.1-75.6 ms). A host
 * with a large L3 that streamed MobileNetV2-b8's 38.5 MB 1x1 conv output
 * made the conv 2 ms faster and the depthwise conv that reads it 4 ms
 * slower, hence only past the last-level cache. */
#define STAX_CONV_STREAM_FALLBACK_BYTES (32.0 * 1024 * 1024)

int32_t stax_conv_choose_staging(const tp_plugin_host *host, stax_window *w,
                                 const stax_gemm_family *family, const stax_slot_list *epilogue,
                                 char *error, size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_CONV_STAGING") : NULL;
    bool automatic = !setting || !*setting || !strcmp(setting, "auto");
    if (!automatic && strcmp(setting, "stream") && strcmp(setting, "cache") &&
        strcmp(setting, "off"))
        return tpcommon_error(error, error_size,
                              "stax: STAX_CONV_STAGING is '%s'; use auto, stream, cache or off "
                              "(or unset it)",
                              setting);
    w->stage_c = w->stream_c = false;
    w->epilogue_slots = 0;
    for (int32_t i = 0; epilogue && i < epilogue->count; i++)
        if (epilogue->slots[i] + 1 > w->epilogue_slots) w->epilogue_slots = epilogue->slots[i] + 1;
    int64_t k = w->in_channels / w->group; /* a 1x1 conv's k: one k block of the family */
    int64_t kc = 0, mc = 0;
    if (family) stax_gemm_family_blocking(host, family, &kc, &mc);
    bool possible = w->kind == STAX_WINDOW_CONV && w->method == STAX_WINDOW_GEMM_POINTWISE &&
                    w->packed && !w->pixel_rows && family && k <= kc &&
                    w->epilogue_slots <= STAX_GEMM_STAGE_MAX_SLOTS &&
                    (!epilogue || w->out_slot < w->epilogue_slots);
    if (!possible || (setting && !strcmp(setting, "off"))) return TP_PLUGIN_OK;
    double bytes = (double)w->batch * (double)w->out_channels * (double)w->out[0] *
                   (double)w->out[1] * sizeof(float);
    double cache = last_level_cache_bytes();
    if (cache <= 0) cache = STAX_CONV_STREAM_FALLBACK_BYTES;
    if (automatic && bytes <= cache) return TP_PLUGIN_OK;
    w->stage_c = true;
    w->stream_c = automatic || !strcmp(setting, "stream");
    return TP_PLUGIN_OK;
}

size_t stax_window_packed_workspace_bytes(const stax_step *step, const stax_gemm_kernels *kernels,
                                          int64_t threads) {
    if (step->window.pixel_rows)
        return stax_conv_pixel_rows_workspace_bytes(step, kernels, threads);
    if (step->window.shifted) return stax_conv_shifted_workspace_bytes(step, kernels, threads);
    if (step->window.shifted_rows)
        return stax_conv_shifted_rows_workspace_bytes(step, kernels, threads);
    size_t weights = (size_t)(step->window.out_channels * step->gemm.k) * sizeof(float);
    size_t aligned = (weights + 63) / 64 * 64;
    size_t stage = step->window.stage_c ? stax_gemm_stage_bytes(threads) : 0;
    return aligned + stage + stax_gemm_packed_workspace_bytes(&step->gemm, kernels, threads);
}

void stax_window_pack_weights_now(const tp_plugin_host *host, const stax_step *step, void **slots,
                                  const stax_gemm_kernels *kernels, int64_t threads, float *out) {
    const stax_window *w = &step->window;
    int64_t cout_g = w->out_channels / w->group;
    for (int64_t g = 0; g < w->group; g++) {
        stax_gemm gemm = step->gemm;
        gemm.a_offset = w->w_offset + g * cout_g * gemm.k;
        gemm.b_slot = gemm.a_slot, gemm.b_offset = 0; /* B is not read */
        stax_gemm_pack_whole_a(host, &gemm, slots, kernels, threads, out + g * cout_g * gemm.k);
    }
}

void stax_window_pack_weights(const tp_plugin_host *host, const stax_step *step,
                              const stax_gemm_kernels *kernels, int64_t threads, void *weights,
                              float *out) {
    void *slots[STAX_MAX_DIMS + 1] = {0};
    stax_step one_slot = *step; /* the weights as slot 0 */
    one_slot.gemm.a_slot = 0;
    slots[0] = weights;
    stax_window_pack_weights_now(host, &one_slot, slots, kernels, threads, out);
}

/* Per image and group on the micro-kernel family: the weights packed at
 * compile (constants), else once per call at the head of the workspace, for
 * all images and threads; no im2col matrix; the bias and the epilogue added
 * by the driver on each block of rows or columns it finishes. */
static void conv_packed(const tp_plugin_host *host, const stax_step *step, void **slots,
                        float *workspace, const stax_gemm_kernels *kernels, stax_kernel_fn epilogue,
                        int64_t threads) {
    const stax_window *w = &step->window;
    int64_t cin_g = w->in_channels / w->group, cout_g = w->out_channels / w->group;
    int64_t cols = w->out[0] * w->out[1], in_plane = w->in[0] * w->in[1];
    const float *bias = slot_f32(slots, w->b_slot, w->b_offset);
    bool im2col = w->method == STAX_WINDOW_GEMM_IM2COL;
    size_t weights = (size_t)(w->out_channels * step->gemm.k);
    float *packed_weights = workspace, *driver_space = workspace + (weights + 15) / 16 * 16;
    float *stage = NULL;
    if (w->stage_c) { /* the stages, then the driver's own space */
        stage = driver_space;
        driver_space += stax_gemm_stage_bytes(threads) / sizeof(float);
    }
    if (w->packed_w_slot >= 0 && w->packed_kc == kernels->kc)
        packed_weights = slots[w->packed_w_slot];
    else
        stax_window_pack_weights_now(host, step, slots, kernels, threads, packed_weights);
    /* one batched product over all images when their outputs are m x n
     * apart (one group), else one product per image and group */
    int64_t images = w->group == 1 ? w->batch : 1;
    for (int64_t n = 0; n < w->batch; n += images)
        for (int64_t g = 0; g < w->group; g++) {
            int64_t x_channel = (n * w->in_channels + g * cin_g) * in_plane;
            stax_im2col_source im2col_of = {w, slot_f32(slots, w->x_slot, w->x_offset + x_channel)};
            int64_t out_first = (n * w->out_channels + g * cout_g) * cols;
            stax_gemm_source source = {
                .pack_b = im2col ? stax_im2col_pack_panel : NULL,
                .pack_b_panels = im2col ? stax_im2col_pack_panels : NULL,
                .b_in_place = !im2col, /* a 1x1 conv: B is the image, read where it is */
                .b_context = &im2col_of,
                .row_bias = bias ? bias + g * cout_g : NULL,
                .a_packed = packed_weights + g * cout_g * step->gemm.k,
                .epilogue_offset = out_first,
                .stage = stage,
                .stream_c = w->stream_c,
                .epilogue_slots = w->epilogue_slots};
            stax_gemm gemm = step->gemm;
            gemm.batch = images, gemm.batch_ndim = 1, gemm.batch_dims[0] = images;
            gemm.a_batch_strides[0] = 0, gemm.b_batch_strides[0] = w->in_channels * in_plane;
            gemm.a_offset = w->w_offset + g * cout_g * gemm.k;
            gemm.b_offset = im2col ? 0 : w->x_offset + x_channel; /* 1x1: the image is B */
            gemm.c_offset = w->out_offset + out_first;
            stax_gemm_packed_run_from(host, &gemm, slots, driver_space, kernels, epilogue, threads,
                                      &source);
        }
}

static void add_bias_planes(void *context, int64_t begin, int64_t end) {
    const window_task *t = context;
    const stax_window *w = t->w;
    const float *bias = slot_f32(t->slots, w->b_slot, w->b_offset);
    float *out = (float *)t->slots[w->out_slot] + w->out_offset;
    int64_t plane = w->out[0] * w->out[1];
    for (int64_t p = begin; p < end; p++) {
        float b = bias[p % w->out_channels], *dst = out + p * plane;
        for (int64_t i = 0; i < plane; i++) dst[i] += b;
    }
}

/* The legacy 6x16 pair (STAX_GEMM_KERNEL=legacy): the im2col matrix filled
 * in parallel, one product per image and group, then the bias and the
 * epilogue over the whole output. */
static void conv_gemm(const tp_plugin_host *host, const stax_step *step, void **slots,
                      float *workspace, const stax_ukernel_fn ukernels[2], stax_kernel_fn epilogue,
                      int64_t threads) {
    const stax_window *w = &step->window;
    int64_t cin_g = w->in_channels / w->group, cout_g = w->out_channels / w->group;
    int64_t k = step->gemm.k, cols = w->out[0] * w->out[1], in_plane = w->in[0] * w->in[1];
    window_task task = {.w = w, .slots = slots, .col_rows = k, .cols = cols};
    if (w->method == STAX_WINDOW_GEMM_IM2COL) task.col = (float *)slots[w->col_slot];
    for (int64_t n = 0; n < w->batch; n++)
        for (int64_t g = 0; g < w->group; g++) {
            int64_t x_channel = (n * w->in_channels + g * cin_g) * in_plane;
            stax_gemm gemm = step->gemm;
            gemm.a_offset = w->w_offset + g * cout_g * k;
            gemm.c_offset = w->out_offset + (n * w->out_channels + g * cout_g) * cols;
            if (w->method == STAX_WINDOW_GEMM_IM2COL) {
                task.x_image = slot_f32(slots, w->x_slot, w->x_offset + x_channel);
                stax_parallel_range(host, k, 4, threads, im2col_rows, &task);
                gemm.b_offset = 0;
            } else {
                gemm.b_offset = w->x_offset + x_channel; /* 1x1: the image is B */
            }
            stax_gemm_run(host, &gemm, slots, workspace, ukernels, NULL, threads);
        }
    if (w->b_slot >= 0)
        stax_parallel_range(host, w->batch * w->out_channels, 4, threads, add_bias_planes, &task);
    if (epilogue)
        stax_run_kernel(host, epilogue, slots, w->batch * w->out_channels * cols, 16384, threads);
}

/* ---- direct loops over output planes ---- */

STAX_VECTOR_LOOP static void transpose_planes(void *context, int64_t begin, int64_t end) {
    const window_task *t = context;
    const stax_window *w = t->w;
    const float *x = slot_f32(t->slots, w->x_slot, w->x_offset);
    const float *weight = slot_f32(t->slots, w->w_slot, w->w_offset);
    const float *bias = slot_f32(t->slots, w->b_slot, w->b_offset);
    float *out = (float *)t->slots[w->out_slot] + w->out_offset;
    int64_t oh_n = w->out[0], ow_n = w->out[1], kh_n = w->kernel[0], kw_n = w->kernel[1];
    int64_t ih_n = w->in[0], iw_n = w->in[1];
    int64_t cin_g = w->in_channels / w->group, cout_g = w->out_channels / w->group;
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / w->out_channels, co = p % w->out_channels;
        int64_t g = co / cout_g, c = co % cout_g;
        float *plane = out + p * oh_n * ow_n, b = bias ? bias[co] : 0.0f;
        for (int64_t i = 0; i < oh_n * ow_n; i++) plane[i] = b;
        for (int64_t ci = g * cin_g; ci < (g + 1) * cin_g; ci++) {
            const float *image = x + (n * w->in_channels + ci) * ih_n * iw_n;
            const float *taps = weight + (ci * cout_g + c) * kh_n * kw_n;
            for (int64_t kh = 0; kh < kh_n; kh++)
                for (int64_t ih = 0; ih < ih_n; ih++) {
                    int64_t oh = ih * w->stride[0] + kh * w->dilation[0] - w->pad_begin[0];
                    if (oh < 0 || oh >= oh_n) continue;
                    float *row = plane + oh * ow_n;
                    const float *src = image + ih * iw_n;
                    for (int64_t kw = 0; kw < kw_n; kw++) {
                        /* input columns iw whose output column lies in the plane */
                        int64_t off = kw * w->dilation[1] - w->pad_begin[1], lo, hi;
                        int64_t first = off >= 0 ? 0 : (-off + w->stride[1] - 1) / w->stride[1];
                        int64_t last = ow_n - 1 - off < 0 ? -1 : (ow_n - 1 - off) / w->stride[1];
                        lo = first, hi = last + 1 < iw_n ? last + 1 : iw_n;
                        float tap = taps[kh * kw_n + kw];
                        for (int64_t iw = lo; iw < hi; iw++)
                            row[iw * w->stride[1] + off] += tap * src[iw];
                    }
                }
        }
    }
}

void stax_window_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                     float *workspace, const stax_ukernel_fn ukernels[2],
                     const stax_gemm_kernels *kernels, stax_kernel_fn epilogue, int64_t threads) {
    const stax_window *w = &step->window;
    window_task task = {.w = w, .slots = slots};
    switch (w->method) {
    case STAX_WINDOW_GEMM_IM2COL:
    case STAX_WINDOW_GEMM_POINTWISE:
        if (w->pixel_rows) {
            stax_conv_pixel_rows_run(host, step, slots, workspace, kernels, epilogue, threads);
            return;
        }
        if (w->shifted_rows) {
            stax_conv_shifted_rows_run(host, step, slots, workspace, kernels, epilogue, threads);
            return;
        }
        if (w->shifted) {
            stax_conv_shifted_run(host, step, slots, workspace, kernels, epilogue, threads);
            return;
        }
        if (w->packed) {
            conv_packed(host, step, slots, workspace, kernels, epilogue, threads);
            return;
        }
        conv_gemm(host, step, slots, workspace, ukernels, epilogue, threads);
        return;
    case STAX_WINDOW_DEPTHWISE:
        stax_depthwise_run(host, w, slots, epilogue, threads);
        return;
    case STAX_WINDOW_TRANSPOSE:
        stax_parallel_range(host, w->batch * w->out_channels, 1, threads, transpose_planes, &task);
        return;
    case STAX_WINDOW_POOL:
        stax_pool_run(host, w, slots, threads);
        return;
    }
}
