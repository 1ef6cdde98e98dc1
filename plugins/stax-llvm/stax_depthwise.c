/* stax-llvm — depthwise convolution (one input channel per group) on f32
 * NCHW data, for stax_window.c. Each output plane reads one input plane:
 * that plane is first copied into a zero-bordered buffer (the padding made
 * real), so every tap of every output is in range and the loops have no
 * bounds checks. 3x3 kernels at stride 1 or 2 (MobileNet's) compute each
 * output row in one pass with all nine taps, which the compiler vectorises
 * along the row (stride 2 from a bordered copy written with each row's
 * even and odd columns apart, so every tap reads consecutive floats); on
 * planes too narrow for that (below 32 columns at stride 1, 16 at stride
 * 2) every row at once, as one run along the flattened plane. Other shapes
 * add one tap at a time into the row. On an AVX-512 host 3x3 kernels at
 * stride 1 or 2 instead read the input plane itself (no bordered copy:
 * stax_depthwise_direct.c). The bias is the accumulator's start.
 * A fused epilogue (the conv's pointwise consumers) runs on each block of
 * output rows right after it is computed, while it is in L1. Planes are
 * split between threads; each range of planes has its own buffer. The
 * bordered plane (stax_fill_padded_plane) serves the average pool too
 * (stax_pool.c). */
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"

/* Vectorised for the host's width, picked when the plugin loads (plain C
 * is otherwise compiled for generic x86-64): x86-64-v3 is AVX2 with FMA
 * (a plain "avx2" clone has no FMA, so every tap was a multiply and an
 * add), x86-64-v4 AVX-512; the file is built with -ffp-contract=fast. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define STAX_DEPTHWISE_CLONES                                                                      \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define STAX_DEPTHWISE_CLONES
#endif

typedef struct depthwise_task {
    const stax_window *w;
    const float *x, *weight, *bias;
    float *out;
    int64_t padded_h, padded_w; /* the zero-bordered input plane */
    stax_kernel_fn epilogue;    /* or NULL */
    void **slots;
    int64_t block_rows; /* output rows per epilogue call */
} depthwise_task;

/* Output rows per block of a plane that the epilogue takes while the block
 * is in L1 (about 8 KiB of f32), at least one row. */
#define DEPTHWISE_EPILOGUE_BLOCK_FLOATS 2048

/* Stride-1 3x3 planes narrower than this are computed as one flat run
 * (rows_3x3_flat): measured on MobileNetV2's planes (Emerald Rapids, one
 * thread, per-kernel minima), 28 wide 1.6x, 14 wide 1.8x and 7 wide 1.6x
 * faster than row by row; 56 wide 1.3x slower (its rows vectorise alone). */
#define DEPTHWISE_FLAT_MAX_COLUMNS 32

void stax_image_columns(const stax_window *w, int64_t padded_w, int64_t *lo, int64_t *hi) {
    int64_t left = w->pad_begin[1];
    *lo = left < 0 ? 0 : left, *hi = left + w->in[1];
    if (*hi > padded_w) *hi = padded_w;
    if (*lo > *hi) *lo = *hi;
}

void stax_fill_padded_plane(const stax_window *w, const float *image, int64_t padded_h,
                            int64_t padded_w, float *padded) {
    int64_t top = w->pad_begin[0], left = w->pad_begin[1], lo, hi;
    stax_image_columns(w, padded_w, &lo, &hi);
    for (int64_t r = 0; r < padded_h; r++) {
        float *dst = padded + r * padded_w;
        int64_t ih = r - top;
        if (ih < 0 || ih >= w->in[0])
            memset(dst, 0, sizeof(float) * (size_t)padded_w);
        else
            stax_copy_run(dst, image + ih * w->in[1] - left, 1, lo, hi, padded_w);
    }
}

int64_t stax_padded_extent(const stax_window *w, int a) {
    return (w->out[a] - 1) * w->stride[a] + (w->kernel[a] - 1) * w->dilation[a] + 1;
}

/* out[i] for i in [0, count): a 3x3 kernel's nine taps at S * i plus each
 * tap's offset in rows r0, r1, r2 (S a constant in each caller so the
 * vectoriser sees the access pattern): one output row, or the flat run of
 * rows_3x3_flat. */
#define DEPTHWISE_3X3_RUN(out, count, S)                                                           \
    for (int64_t i = 0; i < (count); i++) {                                                        \
        const int64_t j = i * (S);                                                                 \
        (out)[i] = b + k[0] * r0[j] + k[1] * r0[j + 1] + k[2] * r0[j + 2] + k[3] * r1[j] +         \
                   k[4] * r1[j + 1] + k[5] * r1[j + 2] + k[6] * r2[j] + k[7] * r2[j + 1] +         \
                   k[8] * r2[j + 2];                                                               \
    }

/* Output rows [oh0, oh1) of a plane, 3x3 kernel, stride 1 or 2, dilation 1,
 * from the bordered plane. */
STAX_DEPTHWISE_CLONES static void rows_3x3(const float *padded, int64_t padded_w, const float *k,
                                           float b, int64_t stride, int64_t oh0, int64_t oh1,
                                           int64_t ow_n, float *out) {
    for (int64_t oh = oh0; oh < oh1; oh++) {
        const float *restrict r0 = padded + oh * stride * padded_w, *restrict r1 = r0 + padded_w,
                              *restrict r2 = r1 + padded_w;
        float *restrict row = out + oh * ow_n;
        if (stride == 1) {
            DEPTHWISE_3X3_RUN(row, ow_n, 1)
        } else {
            DEPTHWISE_3X3_RUN(row, ow_n, 2)
        }
    }
}

/* Output rows [oh0, oh1) of a plane, 3x3 kernel, stride 1 or 2, dilation
 * 1, for rows too short to vectorise one at a time (MobileNet's 7- and
 * 14-wide planes: a row of 7 is all scalar tail). The bordered plane's rows
 * are padded_w floats apart, so output (oh, ow) reads its taps at a
 * constant offset from stride * (oh * padded_w + ow): one run along the
 * flattened plane computes every row at once, as if the output were
 * padded_w wide, into `wide`; each row's last padded_w - ow_n values
 * straddle input rows and are dropped when the rows are copied into the
 * plane (at stride 2 that is about half the run: still fewer operations
 * than ow_n strided scalar outputs). The run stops at the last row's last
 * real output, so it never reads past the plane's last row. */
STAX_DEPTHWISE_CLONES static void rows_3x3_flat(const float *padded, int64_t padded_w,
                                                const float *k, float b, int64_t stride,
                                                int64_t oh0, int64_t oh1, int64_t ow_n, float *wide,
                                                float *out) {
    const float *restrict r0 = padded + stride * oh0 * padded_w, *restrict r1 = r0 + padded_w,
                          *restrict r2 = r1 + padded_w;
    float *restrict run = wide;
    int64_t length = (oh1 - oh0 - 1) * padded_w + ow_n;
    if (stride == 1) {
        DEPTHWISE_3X3_RUN(run, length, 1)
    } else {
        DEPTHWISE_3X3_RUN(run, length, 2)
    }
    for (int64_t oh = oh0; oh < oh1; oh++)
        memcpy(out + oh * ow_n, wide + (oh - oh0) * padded_w, sizeof(float) * (size_t)ow_n);
}

/* Column c of a bordered row: image column c - left, or 0 in the border
 * (a NULL row is a border row). */
static float bordered_at(const float *image_row, int64_t in_w, int64_t left, int64_t c) {
    int64_t column = c - left;
    return image_row && column >= 0 && column < in_w ? image_row[column] : 0.0f;
}

/* even[j] = src[2j], odd[j] = src[2j + 1]: one loop over the pairs, which
 * the vectoriser turns into full-width loads and two permutes per pair of
 * vectors. (Two loops, each reading every other float, were vectorised
 * with a gap: the split took 23% of a 112x112 stride-2 depthwise conv.) */
STAX_DEPTHWISE_CLONES static void deinterleave(const float *restrict src, int64_t count,
                                               float *restrict even, float *restrict odd) {
    for (int64_t j = 0; j < count; j++) {
        even[j] = src[2 * j];
        odd[j] = src[2 * j + 1];
    }
}

/* One bordered row split: even[j] = column 2j, odd[j] = column 2j + 1. The
 * pairs with both columns in the image are one deinterleave; the few at
 * the borders (and past the image) one at a time. */
static void split_row(const float *image_row, int64_t in_w, int64_t left, int64_t padded_w,
                      float *even, float *odd) {
    int64_t evens = (padded_w + 1) / 2, odds = padded_w / 2;
    /* pairs [lo, hi): 2j - left >= 0 and 2j + 1 - left <= in_w - 1 */
    int64_t lo = left > 0 ? (left + 1) / 2 : 0, hi = (in_w + left) / 2;
    if (!image_row || in_w + left < 0) hi = 0;
    if (hi > odds) hi = odds;
    if (lo > hi) lo = hi;
    for (int64_t j = 0; j < lo; j++) {
        even[j] = bordered_at(image_row, in_w, left, 2 * j);
        odd[j] = bordered_at(image_row, in_w, left, 2 * j + 1);
    }
    if (hi > lo) deinterleave(image_row + 2 * lo - left, hi - lo, even + lo, odd + lo);
    for (int64_t j = hi; j < evens; j++) {
        even[j] = bordered_at(image_row, in_w, left, 2 * j);
        if (j < odds) odd[j] = bordered_at(image_row, in_w, left, 2 * j + 1);
    }
}

/* Bordered row r of a plane split (split_row) into `split`: its even
 * columns, then its odd ones. */
static void split_bordered_row(const stax_window *w, const float *image, int64_t r,
                               int64_t padded_w, float *split) {
    int64_t ih = r - w->pad_begin[0];
    const float *row = ih >= 0 && ih < w->in[0] ? image + ih * w->in[1] : NULL;
    split_row(row, w->in[1], w->pad_begin[1], padded_w, split, split + (padded_w + 1) / 2);
}

/* One output row, 3x3 kernel, stride 2, from its three split input rows:
 * output column ow reads even columns ow and ow + 1 and odd column ow of
 * each. */
STAX_DEPTHWISE_CLONES static void
row_3x3_stride2(const float *restrict e0, const float *restrict e1, const float *restrict e2,
                int64_t evens, const float *k, float b, int64_t ow_n, float *restrict row) {
    const float *restrict o0 = e0 + evens, *restrict o1 = e1 + evens, *restrict o2 = e2 + evens;
    for (int64_t ow = 0; ow < ow_n; ow++)
        row[ow] = b + k[0] * e0[ow] + k[1] * o0[ow] + k[2] * e0[ow + 1] + k[3] * e1[ow] +
                  k[4] * o1[ow] + k[5] * e1[ow + 1] + k[6] * e2[ow] + k[7] * o2[ow] +
                  k[8] * e2[ow + 1];
}

/* Output rows [oh0, oh1) of a plane, 3x3 kernel, stride 2, dilation 1.
 * Output row oh reads bordered input rows 2oh .. 2oh + 2, each split into
 * its even and odd columns (so that every tap reads consecutive floats)
 * in a ring of three rows that follows the output down: each input row is
 * split once (the one two output rows share stays), and the ring stays in
 * L1. (The whole plane split first, 51 KiB at 112x112, was written to L2
 * and read back from there.) */
static void rows_3x3_stride2(const stax_window *w, const float *image, int64_t padded_w,
                             const float *k, float b, int64_t oh0, int64_t oh1, float *ring,
                             float *out) {
    int64_t evens = (padded_w + 1) / 2;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        for (int64_t r = oh == oh0 ? 2 * oh : 2 * oh + 1; r <= 2 * oh + 2; r++)
            split_bordered_row(w, image, r, padded_w, ring + r % 3 * padded_w);
        row_3x3_stride2(ring + 2 * oh % 3 * padded_w, ring + (2 * oh + 1) % 3 * padded_w,
                        ring + (2 * oh + 2) % 3 * padded_w, evens, k, b, w->out[1],
                        out + oh * w->out[1]);
    }
}

/* Any kernel, stride and dilation: the row starts at the bias, then each
 * tap adds its shifted input row. Output rows [oh0, oh1) of a plane. */
STAX_DEPTHWISE_CLONES static void rows_any(const stax_window *w, const float *padded,
                                           int64_t padded_w, const float *taps, float b,
                                           int64_t oh0, int64_t oh1, float *out) {
    int64_t ow_n = w->out[1], s1 = w->stride[1];
    for (int64_t oh = oh0; oh < oh1; oh++) {
        float *row = out + oh * ow_n;
        for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = b;
        for (int64_t kh = 0; kh < w->kernel[0]; kh++) {
            const float *src = padded + (oh * w->stride[0] + kh * w->dilation[0]) * padded_w;
            for (int64_t kw = 0; kw < w->kernel[1]; kw++, src += w->dilation[1]) {
                float tap = taps[kh * w->kernel[1] + kw];
                if (s1 == 1)
                    for (int64_t ow = 0; ow < ow_n; ow++) row[ow] += tap * src[ow];
                else
                    for (int64_t ow = 0; ow < ow_n; ow++) row[ow] += tap * src[ow * s1];
            }
        }
    }
}

static bool is_3x3_dense(const stax_window *w) {
    return w->kernel[0] == 3 && w->kernel[1] == 3 && w->dilation[0] == 1 && w->dilation[1] == 1 &&
           w->stride[0] == w->stride[1] && (w->stride[0] == 1 || w->stride[0] == 2);
}

static void depthwise_range(void *context, int64_t begin, int64_t end) {
    const depthwise_task *t = context;
    const stax_window *w = t->w;
    /* the split copy pays off on rows of at least two AVX2 vectors (measured
     * on MobileNetV2's planes: 28 and 56 wide faster, 7 and 14 slower) */
    bool dense = is_3x3_dense(w), stride2 = dense && w->stride[0] == 2 && w->out[1] >= 16;
    bool flat =
        dense && !stride2 && w->out[1] < (w->stride[0] == 1 ? DEPTHWISE_FLAT_MAX_COLUMNS : 16);
    bool direct = w->direct_rows; /* 3x3 at stride 1 or 2, from the image itself */
    size_t plane_floats = (size_t)(t->padded_h * t->padded_w);
    /* the bordered plane, then (flat rows) the rows computed padded_w
     * wide; or (stride 2) the ring of three split rows */
    size_t buffer_floats = stride2 ? 3 * (size_t)t->padded_w : plane_floats * (flat ? 2 : 1);
    if (direct) buffer_floats = (size_t)STAX_DEPTHWISE_DIRECT_ZEROS(w); /* a row of zeros */
    float *padded =
        direct ? calloc(buffer_floats, sizeof(float)) : malloc(sizeof(float) * buffer_floats);
    if (!padded) abort(); /* a few KiB per thread: there is no error path inside a run */
    float *wide = flat && !direct ? padded + plane_floats : NULL; /* only the flat run's */
    int64_t multiplier = w->out_channels / w->in_channels, taps = w->kernel[0] * w->kernel[1];
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / w->out_channels, co = p % w->out_channels, ci = co / multiplier;
        const float *image = t->x + (n * w->in_channels + ci) * w->in[0] * w->in[1];
        float b = t->bias ? t->bias[co] : 0.0f, *plane = t->out + p * w->out[0] * w->out[1];
        /* the multiplier's output channels of one input plane share its
         * bordered copy (stride 2 splits its rows as it goes) */
        if (!direct && !stride2 && (p == begin || co % multiplier == 0))
            stax_fill_padded_plane(w, image, t->padded_h, t->padded_w, padded);
        int64_t plane_first = p * w->out[0] * w->out[1];
        for (int64_t oh0 = 0; oh0 < w->out[0]; oh0 += t->block_rows) {
            int64_t oh1 = oh0 + t->block_rows < w->out[0] ? oh0 + t->block_rows : w->out[0];
            if (direct)
                stax_depthwise_direct_rows(w, image, padded, t->weight + co * taps, b, oh0, oh1,
                                           plane);
            else if (stride2)
                rows_3x3_stride2(w, image, t->padded_w, t->weight + co * taps, b, oh0, oh1, padded,
                                 plane);
            else if (flat)
                rows_3x3_flat(padded, t->padded_w, t->weight + co * taps, b, w->stride[0], oh0, oh1,
                              w->out[1], wide, plane);
            else if (dense)
                rows_3x3(padded, t->padded_w, t->weight + co * taps, b, w->stride[0], oh0, oh1,
                         w->out[1], plane);
            else
                rows_any(w, padded, t->padded_w, t->weight + co * taps, b, oh0, oh1, plane);
            if (t->epilogue)
                t->epilogue(t->slots, plane_first + oh0 * w->out[1], plane_first + oh1 * w->out[1]);
        }
    }
    free(padded);
}

void stax_depthwise_run(const tp_plugin_host *host, const stax_window *w, void **slots,
                        stax_kernel_fn epilogue, int64_t threads) {
    depthwise_task t = {.w = w,
                        .x = (const float *)slots[w->x_slot] + w->x_offset,
                        .weight = (const float *)slots[w->w_slot] + w->w_offset,
                        .bias =
                            w->b_slot >= 0 ? (const float *)slots[w->b_slot] + w->b_offset : NULL,
                        .out = (float *)slots[w->out_slot] + w->out_offset,
                        .padded_h = stax_padded_extent(w, 0),
                        .padded_w = stax_padded_extent(w, 1),
                        .epilogue = epilogue,
                        .slots = slots,
                        .block_rows = w->out[0]};
    if (epilogue && w->out[1] > 0) {
        int64_t rows = DEPTHWISE_EPILOGUE_BLOCK_FLOATS / w->out[1];
        t.block_rows = rows < 1 ? 1 : rows;
    }
    int64_t planes = w->batch * w->out_channels;
    if (planes <= 0 || w->out[0] * w->out[1] <= 0) return;
    if (w->channels_last) {
        stax_depthwise_channels_last_run(host, w, slots, epilogue, threads);
        return;
    }
    stax_parallel_range(host, planes, 1, threads, depthwise_range, &t);
}
