/* stax-llvm — packing a conv's im2col columns straight into the packed GEMM
 * driver's B panels (stax_gemm_source.pack_b, for stax_window.c). Row k of
 * the im2col matrix is input channel k / (kh * kw) at tap (kh, kw), column j
 * the output pixel (j / OW, j % OW); a panel holds kc such rows of nr
 * floats, zero where the tap lies in the padding and past the last column.
 *
 * A panel is at most nr columns, so per row there are only a few floats to
 * move and any per-row division costs as much as the copy. Everything that
 * depends only on the panel (its runs along output rows) or on the tap
 * column kw (which output columns read inside the image) is worked out once
 * per call; a row is then a few copies: contiguous for stride 1, even
 * elements for stride 2 (SSE shuffles), one by one otherwise. This file
 * owns the panel layout of an im2col source; the driver owns the blocking. */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "stax_internal.h"

/* Columns packed per pass (the row buffer and its runs along output rows),
 * and tap columns kept in a table (a wider kernel works each out per row). */
#define IM2COL_MAX_RUNS     256
#define IM2COL_MAX_TAP_COLS 32

/* Columns [ow, ow + length) of output row oh land at panel column column. */
typedef struct panel_run {
    int64_t oh, ow, length, column;
} panel_run;

/* For tap column kw: output columns [inside_lo, inside_hi) read inside the
 * image, from input column ow * stride + offset. */
typedef struct tap_columns {
    int64_t inside_lo, inside_hi, offset;
} tap_columns;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static tap_columns tap_columns_of(const stax_window *w, int64_t kw) {
    int64_t stride = w->stride[1], out = w->out[1], in = w->in[1];
    int64_t offset = kw * w->dilation[1] - w->pad_begin[1];
    int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t last = in - 1 - offset < 0 ? -1 : (in - 1 - offset) / stride;
    int64_t lo = first < out ? first : out, hi = last + 1 < out ? last + 1 : out;
    return (tap_columns){lo, hi < lo ? lo : hi, offset};
}

/* dst[0..count) = src[0..count), in fixed-size blocks the compiler turns
 * into vector moves, then the rest. */
static void copy_contiguous(float *restrict dst, const float *restrict src, int64_t count) {
    int64_t o = 0;
    for (; o + 8 <= count; o += 8) memcpy(dst + o, src + o, 8 * sizeof(float));
    if (o + 4 <= count) memcpy(dst + o, src + o, 4 * sizeof(float)), o += 4;
    for (; o < count; o++) dst[o] = src[o];
}

/* dst[o] = src[2 * o] for o in [0, count). The vector body reads src up to
 * 2 * o + 7 only while o + 4 < count, so never past src[2 * (count - 1)]. */
static void copy_even(float *restrict dst, const float *restrict src, int64_t count) {
    int64_t o = 0;
#if defined(__SSE2__)
    for (; o + 4 < count; o += 4) {
        __m128 low = _mm_loadu_ps(src + 2 * o), high = _mm_loadu_ps(src + 2 * o + 4);
        _mm_storeu_ps(dst + o, _mm_shuffle_ps(low, high, _MM_SHUFFLE(2, 0, 2, 0)));
    }
#endif
    for (; o < count; o++) dst[o] = src[2 * o];
}

void stax_copy_run(float *dst, const float *src, int64_t stride, int64_t lo, int64_t hi,
                   int64_t length) {
    int64_t zeros_before = lo, zeros_from = hi; /* zeros: [0, zeros_before), [zeros_from, length) */
#if defined(__SSE2__)
    /* zeros of at most four floats on either side (a padded row's borders):
     * one vector store each, the copy over them after; the loops below
     * become memset calls, which were 4.5% of a 56x56 conv's time at two
     * threads (three calls a row) */
    if (length >= 4 && lo <= 4 && length - hi <= 4) {
        _mm_storeu_ps(dst, _mm_setzero_ps());
        _mm_storeu_ps(dst + length - 4, _mm_setzero_ps());
        zeros_before = 0, zeros_from = length;
    }
#endif
    for (int64_t o = 0; o < zeros_before; o++) dst[o] = 0.0f;
    if (stride == 1)
        copy_contiguous(dst + lo, src + lo, hi - lo);
    else if (stride == 2)
        copy_even(dst + lo, src + 2 * lo, hi - lo);
    else
        for (int64_t o = lo; o < hi; o++) dst[o] = src[o * stride];
    for (int64_t o = zeros_from; o < length; o++) dst[o] = 0.0f;
}

/* Splits panel columns [j0, j0 + cols) into runs along output rows. */
static int64_t panel_runs(const stax_window *w, int64_t j0, int64_t cols, panel_run *runs) {
    int64_t ow_n = w->out[1], count = 0;
    for (int64_t j = 0, oh = j0 / ow_n, ow = j0 % ow_n; j < cols; oh++, ow = 0) {
        int64_t length = ow_n - ow < cols - j ? ow_n - ow : cols - j;
        runs[count++] = (panel_run){oh, ow, length, j};
        j += length;
    }
    return count;
}

/* One im2col row (channel c, tap kh, columns `tap`) of the panel's runs into `out`. */
static void pack_row(const stax_window *w, const float *channel, int64_t kh, const tap_columns *tap,
                     const panel_run *runs, int64_t num_runs, float *out) {
    int64_t off_h = kh * w->dilation[0] - w->pad_begin[0], in_h = w->in[0], in_w = w->in[1];
    for (int64_t r = 0; r < num_runs; r++) {
        const panel_run *run = &runs[r];
        float *dst = out + run->column;
        int64_t ih = run->oh * w->stride[0] + off_h;
        if (ih < 0 || ih >= in_h) {
            memset(dst, 0, sizeof(float) * (size_t)run->length);
            continue;
        }
        int64_t lo = clamp64(tap->inside_lo, run->ow, run->ow + run->length);
        int64_t hi = clamp64(tap->inside_hi, lo, run->ow + run->length);
        const float *src = channel + ih * in_w + run->ow * w->stride[1] + tap->offset;
        stax_copy_run(dst, src, w->stride[1], lo - run->ow, hi - run->ow, run->length);
    }
}

/* Where row k of the source starts: channel c's plane at tap (kh, kw). */
typedef struct im2col_row {
    const float *channel;
    int64_t kh, kw;
} im2col_row;

static im2col_row row_at(const stax_im2col_source *source, int64_t batch, int64_t k) {
    const stax_window *w = source->w;
    int64_t kh_n = w->kernel[0], kw_n = w->kernel[1], plane = w->in[0] * w->in[1];
    int64_t c = k / (kh_n * kw_n);
    return (im2col_row){source->x_image + (batch * w->in_channels + c) * plane, k / kw_n % kh_n,
                        k % kw_n};
}

static void next_row(const stax_window *w, im2col_row *row) {
    if (++row->kw < w->kernel[1]) return;
    row->kw = 0;
    if (++row->kh < w->kernel[0]) return;
    row->kh = 0, row->channel += w->in[0] * w->in[1];
}

static tap_columns tap_of(const stax_window *w, const tap_columns *taps, int64_t kw) {
    return w->kernel[1] <= IM2COL_MAX_TAP_COLS ? taps[kw] : tap_columns_of(w, kw);
}

/* Columns [j0, j0 + cols) of rows [k0, k0 + kc), row k at out + k * row_stride. */
static void pack_columns(const stax_im2col_source *source, const tap_columns *taps, int64_t batch,
                         int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t row_stride,
                         float *out) {
    const stax_window *w = source->w;
    panel_run runs[IM2COL_MAX_RUNS];
    for (int64_t j = 0; j < cols; j += IM2COL_MAX_RUNS) {
        int64_t part = cols - j < IM2COL_MAX_RUNS ? cols - j : IM2COL_MAX_RUNS;
        int64_t num_runs = panel_runs(w, j0 + j, part, runs);
        im2col_row row = row_at(source, batch, k0);
        for (int64_t k = 0; k < kc; k++, next_row(w, &row)) {
            tap_columns tap = tap_of(w, taps, row.kw);
            pack_row(w, row.channel, row.kh, &tap, runs, num_runs, out + k * row_stride + j);
        }
    }
}

static void fill_tap_table(const stax_window *w, tap_columns *taps) {
    for (int64_t kw = 0; kw < w->kernel[1] && kw < IM2COL_MAX_TAP_COLS; kw++)
        taps[kw] = tap_columns_of(w, kw);
}

/* One panel: its rows written in place, zeros past cols. */
void stax_im2col_pack_panel(const void *context, int64_t batch, int64_t k0, int64_t kc, int64_t j0,
                            int64_t cols, int64_t nr, float *out) {
    tap_columns taps[IM2COL_MAX_TAP_COLS];
    fill_tap_table(((const stax_im2col_source *)context)->w, taps);
    pack_columns(context, taps, batch, k0, kc, j0, cols, nr, out);
    if (cols < nr)
        for (int64_t k = 0; k < kc; k++)
            memset(out + k * nr + cols, 0, sizeof(float) * (size_t)(nr - cols));
}

/* Source rows packed before they are dealt out to the panels: a panel
 * then gets IM2COL_ROW_GROUP rows (contiguous in it) at once. One row at a
 * time would write 64 bytes to each of many panels kc * nr floats apart, a
 * power of two that maps them all onto the same few L1 sets. */
#define IM2COL_ROW_GROUP 8

/* Panels [p0, p1), as many at a time as fill a row buffer of
 * IM2COL_MAX_RUNS columns: each source row is read once across them (a run
 * along a whole output row), then its nr-wide pieces go to their panels. */
void stax_im2col_pack_panels(const void *context, int64_t batch, int64_t k0, int64_t kc, int64_t p0,
                             int64_t p1, int64_t nr, int64_t n, int64_t panel_stride, float *out) {
    const stax_im2col_source *source = context;
    const stax_window *w = source->w;
    int64_t per_chunk = IM2COL_MAX_RUNS / nr;
    if (per_chunk <= 1) { /* panels as wide as the buffer: in place, one by one */
        for (int64_t p = p0; p < p1; p++) {
            int64_t j0 = p * nr, cols = n - j0 < nr ? n - j0 : nr;
            stax_im2col_pack_panel(context, batch, k0, kc, j0, cols, nr,
                                   out + (p - p0) * panel_stride);
        }
        return;
    }
    tap_columns taps[IM2COL_MAX_TAP_COLS];
    fill_tap_table(w, taps);
    panel_run runs[IM2COL_MAX_RUNS];
    float rows[IM2COL_ROW_GROUP][IM2COL_MAX_RUNS];
    for (int64_t q0 = p0; q0 < p1; q0 += per_chunk) {
        int64_t q1 = q0 + per_chunk < p1 ? q0 + per_chunk : p1;
        int64_t j0 = q0 * nr, j1 = q1 * nr < n ? q1 * nr : n;
        int64_t num_runs = panel_runs(w, j0, j1 - j0, runs);
        im2col_row row = row_at(source, batch, k0);
        for (int64_t k = 0; k < kc; k += IM2COL_ROW_GROUP) {
            int64_t group = kc - k < IM2COL_ROW_GROUP ? kc - k : IM2COL_ROW_GROUP;
            for (int64_t r = 0; r < group; r++, next_row(w, &row)) {
                tap_columns tap = tap_of(w, taps, row.kw);
                pack_row(w, row.channel, row.kh, &tap, runs, num_runs, rows[r]);
            }
            for (int64_t q = q0; q < q1; q++) {
                float *dst = out + (q - p0) * panel_stride + k * nr;
                int64_t from = (q - q0) * nr, cols = j1 - j0 - from < nr ? j1 - j0 - from : nr;
                for (int64_t r = 0; r < group; r++, dst += nr) {
                    copy_contiguous(dst, rows[r] + from, cols);
                    if (cols < nr) memset(dst + cols, 0, sizeof(float) * (size_t)(nr - cols));
                }
            }
        }
    }
}
