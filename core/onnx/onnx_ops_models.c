/* ONNX ops that the test models need beyond onnx_ops.c's: Pad, Split, TopK,
 * CumSum, Resize, BatchNormalization and Trilu, onto the table's pad, slice,
 * topk / topk_indices, cumsum, resize, batch_norm and where. Their import-time
 * inputs (pads, split sizes, K, axis, scales, sizes, k) must be constants.
 * Split lowers to one slice per output (the IR has one result per node and
 * a slice is an exact view); TopK's two outputs are topk and topk_indices,
 * which select the same elements. Owns nothing but these converters; the
 * table that names them is onnx_ops.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "onnx_internal.h"

static const char *output_name(const onnx_importer *im, int index) {
    return index < (int)im->node->n_output ? im->node->output[index] : NULL;
}

static bool output_used(const onnx_importer *im, int index) {
    const char *name = output_name(im, index);
    return name && name[0];
}

static tp_status emit_into(onnx_importer *im, int index, const char *op,
                           const onnx_handle *operands, int count, const tp_attrs *attrs) {
    onnx_handle result;
    TP_TRY(onnx_emit(im, op, operands, count, attrs, output_name(im, index), &result));
    return onnx_bind(im, output_name(im, index), result); /* none past n_output */
}

static tp_type type_of(const onnx_importer *im, onnx_handle handle) {
    tp_type type;
    onnx_value_type(im, handle, &type);
    return type;
}

static tp_status axis_of(onnx_importer *im, int64_t axis, int rank, int *out) {
    if (axis < -rank || axis >= rank || rank == 0)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "axis %" PRId64 " is out of range for rank %d", axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return TP_OK;
}

/* ---- Pad ---- */

tp_status onnx_convert_pad(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    int rank = type.ndim;
    const char *mode_text;
    TP_TRY(onnx_attr_string(im, "mode", "constant", &mode_text));
    tp_attrs attrs = TP_ATTRS_INIT;
    if (strcmp(mode_text, "constant") == 0)
        attrs.mode = TP_MODE_CONSTANT;
    else if (strcmp(mode_text, "reflect") == 0)
        attrs.mode = TP_MODE_REFLECT;
    else if (strcmp(mode_text, "edge") == 0)
        attrs.mode = TP_MODE_EDGE;
    else if (strcmp(mode_text, "wrap") == 0)
        attrs.mode = TP_MODE_WRAP;
    else
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "mode '%s' is not supported (constant, reflect, edge and wrap are)",
                               mode_text);
    int64_t pads[2 * TP_MAX_DIMS], axes[TP_MAX_DIMS];
    int count, axes_count = -1;
    if (im->opset < 11) {
        TP_TRY(onnx_attr_ints(im, "pads", pads, 2 * TP_MAX_DIMS, &count));
        TP_TRY(onnx_attr_float(im, "value", 0.0, &attrs.value));
    } else {
        TP_TRY(onnx_constant_ints(im, 1, "pads", pads, 2 * TP_MAX_DIMS, &count));
        if (onnx_input(im, 2) != ONNX_NO_HANDLE)
            TP_TRY(onnx_constant_scalar(im, 2, "constant_value", &attrs.value));
        TP_TRY(onnx_constant_ints(im, 3, "axes", axes, TP_MAX_DIMS, &axes_count));
    }
    int padded = axes_count >= 0 ? axes_count : rank;
    if (count != 2 * padded)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                               "pads has %d entries; it needs 2 per padded axis (%d)", count,
                               2 * padded);
    attrs.npad_before = attrs.npad_after = rank;
    for (int i = 0; i < padded; i++) {
        int axis = i;
        if (axes_count >= 0) TP_TRY(axis_of(im, axes[i], rank, &axis));
        attrs.pad_before[axis] = pads[i];
        attrs.pad_after[axis] = pads[padded + i];
    }
    return emit_into(im, 0, "pad", &x, 1, &attrs);
}

/* ---- Split ---- */

tp_status onnx_convert_split(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    int64_t axis_attr, num_outputs, sizes[TP_ONNX_MAX_CONCAT];
    int axis = 0, count = -1, parts = (int)im->node->n_output;
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis_attr));
    TP_TRY(axis_of(im, axis_attr, type.ndim, &axis));
    if (parts > TP_ONNX_MAX_CONCAT)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "%d outputs (at most %d)", parts,
                               TP_ONNX_MAX_CONCAT);
    if (im->opset < 13)
        TP_TRY(onnx_attr_ints(im, "split", sizes, TP_ONNX_MAX_CONCAT, &count));
    else
        TP_TRY(onnx_constant_ints(im, 1, "split", sizes, TP_ONNX_MAX_CONCAT, &count));
    int64_t length = type.dims[axis];
    if (count < 0) {
        if (TP_DIM_IS_SYMBOL(length))
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "splitting the symbolic axis %d needs the split sizes", axis);
        TP_TRY(onnx_attr_int(im, "num_outputs", parts, &num_outputs));
        if (num_outputs != parts || parts < 1)
            return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                                   "num_outputs %" PRId64 " but the node has %d outputs",
                                   num_outputs, parts);
        /* opset 18: parts of ceil(length / n), the last one smaller */
        int64_t part = (length + parts - 1) / parts;
        if (im->opset < 18 && length % parts != 0)
            return onnx_node_error(im, TP_ERR_SHAPE,
                                   "axis %d of size %" PRId64 " does not split into %d equal "
                                   "parts",
                                   axis, length, parts);
        for (int i = 0; i < parts; i++) {
            int64_t begin = i * part, end = begin + part < length ? begin + part : length;
            sizes[i] = end > begin ? end - begin : 0;
        }
        count = parts;
    }
    if (count != parts)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "split has %d sizes for %d outputs", count,
                               parts);
    int64_t start = 0;
    for (int i = 0; i < parts; i++) {
        if (sizes[i] < 0)
            return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "split size %d is negative", i);
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = axis;
        attrs.start = start;
        attrs.stop = start + sizes[i];
        start += sizes[i];
        if (output_used(im, i)) TP_TRY(emit_into(im, i, "slice", &x, 1, &attrs));
    }
    if (!TP_DIM_IS_SYMBOL(length) && start != length)
        return onnx_node_error(im, TP_ERR_SHAPE,
                               "the split sizes add up to %" PRId64 ", axis %d has %" PRId64, start,
                               axis, length);
    return TP_OK;
}

/* ---- TopK ---- */

tp_status onnx_convert_topk(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_attrs attrs = TP_ATTRS_INIT;
    int64_t largest;
    if (im->opset < 10) {
        TP_TRY(onnx_attr_int(im, "k", 0, &attrs.k));
    } else {
        double k;
        TP_TRY(onnx_constant_scalar(im, 1, "K", &k));
        attrs.k = (int64_t)k;
    }
    TP_TRY(onnx_attr_int(im, "axis", -1, &attrs.axis));
    TP_TRY(onnx_attr_int(im, "largest", 1, &largest));
    attrs.largest = largest != 0;
    /* sorted=0 lets any order through; the sorted one is such an order */
    if (output_used(im, 0)) TP_TRY(emit_into(im, 0, "topk", &x, 1, &attrs));
    if (output_used(im, 1)) TP_TRY(emit_into(im, 1, "topk_indices", &x, 1, &attrs));
    return TP_OK;
}

/* ---- CumSum ---- */

tp_status onnx_convert_cumsum(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_attrs attrs = TP_ATTRS_INIT;
    double axis;
    int64_t exclusive, reverse;
    TP_TRY(onnx_constant_scalar(im, 1, "axis", &axis));
    TP_TRY(onnx_attr_int(im, "exclusive", 0, &exclusive));
    TP_TRY(onnx_attr_int(im, "reverse", 0, &reverse));
    attrs.axis = (int64_t)axis;
    attrs.exclusive = exclusive != 0;
    attrs.reverse = reverse != 0;
    return emit_into(im, 0, "cumsum", &x, 1, &attrs);
}

/* ---- Resize ---- */

static tp_status resize_rule(onnx_importer *im, tp_attrs *attrs) {
    static const char *const modes[] = {"nearest", "linear"};
    static const char *const coordinates[] = {"half_pixel",           "asymmetric",
                                              "align_corners",        "pytorch_half_pixel",
                                              "half_pixel_symmetric", "tf_half_pixel_for_nn"};
    static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};
    const char *text;
    char mode[64];
    TP_TRY(onnx_attr_string(im, "mode", "nearest", &text));
    snprintf(mode, sizeof mode, "%s", text);
    attrs->mode = strcmp(mode, "linear") == 0 ? TP_MODE_LINEAR : TP_MODE_NEAREST;
    if (strcmp(mode, modes[0]) != 0 && strcmp(mode, modes[1]) != 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "mode '%s' is not supported (nearest and linear are)", mode);
    TP_TRY(onnx_attr_string(im, "coordinate_transformation_mode", "half_pixel", &text));
    int found = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(text, coordinates[i]) == 0) found = i;
    if (found < 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "coordinate_transformation_mode '%s' is not supported "
                               "(half_pixel, asymmetric, align_corners, pytorch_half_pixel, "
                               "half_pixel_symmetric and tf_half_pixel_for_nn are)",
                               text);
    attrs->coordinates = (tp_coordinates)found;
    TP_TRY(onnx_attr_string(im, "nearest_mode", "round_prefer_floor", &text));
    found = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(text, roundings[i]) == 0) found = i;
    if (found < 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", text);
    attrs->rounding = (tp_rounding)found;
    int64_t antialias, exclude_outside;
    TP_TRY(onnx_attr_int(im, "antialias", 0, &antialias));
    TP_TRY(onnx_attr_int(im, "exclude_outside", 0, &exclude_outside));
    if (antialias || exclude_outside)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "antialias=%" PRId64 " and exclude_outside=%" PRId64
                               " are not supported (both must be 0)",
                               antialias, exclude_outside);
    return TP_OK;
}

/* keep_aspect_ratio_policy: 0 stretch, -1 not_larger, 1 not_smaller. */
static tp_status aspect_policy(onnx_importer *im, int *out) {
    const char *text;
    TP_TRY(onnx_attr_string(im, "keep_aspect_ratio_policy", "stretch", &text));
    *out = strcmp(text, "not_larger") == 0 ? -1 : strcmp(text, "not_smaller") == 0 ? 1 : 0;
    if (*out == 0 && strcmp(text, "stretch") != 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "keep_aspect_ratio_policy '%s' is not supported (stretch, "
                               "not_larger and not_smaller are)",
                               text);
    return TP_OK;
}

/* Reads the scales (as floats) of constant input `index`; -1 when absent. */
static tp_status constant_floats(onnx_importer *im, int index, double *out, int *count) {
    onnx_handle handle = onnx_input(im, index);
    *count = -1;
    if (handle == ONNX_NO_HANDLE) return TP_OK;
    const tp_tensor *tensor = im->values[handle].constant;
    if (!tensor) tensor = im->values[handle].known;
    if (!tensor)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "input %d ('%s', the scales) must be known at import time", index,
                               im->node->input[index]);
    int64_t numel = tp_tensor_numel(tensor);
    if (numel > TP_MAX_DIMS)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "the scales have %" PRId64 " values", numel);
    for (int64_t i = 0; i < numel; i++) out[i] = tp_tensor_get_f64(tensor, i);
    *count = (int)numel;
    return TP_OK;
}

tp_status onnx_convert_resize(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    int rank = type.ndim;
    tp_attrs attrs = TP_ATTRS_INIT;
    TP_TRY(resize_rule(im, &attrs));
    double scales[TP_MAX_DIMS];
    int64_t sizes[TP_MAX_DIMS], axes[TP_MAX_DIMS];
    int scales_count, sizes_count = -1, axes_count = -1;
    TP_TRY(constant_floats(im, im->opset < 11 ? 1 : 2, scales, &scales_count));
    if (im->opset >= 11)
        TP_TRY(onnx_constant_ints(im, 3, "sizes", sizes, TP_MAX_DIMS, &sizes_count));
    TP_TRY(onnx_attr_ints(im, "axes", axes, TP_MAX_DIMS, &axes_count));
    if (scales_count == 0) scales_count = -1; /* an empty scales input stands for none */
    if ((scales_count < 0) == (sizes_count < 0))
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                               "exactly one of scales and sizes must be given");
    int given = scales_count >= 0 ? scales_count : sizes_count;
    int listed = axes_count >= 0 ? axes_count : rank;
    if (given != listed || rank < 2)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                               "%d scales or sizes for %d axes (input rank %d, at least 2)", given,
                               listed, rank);
    int policy;
    TP_TRY(aspect_policy(im, &policy));
    double axis_scale[TP_MAX_DIMS], common = 0.0;
    int64_t axis_size[TP_MAX_DIMS];
    for (int d = 0; d < rank; d++) axis_scale[d] = 1.0, axis_size[d] = type.dims[d];
    if (policy != 0 && sizes_count >= 0) {
        /* one scale for every listed axis: the smallest (not_larger) or the
         * largest (not_smaller) of sizes / input sizes; sizes round from it */
        for (int i = 0; i < given; i++) {
            int axis = i;
            if (axes_count >= 0) TP_TRY(axis_of(im, axes[i], rank, &axis));
            if (TP_DIM_IS_SYMBOL(type.dims[axis]))
                return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                       "keep_aspect_ratio_policy needs axis %d's size", axis);
            double ratio = (double)sizes[i] / (double)type.dims[axis];
            if (i == 0 || (policy < 0 ? ratio < common : ratio > common)) common = ratio;
        }
        for (int i = 0; i < given; i++) {
            int axis = i;
            if (axes_count >= 0) TP_TRY(axis_of(im, axes[i], rank, &axis));
            scales[i] = common;
        }
        scales_count = given;
        sizes_count = -1;
    }
    for (int i = 0; i < given; i++) {
        int axis = i;
        if (axes_count >= 0) TP_TRY(axis_of(im, axes[i], rank, &axis));
        if (scales_count >= 0) {
            axis_scale[axis] = scales[i];
            if (TP_DIM_IS_SYMBOL(type.dims[axis])) {
                if (scales[i] != 1.0)
                    return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                           "scaling the symbolic axis %d is not supported", axis);
                continue;
            }
            double length = (double)type.dims[axis] * scales[i];
            axis_size[axis] = (int64_t)(policy != 0 ? nearbyint(length) : floor(length));
        } else {
            axis_size[axis] = sizes[i];
            axis_scale[axis] = 0.0;
        }
    }
    for (int d = 0; d < rank - 2; d++)
        if (axis_size[d] != type.dims[d])
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "resizing axis %d is not supported (only the last two axes, "
                                   "H and W, change)",
                                   d);
    attrs.shape_ndim = rank;
    for (int d = 0; d < rank; d++) attrs.shape[d] = d < rank - 2 ? -1 : axis_size[d];
    attrs.scale_h = axis_scale[rank - 2] == 1.0 && scales_count < 0 ? 0.0 : axis_scale[rank - 2];
    attrs.scale_w = axis_scale[rank - 1] == 1.0 && scales_count < 0 ? 0.0 : axis_scale[rank - 1];
    return emit_into(im, 0, "resize", &x, 1, &attrs);
}

/* ---- BatchNormalization ---- */

tp_status onnx_convert_batch_norm(onnx_importer *im) {
    onnx_handle operands[5];
    for (int i = 0; i < 5; i++) TP_TRY(onnx_required_input(im, i, &operands[i]));
    int64_t training;
    TP_TRY(onnx_attr_int(im, "training_mode", 0, &training));
    if (training || output_used(im, 1) || output_used(im, 2))
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "training mode (training_mode=1 or the running mean/var "
                               "outputs) is not supported: export the model in eval mode");
    tp_attrs attrs = TP_ATTRS_INIT;
    TP_TRY(onnx_attr_float(im, "epsilon", 1e-5, &attrs.eps));
    return emit_into(im, 0, "batch_norm", operands, 5, &attrs);
}

/* ---- Trilu ---- */

/* arange(0, length) as i64, reshaped to `shape` (2 entries). */
static tp_status positions(onnx_importer *im, int64_t length, int64_t rows, int64_t cols,
                           onnx_handle *out) {
    tp_attrs range = TP_ATTRS_INIT, shape = TP_ATTRS_INIT;
    range.range_stop = (double)length;
    range.dtype = TP_I64;
    onnx_handle line;
    TP_TRY(onnx_emit(im, "arange", NULL, 0, &range, NULL, &line));
    shape.shape_ndim = 2;
    shape.shape[0] = rows;
    shape.shape[1] = cols;
    return onnx_emit(im, "reshape", &line, 1, &shape, NULL, out);
}

/* Trilu keeps x where column - row >= k (upper) or <= k (lower), else 0. */
tp_status onnx_convert_trilu(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    int64_t upper;
    double k = 0.0;
    TP_TRY(onnx_attr_int(im, "upper", 1, &upper));
    if (onnx_input(im, 1) != ONNX_NO_HANDLE) TP_TRY(onnx_constant_scalar(im, 1, "k", &k));
    if (type.ndim < 2) return onnx_node_error(im, TP_ERR_SHAPE, "the input needs at least 2 axes");
    int64_t rows = type.dims[type.ndim - 2], cols = type.dims[type.ndim - 1];
    if (TP_DIM_IS_SYMBOL(rows) || TP_DIM_IS_SYMBOL(cols))
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "the last two axes must have sizes known at import time");
    onnx_handle row, col, diagonal, offset, mask, zero, operands[3];
    TP_TRY(positions(im, rows, rows, 1, &row));
    TP_TRY(positions(im, cols, 1, cols, &col));
    operands[0] = col;
    operands[1] = row;
    TP_TRY(onnx_emit(im, "sub", operands, 2, NULL, NULL, &diagonal));
    tp_attrs full = TP_ATTRS_INIT;
    full.dtype = TP_I64;
    full.value = k;
    TP_TRY(onnx_emit(im, "full", NULL, 0, &full, NULL, &offset));
    operands[0] = diagonal;
    operands[1] = offset;
    TP_TRY(onnx_emit(im, upper ? "ge" : "le", operands, 2, NULL, NULL, &mask));
    full.dtype = type.dtype;
    full.value = 0.0;
    TP_TRY(onnx_emit(im, "full", NULL, 0, &full, NULL, &zero));
    operands[0] = mask;
    operands[1] = x;
    operands[2] = zero;
    return emit_into(im, 0, "where", operands, 3, NULL);
}
