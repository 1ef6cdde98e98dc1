/* stax-llvm — max_pool and avg_pool on f32 NCHW data, for stax_window.c.
 * Each plane is copied into a bordered buffer (stax_fill_padded_plane: -inf
 * around a max pool, zeros around an average), so every tap of every output
 * is in range. A max pool then takes the maximum down each window's rows
 * and then across its columns (separable); an average takes each output
 * row's taps one at a time, a pass along the row that the compiler
 * vectorises. Max propagates NaN (a NaN tap makes the output NaN); an
 * average divides by the taps inside the image, or inside image and pads
 * with count_include_pad (never the taps a ceil-mode window has past the
 * end pad). Planes are split between threads;
 * each range of planes has its own buffer. */
#include <math.h>
#include <stdlib.h>

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

/* A max pool is separable: per output row, the maximum down the kh window
 * rows for every padded column (contiguous passes), then across the kw taps
 * of that one row (stride-s1 passes over a row in L1), so each input row is
 * read kh times per output row instead of kh * kw. */
STAX_POOL_CLONES static void max_plane(const stax_window *w, const float *padded, int64_t padded_w,
                                       float *column_max, float *out) {
    int64_t ow_n = w->out[1], s1 = w->stride[1], d1 = w->dilation[1];
    for (int64_t oh = 0; oh < w->out[0]; oh++) {
        const float *top = padded + oh * w->stride[0] * padded_w;
        for (int64_t x = 0; x < padded_w; x++) column_max[x] = top[x];
        for (int64_t kh = 1; kh < w->kernel[0]; kh++) {
            const float *src = top + kh * w->dilation[0] * padded_w;
            for (int64_t x = 0; x < padded_w; x++)
                column_max[x] = max_or_nan(src[x], column_max[x]);
        }
        float *row = out + oh * ow_n;
        for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = -INFINITY;
        for (int64_t kw = 0; kw < w->kernel[1]; kw++) {
            const float *src = column_max + kw * d1;
            if (s1 == 1)
                for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = max_or_nan(src[ow], row[ow]);
            else if (s1 == 2)
                for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = max_or_nan(src[2 * ow], row[ow]);
            else
                for (int64_t ow = 0; ow < ow_n; ow++) row[ow] = max_or_nan(src[ow * s1], row[ow]);
        }
    }
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

static void pool_range(void *context, int64_t begin, int64_t end) {
    const pool_task *t = context;
    const stax_window *w = t->w;
    size_t plane_floats = (size_t)(t->padded_h * t->padded_w);
    float *padded = malloc(sizeof(float) * (plane_floats + (size_t)(w->out[1] + t->padded_w)));
    if (!padded) abort(); /* a few KiB per thread: there is no error path inside a run */
    float *column_taps = padded + plane_floats, *column_max = column_taps + w->out[1];
    bool is_max = w->kind == STAX_WINDOW_MAX_POOL;
    for (int64_t ow = 0; ow < w->out[1]; ow++) column_taps[ow] = (float)divisor_taps(w, 1, ow);
    for (int64_t p = begin; p < end; p++) {
        const float *image = t->x + p * w->in[0] * w->in[1];
        float *plane = t->out + p * w->out[0] * w->out[1];
        stax_fill_padded_plane(w, image, is_max ? -INFINITY : 0.0f, t->padded_h, t->padded_w,
                               padded);
        if (is_max)
            max_plane(w, padded, t->padded_w, column_max, plane);
        else
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
