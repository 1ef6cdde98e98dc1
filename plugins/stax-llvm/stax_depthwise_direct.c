/* stax-llvm — 3x3 depthwise rows at stride 1 or 2 read straight from the
 * image with AVX-512 masked loads, for stax_depthwise.c.
 *
 * The portable rows (stax_depthwise.c) copy each input plane into a
 * zero-bordered buffer first, so that every tap is in range, and leave a
 * row's last ow_n % 16 outputs to a scalar loop; at stride 2 they split
 * each bordered row into its even and odd columns. On MobileNetV2's wide
 * planes that copy (or split) took 20-50% of the conv. Here each vector of
 * sixteen outputs loads its taps from the image rows themselves: a masked
 * load zeroes the lanes whose column falls in the padding (or past the
 * row), an input row in the padding contributes nothing, and the row's
 * last vector is stored under a mask. At stride 2 the taps of sixteen
 * outputs are the even and odd floats of 32 consecutive columns, taken
 * apart with two-source permutes. */
#include "stax_cpu.h"
#include "stax_internal.h"
#include "stax_lanes.h"

#ifdef STAX_CPU_X86
#include <immintrin.h>

/* Sixteen outputs of one output row at stride 1: input columns
 * first + l + j of rows r0..r2 (masks m0..m2 for j = 0..2). */
#define DEPTHWISE_DIRECT_TAPS_S1(acc, r0, r1, r2, first, m0, m1, m2)                               \
    do {                                                                                           \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, r0 + first), k0, acc);                     \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, r0 + first + 1), k1, acc);                 \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m2, r0 + first + 2), k2, acc);                 \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, r1 + first), k3, acc);                     \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, r1 + first + 1), k4, acc);                 \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m2, r1 + first + 2), k5, acc);                 \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, r2 + first), k6, acc);                     \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, r2 + first + 1), k7, acc);                 \
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m2, r2 + first + 2), k8, acc);                 \
    } while (0)

/* Stride 2: input columns first + 2l + j, from the 32 columns at first
 * (masks m0, m1) and the 32 at first + 2 (m2, m3) of each row, split into
 * their even and odd floats. */
#define DEPTHWISE_DIRECT_ROW_S2(acc, r, first, m0, m1, m2, m3, ka, kb, kc)                         \
    do {                                                                                           \
        __m512 lo = _mm512_maskz_loadu_ps(m0, r + first);                                          \
        __m512 hi = _mm512_maskz_loadu_ps(m1, r + first + 16);                                     \
        __m512 lo2 = _mm512_maskz_loadu_ps(m2, r + first + 2);                                     \
        __m512 hi2 = _mm512_maskz_loadu_ps(m3, r + first + 18);                                    \
        acc = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo, even, hi), ka, acc);                      \
        acc = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo, odd, hi), kb, acc);                       \
        acc = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo2, even, hi2), kc, acc);                    \
    } while (0)

/* The load masks of output vector v (sixteen outputs from 16v on): per
 * tap column j (stride 1: 3; stride 2: the four 16-column loads), the
 * columns inside the image row; all ones where every column is. */
typedef struct direct_masks {
    __mmask16 m[4];
} direct_masks;

static direct_masks masks_of(int64_t first, int64_t stride, int64_t in_w) {
    direct_masks d;
    for (int j = 0; j < 4; j++) {
        int64_t at = stride == 1 ? first + (j < 3 ? j : 0) : first + (j % 2) * 16 + (j / 2) * 2;
        d.m[j] = stax_lanes_in_row(at, in_w);
    }
    return d;
}

/* Output vectors whose masks a call works out once, before its rows. */
#define DEPTHWISE_DIRECT_MAX_VECTORS 64

/* Output rows [oh0, oh1) of one plane; an input row in the padding reads
 * `zeros` (at least in_w + 64 floats of 0) instead. The masks of each
 * output vector are worked out once per call (they are the same in every
 * row): all ones inside the row, the columns in the image at its ends. */
__attribute__((target("avx512f"))) static void rows_avx512(const stax_window *w, const float *image,
                                                           const float *zeros, const float *k,
                                                           float bias, int64_t oh0, int64_t oh1,
                                                           float *out) {
    int64_t in_h = w->in[0], in_w = w->in[1], ow_n = w->out[1], stride = w->stride[0];
    int64_t top = w->pad_begin[0], left = w->pad_begin[1], vectors = (ow_n + 15) / 16;
    const __m512 k0 = _mm512_set1_ps(k[0]), k1 = _mm512_set1_ps(k[1]), k2 = _mm512_set1_ps(k[2]);
    const __m512 k3 = _mm512_set1_ps(k[3]), k4 = _mm512_set1_ps(k[4]), k5 = _mm512_set1_ps(k[5]);
    const __m512 k6 = _mm512_set1_ps(k[6]), k7 = _mm512_set1_ps(k[7]), k8 = _mm512_set1_ps(k[8]);
    const __m512 b = _mm512_set1_ps(bias);
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    direct_masks table[DEPTHWISE_DIRECT_MAX_VECTORS];
    for (int64_t v = 0; v < vectors && v < DEPTHWISE_DIRECT_MAX_VECTORS; v++)
        table[v] = masks_of(v * 16 * stride - left, stride, in_w);
    for (int64_t oh = oh0; oh < oh1; oh++) {
        const float *rows[3];
        for (int r = 0; r < 3; r++) {
            int64_t ih = oh * stride - top + r;
            rows[r] = ih >= 0 && ih < in_h ? image + ih * in_w : zeros;
        }
        const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
        float *dst = out + oh * ow_n;
        for (int64_t v = 0; v < vectors; v++) {
            int64_t ow0 = v * 16, first = ow0 * stride - left;
            direct_masks d =
                v < DEPTHWISE_DIRECT_MAX_VECTORS ? table[v] : masks_of(first, stride, in_w);
            __mmask16 live = stax_lanes_below(ow_n - ow0);
            __m512 acc = b;
            if (stride == 1) {
                DEPTHWISE_DIRECT_TAPS_S1(acc, r0, r1, r2, first, d.m[0], d.m[1], d.m[2]);
            } else {
                DEPTHWISE_DIRECT_ROW_S2(acc, r0, first, d.m[0], d.m[1], d.m[2], d.m[3], k0, k1, k2);
                DEPTHWISE_DIRECT_ROW_S2(acc, r1, first, d.m[0], d.m[1], d.m[2], d.m[3], k3, k4, k5);
                DEPTHWISE_DIRECT_ROW_S2(acc, r2, first, d.m[0], d.m[1], d.m[2], d.m[3], k6, k7, k8);
            }
            _mm512_mask_storeu_ps(dst + ow0, live, acc);
        }
    }
}
#endif

static bool host_and_shape_take(const stax_window *w) {
#ifdef STAX_CPU_X86
    return stax_cpu_has_avx512f() && w->kernel[0] == 3 && w->kernel[1] == 3 &&
           w->dilation[0] == 1 && w->dilation[1] == 1 && w->stride[0] == w->stride[1] &&
           (w->stride[0] == 1 || w->stride[0] == 2);
#else
    (void)w;
    return false;
#endif
}

int32_t stax_depthwise_choose_direct(const tp_plugin_host *host, stax_window *w, char *error,
                                     size_t error_size) {
    stax_switch setting;
    w->direct_rows = false;
    int32_t status =
        stax_switch_setting(host, "STAX_DEPTHWISE_DIRECT", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    w->direct_rows =
        w->method == STAX_WINDOW_DEPTHWISE && setting != STAX_SWITCH_OFF && host_and_shape_take(w);
    return TP_PLUGIN_OK;
}

void stax_depthwise_direct_rows(const stax_window *w, const float *image, const float *zeros,
                                const float *k, float bias, int64_t oh0, int64_t oh1, float *out) {
#ifdef STAX_CPU_X86
    rows_avx512(w, image, zeros, k, bias, oh0, oh1, out);
#else
    (void)w, (void)image, (void)zeros, (void)k, (void)bias, (void)oh0, (void)oh1, (void)out;
#endif
}
