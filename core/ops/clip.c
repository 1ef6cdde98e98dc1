/* The clip composite: x limited to [min, max] (either bound may be absent:
 * -inf / +inf), as ONNX Clip: min(max(x, min), max), so min > max gives max
 * everywhere, and NaN stays NaN. The result has x's dtype; integer x clips
 * at the bounds rounded into the integers. Its decomposition is maximum and
 * minimum with constants, so every backend runs it. Owns nothing else. */
#include <math.h>
#include <stdint.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

tp_status tp_op_CLIP_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    char text[TP_DESCRIBE_MAX];
    if (inputs[0].dtype == TP_BOOL)
        return tp_error_set(TP_ERR_DTYPE, "clip: x %s must be numeric (cast bool first)",
                            tp_type_text(&inputs[0], text));
    if (isnan(attrs->min) || isnan(attrs->max))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "clip: min %g and max %g must not be NaN",
                            attrs->min, attrs->max);
    *out = inputs[0];
    return TP_OK;
}

/* A bound of integer dtype `dtype` within its range: the ceiling of a lower
 * bound, the floor of an upper one, so that the comparison stays exact. */
static int64_t integer_bound(double bound, bool lower, tp_dtype dtype) {
    double low = dtype == TP_I32 ? (double)INT32_MIN : -9223372036854774784.0;
    double high = dtype == TP_I32 ? (double)INT32_MAX : 9223372036854774784.0;
    double rounded = lower ? ceil(bound) : floor(bound);
    return (int64_t)(rounded < low ? low : rounded > high ? high : rounded);
}

tp_status tp_op_CLIP_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    const tp_tensor *x = inputs[0];
    if (tp_dtype_is_float(x->dtype)) {
        for (int64_t i = 0; i < x->numel; i++) {
            double v = tp_element_load_f64(x->data, x->dtype, i);
            if (v < attrs->min) v = attrs->min;
            if (v > attrs->max) v = attrs->max;
            tp_element_store_f64(out->data, out->dtype, i, v);
        }
        return TP_OK;
    }
    int64_t low = integer_bound(attrs->min, true, x->dtype);
    int64_t high = integer_bound(attrs->max, false, x->dtype);
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t v = tp_element_load_i64(x->data, x->dtype, i);
        if (v < low) v = low;
        if (v > high) v = high;
        if (x->dtype == TP_I32)
            ((int32_t *)out->data)[i] = (int32_t)v;
        else
            ((int64_t *)out->data)[i] = v;
    }
    return TP_OK;
}

/* maximum / minimum with a 0-d full of x's dtype holding `bound`. */
static tp_status bound_by(tp_graph *graph, const char *op_name, tp_value_id x, double bound,
                          tp_value_id *out) {
    tp_attrs full = TP_ATTRS_INIT;
    full.dtype = tp_graph_value_type(graph, x)->dtype;
    full.value = bound;
    tp_value_id constant, operands[2];
    TP_TRY(tp_graph_add_node(graph, "full", NULL, 0, &full, NULL, &constant));
    operands[0] = x;
    operands[1] = constant;
    return tp_graph_add_node(graph, op_name, operands, 2, NULL, NULL, out);
}

tp_status tp_op_CLIP_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                               const tp_attrs *attrs, tp_value_id *out) {
    tp_dtype dtype = tp_graph_value_type(graph, inputs[0])->dtype;
    bool fl = tp_dtype_is_float(dtype);
    double low = fl ? attrs->min : (double)integer_bound(attrs->min, true, dtype);
    double high = fl ? attrs->max : (double)integer_bound(attrs->max, false, dtype);
    tp_value_id y = inputs[0];
    /* an absent bound still gives one node: the decomposition must produce a value */
    bool has_low = attrs->min > -HUGE_VAL || attrs->max == HUGE_VAL;
    if (has_low) TP_TRY(bound_by(graph, "maximum", y, low, &y));
    if (attrs->max < HUGE_VAL) TP_TRY(bound_by(graph, "minimum", y, high, &y));
    *out = y;
    return TP_OK;
}
