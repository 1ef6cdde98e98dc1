/* The indexing ops: gather (whole slices along an axis picked by an index
 * tensor, as NumPy's take / ONNX Gather) and gather_elements (one element
 * per index along an axis, as NumPy's take_along_axis / ONNX
 * GatherElements). Indices are i32 or i64, negative ones count from the end
 * of the axis; an index outside the axis is an error naming it and its
 * position. The result has the data's dtype. Owns nothing else. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "op_args.h"
#include "op_table.h"

static tp_status check_indices(const char *op, const tp_type *indices) {
    if (indices->dtype == TP_I32 || indices->dtype == TP_I64) return TP_OK;
    char text[TP_DESCRIBE_MAX];
    return tp_error_set(TP_ERR_DTYPE, "%s: indices must be i32 or i64, got %s", op,
                        tp_type_text(indices, text));
}

static int64_t index_at(const tp_tensor *indices, int64_t position) {
    return indices->dtype == TP_I64 ? ((const int64_t *)indices->data)[position]
                                    : ((const int32_t *)indices->data)[position];
}

/* Index `position` of `indices` resolved against an axis of `length`. */
static tp_status resolve_index(const char *op, const tp_tensor *indices, int64_t position, int axis,
                               int64_t length, int64_t *out) {
    int64_t index = index_at(indices, position);
    int64_t resolved = index < 0 ? index + length : index;
    if (resolved < 0 || resolved >= length)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: index %" PRId64 " (at position %" PRId64
                            " of the indices) is out of range for axis %d of size %" PRId64,
                            op, index, position, axis, length);
    *out = resolved;
    return TP_OK;
}

/* ---- gather ---------------------------------------------------------------------- */

tp_status tp_op_GATHER_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *data = &inputs[0], *indices = &inputs[1];
    char text[TP_DESCRIBE_MAX];
    TP_TRY(check_indices("gather", indices));
    if (data->ndim == 0)
        return tp_error_set(TP_ERR_SHAPE, "gather: the data %s must have at least one dimension",
                            tp_type_text(data, text));
    int axis;
    TP_TRY(tp_axis_normalize("gather", "axis", attrs->axis, data->ndim, data, &axis));
    int rank = data->ndim - 1 + indices->ndim;
    if (rank > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_SHAPE,
                            "gather: the result would have %d dimensions (at most %d)", rank,
                            TP_MAX_DIMS);
    out->dtype = data->dtype;
    out->ndim = rank;
    int at = 0;
    for (int d = 0; d < axis; d++) out->dims[at++] = data->dims[d];
    for (int d = 0; d < indices->ndim; d++) out->dims[at++] = indices->dims[d];
    for (int d = axis + 1; d < data->ndim; d++) out->dims[at++] = data->dims[d];
    return TP_OK;
}

tp_status tp_op_GATHER_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *data = inputs[0], *indices = inputs[1];
    int axis = (int)(attrs->axis < 0 ? attrs->axis + data->ndim : attrs->axis);
    int64_t outer = 1, inner = 1, length = data->shape[axis], count = indices->numel;
    for (int d = 0; d < axis; d++) outer *= data->shape[d];
    for (int d = axis + 1; d < data->ndim; d++) inner *= data->shape[d];
    size_t row = (size_t)inner * tp_dtype_size(data->dtype);
    const char *src = data->data;
    char *dst = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < count; j++) {
            int64_t index = 0;
            TP_TRY(resolve_index("gather", indices, j, axis, length, &index));
            if (row)
                memcpy(dst + (size_t)(o * count + j) * row,
                       src + (size_t)(o * length + index) * row, row);
        }
    return TP_OK;
}

/* ---- gather_elements ---------------------------------------------------------------- */

tp_status tp_op_GATHER_ELEMENTS_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                      tp_type *out) {
    const tp_type *data = &inputs[0], *indices = &inputs[1];
    char data_text[TP_DESCRIBE_MAX], indices_text[TP_DESCRIBE_MAX];
    TP_TRY(check_indices("gather_elements", indices));
    if (data->ndim == 0 || indices->ndim != data->ndim)
        return tp_error_set(TP_ERR_SHAPE,
                            "gather_elements: indices %s must have the rank of the data %s (at "
                            "least 1)",
                            tp_type_text(indices, indices_text), tp_type_text(data, data_text));
    int axis;
    TP_TRY(tp_axis_normalize("gather_elements", "axis", attrs->axis, data->ndim, data, &axis));
    for (int d = 0; d < data->ndim; d++) {
        if (d == axis) continue;
        int64_t want = indices->dims[d], have = data->dims[d];
        bool fits = TP_DIM_IS_SYMBOL(want) || TP_DIM_IS_SYMBOL(have) ? want == have : want <= have;
        if (!fits)
            return tp_error_set(TP_ERR_SHAPE,
                                "gather_elements: dimension %d of the indices %s exceeds the "
                                "data's %s",
                                d, tp_type_text(indices, indices_text),
                                tp_type_text(data, data_text));
    }
    *out = *indices;
    out->dtype = data->dtype;
    return TP_OK;
}

tp_status tp_op_GATHER_ELEMENTS_kernel(tp_tensor *const *inputs, int num_inputs,
                                       const tp_attrs *attrs, tp_tensor *out) {
    const tp_tensor *data = inputs[0], *indices = inputs[1];
    int rank = data->ndim;
    int axis = (int)(attrs->axis < 0 ? attrs->axis + rank : attrs->axis);
    int64_t strides[TP_MAX_DIMS], position[TP_MAX_DIMS] = {0};
    strides[rank - 1] = 1;
    for (int d = rank - 2; d >= 0; d--) strides[d] = strides[d + 1] * data->shape[d + 1];
    size_t elem = tp_dtype_size(data->dtype);
    const char *src = data->data;
    char *dst = out->data;
    for (int64_t flat = 0; flat < indices->numel; flat++) {
        int64_t index = 0;
        TP_TRY(resolve_index("gather_elements", indices, flat, axis, data->shape[axis], &index));
        int64_t offset = 0;
        for (int d = 0; d < rank; d++) offset += (d == axis ? index : position[d]) * strides[d];
        memcpy(dst + (size_t)flat * elem, src + (size_t)offset * elem, elem);
        for (int d = rank - 1; d >= 0; d--) { /* next position in C order */
            if (++position[d] < indices->shape[d]) break;
            position[d] = 0;
        }
    }
    return TP_OK;
}
