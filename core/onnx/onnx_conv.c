/* ONNX's sliding-window ops onto the op table: Conv and ConvTranspose onto
 * conv and conv_transpose, MaxPool and AveragePool onto max_pool and
 * avg_pool, GlobalAveragePool and GlobalMaxPool onto mean and max over the
 * spatial axes with keepdim (exact, and every backend that runs reductions
 * runs them). auto_pad (SAME_UPPER, SAME_LOWER, VALID) and ConvTranspose's
 * output_shape are resolved here to explicit pads (and output_padding), from
 * the input's spatial sizes, which must then be known at import time: the
 * ops have no auto_pad attribute. 1-D and 2-D only; 3-D is refused as
 * unsupported. */
#include <inttypes.h>
#include <string.h>

#include "base/error.h"
#include "onnx_internal.h"

#define SPATIAL_MAX 2

typedef struct window_attrs {
    int spatial;
    int64_t kernel[SPATIAL_MAX], strides[SPATIAL_MAX], dilations[SPATIAL_MAX];
    int64_t pads[2 * SPATIAL_MAX];
    const char *auto_pad;
} window_attrs;

static tp_type input_type(const onnx_importer *im, onnx_handle handle) {
    tp_type type;
    onnx_value_type(im, handle, &type);
    return type;
}

/* A list attribute with `expected` entries, or `fallback` on each when absent. */
static tp_status read_list(onnx_importer *im, const char *name, int expected, int64_t fallback,
                           int64_t *out) {
    int64_t values[2 * SPATIAL_MAX + 1];
    int count;
    TP_TRY(onnx_attr_ints(im, name, values, 2 * SPATIAL_MAX + 1, &count));
    if (count < 0) {
        for (int i = 0; i < expected; i++) out[i] = fallback;
        return TP_OK;
    }
    if (count != expected)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "attribute '%s' has %d entries, expected %d", name, count, expected);
    memcpy(out, values, (size_t)expected * sizeof *out);
    return TP_OK;
}

/* The spatial rank of `x` (1 or 2), or an unsupported error for others. */
static tp_status spatial_rank(onnx_importer *im, const tp_type *x, int *out) {
    if (x->ndim == 3 || x->ndim == 4) {
        *out = x->ndim - 2;
        return TP_OK;
    }
    if (x->ndim > 4)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "%d-D windows are not supported (only 1-D and 2-D: NCW, NCHW)",
                               x->ndim - 2);
    return onnx_node_error(im, TP_ERR_SHAPE, "the input must be NCW or NCHW, got rank %d", x->ndim);
}

static tp_status read_window(onnx_importer *im, const tp_type *x, bool kernel_required,
                             window_attrs *w) {
    TP_TRY(spatial_rank(im, x, &w->spatial));
    int s = w->spatial;
    int count;
    TP_TRY(onnx_attr_ints(im, "kernel_shape", w->kernel, SPATIAL_MAX, &count));
    if (count < 0 && kernel_required)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' is required");
    if (count >= 0 && count != s)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "attribute 'kernel_shape' has %d entries, expected %d", count, s);
    if (count < 0)
        for (int i = 0; i < s; i++) w->kernel[i] = 0; /* from the weight */
    TP_TRY(read_list(im, "strides", s, 1, w->strides));
    TP_TRY(read_list(im, "dilations", s, 1, w->dilations));
    TP_TRY(read_list(im, "pads", 2 * s, 0, w->pads));
    TP_TRY(onnx_attr_string(im, "auto_pad", "NOTSET", &w->auto_pad));
    return TP_OK;
}

/* auto_pad SAME_* / VALID of a forward window over `x` as explicit pads:
 * SAME makes out = ceil(in / stride), the extra pad at the end (UPPER) or
 * the beginning (LOWER). */
static tp_status resolve_auto_pad(onnx_importer *im, const tp_type *x, window_attrs *w) {
    bool upper = strcmp(w->auto_pad, "SAME_UPPER") == 0;
    bool lower = strcmp(w->auto_pad, "SAME_LOWER") == 0;
    if (strcmp(w->auto_pad, "NOTSET") == 0) return TP_OK;
    if (strcmp(w->auto_pad, "VALID") == 0) {
        for (int i = 0; i < 2 * w->spatial; i++) w->pads[i] = 0;
        return TP_OK;
    }
    if (!upper && !lower)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                               w->auto_pad);
    for (int i = 0; i < w->spatial; i++) {
        int64_t in = x->dims[2 + i];
        if (TP_DIM_IS_SYMBOL(in))
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "auto_pad %s needs the input's sizes at import time, but "
                                   "spatial dimension %d is the symbol '%s'",
                                   w->auto_pad, 2 + i, tp_graph_symbol_name(im->graph, in));
        int64_t out = (in + w->strides[i] - 1) / w->strides[i];
        int64_t span = w->dilations[i] * (w->kernel[i] - 1) + 1;
        int64_t total = (out - 1) * w->strides[i] + span - in;
        if (total < 0) total = 0;
        int64_t small = total / 2, large = total - small;
        w->pads[i] = upper ? small : large;
        w->pads[w->spatial + i] = upper ? large : small;
    }
    return TP_OK;
}

static void set_list(int64_t *field, int32_t *count, const int64_t *values, int n) {
    memcpy(field, values, (size_t)n * sizeof *values);
    *count = n;
}

static void window_to_attrs(const window_attrs *w, tp_attrs *attrs) {
    set_list(attrs->strides, &attrs->nstrides, w->strides, w->spatial);
    set_list(attrs->dilations, &attrs->ndilations, w->dilations, w->spatial);
    set_list(attrs->pads, &attrs->npads, w->pads, 2 * w->spatial);
}

static tp_status emit_result(onnx_importer *im, const char *op, const onnx_handle *operands,
                             int count, const tp_attrs *attrs) {
    onnx_handle result;
    const char *name = im->node->n_output > 0 ? im->node->output[0] : NULL;
    TP_TRY(onnx_emit(im, op, operands, count, attrs, name, &result));
    return name ? onnx_bind(im, name, result) : TP_OK;
}

/* Conv and ConvTranspose's operands: X, W and the optional B. */
static tp_status conv_operands(onnx_importer *im, onnx_handle *operands, int *count, tp_type *x,
                               tp_type *weight) {
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    operands[2] = onnx_input(im, 2);
    *count = operands[2] == ONNX_NO_HANDLE ? 2 : 3;
    *x = input_type(im, operands[0]);
    *weight = input_type(im, operands[1]);
    return TP_OK;
}

/* The kernel sizes come from the weight; a kernel_shape attribute must agree. */
static tp_status kernel_from_weight(onnx_importer *im, const tp_type *weight, window_attrs *w) {
    if (weight->ndim != w->spatial + 2)
        return onnx_node_error(im, TP_ERR_SHAPE, "the weight has rank %d, expected %d",
                               weight->ndim, w->spatial + 2);
    for (int i = 0; i < w->spatial; i++) {
        int64_t size = weight->dims[2 + i];
        if (w->kernel[i] != 0 && w->kernel[i] != size)
            return onnx_node_error(im, TP_ERR_SHAPE,
                                   "kernel_shape[%d] = %" PRId64 " disagrees with the weight's "
                                   "kernel size %" PRId64,
                                   i, w->kernel[i], size);
        w->kernel[i] = size;
    }
    return TP_OK;
}

tp_status onnx_convert_conv(onnx_importer *im) {
    onnx_handle operands[3];
    int count;
    tp_type x, weight;
    window_attrs w;
    TP_TRY(conv_operands(im, operands, &count, &x, &weight));
    TP_TRY(read_window(im, &x, false, &w));
    TP_TRY(kernel_from_weight(im, &weight, &w));
    TP_TRY(resolve_auto_pad(im, &x, &w));
    tp_attrs attrs = TP_ATTRS_INIT;
    window_to_attrs(&w, &attrs);
    TP_TRY(onnx_attr_int(im, "group", 1, &attrs.group));
    return emit_result(im, "conv", operands, count, &attrs);
}

/* ConvTranspose: output_shape (or auto_pad SAME, which asks for in * stride)
 * fixes the total padding; a negative total (a larger result) goes into
 * output_padding. As the ONNX spec says, SAME_UPPER puts the smaller half
 * of an odd total first, every other auto_pad (NOTSET included) the larger. */
tp_status onnx_convert_conv_transpose(onnx_importer *im) {
    onnx_handle operands[3];
    int count, shape_count;
    tp_type x, weight;
    window_attrs w;
    int64_t output_padding[SPATIAL_MAX], output_shape[SPATIAL_MAX + 2];
    TP_TRY(conv_operands(im, operands, &count, &x, &weight));
    TP_TRY(read_window(im, &x, false, &w));
    TP_TRY(kernel_from_weight(im, &weight, &w));
    TP_TRY(read_list(im, "output_padding", w.spatial, 0, output_padding));
    TP_TRY(onnx_attr_ints(im, "output_shape", output_shape, SPATIAL_MAX + 2, &shape_count));
    bool same = strncmp(w.auto_pad, "SAME", 4) == 0;
    if (strcmp(w.auto_pad, "VALID") == 0)
        for (int i = 0; i < 2 * w.spatial; i++) w.pads[i] = 0;
    if (shape_count >= 0 || same) {
        const int64_t *wanted = shape_count == w.spatial + 2 ? output_shape + 2 : output_shape;
        if (shape_count >= 0 && shape_count != w.spatial && shape_count != w.spatial + 2)
            return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                                   "output_shape has %d entries, expected %d", shape_count,
                                   w.spatial);
        for (int i = 0; i < w.spatial; i++) {
            int64_t in = x.dims[2 + i];
            if (TP_DIM_IS_SYMBOL(in))
                return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                       "output_shape / auto_pad needs the input's sizes at import "
                                       "time, but spatial dimension %d is a symbol",
                                       2 + i);
            int64_t out = shape_count >= 0 ? wanted[i] : in * w.strides[i];
            int64_t total = w.strides[i] * (in - 1) + output_padding[i] +
                            (w.kernel[i] - 1) * w.dilations[i] + 1 - out;
            if (total < 0) {
                output_padding[i] -= total;
                total = 0;
            }
            int64_t small = total / 2, large = total - small;
            bool upper = strcmp(w.auto_pad, "SAME_UPPER") == 0; /* else the larger half first */
            w.pads[i] = upper ? small : large;
            w.pads[w.spatial + i] = upper ? large : small;
        }
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    window_to_attrs(&w, &attrs);
    set_list(attrs.output_padding, &attrs.noutput_padding, output_padding, w.spatial);
    TP_TRY(onnx_attr_int(im, "group", 1, &attrs.group));
    return emit_result(im, "conv_transpose", operands, count, &attrs);
}

static tp_status pool(onnx_importer *im, const char *op) {
    onnx_handle x;
    window_attrs w;
    int64_t ceil_mode;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = input_type(im, x);
    TP_TRY(read_window(im, &type, true, &w));
    TP_TRY(resolve_auto_pad(im, &type, &w));
    TP_TRY(onnx_attr_int(im, "ceil_mode", 0, &ceil_mode));
    tp_attrs attrs = TP_ATTRS_INIT;
    window_to_attrs(&w, &attrs);
    set_list(attrs.kernel_shape, &attrs.nkernel_shape, w.kernel, w.spatial);
    attrs.ceil_mode = ceil_mode != 0;
    if (strcmp(op, "avg_pool") == 0) {
        int64_t include_pad;
        TP_TRY(onnx_attr_int(im, "count_include_pad", 0, &include_pad));
        attrs.count_include_pad = include_pad != 0;
    } else {
        if (im->node->n_output > 1 && im->node->output[1][0])
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "the Indices output of MaxPool is not supported");
    }
    return emit_result(im, op, &x, 1, &attrs);
}

tp_status onnx_convert_max_pool(onnx_importer *im) {
    return pool(im, "max_pool");
}

tp_status onnx_convert_average_pool(onnx_importer *im) {
    return pool(im, "avg_pool");
}

/* GlobalAveragePool / GlobalMaxPool: `reduction` over axes 2.. with keepdim. */
static tp_status global_pool(onnx_importer *im, const char *reduction) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = input_type(im, x);
    if (type.ndim < 3)
        return onnx_node_error(im, TP_ERR_SHAPE,
                               "the input must be [N, C, spatial...] (rank 3 or more), got rank %d",
                               type.ndim);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = type.ndim - 2;
    for (int d = 2; d < type.ndim; d++) attrs.axes[d - 2] = d;
    attrs.keepdim = true;
    return emit_result(im, reduction, &x, 1, &attrs);
}

tp_status onnx_convert_global_average_pool(onnx_importer *im) {
    return global_pool(im, "mean");
}

tp_status onnx_convert_global_max_pool(onnx_importer *im) {
    return global_pool(im, "max");
}
