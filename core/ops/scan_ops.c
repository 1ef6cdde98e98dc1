/* Ops along one axis that look at the whole axis: cumsum (running sums,
 * optionally exclusive and/or from the end, as ONNX CumSum and NumPy cumsum)
 * and topk / topk_indices (the k largest or smallest elements along the axis
 * and their positions, in order, ties going to the lower position, as ONNX
 * TopK). topk and topk_indices take the same attributes and select the same
 * elements, so a model's two TopK outputs are these two nodes. NaN ranks
 * above every number. Owns nothing else. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

static tp_status refuse_bool(const char *op, const tp_type *x) {
    char text[TP_DESCRIBE_MAX];
    if (x->dtype != TP_BOOL) return TP_OK;
    return tp_error_set(TP_ERR_DTYPE, "%s: x %s must be numeric (cast bool first)", op,
                        tp_type_text(x, text));
}

/* outer * length * inner elements: the axis splits x's C order. */
typedef struct axis_split {
    int64_t outer, length, inner;
} axis_split;

static axis_split split_at(const tp_tensor *x, int axis) {
    axis_split s = {1, x->shape[axis], 1};
    for (int d = 0; d < axis; d++) s.outer *= x->shape[d];
    for (int d = axis + 1; d < x->ndim; d++) s.inner *= x->shape[d];
    return s;
}

/* ---- cumsum ------------------------------------------------------------------------ */

tp_status tp_op_CUMSUM_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *x = &inputs[0];
    int axis;
    TP_TRY(refuse_bool("cumsum", x));
    TP_TRY(tp_axis_normalize("cumsum", "axis", attrs->axis, x->ndim, x, &axis));
    *out = *x;
    return TP_OK;
}

tp_status tp_op_CUMSUM_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *x = inputs[0];
    int axis = (int)(attrs->axis < 0 ? attrs->axis + x->ndim : attrs->axis);
    axis_split s = split_at(x, axis);
    bool fl = tp_dtype_is_float(x->dtype);
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t i = 0; i < s.inner; i++) {
            double sum = 0.0;
            int64_t isum = 0; /* integers wrap as the dtype's own additions would */
            for (int64_t step = 0; step < s.length; step++) {
                int64_t j = attrs->reverse ? s.length - 1 - step : step;
                int64_t at = (o * s.length + j) * s.inner + i;
                double value = fl ? tp_element_load_f64(x->data, x->dtype, at) : 0.0;
                int64_t ivalue = fl ? 0 : tp_element_load_i64(x->data, x->dtype, at);
                if (!attrs->exclusive) sum += value, isum = (int64_t)((uint64_t)isum + ivalue);
                if (fl)
                    tp_element_store_f64(out->data, out->dtype, at, sum);
                else if (out->dtype == TP_I32)
                    ((int32_t *)out->data)[at] = (int32_t)(uint32_t)isum;
                else
                    ((int64_t *)out->data)[at] = isum;
                if (attrs->exclusive) sum += value, isum = (int64_t)((uint64_t)isum + ivalue);
            }
        }
    return TP_OK;
}

/* ---- topk ------------------------------------------------------------------------- */

static tp_status topk_infer(const char *op, const tp_type *x, const tp_attrs *attrs, tp_type *out) {
    char text[TP_DESCRIBE_MAX];
    int axis;
    TP_TRY(refuse_bool(op, x));
    TP_TRY(tp_axis_normalize(op, "axis", attrs->axis, x->ndim, x, &axis));
    int64_t length = x->dims[axis];
    if (attrs->k < 0 || (!TP_DIM_IS_SYMBOL(length) && attrs->k > length))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: k %lld is outside 0..%lld (the size of axis %d of x %s)", op,
                            (long long)attrs->k, (long long)length, axis, tp_type_text(x, text));
    if (TP_DIM_IS_SYMBOL(length))
        return tp_error_set(TP_ERR_SHAPE,
                            "%s: axis %d of x %s has a symbolic size; topk needs it known", op,
                            axis, tp_type_text(x, text));
    *out = *x;
    out->dims[axis] = attrs->k;
    return TP_OK;
}

tp_status tp_op_TOPK_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    return topk_infer("topk", &inputs[0], attrs, out);
}

tp_status tp_op_TOPK_INDICES_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                   tp_type *out) {
    TP_TRY(topk_infer("topk_indices", &inputs[0], attrs, out));
    out->dtype = TP_I64;
    return TP_OK;
}

/* One row being ranked: its values (floats as doubles, integers exactly as
 * int64) and whether larger ones come first. */
typedef struct ranking {
    const double *values;
    const int64_t *integers; /* non-NULL for integer x */
    bool largest;
} ranking;

/* Whether position a ranks before position b (ties: the lower position). */
static bool ranks_before(const ranking *r, int64_t a, int64_t b) {
    if (r->integers) {
        int64_t x = r->integers[a], y = r->integers[b];
        if (x != y) return r->largest ? x > y : x < y;
        return a < b;
    }
    double x = r->values[a], y = r->values[b];
    bool x_nan = isnan(x), y_nan = isnan(y);
    if (x_nan && y_nan) return a < b;
    if (x_nan || y_nan) return r->largest ? x_nan : y_nan; /* NaN is the greatest */
    if (x != y) return r->largest ? x > y : x < y;
    return a < b;
}

/* Stable merge sort of order[0..count) by ranks_before, using `scratch`. */
static void sort_positions(const ranking *r, int64_t *order, int64_t *scratch, int64_t count) {
    for (int64_t width = 1; width < count; width *= 2) {
        for (int64_t low = 0; low < count; low += 2 * width) {
            int64_t middle = low + width < count ? low + width : count;
            int64_t high = low + 2 * width < count ? low + 2 * width : count;
            int64_t i = low, j = middle, k = low;
            while (i < middle && j < high)
                scratch[k++] = ranks_before(r, order[j], order[i]) ? order[j++] : order[i++];
            while (i < middle) scratch[k++] = order[i++];
            while (j < high) scratch[k++] = order[j++];
        }
        memcpy(order, scratch, (size_t)count * sizeof *order);
    }
}

static tp_status topk_kernel(const tp_tensor *x, const tp_attrs *attrs, bool want_indices,
                             tp_tensor *out) {
    int axis = (int)(attrs->axis < 0 ? attrs->axis + x->ndim : attrs->axis);
    axis_split s = split_at(x, axis);
    int64_t k = attrs->k;
    size_t length = (size_t)(s.length ? s.length : 1);
    bool integer = !tp_dtype_is_float(x->dtype);
    double *values = malloc(length * sizeof *values);
    int64_t *integers = malloc(length * sizeof *integers);
    int64_t *order = malloc(length * sizeof *order), *scratch = malloc(length * sizeof *scratch);
    if (!values || !integers || !order || !scratch) {
        free(values), free(integers), free(order), free(scratch);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "topk: out of memory for a row of %lld",
                            (long long)s.length);
    }
    ranking r = {values, integer ? integers : NULL, attrs->largest};
    size_t elem = tp_dtype_size(x->dtype);
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t i = 0; i < s.inner; i++) {
            for (int64_t j = 0; j < s.length; j++) {
                int64_t at = (o * s.length + j) * s.inner + i;
                if (integer)
                    integers[j] = tp_element_load_i64(x->data, x->dtype, at);
                else
                    values[j] = tp_element_load_f64(x->data, x->dtype, at);
                order[j] = j;
            }
            sort_positions(&r, order, scratch, s.length);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (o * k + j) * s.inner + i;
                int64_t from = (o * s.length + order[j]) * s.inner + i;
                if (want_indices)
                    ((int64_t *)out->data)[at] = order[j];
                else
                    memcpy((char *)out->data + (size_t)at * elem,
                           (const char *)x->data + (size_t)from * elem, elem);
            }
        }
    free(values), free(integers), free(order), free(scratch);
    return TP_OK;
}

tp_status tp_op_TOPK_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    return topk_kernel(inputs[0], attrs, false, out);
}

tp_status tp_op_TOPK_INDICES_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                    tp_tensor *out) {
    return topk_kernel(inputs[0], attrs, true, out);
}
