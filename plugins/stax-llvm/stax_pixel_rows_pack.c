/* stax-llvm — the pixel-rows product's A (stax_conv_pixel_rows.c): row j of
 * im2col^T is output pixel j of all images one after another, column k the
 * input channel c = k / (KH * KW) at tap (kh, kw). Packed k-major per tile
 * of h rows (stax_gemm_pack_whole_a's layout), so for each k a tile takes h
 * floats: for a tile's pixels at bordered-image positions base[e] and tap
 * k at offset off[k], A[j][k] = bordered[base[e] + off[k]]. That is one
 * gather per k and tile (an AVX-512 masked gather and masked store for the
 * avx512 family, else h scalar loads), from a bordered copy of the input
 * (the padding made real, so no tap needs a bounds check) or from the
 * input itself when the conv has no leading padding and reads no border.
 *
 * It replaces a pack that copied runs along output rows (a 7x7 map's rows
 * are runs of 7 floats, each with its own bounds and zero fills) into a
 * row buffer and then dealt them out to the tiles one float at a time:
 * that took 15-20% of ResNet-18's 3x3 convs on its 7x7 maps. */
#include <string.h>

#include "stax_cpu.h"
#include "stax_internal.h"

#ifdef STAX_CPU_X86
#include <immintrin.h>
#endif

/* Where the pack reads: planes of hp x wp floats, channel c of image n at
 * (n * channels + c) * hp * wp. */
typedef struct gather_geometry {
    int64_t hp, wp, channels;
    bool direct; /* the input itself (no border to make) */
} gather_geometry;

static gather_geometry geometry_of(const stax_window *w) {
    int64_t hp = stax_padded_extent(w, 0), wp = stax_padded_extent(w, 1);
    gather_geometry g = {hp, wp, w->in_channels, false};
    if (w->pad_begin[0] == 0 && w->pad_begin[1] == 0 && hp <= w->in[0] && wp <= w->in[1])
        g = (gather_geometry){w->in[0], w->in[1], w->in_channels, true};
    return g;
}

int64_t stax_pixel_rows_bordered_floats(const stax_window *w) {
    gather_geometry g = geometry_of(w);
    return g.direct ? 0 : w->batch * g.channels * g.hp * g.wp;
}

void stax_pixel_rows_border(const stax_window *w, const float *x, int64_t begin, int64_t end,
                            float *bordered) {
    gather_geometry g = geometry_of(w);
    int64_t in_plane = w->in[0] * w->in[1], plane = g.hp * g.wp;
    for (int64_t p = begin; p < end; p++) /* p = image * channels + channel */
        stax_fill_padded_plane(w, x + p * in_plane, g.hp, g.wp, bordered + p * plane);
}

/* The source offset of column k of im2col^T: channel c's plane, tap (kh, kw). */
typedef struct tap_cursor {
    int64_t c, kh, kw;
} tap_cursor;

static tap_cursor cursor_at(const stax_window *w, int64_t k) {
    int64_t kw_n = w->kernel[1], kh_n = w->kernel[0];
    return (tap_cursor){k / (kh_n * kw_n), k / kw_n % kh_n, k % kw_n};
}

static int64_t cursor_offset(const stax_window *w, const gather_geometry *g, tap_cursor t) {
    return (t.c * g->hp + t.kh * w->dilation[0]) * g->wp + t.kw * w->dilation[1];
}

static void cursor_next(const stax_window *w, tap_cursor *t) {
    if (++t->kw < w->kernel[1]) return;
    t->kw = 0;
    if (++t->kh < w->kernel[0]) return;
    t->kh = 0, t->c++;
}

/* Rows of a tile gathered at once (an AVX-512 vector's lanes); a taller
 * tile is gathered in parts of this many rows. */
#define GATHER_LANES 16

#ifdef STAX_CPU_X86
/* kc steps of `lanes` rows of a tile h rows tall:
 * dst[kk * h + e] = src[base[e] + off(k0 + kk)] for e < lanes. */
__attribute__((target("avx512f"))) static void
gather_rows_avx512(const stax_window *w, const gather_geometry *g, const float *src,
                   const int32_t *base, int32_t lanes, int32_t h, int64_t k0, int64_t kc,
                   float *dst) {
    __mmask16 mask = (__mmask16)((1u << lanes) - 1u);
    __m512i bases = _mm512_maskz_loadu_epi32(mask, base);
    tap_cursor t = cursor_at(w, k0);
    for (int64_t kk = 0; kk < kc; kk++, dst += h, cursor_next(w, &t)) {
        __m512i index = _mm512_add_epi32(bases, _mm512_set1_epi32((int32_t)cursor_offset(w, g, t)));
        __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, index, src, 4);
        _mm512_mask_storeu_ps(dst, mask, v);
    }
}
#endif

static void gather_rows(const stax_window *w, const gather_geometry *g, const float *src,
                        const int64_t *base, int32_t lanes, int32_t h, int64_t k0, int64_t kc,
                        float *dst) {
    tap_cursor t = cursor_at(w, k0);
    for (int64_t kk = 0; kk < kc; kk++, dst += h, cursor_next(w, &t)) {
        const float *from = src + cursor_offset(w, g, t);
        for (int32_t e = 0; e < lanes; e++) dst[e] = from[base[e]];
    }
}

void stax_pixel_rows_pack(const stax_window *w, const float *x, const float *bordered,
                          const stax_gemm_family *family, int64_t m, int64_t k, int64_t kc_max,
                          int64_t row0, int64_t row1, float *out) {
    gather_geometry g = geometry_of(w);
    const float *src = g.direct ? x : bordered;
    int64_t pixels = w->out[0] * w->out[1], image = g.channels * g.hp * g.wp;
    /* The gather with the avx512 family on a host that has it (so the
     * tests, which run every family here, also run the scalar loop), with
     * 32-bit indices: the whole source within 2^31 floats. */
    bool wide_gather = false;
#ifdef STAX_CPU_X86
    wide_gather =
        !strcmp(family->name, "avx512") && stax_cpu_has_avx512f() && w->batch * image < INT32_MAX;
#endif
    for (int64_t t0 = row0; t0 < row1;) {
        int32_t h = stax_gemm_tile_rows(family, m, t0);
        if (h <= 0) return; /* not a tile boundary: nothing the driver would read */
        for (int32_t e0 = 0; e0 < h; e0 += GATHER_LANES) {
            int32_t lanes = h - e0 < GATHER_LANES ? h - e0 : GATHER_LANES;
            int64_t base[GATHER_LANES];
            int32_t base32[GATHER_LANES];
            for (int32_t e = 0; e < lanes; e++) {
                int64_t j = t0 + e0 + e, n = j / pixels, p = j % pixels;
                int64_t oh = p / w->out[1], ow = p % w->out[1];
                base[e] = n * image + oh * w->stride[0] * g.wp + ow * w->stride[1];
                base32[e] = (int32_t)base[e]; /* used only when every index fits */
            }
            for (int64_t pc = 0; pc < k; pc += kc_max) {
                int64_t kc = k - pc < kc_max ? k - pc : kc_max;
                float *rows = out + m * pc + t0 * kc + e0;
#ifdef STAX_CPU_X86
                if (wide_gather) {
                    gather_rows_avx512(w, &g, src, base32, lanes, h, pc, kc, rows);
                    continue;
                }
#endif
                gather_rows(w, &g, src, base, lanes, h, pc, kc, rows);
            }
        }
        t0 += h;
    }
}
