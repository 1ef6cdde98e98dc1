/* stax-llvm — a conv's input padded once, for the convs that read it in
 * place instead of an im2col (stax_conv_shifted.c, stax_conv_shifted_rows.c).
 *
 * Stride 1: the input padded into planes of HP x WP (the padding made
 * real), and tap (i, j) of input channel c for the output pixel at flat
 * index q = oh * WP + ow reads padded element c * HP * WP + (i * WP + j) *
 * dilation + q. Stride s: each channel is split into s x s phase planes
 * (phase (p, r) holds padded rows p, p + s, ... and columns r, r + s, ...),
 * so that tap (i, j) reads phase (i % s, j % s) at row i / s, column j / s
 * (dilation folded into i and j): a stride-1 read again, on planes of
 * HP/s x WP/s. Either way a tap is one offset from q, the same for every
 * output pixel. */
#include <string.h>

#include "stax_internal.h"

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

stax_padded_input stax_padded_input_of(const stax_window *w) {
    stax_padded_input p;
    p.hp = ceil_div(stax_padded_extent(w, 0), w->stride[0]);
    p.wp = ceil_div(stax_padded_extent(w, 1), w->stride[1]);
    p.plane = p.hp * p.wp;
    p.phases = w->stride[0] * w->stride[1];
    p.floats = w->in_channels * p.phases * p.plane;
    return p;
}

/* Rows [row0, row0 + rows) of planes [begin, end) (channel * phases +
 * phase) of the padded image into `out`, `rows` rows of wp floats a plane
 * (plane q at out + q * rows * wp): row i of phase (p, r) of channel c is
 * padded row s0 * i + p, columns r, r + s1, ... of the channel; zeros
 * outside the image and past the plane's hp rows. */
static void pad_plane_rows(const stax_window *w, const stax_padded_input *pad, const float *image,
                           int64_t begin, int64_t end, int64_t row0, int64_t rows, float *out) {
    int64_t s0 = w->stride[0], s1 = w->stride[1], top = w->pad_begin[0], left = w->pad_begin[1];
    int64_t in_plane = w->in[0] * w->in[1], wp = pad->wp;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t c = plane / pad->phases, phase = plane % pad->phases;
        int64_t p = phase / s1, r = phase % s1;
        const float *channel = image + c * in_plane;
        /* columns j read image column s1 * j + r - left: inside for [lo, hi) */
        int64_t lo = left > r ? (left - r + s1 - 1) / s1 : 0;
        int64_t hi = w->in[1] - 1 + left - r < 0 ? 0 : (w->in[1] - 1 + left - r) / s1 + 1;
        hi = hi < wp ? hi : wp;
        lo = lo < hi ? lo : hi;
        for (int64_t i = row0; i < row0 + rows; i++) {
            float *dst = out + (plane * rows + i - row0) * wp;
            int64_t ih = s0 * i + p - top;
            if (i >= pad->hp || ih < 0 || ih >= w->in[0])
                memset(dst, 0, sizeof(float) * (size_t)wp);
            else
                stax_copy_run(dst, channel + ih * w->in[1] + r - left, s1, lo, hi, wp);
        }
    }
}

void stax_pad_input_planes(const stax_window *w, const stax_padded_input *p, const float *image,
                           int64_t begin, int64_t end, float *padded) {
    pad_plane_rows(w, p, image, begin, end, 0, p->hp, padded);
}

void stax_pad_input_band(const stax_window *w, const stax_padded_input *p, const float *image,
                         int64_t row0, int64_t rows, float *band) {
    pad_plane_rows(w, p, image, 0, w->in_channels * p->phases, row0, rows, band);
}

void stax_padded_tap_offsets(const stax_window *w, const stax_padded_input *p, int64_t rows,
                             int64_t *offsets) {
    int64_t s0 = w->stride[0], s1 = w->stride[1], plane = rows * p->wp;
    for (int64_t c = 0, k = 0; c < w->in_channels; c++)
        for (int64_t i = 0; i < w->kernel[0]; i++)
            for (int64_t j = 0; j < w->kernel[1]; j++, k++) {
                int64_t row = i * w->dilation[0], column = j * w->dilation[1];
                int64_t phase = row % s0 * s1 + column % s1;
                offsets[k] = (c * p->phases + phase) * plane + row / s0 * p->wp + column / s1;
            }
}

bool stax_conv_can_read_padded_input(const stax_window *w, const stax_gemm_family *family) {
    return w->kind == STAX_WINDOW_CONV && w->method == STAX_WINDOW_GEMM_IM2COL && w->packed &&
           w->group == 1 && family && w->stride[0] <= STAX_PADDED_MAX_STRIDE &&
           w->stride[1] <= STAX_PADDED_MAX_STRIDE && w->kernel[0] * w->kernel[1] > 1;
}
