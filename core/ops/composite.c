/* The composite ops: softmax, log_softmax, layer_norm, gelu, silu, softplus
 * and linear. For each: the shape/dtype rule, a direct reference kernel
 * (computing in double, numerically careful), and the decomposition into
 * non-composite ops that the decompose pass and backends use. Results are
 * floating (integer and bool inputs give f32, as for the float-only unary
 * functions), except linear, which follows matmul's dtype rules.
 * Owns nothing else.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

static tp_dtype float_dtype(tp_dtype dtype) {
    return tp_dtype_is_float(dtype) ? dtype : TP_F32;
}

/* =================================================================================
 * Shape and dtype rules
 * ================================================================================= */

static tp_status float_like(const tp_type *in, tp_type *out) {
    *out = *in;
    out->dtype = float_dtype(in->dtype);
    return TP_OK;
}

static tp_status softmax_like_infer(const char *op_name, const tp_type *in, const tp_attrs *attrs,
                                    tp_type *out) {
    int axis;
    TP_TRY(tp_axis_normalize(op_name, "axis", attrs->axis, in->ndim, in, &axis));
    return float_like(in, out);
}

tp_status tp_op_SOFTMAX_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_type *out) {
    return softmax_like_infer("softmax", &inputs[0], attrs, out);
}

tp_status tp_op_LOG_SOFTMAX_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                  tp_type *out) {
    return softmax_like_infer("log_softmax", &inputs[0], attrs, out);
}

tp_status tp_op_LAYER_NORM_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                 tp_type *out) {
    static const char *const roles[] = {"x", "weight", "bias"};
    const tp_type *x = &inputs[0];
    int axis;
    TP_TRY(tp_axis_normalize("layer_norm", "axis", attrs->axis, x->ndim, x, &axis));
    tp_dtype dtype = x->dtype;
    for (int i = 1; i < num_inputs; i++) {
        const tp_type *param = &inputs[i];
        bool fits = param->ndim == x->ndim - axis &&
                    memcmp(param->dims, x->dims + axis, sizeof(int64_t) * (size_t)param->ndim) == 0;
        if (!fits) {
            char x_text[TP_DESCRIBE_MAX], param_text[TP_DESCRIBE_MAX];
            return tp_error_set(
                TP_ERR_SHAPE, "layer_norm: %s %s must have the shape of x %s from axis %d on",
                roles[i], tp_type_text(param, param_text), tp_type_text(x, x_text), axis);
        }
        dtype = tp_dtype_promote(dtype, param->dtype);
    }
    if (!(attrs->eps >= 0))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "layer_norm: eps %g must be >= 0", attrs->eps);
    TP_TRY(float_like(x, out));
    out->dtype = float_dtype(dtype);
    return TP_OK;
}

tp_status tp_op_GELU_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    if (attrs->approximate != TP_GELU_NONE && attrs->approximate != TP_GELU_TANH)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "gelu: approximate %d is neither none (0) nor tanh (1)",
                            (int)attrs->approximate);
    return float_like(&inputs[0], out);
}

tp_status tp_op_SILU_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    return float_like(&inputs[0], out);
}

tp_status tp_op_SOFTPLUS_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_type *out) {
    if (!isfinite(attrs->beta) || attrs->beta == 0 || isnan(attrs->threshold))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "softplus: beta %g must be finite and nonzero, threshold %g a number",
                            attrs->beta, attrs->threshold);
    return float_like(&inputs[0], out);
}

static tp_status linear_refuse(tp_status status, const tp_type *inputs, int num_inputs,
                               const char *why) {
    char x_text[TP_DESCRIBE_MAX], w_text[TP_DESCRIBE_MAX], b_text[TP_DESCRIBE_MAX] = "none";
    if (num_inputs > 2) tp_type_text(&inputs[2], b_text);
    return tp_error_set(status, "linear: x %s, weight %s, bias %s: %s",
                        tp_type_text(&inputs[0], x_text), tp_type_text(&inputs[1], w_text), b_text,
                        why);
}

tp_status tp_op_LINEAR_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *x = &inputs[0], *weight = &inputs[1];
    if (x->ndim < 1)
        return linear_refuse(TP_ERR_SHAPE, inputs, num_inputs, "x must have at least 1 dimension");
    if (weight->ndim != 2)
        return linear_refuse(TP_ERR_SHAPE, inputs, num_inputs,
                             "weight must be 2-D [out_features, in_features]");
    if (x->dims[x->ndim - 1] != weight->dims[1])
        return linear_refuse(TP_ERR_SHAPE, inputs, num_inputs,
                             "x's last dimension must equal weight's in_features (dimension 1)");
    if (num_inputs > 2 && (inputs[2].ndim != 1 || inputs[2].dims[0] != weight->dims[0]))
        return linear_refuse(TP_ERR_SHAPE, inputs, num_inputs, "bias must be 1-D [out_features]");
    if (x->dtype == TP_BOOL && weight->dtype == TP_BOOL)
        return linear_refuse(TP_ERR_DTYPE, inputs, num_inputs,
                             "bool x bool is not supported (cast first)");
    *out = *x;
    out->dims[x->ndim - 1] = weight->dims[0];
    out->dtype = tp_dtype_promote(x->dtype, weight->dtype);
    if (num_inputs > 2) out->dtype = tp_dtype_promote(out->dtype, inputs[2].dtype);
    return TP_OK;
}

/* =================================================================================
 * Reference kernels
 * ================================================================================= */

/* A tensor seen as [outer, length, inner], `length` spanning axes [begin, end):
 * each (outer, inner) pair is one row of `length` elements `inner` apart. */
typedef struct row_view {
    int64_t outer, length, inner;
} row_view;

static row_view row_view_of(const tp_tensor *x, int begin, int end) {
    row_view view = {1, 1, 1};
    for (int d = 0; d < x->ndim; d++) {
        int64_t *part = d < begin ? &view.outer : d < end ? &view.length : &view.inner;
        *part *= x->shape[d];
    }
    return view;
}

/* Rewrites one row (loaded as doubles) in place. */
typedef void (*row_fn)(double *row, int64_t length, const void *params);

/* The shared row iteration of the composites over an axis: loads each row of
 * `in` into a double buffer, applies `fn`, stores it into the same row of
 * `out` (same shape, possibly another dtype). */
static tp_status map_rows(const tp_tensor *in, tp_tensor *out, row_view view, row_fn fn,
                          const void *params) {
    double *row = tp_malloc(sizeof(double) * (size_t)view.length);
    if (!row)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "no memory for a row of %lld elements",
                            (long long)view.length);
    for (int64_t o = 0; o < view.outer; o++)
        for (int64_t i = 0; i < view.inner; i++) {
            int64_t base = o * view.length * view.inner + i;
            for (int64_t k = 0; k < view.length; k++)
                row[k] = tp_element_load_f64(in->data, in->dtype, base + k * view.inner);
            fn(row, view.length, params);
            for (int64_t k = 0; k < view.length; k++)
                tp_element_store_f64(out->data, out->dtype, base + k * view.inner, row[k]);
        }
    free(row);
    return TP_OK;
}

/* Subtracts the row's maximum (so exp cannot overflow); returns sum(exp). */
static double shift_by_max(double *row, int64_t length) {
    double max = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < length; k++) max = row[k] > max ? row[k] : max;
    for (int64_t k = 0; k < length; k++) {
        row[k] -= max;
        sum += exp(row[k]);
    }
    return sum;
}

static void softmax_row(double *row, int64_t length, const void *params) {
    double sum = shift_by_max(row, length);
    for (int64_t k = 0; k < length; k++) row[k] = exp(row[k]) / sum;
}

static void log_softmax_row(double *row, int64_t length, const void *params) {
    double log_sum = log(shift_by_max(row, length));
    for (int64_t k = 0; k < length; k++) row[k] -= log_sum;
}

typedef struct layer_norm_params {
    double eps;
    const tp_tensor *weight, *bias; /* NULL when absent; shape = the row's */
} layer_norm_params;

static void layer_norm_row(double *row, int64_t length, const void *params) {
    const layer_norm_params *p = params;
    double mean = 0.0, variance = 0.0;
    for (int64_t k = 0; k < length; k++) mean += row[k];
    mean /= (double)length;
    for (int64_t k = 0; k < length; k++) variance += (row[k] - mean) * (row[k] - mean);
    variance /= (double)length; /* biased, as PyTorch */
    double scale = 1.0 / sqrt(variance + p->eps);
    for (int64_t k = 0; k < length; k++) {
        row[k] = (row[k] - mean) * scale;
        if (p->weight) row[k] *= tp_element_load_f64(p->weight->data, p->weight->dtype, k);
        if (p->bias) row[k] += tp_element_load_f64(p->bias->data, p->bias->dtype, k);
    }
}

static int kernel_axis(const tp_attrs *attrs, const tp_tensor *x) {
    return (int)(attrs->axis < 0 ? attrs->axis + x->ndim : attrs->axis);
}

tp_status tp_op_SOFTMAX_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_tensor *out) {
    int axis = kernel_axis(attrs, inputs[0]);
    return map_rows(inputs[0], out, row_view_of(inputs[0], axis, axis + 1), softmax_row, NULL);
}

tp_status tp_op_LOG_SOFTMAX_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                   tp_tensor *out) {
    int axis = kernel_axis(attrs, inputs[0]);
    return map_rows(inputs[0], out, row_view_of(inputs[0], axis, axis + 1), log_softmax_row, NULL);
}

tp_status tp_op_LAYER_NORM_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                  tp_tensor *out) {
    layer_norm_params params = {
        .eps = attrs->eps,
        .weight = num_inputs > 1 ? inputs[1] : NULL,
        .bias = num_inputs > 2 ? inputs[2] : NULL,
    };
    int axis = kernel_axis(attrs, inputs[0]);
    return map_rows(inputs[0], out, row_view_of(inputs[0], axis, inputs[0]->ndim), layer_norm_row,
                    &params);
}

/* Pointwise composites: out[i] = fn(in[i]) computed in double. */
typedef double (*element_fn)(double x, const tp_attrs *attrs);

static tp_status map_elements(const tp_tensor *in, tp_tensor *out, element_fn fn,
                              const tp_attrs *attrs) {
    for (int64_t i = 0; i < in->numel; i++)
        tp_element_store_f64(out->data, out->dtype, i,
                             fn(tp_element_load_f64(in->data, in->dtype, i), attrs));
    return TP_OK;
}

static const double SQRT_HALF = 0.70710678118654752440; /* 1 / sqrt(2) */
static const double SQRT_2_PI = 0.79788456080286535588; /* sqrt(2 / pi) */
static const double GELU_CUBIC = 0.044715;

static double gelu_element(double x, const tp_attrs *attrs) {
    if (attrs->approximate == TP_GELU_TANH)
        return 0.5 * x * (1.0 + tanh(SQRT_2_PI * (x + GELU_CUBIC * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * SQRT_HALF));
}

static double silu_element(double x, const tp_attrs *attrs) {
    return x / (1.0 + exp(-x));
}

static double softplus_element(double x, const tp_attrs *attrs) {
    double scaled = attrs->beta * x;
    return scaled > attrs->threshold ? x : log1p(exp(scaled)) / attrs->beta;
}

tp_status tp_op_GELU_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    return map_elements(inputs[0], out, gelu_element, attrs);
}

tp_status tp_op_SILU_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    return map_elements(inputs[0], out, silu_element, attrs);
}

tp_status tp_op_SOFTPLUS_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_tensor *out) {
    return map_elements(inputs[0], out, softplus_element, attrs);
}

/* out[r, o] = sum_i x[r, i] * weight[o, i] (+ bias[o]): floats accumulate in
 * double; integers in int64 with two's-complement wrap-around. */
tp_status tp_op_LINEAR_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *x = inputs[0], *weight = inputs[1];
    const tp_tensor *bias = num_inputs > 2 ? inputs[2] : NULL;
    int64_t in_features = weight->shape[1], out_features = weight->shape[0];
    int64_t rows = out_features ? out->numel / out_features : 0;
    bool floating = tp_dtype_is_float(out->dtype);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out_features; o++) {
            double sum = bias ? tp_element_load_f64(bias->data, bias->dtype, o) : 0.0;
            uint64_t wrapped = bias ? (uint64_t)tp_element_load_i64(bias->data, bias->dtype, o) : 0;
            for (int64_t i = 0; i < in_features; i++) {
                int64_t xi = r * in_features + i, wi = o * in_features + i;
                if (floating)
                    sum += tp_element_load_f64(x->data, x->dtype, xi) *
                           tp_element_load_f64(weight->data, weight->dtype, wi);
                else
                    wrapped += (uint64_t)tp_element_load_i64(x->data, x->dtype, xi) *
                               (uint64_t)tp_element_load_i64(weight->data, weight->dtype, wi);
            }
            if (floating)
                tp_element_store_f64(out->data, out->dtype, r * out_features + o, sum);
            else
                tp_element_store_i64(out->data, out->dtype, r * out_features + o, (int64_t)wrapped);
        }
    return TP_OK;
}

/* =================================================================================
 * Decompositions (only non-composite ops)
 * ================================================================================= */

static tp_status add_node(tp_graph *graph, const char *op_name, const tp_value_id *operands,
                          int count, const tp_attrs *attrs, tp_value_id *out) {
    return tp_graph_add_node(graph, op_name, operands, count, attrs, NULL, out);
}

static tp_status unary(tp_graph *graph, const char *op_name, tp_value_id a, tp_value_id *out) {
    return add_node(graph, op_name, &a, 1, NULL, out);
}

static tp_status binary(tp_graph *graph, const char *op_name, tp_value_id a, tp_value_id b,
                        tp_value_id *out) {
    tp_value_id operands[2] = {a, b};
    return add_node(graph, op_name, operands, 2, NULL, out);
}

static tp_dtype value_dtype(tp_graph *graph, tp_value_id value) {
    return tp_graph_value_type(graph, value)->dtype;
}

/* A 0-d `full` of the dtype of `like`, so that it never promotes `like`. */
static tp_status scalar_like(tp_graph *graph, tp_value_id like, double value, tp_value_id *out) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = value_dtype(graph, like);
    attrs.value = value;
    return add_node(graph, "full", NULL, 0, &attrs, out);
}

/* x * constant, in x's dtype. */
static tp_status scale(tp_graph *graph, tp_value_id x, double factor, tp_value_id *out) {
    tp_value_id constant;
    TP_TRY(scalar_like(graph, x, factor, &constant));
    return binary(graph, "mul", x, constant, out);
}

/* x + constant, in x's dtype. */
static tp_status offset(tp_graph *graph, tp_value_id x, double amount, tp_value_id *out) {
    tp_value_id constant;
    TP_TRY(scalar_like(graph, x, amount, &constant));
    return binary(graph, "add", x, constant, out);
}

/* x itself when floating, else cast to f32 (the composites' result dtype). */
static tp_status as_float(tp_graph *graph, tp_value_id x, tp_value_id *out) {
    tp_dtype dtype = value_dtype(graph, x);
    if (tp_dtype_is_float(dtype)) {
        *out = x;
        return TP_OK;
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = float_dtype(dtype);
    return add_node(graph, "cast", &x, 1, &attrs, out);
}

/* Reduction attributes over axes [begin, ndim of x) with keepdim. */
static tp_status reduce_attrs(tp_graph *graph, tp_value_id x, int64_t axis, bool to_end,
                              const char *op_name, tp_attrs *attrs) {
    const tp_type *type = tp_graph_value_type(graph, x);
    int begin;
    TP_TRY(tp_axis_normalize(op_name, "axis", axis, type->ndim, type, &begin));
    *attrs = (tp_attrs)TP_ATTRS_INIT;
    attrs->keepdim = true;
    for (int d = begin; d < (to_end ? type->ndim : begin + 1); d++) attrs->axes[attrs->naxes++] = d;
    return TP_OK;
}

/* shifted = x - max(x, axis); exps = exp(shifted); total = sum(exps, axis). */
static tp_status shifted_exp_sum(tp_graph *graph, tp_value_id input, const tp_attrs *attrs,
                                 const char *op_name, tp_value_id *shifted, tp_value_id *exps,
                                 tp_value_id *total) {
    tp_value_id x, max;
    tp_attrs reduce;
    TP_TRY(as_float(graph, input, &x));
    TP_TRY(reduce_attrs(graph, x, attrs->axis, false, op_name, &reduce));
    TP_TRY(add_node(graph, "max", &x, 1, &reduce, &max));
    TP_TRY(binary(graph, "sub", x, max, shifted));
    TP_TRY(unary(graph, "exp", *shifted, exps));
    return add_node(graph, "sum", exps, 1, &reduce, total);
}

tp_status tp_op_SOFTMAX_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                  const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id shifted, exps, total;
    TP_TRY(shifted_exp_sum(graph, inputs[0], attrs, "softmax", &shifted, &exps, &total));
    return binary(graph, "div", exps, total, out);
}

tp_status tp_op_LOG_SOFTMAX_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                      const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id shifted, exps, total, log_total;
    TP_TRY(shifted_exp_sum(graph, inputs[0], attrs, "log_softmax", &shifted, &exps, &total));
    TP_TRY(unary(graph, "log", total, &log_total));
    return binary(graph, "sub", shifted, log_total, out);
}

tp_status tp_op_LAYER_NORM_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                     const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id x, mean, centered, squares, variance, shifted_variance, inverse, y;
    tp_attrs reduce;
    TP_TRY(as_float(graph, inputs[0], &x));
    TP_TRY(reduce_attrs(graph, x, attrs->axis, true, "layer_norm", &reduce));
    TP_TRY(add_node(graph, "mean", &x, 1, &reduce, &mean));
    TP_TRY(binary(graph, "sub", x, mean, &centered));
    TP_TRY(binary(graph, "mul", centered, centered, &squares));
    TP_TRY(add_node(graph, "mean", &squares, 1, &reduce, &variance));
    TP_TRY(offset(graph, variance, attrs->eps, &shifted_variance));
    TP_TRY(unary(graph, "rsqrt", shifted_variance, &inverse));
    TP_TRY(binary(graph, "mul", centered, inverse, &y));
    if (num_inputs > 1) TP_TRY(binary(graph, "mul", y, inputs[1], &y));
    if (num_inputs > 2) TP_TRY(binary(graph, "add", y, inputs[2], &y));
    /* Integer weight and bias keep y floating; promote reaches the rule's dtype. */
    *out = y;
    return TP_OK;
}

tp_status tp_op_GELU_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                               const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id x, argument, curve, one_plus, half_x;
    TP_TRY(as_float(graph, inputs[0], &x));
    if (attrs->approximate == TP_GELU_TANH) {
        tp_value_id square, cube, cubic_term, inner;
        TP_TRY(binary(graph, "mul", x, x, &square));
        TP_TRY(binary(graph, "mul", square, x, &cube));
        TP_TRY(scale(graph, cube, GELU_CUBIC, &cubic_term));
        TP_TRY(binary(graph, "add", x, cubic_term, &inner));
        TP_TRY(scale(graph, inner, SQRT_2_PI, &argument));
        TP_TRY(unary(graph, "tanh", argument, &curve));
    } else {
        TP_TRY(scale(graph, x, SQRT_HALF, &argument));
        TP_TRY(unary(graph, "erf", argument, &curve));
    }
    TP_TRY(offset(graph, curve, 1.0, &one_plus));
    TP_TRY(scale(graph, x, 0.5, &half_x));
    return binary(graph, "mul", half_x, one_plus, out);
}

tp_status tp_op_SILU_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                               const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id x, gate;
    TP_TRY(as_float(graph, inputs[0], &x));
    TP_TRY(unary(graph, "sigmoid", x, &gate));
    return binary(graph, "mul", x, gate, out);
}

tp_status tp_op_SOFTPLUS_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                   const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id x, scaled, threshold, linear_region, exps, one_plus, logs, smooth;
    TP_TRY(as_float(graph, inputs[0], &x));
    TP_TRY(scale(graph, x, attrs->beta, &scaled));
    TP_TRY(scalar_like(graph, scaled, attrs->threshold, &threshold));
    TP_TRY(binary(graph, "gt", scaled, threshold, &linear_region));
    TP_TRY(unary(graph, "exp", scaled, &exps));
    TP_TRY(offset(graph, exps, 1.0, &one_plus));
    TP_TRY(unary(graph, "log", one_plus, &logs));
    TP_TRY(scale(graph, logs, 1.0 / attrs->beta, &smooth));
    tp_value_id operands[3] = {linear_region, x, smooth};
    return add_node(graph, "where", operands, 3, NULL, out);
}

tp_status tp_op_LINEAR_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                 const tp_attrs *attrs, tp_value_id *out) {
    tp_value_id transposed, product;
    tp_attrs swap = TP_ATTRS_INIT;
    swap.dim0 = 0;
    swap.dim1 = 1;
    TP_TRY(add_node(graph, "transpose", &inputs[1], 1, &swap, &transposed));
    TP_TRY(binary(graph, "matmul", inputs[0], transposed, &product));
    if (num_inputs < 3) {
        *out = product;
        return TP_OK;
    }
    return binary(graph, "add", product, inputs[2], out);
}
