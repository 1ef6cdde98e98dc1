/* stax-llvm — packing a row-major f32 B into the packed matmul's panels a
 * few rows at a time across all the panels of a range (stax_gemm_packed.c
 * calls it per k block).
 *
 * Packing one panel at a time reads kc rows of nr floats (64 bytes with
 * AVX2), each a row stride apart: with a power-of-two row stride (n = 512,
 * 1024) every line falls into the same few cache sets and no prefetcher
 * follows the pattern, and the pack took a fifth of a 128 x 512 x 1024
 * product's time. Here each block of STAX_PACK_ROWS rows is read from start
 * to end (a few sequential streams), and each panel gets that many rows at
 * once (contiguous in the panel). */
#include <string.h>

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
