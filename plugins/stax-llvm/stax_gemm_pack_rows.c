/* stax-llvm — packing row-major f32 rows for the tile kernels: a B into the
 * packed matmul's panels a few rows at a time across all the panels of a
 * range (stax_gemm_packed.c calls it per k block), and a few rows into one
 * k-major strip (an A tile, a transposed B's panel, attention's Q, K and P).
 *
 * Packing one panel at a time reads kc rows of nr floats (64 bytes with
 * AVX2), each a row stride apart: with a power-of-two row stride (n = 512,
 * 1024) every line falls into the same few cache sets and no prefetcher
 * follows the pattern, and the pack took a fifth of a 128 x 512 x 1024
 * product's time. Here each block of STAX_PACK_ROWS rows is read from start
 * to end (a few sequential streams), and each panel gets that many rows at
 * once (contiguous in the panel). */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "stax_internal.h"

/* Rows of B read together: a few streams, their panel rows written in one
 * contiguous run per panel. */
#define STAX_PACK_ROWS 8

/* dst[0..count) = src[0..count), nr - count zeros after (a panel row). */
static void panel_row(float *restrict dst, const float *restrict src, int64_t count, int64_t nr) {
    int64_t j = 0;
    for (; j + 8 <= count; j += 8) memcpy(dst + j, src + j, 8 * sizeof(float));
    for (; j < count; j++) dst[j] = src[j];
    for (; j < nr; j++) dst[j] = 0.0f;
}

void stax_gemm_pack_row_major_panels(const float *b, int64_t ldb, int64_t n, int64_t kc, int64_t nr,
                                     int64_t begin, int64_t end, bool skip_whole, float *out,
                                     int64_t panel_stride) {
    for (int64_t k0 = 0; k0 < kc; k0 += STAX_PACK_ROWS) {
        int64_t k1 = k0 + STAX_PACK_ROWS < kc ? k0 + STAX_PACK_ROWS : kc;
        for (int64_t p = begin; p < end; p++) {
            int64_t j0 = p * nr, cols = n - j0 < nr ? n - j0 : nr;
            if (skip_whole && cols == nr) continue;
            float *panel = out + (p - begin) * panel_stride;
            for (int64_t k = k0; k < k1; k++) panel_row(panel + k * nr, b + k * ldb + j0, cols, nr);
        }
    }
}

/* With SSE2, four k at a time: 4x4 transposes for each four rows, pairs
 * interleaved for two more, the last odd row and k one by one (a scalar
 * loop here gathers one float per cycle or worse). */
void stax_pack_rows_k_major(const float *const *rows, int64_t h, int64_t length, float *out) {
    int64_t k = 0;
#if defined(__SSE2__)
    for (; k + 4 <= length; k += 4) {
        float *o = out + k * h;
        int64_t r = 0;
        for (; r + 4 <= h; r += 4) {
            __m128 v0 = _mm_loadu_ps(rows[r] + k), v1 = _mm_loadu_ps(rows[r + 1] + k);
            __m128 v2 = _mm_loadu_ps(rows[r + 2] + k), v3 = _mm_loadu_ps(rows[r + 3] + k);
            _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
            _mm_storeu_ps(o + r, v0);
            _mm_storeu_ps(o + h + r, v1);
            _mm_storeu_ps(o + 2 * h + r, v2);
            _mm_storeu_ps(o + 3 * h + r, v3);
        }
        if (r + 2 <= h) {
            __m128 a = _mm_loadu_ps(rows[r] + k), b = _mm_loadu_ps(rows[r + 1] + k);
            __m128 low = _mm_unpacklo_ps(a, b), high = _mm_unpackhi_ps(a, b);
            _mm_storel_pi((__m64 *)(o + r), low);
            _mm_storeh_pi((__m64 *)(o + h + r), low);
            _mm_storel_pi((__m64 *)(o + 2 * h + r), high);
            _mm_storeh_pi((__m64 *)(o + 3 * h + r), high);
            r += 2;
        }
        for (; r < h; r++)
            for (int64_t j = 0; j < 4; j++) o[j * h + r] = rows[r][k + j];
    }
#endif
    for (; k < length; k++)
        for (int64_t r = 0; r < h; r++) out[k * h + r] = rows[r][k];
}
