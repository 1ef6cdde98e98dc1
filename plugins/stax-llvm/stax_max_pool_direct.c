/* stax-llvm — max pool rows read straight from the image with AVX-512
 * masked loads, for stax_pool.c.
 *
 * The portable rows (stax_pool.c) take the maximum down each window's rows
 * into a row buffer and then across its columns; at stride 2 GCC's code for
 * that second pass (src[2 * ow]) took half of ResNet-18's 3x3 stride-2
 * pool. Here each vector of sixteen outputs keeps the maximum down the
 * window's rows of its columns in registers (32 columns at stride 2, 16 at
 * stride 1, each loaded once) and takes the taps across from them and from
 * the next vector's, with permutes. A masked load gives -inf for the columns
 * in the padding, so they never win; a padding row is skipped. The last
 * vector of a row is stored under a mask.
 *
 * vmaxps drops a NaN when it is the first operand, so each row's maximum
 * down the window notes where either operand is unordered; a row that met a
 * NaN is left to the portable rows (which propagate it), a case of invalid
 * input only. */
#include <math.h>

#include "stax_cpu.h"
#include "stax_internal.h"
#include "stax_lanes.h"

/* The widest and tallest windows the direct rows take (the registers they
 * keep per vector, and the row pointers they gather per output row). */
#define MAX_POOL_DIRECT_TAPS 4
#define MAX_POOL_DIRECT_ROWS 16

#ifdef STAX_CPU_X86
#include <immintrin.h>

/* Output vectors whose masks a plane works out once, before its rows (one
 * more than a row's vectors: the columns just past each vector). */
#define MAX_POOL_DIRECT_VECTORS 64

/* The load masks of output vector v, whose first tap is input column
 * `first`: the columns inside the row of the 16 (stride 1) or 32 (stride 2,
 * two loads) columns from `first` on. */
typedef struct pool_masks {
    __mmask16 m[2];
} pool_masks;

static pool_masks masks_of(int64_t first, int64_t stride, int64_t in_w) {
    pool_masks d = {{stax_lanes_in_row(first, in_w),
                     stride == 2 ? stax_lanes_in_row(first + 16, in_w) : (__mmask16)0}};
    return d;
}

/* The maximum down the window's rows of the 16 or 32 columns of one output
 * vector: lo (and hi at stride 2). Lanes outside the row are -inf. */
typedef struct column_max {
    __m512 lo, hi;
} column_max;

__attribute__((target("avx512f"))) static inline column_max down_rows(const float *const *rows,
                                                                      int64_t count, int64_t first,
                                                                      pool_masks d,
                                                                      __mmask16 *met_nan) {
    const __m512 lowest = _mm512_set1_ps(-INFINITY);
    column_max c = {lowest, lowest};
    if (count == 0 || (d.m[0] | d.m[1]) == 0) return c;
    c.lo = _mm512_mask_loadu_ps(lowest, d.m[0], rows[0] + first);
    c.hi = _mm512_mask_loadu_ps(lowest, d.m[1], rows[0] + first + 16);
    *met_nan |= _mm512_cmp_ps_mask(c.lo, c.hi, _CMP_UNORD_Q);
    for (int64_t r = 1; r < count; r++) {
        __m512 lo = _mm512_mask_loadu_ps(lowest, d.m[0], rows[r] + first);
        __m512 hi = _mm512_mask_loadu_ps(lowest, d.m[1], rows[r] + first + 16);
        *met_nan |=
            _mm512_cmp_ps_mask(c.lo, lo, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(c.hi, hi, _CMP_UNORD_Q);
        c.lo = _mm512_max_ps(c.lo, lo);
        c.hi = _mm512_max_ps(c.hi, hi);
    }
    return c;
}

/* The taps of one output vector are, at stride 2, the even and odd floats of
 * its 32 columns (taps 0 and 1) and of the 32 two columns on (taps 2 and 3:
 * the same, one lane on, with lane 15 from the next vector's); at stride 1,
 * its 16 columns and the next vector's, shifted by the tap. */
__attribute__((target("avx512f"))) static int64_t
plane_avx512(const stax_window *w, const float *image, float *out, int64_t *nan_rows) {
    int64_t in_h = w->in[0], in_w = w->in[1], oh_n = w->out[0], ow_n = w->out[1];
    int64_t stride = w->stride[1], taps = w->kernel[1], left = w->pad_begin[1];
    int64_t vectors = (ow_n + 15) / 16, redo = 0;
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    pool_masks table[MAX_POOL_DIRECT_VECTORS];
    for (int64_t v = 0; v <= vectors && v < MAX_POOL_DIRECT_VECTORS; v++)
        table[v] = masks_of(v * 16 * stride - left, stride, in_w);
    for (int64_t oh = 0; oh < oh_n; oh++) {
        const float *rows[MAX_POOL_DIRECT_ROWS];
        int64_t count = 0;
        for (int64_t kh = 0; kh < w->kernel[0]; kh++) {
            int64_t ih = oh * w->stride[0] - w->pad_begin[0] + kh * w->dilation[0];
            if (ih >= 0 && ih < in_h) rows[count++] = image + ih * in_w;
        }
        float *dst = out + oh * ow_n;
        __mmask16 met_nan = 0;
        column_max now = down_rows(rows, count, -left, table[0], &met_nan);
        __m512 now_even = _mm512_permutex2var_ps(now.lo, even, now.hi);
        __m512 now_odd = _mm512_permutex2var_ps(now.lo, odd, now.hi);
        for (int64_t v = 0; v < vectors; v++) {
            int64_t first = (v + 1) * 16 * stride - left;
            pool_masks d =
                v + 1 < MAX_POOL_DIRECT_VECTORS ? table[v + 1] : masks_of(first, stride, in_w);
            column_max next = down_rows(rows, count, first, d, &met_nan);
            __m512 best;
            if (stride == 2) {
                __m512 next_even = _mm512_permutex2var_ps(next.lo, even, next.hi);
                __m512 next_odd = _mm512_permutex2var_ps(next.lo, odd, next.hi);
                best = now_even;
                if (taps > 1) best = _mm512_max_ps(best, now_odd);
                if (taps > 2)
                    best = _mm512_max_ps(best, _mm512_castsi512_ps(_mm512_alignr_epi32(
                                                   _mm512_castps_si512(next_even),
                                                   _mm512_castps_si512(now_even), 1)));
                if (taps > 3)
                    best = _mm512_max_ps(
                        best, _mm512_castsi512_ps(_mm512_alignr_epi32(
                                  _mm512_castps_si512(next_odd), _mm512_castps_si512(now_odd), 1)));
                now_even = next_even, now_odd = next_odd;
            } else {
                __m512i here = _mm512_castps_si512(now.lo), on = _mm512_castps_si512(next.lo);
                best = now.lo;
                if (taps > 1)
                    best =
                        _mm512_max_ps(best, _mm512_castsi512_ps(_mm512_alignr_epi32(on, here, 1)));
                if (taps > 2)
                    best =
                        _mm512_max_ps(best, _mm512_castsi512_ps(_mm512_alignr_epi32(on, here, 2)));
                if (taps > 3)
                    best =
                        _mm512_max_ps(best, _mm512_castsi512_ps(_mm512_alignr_epi32(on, here, 3)));
            }
            now = next;
            _mm512_mask_storeu_ps(dst + v * 16, stax_lanes_below(ow_n - v * 16), best);
        }
        if (met_nan) nan_rows[redo++] = oh;
    }
    return redo;
}
#endif

int32_t stax_pool_choose_direct(const tp_plugin_host *host, stax_window *w, char *error,
                                size_t error_size) {
    stax_switch setting;
    w->direct_rows = false;
    if (w->kind != STAX_WINDOW_MAX_POOL) return TP_PLUGIN_OK;
    int32_t status = stax_switch_setting(host, "STAX_POOL_DIRECT", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
#ifdef STAX_CPU_X86
    w->direct_rows = setting != STAX_SWITCH_OFF && stax_cpu_has_avx512f() && w->dilation[1] == 1 &&
                     (w->stride[1] == 1 || w->stride[1] == 2) &&
                     w->kernel[1] <= MAX_POOL_DIRECT_TAPS && w->kernel[0] <= MAX_POOL_DIRECT_ROWS;
#else
    (void)setting;
#endif
    return TP_PLUGIN_OK;
}

int64_t stax_max_pool_direct_plane(const stax_window *w, const float *image, float *out,
                                   int64_t *nan_rows) {
#ifdef STAX_CPU_X86
    return plane_avx512(w, image, out, nan_rows);
#else
    (void)image, (void)out;
    for (int64_t oh = 0; oh < w->out[0]; oh++) nan_rows[oh] = oh;
    return w->out[0];
#endif
}
