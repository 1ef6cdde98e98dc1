/* The creation ops: constant, full and arange — ops with no tensor inputs.
 * Their shape/dtype rules validate the attributes (a value must fit its
 * dtype, arange's step must be nonzero) so that the kernels cannot fail.
 * Owns nothing else.
 */
#include <math.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

/* ---- shared checks ------------------------------------------------------------- */

static tp_status check_dtype(const char *op_name, tp_dtype dtype) {
    if ((unsigned)dtype < TP_DTYPE_COUNT) return TP_OK;
    return tp_error_set(TP_ERR_DTYPE,
                        "%s: dtype %d is not one of f32, f64, i32, i64, bool, f16, bf16", op_name,
                        (int)dtype);
}

/* Whether `value` truncated toward zero fits the integer dtype. */
static bool fits_integer(double value, tp_dtype dtype) {
    double limit = dtype == TP_I32 ? 2147483648.0 : 9223372036854775808.0; /* 2^31, 2^63 */
    return isfinite(value) && trunc(value) >= -limit && trunc(value) < limit;
}

static tp_status check_value_fits(const char *op_name, const char *what, double value,
                                  tp_dtype dtype) {
    if (!tp_dtype_is_integer(dtype) || fits_integer(value, dtype)) return TP_OK;
    return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: %s %g does not fit in %s", op_name, what,
                        value, tp_dtype_name(dtype));
}

/* ---- constant ------------------------------------------------------------------------ */

tp_status tp_op_CONSTANT_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_type *out) {
    const tp_tensor *data = attrs->data;
    if (!data)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "constant: no payload (set attrs.data to a tensor)");
    *out = (tp_type){.dtype = data->dtype, .ndim = data->ndim};
    memcpy(out->dims, data->shape, sizeof(int64_t) * (size_t)data->ndim);
    return TP_OK;
}

tp_status tp_op_CONSTANT_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_tensor *out) {
    memcpy(out->data, attrs->data->data, out->nbytes);
    return TP_OK;
}

/* ---- full --------------------------------------------------------------------------- */

tp_status tp_op_FULL_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    char shape_text[TP_DESCRIBE_MAX];
    TP_TRY(check_dtype("full", attrs->dtype));
    if (attrs->shape_ndim < 0 || attrs->shape_ndim > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "full: %d dimensions (at most %d)",
                            attrs->shape_ndim, TP_MAX_DIMS);
    int64_t numel;
    for (int i = 0; i < attrs->shape_ndim; i++)
        if (attrs->shape[i] < 0)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "full: shape %s has a negative size at position %d",
                                tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text), i);
    if (!tp_sizes_product(attrs->shape, attrs->shape_ndim, &numel))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "full: shape %s overflows int64",
                            tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text));
    TP_TRY(check_value_fits("full", "value", attrs->value, attrs->dtype));
    *out = (tp_type){.dtype = attrs->dtype, .ndim = attrs->shape_ndim};
    memcpy(out->dims, attrs->shape, sizeof(int64_t) * (size_t)attrs->shape_ndim);
    return TP_OK;
}

tp_status tp_op_FULL_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    /* Convert once, then replicate the element's bytes. */
    size_t elem = tp_dtype_size(out->dtype);
    unsigned char value[8];
    tp_element_store_f64(value, out->dtype, 0, attrs->value);
    for (int64_t i = 0; i < out->numel; i++) memcpy((char *)out->data + i * elem, value, elem);
    return TP_OK;
}

/* ---- arange -------------------------------------------------------------------------- */

/* Like numpy.arange: length ceil((stop - start) / step); element 0 is start
 * and element 1 is start + step, both converted to the dtype; element i >= 2
 * is first + i * delta computed in the dtype, delta being element 1 minus
 * element 0 (so an integer arange with a fractional step repeats values, as
 * NumPy's does). */
typedef struct arange_plan {
    int64_t length;
    double first, second, delta;  /* floating dtypes */
    int64_t first_int, delta_int; /* integer dtypes */
} arange_plan;

static tp_status arange_plan_make(const tp_attrs *attrs, arange_plan *plan) {
    double start = attrs->range_start, stop = attrs->range_stop, step = attrs->range_step;
    TP_TRY(check_dtype("arange", attrs->dtype));
    if (attrs->dtype == TP_BOOL)
        return tp_error_set(TP_ERR_DTYPE, "arange: dtype bool is not supported (use i32 and "
                                          "cast)");
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "arange: start %g, stop %g and step %g must be finite", start, stop,
                            step);
    if (step == 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "arange: step must be nonzero (start %g, "
                            "stop %g)",
                            start, stop);
    double length = ceil((stop - start) / step);
    if (!(length > 0)) length = 0;
    if (length > 9007199254740992.0) /* 2^53 */
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "arange: start %g, stop %g, step %g give too many elements", start,
                            stop, step);
    plan->length = (int64_t)length;
    if (tp_dtype_is_integer(attrs->dtype)) {
        double last = trunc(start) + (length - 1) * (trunc(start + step) - trunc(start));
        TP_TRY(check_value_fits("arange", "start", start, attrs->dtype));
        TP_TRY(check_value_fits("arange", "start + step", start + step, attrs->dtype));
        if (plan->length > 0) TP_TRY(check_value_fits("arange", "last value", last, attrs->dtype));
        plan->first_int = (int64_t)start;
        plan->delta_int = (int64_t)(start + step) - plan->first_int;
    } else if (attrs->dtype == TP_F32) {
        float first = (float)start, second = (float)(start + step);
        plan->first = first;
        plan->second = second;
        plan->delta = second - first; /* a float subtraction, as NumPy does */
    } else if (attrs->dtype == TP_F16 || attrs->dtype == TP_BF16) {
        /* NumPy's fill for half: the first two values stored, their
         * difference in f32, each value computed in f32 and rounded */
        plan->first = attrs->dtype == TP_F16 ? tp_f16_to_f32(tp_f16_from_f64(start))
                                             : tp_bf16_to_f32(tp_bf16_from_f64(start));
        plan->second = attrs->dtype == TP_F16 ? tp_f16_to_f32(tp_f16_from_f64(start + step))
                                              : tp_bf16_to_f32(tp_bf16_from_f64(start + step));
        plan->delta = (float)plan->second - (float)plan->first;
    } else {
        plan->first = start;
        plan->second = start + step;
        plan->delta = plan->second - plan->first;
    }
    return TP_OK;
}

tp_status tp_op_ARANGE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    arange_plan plan = {0};
    TP_TRY(arange_plan_make(attrs, &plan));
    *out = (tp_type){.dtype = attrs->dtype, .ndim = 1, .dims = {plan.length}};
    return TP_OK;
}

tp_status tp_op_ARANGE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    arange_plan plan = {0};
    TP_TRY(arange_plan_make(attrs, &plan));
    switch (out->dtype) {
    case TP_F32: {
        float first = (float)plan.first, delta = (float)plan.delta;
        float *values = out->data;
        for (int64_t i = 0; i < plan.length; i++) values[i] = first + (float)i * delta;
        if (plan.length > 1) values[1] = (float)plan.second;
        break;
    }
    case TP_F64: {
        double *values = out->data;
        for (int64_t i = 0; i < plan.length; i++) values[i] = plan.first + (double)i * plan.delta;
        if (plan.length > 1) values[1] = plan.second;
        break;
    }
    case TP_F16:
    case TP_BF16: {
        float first = (float)plan.first, delta = (float)plan.delta;
        for (int64_t i = 0; i < plan.length; i++)
            tp_element_store_f64(out->data, out->dtype, i, first + (float)i * delta);
        break;
    }
    default:
        for (int64_t i = 0; i < plan.length; i++)
            tp_element_store_i64(out->data, out->dtype, i, plan.first_int + i * plan.delta_int);
        break;
    }
    return TP_OK;
}
