/* stax-llvm — runs of floats plus one value (a conv's bias on a block of
 * its output), sixteen floats a step on an AVX-512 host, eight in two SSE2
 * vectors elsewhere, and blocks of them transposed with a bias per column
 * (a conv's result with its pixels as rows into NCHW), for the C side of
 * the plugin (stax_internal.h). The
 * plugin's C is compiled for baseline x86-64 and GCC at -O2 leaves these
 * loops scalar: a bias added a float at a time was 10% of a 16 -> 96 1x1
 * conv at 112x112, and the shifted conv's copy of its stage into the output
 * 17% of MobileNetV2's first conv. (A GCC vector of eight floats, which the
 * SSE2 baseline splits in two, went through the stack on every step.) */
#include "stax_cpu.h"
#include "stax_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef STAX_CPU_X86
#include <immintrin.h>

/* dst[i] = src[i] + value; src may be dst. The rest in one masked step. */
__attribute__((target("avx512f"))) static void plus_avx512(float *dst, const float *src,
                                                           float value, int64_t count) {
    __m512 v = _mm512_set1_ps(value);
    int64_t j = 0;
    for (; j + 16 <= count; j += 16)
        _mm512_storeu_ps(dst + j, _mm512_add_ps(_mm512_loadu_ps(src + j), v));
    if (j < count) {
        __mmask16 rest = (__mmask16)((1u << (count - j)) - 1u);
        _mm512_mask_storeu_ps(dst + j, rest,
                              _mm512_add_ps(_mm512_maskz_loadu_ps(rest, src + j), v));
    }
}
#endif

static void plus(float *dst, const float *src, float value, int64_t count) {
#ifdef STAX_CPU_X86
    if (stax_cpu_has_avx512f()) {
        plus_avx512(dst, src, value, count);
        return;
    }
#endif
    int64_t j = 0;
#if defined(__SSE2__)
    __m128 v = _mm_set1_ps(value);
    for (; j + 8 <= count; j += 8) {
        _mm_storeu_ps(dst + j, _mm_add_ps(_mm_loadu_ps(src + j), v));
        _mm_storeu_ps(dst + j + 4, _mm_add_ps(_mm_loadu_ps(src + j + 4), v));
    }
#endif
    for (; j < count; j++) dst[j] = src[j] + value;
}

void stax_add_to_floats(float *x, float value, int64_t count) {
    plus(x, x, value, count);
}

void stax_copy_floats_plus(float *dst, const float *src, float value, int64_t count) {
    plus(dst, src, value, count);
}

#ifdef STAX_CPU_X86
/* Sixteen rows of sixteen columns (r[i]: row i) transposed in registers
 * (r[j]: column j): pairs of rows interleaved, then pairs of those, then
 * 128-bit lanes across four and eight rows apart. */
__attribute__((target("avx512f"))) static void transpose_16x16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_castpd_ps(
            _mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(
            _mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 2] = _mm512_castpd_ps(
            _mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        r[i + 3] = _mm512_castpd_ps(
            _mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    /* r[4q + j] now holds, in 128-bit lane L, column 4L + j of rows 4q to
     * 4q + 3: column 4L + j is lane L of r[j], r[4 + j], r[8 + j], r[12 + j] */
    for (int j = 0; j < 4; j++) {
        __m512 a = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88); /* lanes 0,2 | 0,2 */
        __m512 b = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd); /* lanes 1,3 | 1,3 */
        __m512 c = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        __m512 d = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
        t[j] = _mm512_shuffle_f32x4(a, c, 0x88);      /* lane 0 of each: columns j */
        t[4 + j] = _mm512_shuffle_f32x4(b, d, 0x88);  /* lane 1: columns 4 + j */
        t[8 + j] = _mm512_shuffle_f32x4(a, c, 0xdd);  /* lane 2: columns 8 + j */
        t[12 + j] = _mm512_shuffle_f32x4(b, d, 0xdd); /* lane 3: columns 12 + j */
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* Blocks of sixteen rows of all sixteen columns; returns the rows done. */
__attribute__((target("avx512f"))) static int64_t transpose_plus_avx512(const float *src,
                                                                        int64_t ld, int64_t rows,
                                                                        const float *b, float *dst,
                                                                        int64_t dst_stride) {
    int64_t p = 0;
    for (; p + 16 <= rows; p += 16) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + (p + i) * ld);
        transpose_16x16(r);
        for (int c = 0; c < 16; c++)
            _mm512_storeu_ps(dst + c * dst_stride + p, _mm512_add_ps(r[c], _mm512_set1_ps(b[c])));
    }
    return p;
}
#endif

void stax_transpose_plus(const float *src, int64_t ld, int64_t rows, int64_t columns,
                         const float *bias, float *dst, int64_t dst_stride) {
    float b[STAX_TRANSPOSE_MAX_COLUMNS];
    for (int64_t c = 0; c < columns; c++) b[c] = bias ? bias[c] : 0.0f;
    int64_t p = 0;
#ifdef STAX_CPU_X86
    if (columns == STAX_TRANSPOSE_MAX_COLUMNS && stax_cpu_has_avx512f())
        p = transpose_plus_avx512(src, ld, rows, b, dst, dst_stride);
#endif
#if defined(__SSE2__)
    /* 4x4 blocks: four rows' four columns in, four columns' four rows out */
    for (; p + 4 <= rows; p += 4) {
        int64_t c = 0;
        for (; c + 4 <= columns; c += 4) {
            __m128 r0 = _mm_loadu_ps(src + p * ld + c), r1 = _mm_loadu_ps(src + (p + 1) * ld + c);
            __m128 r2 = _mm_loadu_ps(src + (p + 2) * ld + c);
            __m128 r3 = _mm_loadu_ps(src + (p + 3) * ld + c);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            float *d = dst + c * dst_stride + p;
            _mm_storeu_ps(d, _mm_add_ps(r0, _mm_set1_ps(b[c])));
            _mm_storeu_ps(d + dst_stride, _mm_add_ps(r1, _mm_set1_ps(b[c + 1])));
            _mm_storeu_ps(d + 2 * dst_stride, _mm_add_ps(r2, _mm_set1_ps(b[c + 2])));
            _mm_storeu_ps(d + 3 * dst_stride, _mm_add_ps(r3, _mm_set1_ps(b[c + 3])));
        }
        for (; c < columns; c++)
            for (int64_t q = p; q < p + 4; q++) dst[c * dst_stride + q] = src[q * ld + c] + b[c];
    }
#endif
    for (; p < rows; p++)
        for (int64_t c = 0; c < columns; c++) dst[c * dst_stride + p] = src[p * ld + c] + b[c];
}
