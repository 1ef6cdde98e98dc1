/* stax-llvm — depthwise convolution sixteen channels at a time in a
 * channels-last block (for stax_depthwise.c): where the planes are small
 * (MobileNet's 28x28 and below), a plane at a time spends more on its own
 * setup (a bordered copy, a run, an epilogue call per 49 outputs at 7x7)
 * than on its nine taps per output, and a stride-2 plane reads every other
 * float. Here a block of sixteen channels of one image is transposed into
 * a zero-bordered [HP][WP][16] buffer (4x4 SSE2 transposes), every output
 * pixel is sixteen channels in one vector (bias, then one multiply-add per
 * tap: the stride and dilation only move which pixel a tap reads), and the
 * [OH*OW][16] result is transposed back into the sixteen NCHW planes, which
 * then go through the fused epilogue as one range while in cache. Blocks
 * are split between threads, each with its own buffers. One input channel
 * per output channel (a multiplier of 1). */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "stax_internal.h"

#define LANES 16

/* Vectorised for the host's width, picked when the plugin loads (see
 * stax_depthwise.c); the file is built with -ffp-contract=fast. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define CHANNELS_LAST_CLONES                                                                       \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CHANNELS_LAST_CLONES
#endif

/* The largest bordered block taken (floats): 256 KiB, in L2 with the
 * result block (a 56x56 plane's 58x58 border fits, a 112x112 one does not). */
#define CHANNELS_LAST_MAX_BLOCK_FLOATS 65536

typedef float lanes16 __attribute__((vector_size(LANES * sizeof(float))));

/* Stride-1 maps at least this wide stay a plane at a time: their rows
 * vectorise alone (measured on MobileNetV2, one thread, per-kernel minima:
 * 144 channels at 56x56 1.3x slower in blocks, 192 at 28x28 the same; 384
 * at 14x14 1.5x faster, 960 at 7x7 3x, at stride 2 576 to 7x7 2.6x, 144
 * to 28x28 1.5x). */
#define CHANNELS_LAST_MAX_UNIT_STRIDE_COLUMNS 28

/* With the direct AVX-512 rows (stax_depthwise_direct.c), the output rows
 * narrower than these still go in blocks: measured at 2 threads (per-kernel
 * minima), 960x7x7 22 us in blocks against 45 direct, 576 channels 14x14 ->
 * 7x7 21 against 31, 384x14x14 28 against 31-33; but 192 channels 28x28 ->
 * 14x14 19 against 25 direct, 144 channels 56x56 -> 28x28 (batch 8) 450
 * against 604. */
#define CHANNELS_LAST_DIRECT_UNIT_STRIDE_COLUMNS 16
#define CHANNELS_LAST_DIRECT_COLUMNS             12

int32_t stax_depthwise_choose_channels_last(const tp_plugin_host *host, stax_window *w, char *error,
                                            size_t error_size) {
    stax_switch setting;
    w->channels_last = false;
    int32_t status =
        stax_switch_setting(host, "STAX_DEPTHWISE_CHANNELS_LAST", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (w->method != STAX_WINDOW_DEPTHWISE || w->out_channels != w->in_channels ||
        setting == STAX_SWITCH_OFF)
        return TP_PLUGIN_OK;
    if (setting == STAX_SWITCH_ON) {
        w->channels_last = true;
        return TP_PLUGIN_OK;
    }
    int64_t padded = stax_padded_extent(w, 0) * stax_padded_extent(w, 1);
    bool unit_stride = w->stride[0] == 1 && w->stride[1] == 1;
    w->channels_last = padded * LANES <= CHANNELS_LAST_MAX_BLOCK_FLOATS &&
                       (!unit_stride || w->out[1] < CHANNELS_LAST_MAX_UNIT_STRIDE_COLUMNS);
    /* The direct rows (stax_depthwise_direct.c) waste a vector's lanes only
     * on rows narrower than it: the blocks stay for those alone. */
    if (w->direct_rows)
        w->channels_last =
            w->channels_last && w->out[1] < (unit_stride ? CHANNELS_LAST_DIRECT_UNIT_STRIDE_COLUMNS
                                                         : CHANNELS_LAST_DIRECT_COLUMNS);
    return TP_PLUGIN_OK;
}

typedef struct channels_last_task {
    const stax_window *w;
    const float *x, *weight, *bias;
    float *out;
    int64_t padded_h, padded_w, blocks; /* blocks of LANES channels per image */
    stax_kernel_fn epilogue;            /* or NULL */
    void **slots;
} channels_last_task;

/* dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols: four
 * by four at a time (SSE2 transposes), the edges one by one. Into the
 * channels-last block (rows: channels, dst_ld LANES) and back out of it
 * (rows: pixels, src_ld LANES). */
static void transpose(const float *src, int64_t src_ld, int64_t rows, int64_t cols, float *dst,
                      int64_t dst_ld) {
    int64_t r = 0;
#if defined(__SSE2__)
    for (; r + 4 <= rows; r += 4) {
        int64_t c = 0;
        for (; c + 4 <= cols; c += 4) {
            __m128 r0 = _mm_loadu_ps(src + r * src_ld + c),
                   r1 = _mm_loadu_ps(src + (r + 1) * src_ld + c);
            __m128 r2 = _mm_loadu_ps(src + (r + 2) * src_ld + c),
                   r3 = _mm_loadu_ps(src + (r + 3) * src_ld + c);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(dst + c * dst_ld + r, r0);
            _mm_storeu_ps(dst + (c + 1) * dst_ld + r, r1);
            _mm_storeu_ps(dst + (c + 2) * dst_ld + r, r2);
            _mm_storeu_ps(dst + (c + 3) * dst_ld + r, r3);
        }
        for (; c < cols; c++)
            for (int64_t j = r; j < r + 4; j++) dst[c * dst_ld + j] = src[j * src_ld + c];
    }
#endif
    for (; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * dst_ld + r] = src[r * src_ld + c];
}

/* The block's zero-bordered input: the border rows and columns zeroed,
 * each image row transposed into its place. Lanes past `count` are zero
 * (a partial last block), so their outputs are finite and never stored. */
static void fill_block(const channels_last_task *t, const float *planes, int64_t count,
                       float *padded) {
    const stax_window *w = t->w;
    int64_t wp = t->padded_w, top = w->pad_begin[0], left = w->pad_begin[1];
    int64_t plane = w->in[0] * w->in[1], lo, hi;
    stax_image_columns(w, wp, &lo, &hi);
    if (count < LANES) memset(padded, 0, sizeof(float) * (size_t)(t->padded_h * wp * LANES));
    for (int64_t r = 0; r < t->padded_h; r++) {
        float *row = padded + r * wp * LANES;
        int64_t ih = r - top;
        if (ih < 0 || ih >= w->in[0]) {
            if (count == LANES) memset(row, 0, sizeof(float) * (size_t)(wp * LANES));
            continue;
        }
        if (count == LANES) {
            memset(row, 0, sizeof(float) * (size_t)(lo * LANES));
            memset(row + hi * LANES, 0, sizeof(float) * (size_t)((wp - hi) * LANES));
        }
        if (hi > lo)
            transpose(planes + ih * w->in[1] + (lo - left), plane, count, hi - lo, row + lo * LANES,
                      LANES);
    }
}

/* One output row of a 3x3 kernel: the nine weight vectors stay in
 * registers across the row's pixels. */
static inline void row_3x3(const float *r0, const float *r1, const float *r2, int64_t stride,
                           int64_t count, const lanes16 *k, const lanes16 *bias, float *out) {
    lanes16 b = *bias; /* by pointer: a vector argument's ABI depends on the clone's target */
    for (int64_t ow = 0; ow < count; ow++) {
        const float *a = r0 + ow * stride * LANES, *m = r1 + ow * stride * LANES,
                    *z = r2 + ow * stride * LANES;
        lanes16 x0, x1, x2, x3, x4, x5, x6, x7, x8;
        memcpy(&x0, a, sizeof x0), memcpy(&x1, a + LANES, sizeof x1);
        memcpy(&x2, a + 2 * LANES, sizeof x2), memcpy(&x3, m, sizeof x3);
        memcpy(&x4, m + LANES, sizeof x4), memcpy(&x5, m + 2 * LANES, sizeof x5);
        memcpy(&x6, z, sizeof x6), memcpy(&x7, z + LANES, sizeof x7);
        memcpy(&x8, z + 2 * LANES, sizeof x8);
        lanes16 acc = b + x0 * k[0] + x1 * k[1] + x2 * k[2] + x3 * k[3] + x4 * k[4] + x5 * k[5] +
                      x6 * k[6] + x7 * k[7] + x8 * k[8];
        memcpy(out + ow * LANES, &acc, sizeof acc);
    }
}

/* out[p] = bias + sum over taps of weights[tap] * the tap's input pixel,
 * sixteen channels a vector, for every output pixel p of the block (3x3
 * undilated kernels with the weights held in registers, others a tap at a
 * time). */
CHANNELS_LAST_CLONES
static void compute_block(const stax_window *w, const float *padded, int64_t wp,
                          const float *weights, const float *bias, float *out) {
    int64_t kh = w->kernel[0], kw = w->kernel[1], s0 = w->stride[0], s1 = w->stride[1];
    int64_t d0 = w->dilation[0], d1 = w->dilation[1], ow_n = w->out[1];
    lanes16 b;
    memcpy(&b, bias, sizeof b);
    if (kh == 3 && kw == 3 && d0 == 1 && d1 == 1) {
        lanes16 k[9];
        memcpy(k, weights, sizeof k);
        for (int64_t oh = 0; oh < w->out[0]; oh++) {
            const float *r0 = padded + oh * s0 * wp * LANES;
            row_3x3(r0, r0 + wp * LANES, r0 + 2 * wp * LANES, s1, ow_n, k, &b,
                    out + oh * ow_n * LANES);
        }
        return;
    }
    for (int64_t oh = 0; oh < w->out[0]; oh++)
        for (int64_t ow = 0; ow < ow_n; ow++) {
            lanes16 acc = b;
            const float *base = padded + (oh * s0 * wp + ow * s1) * LANES;
            for (int64_t i = 0; i < kh; i++)
                for (int64_t j = 0; j < kw; j++) {
                    lanes16 x, k;
                    memcpy(&x, base + (i * d0 * wp + j * d1) * LANES, sizeof x);
                    memcpy(&k, weights + (i * kw + j) * LANES, sizeof k);
                    acc += x * k;
                }
            memcpy(out + (oh * ow_n + ow) * LANES, &acc, sizeof acc);
        }
}

static void channels_last_range(void *context, int64_t begin, int64_t end) {
    const channels_last_task *t = context;
    const stax_window *w = t->w;
    int64_t taps = w->kernel[0] * w->kernel[1], pixels = w->out[0] * w->out[1];
    int64_t plane = w->in[0] * w->in[1], channels = w->out_channels;
    /* per range: the bordered block, the result block, the block's weights
     * as one vector per tap (64-byte aligned, whole vectors) */
    size_t padded_floats = (size_t)(t->padded_h * t->padded_w * LANES);
    size_t result_floats = (size_t)(pixels * LANES), weight_floats = (size_t)(taps * LANES);
    float *padded =
        stax_alloc_aligned(NULL, sizeof(float) * (padded_floats + result_floats + weight_floats));
    if (!padded) abort(); /* a few hundred KiB per range: there is no error path inside a run */
    float *result = padded + padded_floats, *tap_weights = result + result_floats;
    for (int64_t unit = begin; unit < end; unit++) {
        int64_t n = unit / t->blocks, c0 = unit % t->blocks * LANES;
        int64_t count = channels - c0 < LANES ? channels - c0 : LANES;
        float bias[LANES] = {0};
        for (int64_t tap = 0; tap < taps; tap++)
            for (int64_t k = 0; k < LANES; k++)
                tap_weights[tap * LANES + k] = k < count ? t->weight[(c0 + k) * taps + tap] : 0.0f;
        for (int64_t k = 0; k < count && t->bias; k++) bias[k] = t->bias[c0 + k];
        fill_block(t, t->x + (n * channels + c0) * plane, count, padded);
        compute_block(w, padded, t->padded_w, tap_weights, bias, result);
        int64_t first = (n * channels + c0) * pixels;
        transpose(result, LANES, pixels, count, t->out + first, pixels);
        if (t->epilogue) t->epilogue(t->slots, first, first + count * pixels);
    }
    stax_free_aligned(NULL, padded);
}

void stax_depthwise_channels_last_run(const tp_plugin_host *host, const stax_window *w,
                                      void **slots, stax_kernel_fn epilogue, int64_t threads) {
    channels_last_task t = {.w = w,
                            .x = (const float *)slots[w->x_slot] + w->x_offset,
                            .weight = (const float *)slots[w->w_slot] + w->w_offset,
                            .bias = w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset
                                                   : NULL,
                            .out = (float *)slots[w->out_slot] + w->out_offset,
                            .padded_h = stax_padded_extent(w, 0),
                            .padded_w = stax_padded_extent(w, 1),
                            .blocks = (w->out_channels + LANES - 1) / LANES,
                            .epilogue = epilogue,
                            .slots = slots};
    stax_parallel_range(host, w->batch * t.blocks, 1, threads, channels_last_range, &t);
}
