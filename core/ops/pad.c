/* The pad op: grows (or, with negative amounts, crops) every axis by
 * `before` elements at its start and `after` at its end, as NumPy's pad and
 * ONNX Pad. The new elements are `value` (mode constant), the mirror image of
 * the axis without its edge element (reflect), copies of the edge element
 * (edge) or the elements of the other end, circularly (wrap). Owns nothing
 * else. */
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

static tp_status check_amounts(const tp_type *x, const tp_attrs *attrs) {
    char text[TP_DESCRIBE_MAX];
    if (attrs->npad_before != x->ndim || attrs->npad_after != x->ndim)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "pad: before and after need one entry per axis of x %s (got %d and "
                            "%d)",
                            tp_type_text(x, text), (int)attrs->npad_before, (int)attrs->npad_after);
    if (attrs->mode != TP_MODE_CONSTANT && attrs->mode != TP_MODE_REFLECT &&
        attrs->mode != TP_MODE_EDGE && attrs->mode != TP_MODE_WRAP)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "pad: mode must be constant, reflect, edge or wrap (got code %d)",
                            (int)attrs->mode);
    return TP_OK;
}

tp_status tp_op_PAD_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                          tp_type *out) {
    const tp_type *x = &inputs[0];
    char text[TP_DESCRIBE_MAX];
    TP_TRY(check_amounts(x, attrs));
    *out = *x;
    for (int d = 0; d < x->ndim; d++) {
        int64_t before = attrs->pad_before[d], after = attrs->pad_after[d], size = x->dims[d];
        if (before == 0 && after == 0) continue;
        if (TP_DIM_IS_SYMBOL(size))
            return tp_error_set(TP_ERR_SHAPE,
                                "pad: axis %d of x %s has a symbolic size; only axes of known "
                                "size can be padded",
                                d, tp_type_text(x, text));
        int64_t grown = size + before + after;
        if (grown < 0)
            return tp_error_set(TP_ERR_SHAPE,
                                "pad: before %lld and after %lld leave axis %d of x %s with a "
                                "negative size",
                                (long long)before, (long long)after, d, tp_type_text(x, text));
        int64_t reach = before > after ? before : after;
        if (attrs->mode == TP_MODE_REFLECT && reach > 0 && reach >= size)
            return tp_error_set(TP_ERR_SHAPE,
                                "pad: reflect mode pads axis %d of x %s by %lld, which needs the "
                                "axis to be longer than that",
                                d, tp_type_text(x, text), (long long)reach);
        if ((attrs->mode == TP_MODE_EDGE || attrs->mode == TP_MODE_WRAP) && reach > 0 && size == 0)
            return tp_error_set(TP_ERR_SHAPE,
                                "pad: edge and wrap modes cannot pad the empty "
                                "axis %d of x %s",
                                d, tp_type_text(x, text));
        out->dims[d] = grown;
    }
    return TP_OK;
}

/* The input index along an axis of `size` for output index `at` shifted by
 * `before`; -1 for a constant element. */
static int64_t source_index(int64_t at, int64_t before, int64_t size, tp_mode mode) {
    int64_t i = at - before;
    if (i >= 0 && i < size) return i;
    switch (mode) {
    case TP_MODE_REFLECT:
        return i < 0 ? -i : 2 * (size - 1) - i;
    case TP_MODE_EDGE:
        return i < 0 ? 0 : size - 1;
    case TP_MODE_WRAP:
        return (i % size + size) % size;
    default:
        return -1;
    }
}

tp_status tp_op_PAD_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_tensor *out) {
    const tp_tensor *x = inputs[0];
    int rank = x->ndim;
    size_t elem = tp_dtype_size(x->dtype);
    unsigned char fill[16] = {0};
    tp_element_store_f64(fill, x->dtype, 0, attrs->value);
    int64_t strides[TP_MAX_DIMS], position[TP_MAX_DIMS] = {0};
    if (rank > 0) strides[rank - 1] = 1;
    for (int d = rank - 2; d >= 0; d--) strides[d] = strides[d + 1] * x->shape[d + 1];
    const char *src = x->data;
    char *dst = out->data;
    for (int64_t flat = 0; flat < out->numel; flat++) {
        int64_t offset = 0;
        bool constant = false;
        for (int d = 0; d < rank && !constant; d++) {
            int64_t i = source_index(position[d], attrs->pad_before[d], x->shape[d], attrs->mode);
            if (i < 0)
                constant = true;
            else
                offset += i * strides[d];
        }
        memcpy(dst + (size_t)flat * elem, constant ? (const char *)fill : src + offset * elem,
               elem);
        for (int d = rank - 1; d >= 0; d--) {
            if (++position[d] < out->shape[d]) break;
            position[d] = 0;
        }
    }
    return TP_OK;
}
