/* The resize op: scales the last two axes of x (H and W; the leading axes are
 * kept) to the sizes of the `shape` attribute, by nearest-neighbour or
 * bilinear interpolation, as ONNX Resize. Each output index maps to an input
 * coordinate by the `coordinates` rule (tp_coordinates); nearest rounds it
 * by `rounding`, linear weighs its two neighbours; coordinates outside the
 * axis read the edge element. Owns nothing else. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

tp_status tp_op_RESIZE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *x = &inputs[0];
    char text[TP_DESCRIBE_MAX], sizes[TP_DESCRIBE_MAX];
    int rank = x->ndim;
    if (rank < 2)
        return tp_error_set(TP_ERR_SHAPE, "resize: x %s needs at least 2 axes (..., H, W)",
                            tp_type_text(x, text));
    if (attrs->mode != TP_MODE_NEAREST && attrs->mode != TP_MODE_LINEAR)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "resize: mode must be nearest or linear");
    if (attrs->mode == TP_MODE_LINEAR && !tp_dtype_is_float(x->dtype))
        return tp_error_set(TP_ERR_DTYPE, "resize: linear mode needs floating x, got %s",
                            tp_type_text(x, text));
    if ((unsigned)attrs->coordinates > TP_COORDINATES_TF_HALF_PIXEL_FOR_NN ||
        (unsigned)attrs->rounding > TP_ROUNDING_CEIL)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "resize: unknown coordinates or rounding");
    if (!(attrs->scale_h >= 0) || !(attrs->scale_w >= 0))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "resize: scale_h %g and scale_w %g must be >= 0 (0: output size / "
                            "input size)",
                            attrs->scale_h, attrs->scale_w);
    if (attrs->shape_ndim != rank)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "resize: shape %s needs one entry per axis of x %s (-1 keeps one)",
                            tp_ints_text(attrs->shape, attrs->shape_ndim, sizes),
                            tp_type_text(x, text));
    *out = *x;
    for (int d = 0; d < rank; d++) {
        int64_t want = attrs->shape[d];
        bool spatial = d >= rank - 2;
        if (!spatial && (want == -1 || want == x->dims[d])) continue;
        if (!spatial || want < 1 || TP_DIM_IS_SYMBOL(x->dims[d]) || x->dims[d] < 1)
            return tp_error_set(TP_ERR_SHAPE,
                                "resize: shape %s for x %s: only the last two axes change, to "
                                "sizes >= 1, from known sizes >= 1 (-1 keeps a leading axis)",
                                tp_ints_text(attrs->shape, attrs->shape_ndim, sizes),
                                tp_type_text(x, text));
        out->dims[d] = want;
    }
    return TP_OK;
}

/* The input coordinate of output index `at` along an axis in -> out. */
static double input_coordinate(int64_t at, int64_t in, int64_t out, double scale,
                               tp_coordinates rule) {
    double s = scale > 0 ? scale : (double)out / (double)in;
    double length = scale > 0 ? (double)in * scale : (double)out; /* L, unrounded */
    switch (rule) {
    case TP_COORDINATES_ASYMMETRIC:
        return (double)at / s;
    case TP_COORDINATES_ALIGN_CORNERS:
        return length == 1 ? 0.0 : (double)at * (double)(in - 1) / (length - 1);
    case TP_COORDINATES_PYTORCH_HALF_PIXEL:
        return length > 1 ? ((double)at + 0.5) / s - 0.5 : 0.0;
    case TP_COORDINATES_HALF_PIXEL_SYMMETRIC:
        return (double)in / 2 * (1 - (double)out / length) + ((double)at + 0.5) / s - 0.5;
    case TP_COORDINATES_TF_HALF_PIXEL_FOR_NN:
        return ((double)at + 0.5) / s;
    default:
        return ((double)at + 0.5) / s - 0.5;
    }
}

static int64_t clamp_index(int64_t i, int64_t size) {
    return i < 0 ? 0 : i >= size ? size - 1 : i;
}

static int64_t nearest_index(double x, int64_t size, tp_rounding rounding) {
    double r;
    switch (rounding) {
    case TP_ROUNDING_ROUND_PREFER_CEIL:
        r = floor(x + 0.5);
        break;
    case TP_ROUNDING_FLOOR:
        r = floor(x);
        break;
    case TP_ROUNDING_CEIL:
        r = ceil(x);
        break;
    default:
        r = ceil(x - 0.5);
        break;
    }
    return clamp_index((int64_t)r, size);
}

/* The two neighbours of coordinate x and the weight of the second. */
typedef struct linear_tap {
    int64_t low, high;
    double weight;
} linear_tap;

static linear_tap linear_taps(double x, int64_t size) {
    double base = floor(x);
    linear_tap tap = {clamp_index((int64_t)base, size), clamp_index((int64_t)base + 1, size),
                      x - base};
    return tap;
}

tp_status tp_op_RESIZE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *x = inputs[0];
    int rank = x->ndim;
    int64_t in_h = x->shape[rank - 2], in_w = x->shape[rank - 1];
    int64_t out_h = out->shape[rank - 2], out_w = out->shape[rank - 1];
    int64_t planes = (in_h * in_w) != 0 ? x->numel / (in_h * in_w) : 0;
    size_t elem = tp_dtype_size(x->dtype);
    const char *src = x->data;
    char *dst = out->data;
    for (int64_t plane = 0; plane < planes; plane++) {
        int64_t in_base = plane * in_h * in_w, out_base = plane * out_h * out_w;
        for (int64_t oh = 0; oh < out_h; oh++) {
            double y = input_coordinate(oh, in_h, out_h, attrs->scale_h, attrs->coordinates);
            for (int64_t ow = 0; ow < out_w; ow++) {
                double xw = input_coordinate(ow, in_w, out_w, attrs->scale_w, attrs->coordinates);
                int64_t at = out_base + oh * out_w + ow;
                if (attrs->mode == TP_MODE_NEAREST) {
                    int64_t ih = nearest_index(y, in_h, attrs->rounding);
                    int64_t iw = nearest_index(xw, in_w, attrs->rounding);
                    memcpy(dst + (size_t)at * elem, src + (size_t)(in_base + ih * in_w + iw) * elem,
                           elem);
                    continue;
                }
                linear_tap th = linear_taps(y, in_h), tw = linear_taps(xw, in_w);
#define AT(h, w) tp_element_load_f64(src, x->dtype, in_base + (h)*in_w + (w))
                double top = AT(th.low, tw.low) * (1 - tw.weight) + AT(th.low, tw.high) * tw.weight;
                double bottom =
                    AT(th.high, tw.low) * (1 - tw.weight) + AT(th.high, tw.high) * tw.weight;
#undef AT
                tp_element_store_f64(dst, out->dtype, at,
                                     top * (1 - th.weight) + bottom * th.weight);
            }
        }
    }
    return TP_OK;
}
