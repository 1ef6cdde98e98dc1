/* stax-llvm — max_pool and avg_pool on f32 NCHW data, for stax_window.c.
 * A max pool takes the maximum down each window's rows, read straight from
 * the image, and then across its columns (separable), each row rounded up
 * to whole vectors; an average copies each plane into a zero-bordered buffer
 * (stax_fill_padded_plane), so every tap of every output is in range, and
 * takes each output row's taps one at a time, a pass along the row that the
 * compiler vectorises. Max propagates NaN (a NaN tap makes the output NaN); an
 * average divides by the taps inside the image, or inside image and pads
 * with count_include_pad (never the taps a ceil-mode window has past the
 * end pad). Planes are split between threads;
 * each range of planes has its own buffer. On an AVX-512 host a max pool
 * with stride 1 or 2 along its rows runs stax_max_pool_direct.c instead,
 * and this file's rows only where that met a NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define STAX_POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STAX_POOL_CLONES
#endif

typedef struct pool_task {
    const stax_window *w;
    const float *x;
    float *out;
    int64_t padded_h, padded_w;
} pool_task;

/* Taps of window `o` along axis `a` at positions in [lo_bound, hi_bound). */
static int64_t taps_within(const stax_window *w, int a, int64_t o, int64_t lo_bound,
                           int64_t hi_bound) {
    int64_t first = o * w->stride[a] - w->pad_begin[a], count = 0;
    for (int64_t i = 0; i < w->kernel[a]; i++) {
        int64_t position = first + i * w->dilation[a];
        count += position >= lo_bound && position < hi_bound;
    }
    return count;
}

/* The taps an average divides by along axis a for output o. */
static int64_t divisor_taps(const stax_window *w, int a, int64_t o) {
    if (w->count_include_pad)
        return taps_within(w, a, o, -w->pad_begin[a], w->in[a] + w->pad_end[a]);
    return taps_within(w, a, o, 0, w->in[a]);
}

/* The larger of a tap and the running maximum; a NaN tap wins, and a NaN
 * maximum stays (neither comparison is true for it). */
static inline float max_or_nan(float tap, float current) {
    return tap > current || tap != tap ? tap : current;
}

/* max_plane computes each output row this many outputs at a time into a
 * buffer of its own (then copies the row out), so its loop across the taps
 * ends on whole vectors: a scalar remainder's NaN-aware max compiled to
 * unpredictable branches. */
#define MAX_POOL_ROUND 16

static int64_t rounded_outputs(const stax_window *w) {
    return (w->out[1] + MAX_POOL_ROUND - 1) / MAX_POOL_ROUND * MAX_POOL_ROUND;
}

/* Floats of the column-max row: padded_w, and what the rounded-up outputs
 * read past it (-inf there). */
static int64_t column_max_floats(const stax_window *w, int64_t padded_w) {
    int64_t reach =
        (rounded_outputs(w) - 1) * w->stride[1] + (w->kernel[1] - 1) * w->dilation[1] + 1;
    return reach > padded_w ? reach : padded_w;
}

/* dst[c] = the larger of dst[c] and src[c] (NaN wins) for c in [0, n). */
STAX_POOL_CLONES static void max_into(float *restrict dst, const float *restrict src, int64_t n) {
    for (int64_t c = 0; c < n; c++) dst[c] = max_or_nan(src[c], dst[c]);
}

/* row[ow] for ow in [0, count): the maximum across the kw taps of the
 * column-max row. */
STAX_POOL_CLONES static void max_across(const stax_window *w, const float *restrict column_max,
                                        int64_t count, float *restrict row) {
    int64_t s1 = w->stride[1], d1 = w->dilation[1];
    for (int64_t ow = 0; ow < count; ow++) row[ow] = -INFINITY;
    for (int64_t kw = 0; kw < w->kernel[1]; kw++) {
        const float *restrict src = column_max + kw * d1;
        if (s1 == 1)
            for (int64_t ow = 0; ow < count; ow++) row[ow] = max_or_nan(src[ow], row[ow]);
        else if (s1 == 2)
            for (int64_t ow = 0; ow < count; ow++) row[ow] = max_or_nan(src[2 * ow], row[ow]);
        else
            for (int64_t ow = 0; ow < count; ow++) row[ow] = max_or_nan(src[ow * s1], row[ow]);
    }
}

/* A max pool is separable: output row oh is the maximum down the kh window
 * rows for every column, read straight from the image rows the window
 * covers (a padding row is -inf, which never wins, so it is skipped: no
 * bordered copy of the plane) into a row whose padding columns stay -inf;
 * then across the kw taps of that one row, in L1, into `row` (rounded up to
 * whole vectors), copied out. `column_max` (column_max_floats) comes with
 * its padding columns at -inf. */
static void max_row(const stax_window *w, const float *image, int64_t padded_w, float *column_max,
                    float *row, int64_t oh, float *out) {
    int64_t ow_n = w->out[1], left = w->pad_begin[1], lo, hi;
    stax_image_columns(w, padded_w, &lo, &hi);
    int64_t rows = 0;
    for (int64_t kh = 0; kh < w->kernel[0]; kh++) {
        int64_t ih = oh * w->stride[0] - w->pad_begin[0] + kh * w->dilation[0];
        if (ih < 0 || ih >= w->in[0]) continue;
        const float *src = image + ih * w->in[1] + (lo - left);
        if (rows++ == 0)
            memcpy(column_max + lo, src, sizeof(float) * (size_t)(hi - lo));
        else
            max_into(column_max + lo, src, hi - lo);
    }
    if (rows == 0) /* a window of padding rows only */
        for (int64_t c = lo; c < hi; c++) column_max[c] = -INFINITY;
    max_across(w, column_max, rounded_outputs(w), row);
    memcpy(out + oh * ow_n, row, sizeof(float) * (size_t)ow_n);
}

/* Every output row of one plane: the direct rows where the window chose
 * them (stax_max_pool_direct.c), and max_row for the rows they leave (those
 * that met a NaN, listed in `redo`, out[0] entries), or for all. */
static void max_plane(const stax_window *w, const float *image, int64_t padded_w, float *column_max,
                      float *row, int64_t *redo, float *out) {
    if (w->direct_rows) {
        int64_t met_nan = stax_max_pool_direct_plane(w, image, out, redo);
        for (int64_t i = 0; i < met_nan; i++)
            max_row(w, image, padded_w, column_max, row, redo[i], out);
        return;
    }
    for (int64_t oh = 0; oh < w->out[0]; oh++)
        max_row(w, image, padded_w, column_max, row, oh, out);
}

STAX_POOL_CLONES static void average_plane(const stax_window *w, const float *padded,
                                           int64_t padded_w, const float *column_taps, float *out) {
    int64_t ow_n = w->out[1], s1 = w->stride[1];
    for (int64_t oh = 0; oh < w->out[0]; oh++) {
        float *row = out + oh * ow_n;
        for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = 0.0f;
        for (int64_t kh = 0; kh < w->kernel[0]; kh++) {
            const float *src = padded + (oh * w->stride[0] + kh * w->dilation[0]) * padded_w;
            for (int64_t kw = 0; kw < w->kernel[1]; kw++, src += w->dilation[1])
                for (int64_t ow = 0; ow < ow_n; ow++) row[ow] += src[ow * s1];
        }
        float row_taps = (float)divisor_taps(w, 0, oh);
        for (int64_t ow = 0; ow < ow_n; ow++) row[ow] /= row_taps * column_taps[ow];
    }
}

/* Max pools: one column-max row (its padding columns -inf for good), one
 * output row, rounded up, and the list of rows the direct rows leave;
 * nothing per plane. */
static void max_pool_range(const pool_task *t, int64_t begin, int64_t end) {
    const stax_window *w = t->w;
    int64_t floats = column_max_floats(w, t->padded_w);
    int64_t *redo = malloc(sizeof(int64_t) * (size_t)w->out[0] +
                           sizeof(float) * (size_t)(floats + rounded_outputs(w)));
    if (!redo) abort(); /* a few KiB per thread: there is no error path inside a run */
    float *column_max = (float *)(void *)(redo + w->out[0]), *row = column_max + floats;
    for (int64_t c = 0; c < floats; c++) column_max[c] = -INFINITY;
    for (int64_t p = begin; p < end; p++)
        max_plane(w, t->x + p * w->in[0] * w->in[1], t->padded_w, column_max, row, redo,
                  t->out + p * w->out[0] * w->out[1]);
    free(redo);
}

static void pool_range(void *context, int64_t begin, int64_t end) {
    const pool_task *t = context;
    const stax_window *w = t->w;
    if (w->kind == STAX_WINDOW_MAX_POOL) {
        max_pool_range(t, begin, end);
        return;
    }
    size_t plane_floats = (size_t)(t->padded_h * t->padded_w);
    float *padded = malloc(sizeof(float) * (plane_floats + (size_t)w->out[1]));
    if (!padded) abort(); /* a few KiB per thread: there is no error path inside a run */
    float *column_taps = padded + plane_floats;
    for (int64_t ow = 0; ow < w->out[1]; ow++) column_taps[ow] = (float)divisor_taps(w, 1, ow);
    for (int64_t p = begin; p < end; p++) {
        const float *image = t->x + p * w->in[0] * w->in[1];
        float *plane = t->out + p * w->out[0] * w->out[1];
        stax_fill_padded_plane(w, image, t->padded_h, t->padded_w, padded);
        average_plane(w, padded, t->padded_w, column_taps, plane);
    }
    free(padded);
}

void stax_pool_run(const tp_plugin_host *host, const stax_window *w, void **slots,
                   int64_t threads) {
    pool_task t = {.w = w,
                   .x = (const float *)slots[w->x_slot] + w->x_offset,
                   .out = (float *)slots[w->out_slot] + w->out_offset,
                   .padded_h = stax_padded_extent(w, 0),
                   .padded_w = stax_padded_extent(w, 1)};
    int64_t planes = w->batch * w->in_channels;
    if (planes <= 0 || w->out[0] * w->out[1] <= 0) return;
    stax_parallel_range(host, planes, 1, threads, pool_range, &t);
}
