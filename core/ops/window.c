/* Window attributes and output sizes of the sliding-window ops (window.h). */
#include "window.h"

#include <inttypes.h>

#include "../base/error.h"
#include "attr_info.h"
#include "op_args.h"

/* One list attribute: empty = `fallback` on every axis; otherwise exactly
 * `expected` entries, each >= `minimum`. */
static tp_status read_list(const char *op, const tp_type *x, const tp_attrs *attrs, tp_attr_key key,
                           int expected, int64_t fallback, int64_t minimum, int64_t *out) {
    int32_t count;
    const int64_t *values = tp_attrs_ints(attrs, key, &count);
    char text[TP_DESCRIBE_MAX], list[TP_DESCRIBE_MAX];
    if (count != 0 && count != expected)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: %s %s has %d entries, expected %d for the input %s%s", op,
                            tp_attr_key_name(key), tp_ints_text(values, count, list), count,
                            expected, tp_type_text(x, text),
                            key == TP_ATTR_PADS ? " (the begin of each spatial axis, then the end)"
                                                : " (one per spatial axis)");
    for (int i = 0; i < expected; i++) {
        out[i] = count ? values[i] : fallback;
        if (out[i] < minimum)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: %s %s: entry %d is %" PRId64 ", expected at least %" PRId64,
                                op, tp_attr_key_name(key), tp_ints_text(values, count, list), i,
                                out[i], minimum);
    }
    return TP_OK;
}

tp_status tp_window_read(const char *op, const tp_type *x, const tp_attrs *attrs,
                         const int64_t *kernel, bool transpose, tp_window *w) {
    char text[TP_DESCRIBE_MAX];
    if (x->ndim != 3 && x->ndim != 4)
        return tp_error_set(TP_ERR_SHAPE,
                            "%s: the input %s must be NCW (rank 3) or NCHW (rank 4), got rank %d",
                            op, tp_type_text(x, text), x->ndim);
    int s = x->ndim - 2, skip = TP_WINDOW_AXES - s;
    int64_t strides[TP_WINDOW_AXES], dilations[TP_WINDOW_AXES], pads[2 * TP_WINDOW_AXES];
    int64_t output_padding[TP_WINDOW_AXES];
    TP_TRY(read_list(op, x, attrs, TP_ATTR_STRIDES, s, 1, 1, strides));
    TP_TRY(read_list(op, x, attrs, TP_ATTR_DILATIONS, s, 1, 1, dilations));
    TP_TRY(read_list(op, x, attrs, TP_ATTR_PADS, 2 * s, 0, 0, pads));
    if (transpose) TP_TRY(read_list(op, x, attrs, TP_ATTR_OUTPUT_PADDING, s, 0, 0, output_padding));
    *w = (tp_window){.spatial = s};
    for (int a = 0; a < TP_WINDOW_AXES; a++) {
        w->in[a] = w->out[a] = w->kernel[a] = w->stride[a] = w->dilation[a] = 1;
        w->pad_begin[a] = w->pad_end[a] = w->output_padding[a] = 0;
    }
    for (int i = 0; i < s; i++) {
        int a = skip + i;
        w->in[a] = x->dims[2 + i];
        w->kernel[a] = kernel[i];
        w->stride[a] = strides[i];
        w->dilation[a] = dilations[i];
        w->pad_begin[a] = pads[i];
        w->pad_end[a] = pads[s + i];
        if (transpose) w->output_padding[a] = output_padding[i];
    }
    return TP_OK;
}

static int64_t extent(const tp_window *w, int a) {
    return w->dilation[a] * (w->kernel[a] - 1) + 1;
}

tp_status tp_window_forward_sizes(const char *op, const tp_type *x, bool ceil_mode, tp_window *w) {
    char text[TP_DESCRIBE_MAX];
    int skip = TP_WINDOW_AXES - w->spatial;
    for (int a = skip; a < TP_WINDOW_AXES; a++) {
        int64_t pads = w->pad_begin[a] + w->pad_end[a], span = extent(w, a);
        if (TP_DIM_IS_SYMBOL(w->in[a])) {
            if (w->stride[a] == 1 && pads == span - 1) {
                w->out[a] = w->in[a];
                continue;
            }
            return tp_error_set(TP_ERR_SHAPE,
                                "%s: spatial axis %d of the input %s is symbolic and the window "
                                "changes its size: bind the size first (only size-preserving "
                                "windows, stride 1 with pads = dilation * (kernel - 1), keep a "
                                "symbol)",
                                op, 2 + a - skip, tp_type_text(x, text));
        }
        int64_t room = w->in[a] + pads - span;
        if (room < 0)
            return tp_error_set(TP_ERR_SHAPE,
                                "%s: the window spans %" PRId64 " elements of spatial axis %d "
                                "(kernel %" PRId64 ", dilation %" PRId64 ") but the padded input "
                                "%s has %" PRId64 " there (size %" PRId64 " + pads %" PRId64 ")",
                                op, span, 2 + a - skip, w->kernel[a], w->dilation[a],
                                tp_type_text(x, text), w->in[a] + pads, w->in[a], pads);
        int64_t out = room / w->stride[a] + 1;
        if (ceil_mode && room % w->stride[a] != 0) {
            out++;
            /* a last window starting in the end padding is dropped (PyTorch, ONNX) */
            if ((out - 1) * w->stride[a] >= w->in[a] + w->pad_begin[a]) out--;
        }
        w->out[a] = out;
    }
    return TP_OK;
}

tp_status tp_window_transpose_sizes(const char *op, const tp_type *x, tp_window *w) {
    char text[TP_DESCRIBE_MAX];
    int skip = TP_WINDOW_AXES - w->spatial;
    for (int a = skip; a < TP_WINDOW_AXES; a++) {
        if (TP_DIM_IS_SYMBOL(w->in[a]))
            return tp_error_set(TP_ERR_SHAPE,
                                "%s: spatial axis %d of the input %s is symbolic: bind its size "
                                "first",
                                op, 2 + a - skip, tp_type_text(x, text));
        int64_t out = w->stride[a] * (w->in[a] - 1) + w->output_padding[a] + extent(w, a) -
                      w->pad_begin[a] - w->pad_end[a];
        if (out < 1)
            return tp_error_set(TP_ERR_SHAPE,
                                "%s: spatial axis %d of the result would have size %" PRId64
                                " (input %s, stride %" PRId64 ", kernel %" PRId64 ", pads %" PRId64
                                " + %" PRId64 "): reduce the pads",
                                op, 2 + a - skip, out, tp_type_text(x, text), w->stride[a],
                                w->kernel[a], w->pad_begin[a], w->pad_end[a]);
        w->out[a] = out;
    }
    return TP_OK;
}

void tp_window_result_type(const tp_window *w, const tp_type *x, int64_t channels, tp_dtype dtype,
                           tp_type *out) {
    *out = *x;
    out->dtype = dtype;
    out->dims[1] = channels;
    int skip = TP_WINDOW_AXES - w->spatial;
    for (int i = 0; i < w->spatial; i++) out->dims[2 + i] = w->out[skip + i];
}
