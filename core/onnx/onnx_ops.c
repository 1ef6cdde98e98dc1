/* ONNX ops onto the op table: one converter per ONNX op type, each reading
 * the node's attributes and import-time inputs and emitting table ops
 * through onnx_emit (which folds what is computable at import time). The
 * table of converters at the end is the list of op types the importer
 * accepts. Multi-output ops bind only the outputs they produce; using any
 * other is an error naming the node (onnx_import.c). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "onnx_internal.h"
#include "tensorplay/onnx.h"

/* ---- small helpers ---- */

static const char *output_name(const onnx_importer *im, int index) {
    return index < (int)im->node->n_output ? im->node->output[index] : NULL;
}

static tp_status bind_output(onnx_importer *im, int index, onnx_handle handle) {
    if (index >= (int)im->node->n_output) return TP_OK;
    return onnx_bind(im, im->node->output[index], handle);
}

static tp_status emit_output(onnx_importer *im, const char *op, const onnx_handle *operands,
                             int count, const tp_attrs *attrs) {
    onnx_handle result;
    TP_TRY(onnx_emit(im, op, operands, count, attrs, output_name(im, 0), &result));
    return bind_output(im, 0, result);
}

static tp_status scalar(onnx_importer *im, tp_dtype dtype, double value, onnx_handle *out) {
    tp_tensor *tensor;
    TP_TRY(tp_tensor_create(dtype, 0, NULL, &tensor));
    tp_tensor_fill(tensor, value);
    return onnx_new_constant(im, tensor, out);
}

static tp_type type_of(const onnx_importer *im, onnx_handle handle) {
    tp_type type;
    onnx_value_type(im, handle, &type);
    return type;
}

static tp_status normalize_axis(onnx_importer *im, int64_t axis, int rank, int64_t *out) {
    if (axis < -rank || axis >= (rank ? rank : 1))
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "axis %" PRId64 " is out of range "
                               "for rank %d",
                               axis, rank);
    *out = axis < 0 ? axis + rank : axis;
    return TP_OK;
}

static tp_status cast_to(onnx_importer *im, onnx_handle value, tp_dtype dtype, const char *name,
                         onnx_handle *out) {
    if (type_of(im, value).dtype == dtype && !name) {
        *out = value;
        return TP_OK;
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    return onnx_emit(im, "cast", &value, 1, &attrs, name, out);
}

/* ---- pointwise ---- */

#define UNARY(NAME, OP)                                                                            \
    static tp_status convert_##NAME(onnx_importer *im) {                                           \
        onnx_handle x;                                                                             \
        TP_TRY(onnx_required_input(im, 0, &x));                                                    \
        return emit_output(im, OP, &x, 1, NULL);                                                   \
    }
UNARY(relu, "relu")
UNARY(sigmoid, "sigmoid")
UNARY(tanh, "tanh")
UNARY(erf, "erf")
UNARY(sqrt, "sqrt")
UNARY(exp, "exp")
UNARY(log, "log")
UNARY(neg, "neg")
UNARY(abs, "abs")
UNARY(floor, "floor")
UNARY(ceil, "ceil")
UNARY(sign, "sign")
UNARY(sin, "sin")
UNARY(cos, "cos")
UNARY(not, "logical_not")

#define BINARY(NAME, OP)                                                                           \
    static tp_status convert_##NAME(onnx_importer *im) {                                           \
        onnx_handle operands[2];                                                                   \
        TP_TRY(onnx_required_input(im, 0, &operands[0]));                                          \
        TP_TRY(onnx_required_input(im, 1, &operands[1]));                                          \
        return emit_output(im, OP, operands, 2, NULL);                                             \
    }
BINARY(add, "add")
BINARY(sub, "sub")
BINARY(mul, "mul")
BINARY(matmul, "matmul")
BINARY(equal, "eq")
BINARY(less, "lt")
BINARY(less_equal, "le")
BINARY(greater, "gt")
BINARY(greater_equal, "ge")
BINARY(and, "logical_and")
BINARY(or, "logical_or")
BINARY(xor, "ne")

/* Integer Div truncates (ONNX); the table's div is true division. */
static tp_status convert_div(onnx_importer *im) {
    onnx_handle operands[2], quotient;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    tp_dtype dtype = type_of(im, operands[0]).dtype;
    if (tp_dtype_is_float(dtype)) return emit_output(im, "div", operands, 2, NULL);
    TP_TRY(onnx_emit(im, "div", operands, 2, NULL, NULL, &quotient));
    onnx_handle result;
    TP_TRY(cast_to(im, quotient, dtype, output_name(im, 0), &result));
    return bind_output(im, 0, result);
}

static tp_status emit_pair(onnx_importer *im, const char *op, onnx_handle x, onnx_handle y,
                           const char *name, onnx_handle *out) {
    onnx_handle operands[2] = {x, y};
    return onnx_emit(im, op, operands, 2, NULL, name, out);
}

/* NumPy's mod of floats (fmod = 0) from r = a - floor(a / b) * b, mending
 * the cases that formula gets wrong: a zero result takes b's sign, and over
 * an infinite b the result is a when a is zero or has b's sign, else b. */
static tp_status floored_float_mod(onnx_importer *im, onnx_handle a, onnx_handle b, onnx_handle r,
                                   onnx_handle *out) {
    tp_dtype dtype = type_of(im, a).dtype;
    onnx_handle zero, infinity, is_zero, signed_zero, mended, magnitude, b_infinite, sign, toward,
        opposite, over_infinity;
    TP_TRY(scalar(im, dtype, 0, &zero));
    TP_TRY(scalar(im, dtype, INFINITY, &infinity));
    TP_TRY(emit_pair(im, "eq", r, zero, NULL, &is_zero));
    TP_TRY(emit_pair(im, "mul", b, zero, NULL, &signed_zero));
    onnx_handle zero_choice[3] = {is_zero, signed_zero, r};
    TP_TRY(onnx_emit(im, "where", zero_choice, 3, NULL, NULL, &mended));
    TP_TRY(onnx_emit(im, "abs", &b, 1, NULL, NULL, &magnitude));
    TP_TRY(emit_pair(im, "eq", magnitude, infinity, NULL, &b_infinite));
    TP_TRY(onnx_emit(im, "sign", &b, 1, NULL, NULL, &sign));
    TP_TRY(emit_pair(im, "mul", a, sign, NULL, &toward));
    TP_TRY(emit_pair(im, "lt", toward, zero, NULL, &opposite));
    onnx_handle infinity_choice[3] = {opposite, b, a};
    TP_TRY(onnx_emit(im, "where", infinity_choice, 3, NULL, NULL, &over_infinity));
    onnx_handle choice[3] = {b_infinite, over_infinity, mended};
    return onnx_emit(im, "where", choice, 3, NULL, output_name(im, 0), out);
}

/* Mod: r = a - t * b, with t the quotient truncated (fmod = 1, C's fmod:
 * the sign of a) or floored (fmod = 0, the default: the sign of b, as
 * NumPy's mod). The quotient comes from the table's true division, so
 * integer operands are exact up to the float's integer range (2^24 for
 * f32); shape arithmetic (the usual use) folds at import time. */
static tp_status convert_mod(onnx_importer *im) {
    onnx_handle a, b, quotient, whole, product, result;
    TP_TRY(onnx_required_input(im, 0, &a));
    TP_TRY(onnx_required_input(im, 1, &b));
    int64_t fmod;
    TP_TRY(onnx_attr_int(im, "fmod", 0, &fmod));
    tp_dtype dtype = type_of(im, a).dtype;
    bool is_float = tp_dtype_is_float(dtype);
    TP_TRY(emit_pair(im, "div", a, b, NULL, &quotient));
    if (fmod) { /* truncate: sign(q) * floor(|q|) */
        onnx_handle magnitude, floored, sign;
        TP_TRY(onnx_emit(im, "abs", &quotient, 1, NULL, NULL, &magnitude));
        TP_TRY(onnx_emit(im, "floor", &magnitude, 1, NULL, NULL, &floored));
        TP_TRY(onnx_emit(im, "sign", &quotient, 1, NULL, NULL, &sign));
        TP_TRY(emit_pair(im, "mul", sign, floored, NULL, &whole));
    } else {
        TP_TRY(onnx_emit(im, "floor", &quotient, 1, NULL, NULL, &whole));
    }
    if (!is_float) TP_TRY(cast_to(im, whole, dtype, NULL, &whole));
    TP_TRY(emit_pair(im, "mul", whole, b, NULL, &product));
    bool mend = is_float && !fmod;
    TP_TRY(emit_pair(im, "sub", a, product, mend ? NULL : output_name(im, 0), &result));
    if (mend) TP_TRY(floored_float_mod(im, a, b, result, &result));
    return bind_output(im, 0, result);
}

/* Pow's result has the base's type. */
static tp_status convert_pow(onnx_importer *im) {
    onnx_handle operands[2], power, result;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    tp_dtype dtype = type_of(im, operands[0]).dtype;
    TP_TRY(onnx_emit(im, "pow", operands, 2, NULL, NULL, &power));
    TP_TRY(cast_to(im, power, dtype, NULL, &result));
    return bind_output(im, 0, result);
}

static tp_status convert_reciprocal(onnx_importer *im) {
    onnx_handle operands[2];
    TP_TRY(onnx_required_input(im, 0, &operands[1]));
    TP_TRY(scalar(im, type_of(im, operands[1]).dtype, 1.0, &operands[0]));
    return emit_output(im, "div", operands, 2, NULL);
}

static tp_status convert_where(onnx_importer *im) {
    onnx_handle operands[3];
    for (int i = 0; i < 3; i++) TP_TRY(onnx_required_input(im, i, &operands[i]));
    return emit_output(im, "where", operands, 3, NULL);
}

static tp_status convert_cast(onnx_importer *im) {
    onnx_handle x;
    int64_t to;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "to", -1, &to));
    tp_attrs attrs = TP_ATTRS_INIT;
    if (onnx_dtype((int32_t)to, &attrs.dtype) != TP_OK)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "cast to %s: %s",
                               onnx_dtype_name((int32_t)to), tp_last_error());
    return emit_output(im, "cast", &x, 1, &attrs);
}

static tp_status convert_isnan(onnx_importer *im) {
    onnx_handle operands[2];
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    operands[1] = operands[0];
    return emit_output(im, "ne", operands, 2, NULL);
}

static tp_status convert_isinf(onnx_importer *im) {
    onnx_handle x, operands[2];
    int64_t negative, positive;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "detect_negative", 1, &negative));
    TP_TRY(onnx_attr_int(im, "detect_positive", 1, &positive));
    tp_dtype dtype = type_of(im, x).dtype;
    if (negative && positive) {
        TP_TRY(onnx_emit(im, "abs", &x, 1, NULL, NULL, &operands[0]));
        TP_TRY(scalar(im, dtype, INFINITY, &operands[1]));
    } else {
        operands[0] = x;
        TP_TRY(scalar(im, dtype, positive ? INFINITY : negative ? -INFINITY : NAN, &operands[1]));
    }
    return emit_output(im, "eq", operands, 2, NULL);
}

/* Clip: bounds as inputs (opset 11+) or attributes (older). */
static tp_status convert_clip(onnx_importer *im) {
    onnx_handle value, bound;
    TP_TRY(onnx_required_input(im, 0, &value));
    tp_dtype dtype = type_of(im, value).dtype;
    for (int side = 0; side < 2; side++) {
        onnx_handle given = im->opset >= 11 ? onnx_input(im, 1 + side) : ONNX_NO_HANDLE;
        if (im->opset < 11) {
            double fallback = side == 0 ? -INFINITY : INFINITY, limit;
            TP_TRY(onnx_attr_float(im, side == 0 ? "min" : "max", fallback, &limit));
            if (isinf(limit)) continue;
            TP_TRY(scalar(im, dtype, limit, &given));
        }
        if (given == ONNX_NO_HANDLE) continue;
        onnx_handle operands[2] = {value, given};
        TP_TRY(onnx_emit(im, side == 0 ? "maximum" : "minimum", operands, 2, NULL, NULL, &bound));
        value = bound;
    }
    TP_TRY(cast_to(im, value, dtype, NULL, &value));
    return bind_output(im, 0, value);
}

/* where(x < 0, scale(x), x) shapes: LeakyRelu, PRelu, Elu. */
static tp_status negative_branch(onnx_importer *im, onnx_handle x, onnx_handle negative) {
    onnx_handle zero, operands[3];
    TP_TRY(scalar(im, type_of(im, x).dtype, 0.0, &zero));
    onnx_handle compare[2] = {x, zero};
    TP_TRY(onnx_emit(im, "lt", compare, 2, NULL, NULL, &operands[0]));
    operands[1] = negative;
    operands[2] = x;
    return emit_output(im, "where", operands, 3, NULL);
}

static tp_status convert_leaky_relu(onnx_importer *im) {
    onnx_handle x, operands[2], scaled;
    double alpha;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_float(im, "alpha", 0.01, &alpha));
    operands[0] = x;
    TP_TRY(scalar(im, type_of(im, x).dtype, alpha, &operands[1]));
    TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &scaled));
    return negative_branch(im, x, scaled);
}

static tp_status convert_prelu(onnx_importer *im) {
    onnx_handle operands[2], scaled;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &scaled));
    return negative_branch(im, operands[0], scaled);
}

static tp_status convert_elu(onnx_importer *im) {
    onnx_handle x, exp_x, operands[2], shifted, scaled;
    double alpha;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_float(im, "alpha", 1.0, &alpha));
    tp_dtype dtype = type_of(im, x).dtype;
    TP_TRY(onnx_emit(im, "exp", &x, 1, NULL, NULL, &exp_x));
    operands[0] = exp_x;
    TP_TRY(scalar(im, dtype, 1.0, &operands[1]));
    TP_TRY(onnx_emit(im, "sub", operands, 2, NULL, NULL, &shifted));
    operands[0] = shifted;
    TP_TRY(scalar(im, dtype, alpha, &operands[1]));
    TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &scaled));
    return negative_branch(im, x, scaled);
}

/* max(0, min(1, alpha x + beta)), optionally times x (HardSwish). */
static tp_status hard_sigmoid(onnx_importer *im, double alpha, double beta, bool times_x) {
    onnx_handle x, operands[2], value;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_dtype dtype = type_of(im, x).dtype;
    operands[0] = x;
    TP_TRY(scalar(im, dtype, alpha, &operands[1]));
    TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &value));
    operands[0] = value;
    TP_TRY(scalar(im, dtype, beta, &operands[1]));
    TP_TRY(onnx_emit(im, "add", operands, 2, NULL, NULL, &value));
    operands[0] = value;
    TP_TRY(scalar(im, dtype, 1.0, &operands[1]));
    TP_TRY(onnx_emit(im, "minimum", operands, 2, NULL, NULL, &value));
    operands[0] = value;
    TP_TRY(scalar(im, dtype, 0.0, &operands[1]));
    if (!times_x) return emit_output(im, "maximum", operands, 2, NULL);
    TP_TRY(onnx_emit(im, "maximum", operands, 2, NULL, NULL, &value));
    operands[0] = x;
    operands[1] = value;
    return emit_output(im, "mul", operands, 2, NULL);
}

static tp_status convert_hard_sigmoid(onnx_importer *im) {
    double alpha, beta;
    TP_TRY(onnx_attr_float(im, "alpha", 0.2, &alpha));
    TP_TRY(onnx_attr_float(im, "beta", 0.5, &beta));
    return hard_sigmoid(im, alpha, beta, false);
}

static tp_status convert_hard_swish(onnx_importer *im) {
    return hard_sigmoid(im, 1.0 / 6.0, 0.5, true);
}

/* Max, Min, Sum, Mean over any number of inputs. */
static tp_status variadic(onnx_importer *im, const char *op, bool mean) {
    onnx_handle value;
    TP_TRY(onnx_required_input(im, 0, &value));
    int count = (int)im->node->n_input;
    for (int i = 1; i < count; i++) {
        onnx_handle operands[2] = {value};
        TP_TRY(onnx_required_input(im, i, &operands[1]));
        TP_TRY(onnx_emit(im, op, operands, 2, NULL, NULL, &value));
    }
    if (mean && count > 1) {
        onnx_handle operands[2] = {value};
        TP_TRY(scalar(im, type_of(im, value).dtype, count, &operands[1]));
        return emit_output(im, "div", operands, 2, NULL);
    }
    return bind_output(im, 0, value);
}
static tp_status convert_max(onnx_importer *im) {
    return variadic(im, "maximum", false);
}
static tp_status convert_min(onnx_importer *im) {
    return variadic(im, "minimum", false);
}
static tp_status convert_sum(onnx_importer *im) {
    return variadic(im, "add", false);
}
static tp_status convert_mean(onnx_importer *im) {
    return variadic(im, "add", true);
}

/* ---- matmul ---- */

static tp_status convert_gemm(onnx_importer *im) {
    onnx_handle a, b, product;
    int64_t trans_a, trans_b;
    double alpha, beta;
    TP_TRY(onnx_required_input(im, 0, &a));
    TP_TRY(onnx_required_input(im, 1, &b));
    TP_TRY(onnx_attr_int(im, "transA", 0, &trans_a));
    TP_TRY(onnx_attr_int(im, "transB", 0, &trans_b));
    TP_TRY(onnx_attr_float(im, "alpha", 1.0, &alpha));
    TP_TRY(onnx_attr_float(im, "beta", 1.0, &beta));
    tp_attrs swap = TP_ATTRS_INIT;
    swap.dim0 = 0;
    swap.dim1 = 1;
    if (trans_a) TP_TRY(onnx_emit(im, "transpose", &a, 1, &swap, NULL, &a));
    if (trans_b) TP_TRY(onnx_emit(im, "transpose", &b, 1, &swap, NULL, &b));
    onnx_handle operands[2] = {a, b};
    TP_TRY(onnx_emit(im, "matmul", operands, 2, NULL, NULL, &product));
    tp_dtype dtype = type_of(im, product).dtype;
    if (alpha != 1.0) {
        operands[0] = product;
        TP_TRY(scalar(im, dtype, alpha, &operands[1]));
        TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &product));
    }
    onnx_handle c = onnx_input(im, 2);
    if (c != ONNX_NO_HANDLE && beta != 0.0) {
        if (beta != 1.0) {
            operands[0] = c;
            TP_TRY(scalar(im, dtype, beta, &operands[1]));
            TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &c));
        }
        operands[0] = product;
        operands[1] = c;
        return emit_output(im, "add", operands, 2, NULL);
    }
    return bind_output(im, 0, product);
}

/* ---- composites ---- */

static tp_status softmax_like(onnx_importer *im, const char *op) {
    onnx_handle x;
    int64_t axis;
    TP_TRY(onnx_required_input(im, 0, &x));
    int rank = type_of(im, x).ndim;
    TP_TRY(onnx_attr_int(im, "axis", im->opset >= 13 ? -1 : 1, &axis));
    TP_TRY(normalize_axis(im, axis, rank, &axis));
    if (im->opset < 13 && axis != rank - 1)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "opset %" PRId64 " %s over axes %" PRId64 ".. of a rank-%d input "
                               "(coerced to 2-D) is not supported; only the last axis is",
                               im->opset, im->node->op_type, axis, rank);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return emit_output(im, op, &x, 1, &attrs);
}
static tp_status convert_softmax(onnx_importer *im) {
    return softmax_like(im, "softmax");
}
static tp_status convert_log_softmax(onnx_importer *im) {
    return softmax_like(im, "log_softmax");
}

/* LayerNormalization's optional outputs: the mean and 1/sqrt(var + eps)
 * over axes axis.., kept as size 1. */
static tp_status layer_norm_statistics(onnx_importer *im, onnx_handle x, int axis, int rank,
                                       double eps) {
    tp_attrs reduce = TP_ATTRS_INIT;
    reduce.keepdim = true;
    for (int d = axis; d < rank; d++) reduce.axes[reduce.naxes++] = d;
    onnx_handle mean, operands[2], centered, variance;
    TP_TRY(onnx_emit(im, "mean", &x, 1, &reduce, output_name(im, 1), &mean));
    TP_TRY(bind_output(im, 1, mean));
    if (im->node->n_output < 3 || !im->node->output[2][0]) return TP_OK;
    operands[0] = x;
    operands[1] = mean;
    TP_TRY(onnx_emit(im, "sub", operands, 2, NULL, NULL, &centered));
    operands[0] = operands[1] = centered;
    TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &centered));
    TP_TRY(onnx_emit(im, "mean", &centered, 1, &reduce, NULL, &variance));
    operands[0] = variance;
    TP_TRY(scalar(im, type_of(im, variance).dtype, eps, &operands[1]));
    TP_TRY(onnx_emit(im, "add", operands, 2, NULL, NULL, &variance));
    onnx_handle inverse;
    TP_TRY(onnx_emit(im, "rsqrt", &variance, 1, NULL, output_name(im, 2), &inverse));
    return bind_output(im, 2, inverse);
}

static tp_status convert_layer_norm(onnx_importer *im) {
    onnx_handle operands[3];
    int64_t axis;
    double eps;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    operands[2] = onnx_input(im, 2);
    TP_TRY(onnx_attr_int(im, "axis", -1, &axis));
    TP_TRY(onnx_attr_float(im, "epsilon", 1e-5, &eps));
    tp_attrs attrs = TP_ATTRS_INIT;
    int rank = type_of(im, operands[0]).ndim;
    TP_TRY(normalize_axis(im, axis, rank, &attrs.axis));
    attrs.eps = eps;
    TP_TRY(emit_output(im, "layer_norm", operands, operands[2] == ONNX_NO_HANDLE ? 2 : 3, &attrs));
    if (im->node->n_output < 2) return TP_OK;
    return layer_norm_statistics(im, operands[0], (int)attrs.axis, rank, eps);
}

static tp_status convert_gelu(onnx_importer *im) {
    onnx_handle x;
    const char *approximate;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_string(im, "approximate", "none", &approximate));
    tp_attrs attrs = TP_ATTRS_INIT;
    if (strcmp(approximate, "tanh") == 0)
        attrs.approximate = TP_GELU_TANH;
    else if (strcmp(approximate, "none") != 0)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                               "approximate='%s' (expected 'none' or 'tanh')", approximate);
    return emit_output(im, "gelu", &x, 1, &attrs);
}

static tp_status convert_softplus(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    return emit_output(im, "softplus", &x, 1, NULL);
}

/* ---- reductions ---- */

/* ReduceMax/Min over a size-0 axis give the identity (-inf/+inf, false/true
 * for bool, the type's extremes for integers); the table's max/min refuse
 * it, so such a node becomes a `full` of the result's shape. */
static tp_status empty_extremum(onnx_importer *im, onnx_handle x, const tp_attrs *reduce,
                                bool is_max, bool *handled) {
    tp_type type = type_of(im, x);
    bool reduced[TP_MAX_DIMS] = {false}, empty = false;
    for (int d = 0; d < type.ndim; d++) reduced[d] = reduce->naxes == 0;
    for (int i = 0; i < reduce->naxes; i++) {
        int64_t axis = 0;
        TP_TRY(normalize_axis(im, reduce->axes[i], type.ndim, &axis));
        reduced[axis] = true;
    }
    for (int d = 0; d < type.ndim; d++) empty |= reduced[d] && type.dims[d] == 0;
    *handled = false;
    if (!empty) return TP_OK;
    tp_attrs attrs = TP_ATTRS_INIT;
    for (int d = 0; d < type.ndim; d++) {
        if (reduced[d] && !reduce->keepdim) continue;
        if (TP_DIM_IS_SYMBOL(type.dims[d])) return TP_OK;
        attrs.shape[attrs.shape_ndim++] = reduced[d] ? 1 : type.dims[d];
    }
    attrs.dtype = type.dtype;
    switch (type.dtype) {
    case TP_BOOL:
        attrs.value = is_max ? 0.0 : 1.0;
        break;
    case TP_I32:
        attrs.value = is_max ? INT32_MIN : INT32_MAX;
        break;
    case TP_I64:
        attrs.value = is_max ? -9.2233720368547748e18 : 9.2233720368547748e18;
        break;
    default:
        attrs.value = is_max ? -INFINITY : INFINITY;
        break;
    }
    if (type.dtype == TP_I64) return TP_OK; /* not exactly representable: leave it to the op */
    *handled = true;
    return emit_output(im, "full", NULL, 0, &attrs);
}

/* axes from the attribute (older opsets) or input 1 (ReduceSum 13+, the
 * others 18+); empty means all unless noop_with_empty_axes. */
static tp_status reduce(onnx_importer *im, const char *op, const char *pre, const char *post) {
    onnx_handle x, value;
    int64_t keepdims, noop;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "keepdims", 1, &keepdims));
    TP_TRY(onnx_attr_int(im, "noop_with_empty_axes", 0, &noop));
    tp_attrs attrs = TP_ATTRS_INIT;
    int count;
    TP_TRY(onnx_attr_ints(im, "axes", attrs.axes, TP_MAX_DIMS, &count));
    if (count < 0) TP_TRY(onnx_constant_ints(im, 1, "axes", attrs.axes, TP_MAX_DIMS, &count));
    if (count <= 0 && noop) return bind_output(im, 0, x);
    attrs.naxes = count < 0 ? 0 : count;
    attrs.keepdim = keepdims != 0;
    if (strcmp(op, "max") == 0 || strcmp(op, "min") == 0) {
        bool handled;
        TP_TRY(empty_extremum(im, x, &attrs, strcmp(op, "max") == 0, &handled));
        if (handled) return TP_OK;
    }
    value = x;
    if (pre) {
        if (strcmp(pre, "square") == 0) {
            onnx_handle operands[2] = {x, x};
            TP_TRY(onnx_emit(im, "mul", operands, 2, NULL, NULL, &value));
        } else
            TP_TRY(onnx_emit(im, pre, &x, 1, NULL, NULL, &value));
    }
    if (!post) return emit_output(im, op, &value, 1, &attrs);
    TP_TRY(onnx_emit(im, op, &value, 1, &attrs, NULL, &value));
    return emit_output(im, post, &value, 1, NULL);
}
static tp_status convert_reduce_sum(onnx_importer *im) {
    return reduce(im, "sum", NULL, NULL);
}
static tp_status convert_reduce_mean(onnx_importer *im) {
    return reduce(im, "mean", NULL, NULL);
}
static tp_status convert_reduce_max(onnx_importer *im) {
    return reduce(im, "max", NULL, NULL);
}
static tp_status convert_reduce_min(onnx_importer *im) {
    return reduce(im, "min", NULL, NULL);
}
static tp_status convert_reduce_l1(onnx_importer *im) {
    return reduce(im, "sum", "abs", NULL);
}
static tp_status convert_reduce_l2(onnx_importer *im) {
    return reduce(im, "sum", "square", "sqrt");
}
static tp_status convert_reduce_sum_square(onnx_importer *im) {
    return reduce(im, "sum", "square", NULL);
}
static tp_status convert_reduce_log_sum(onnx_importer *im) {
    return reduce(im, "sum", NULL, "log");
}
static tp_status convert_reduce_log_sum_exp(onnx_importer *im) {
    return reduce(im, "sum", "exp", "log");
}

static tp_status convert_argmax(onnx_importer *im) {
    onnx_handle x;
    int64_t axis, keepdims, last;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis));
    TP_TRY(onnx_attr_int(im, "keepdims", 1, &keepdims));
    TP_TRY(onnx_attr_int(im, "select_last_index", 0, &last));
    if (last)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "select_last_index=1 is not supported (ties pick the first index)");
    tp_attrs attrs = TP_ATTRS_INIT;
    TP_TRY(normalize_axis(im, axis, type_of(im, x).ndim, &attrs.axis));
    attrs.keepdim = keepdims != 0;
    return emit_output(im, "argmax", &x, 1, &attrs);
}

/* ---- shapes ---- */

static tp_status static_dims(onnx_importer *im, const tp_type *type, const char *why) {
    for (int d = 0; d < type->ndim; d++)
        if (TP_DIM_IS_SYMBOL(type->dims[d]))
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "%s needs the input's sizes at import time, but dimension %d "
                                   "is the symbol '%s' (give the graph input a fixed size)",
                                   why, d, tp_graph_symbol_name(im->graph, type->dims[d]));
    return TP_OK;
}

static tp_status ints_constant(onnx_importer *im, const int64_t *values, int count,
                               onnx_handle *out) {
    int64_t shape[1] = {count};
    tp_tensor *tensor;
    TP_TRY(tp_tensor_from_data(TP_I64, 1, shape, values, &tensor));
    return onnx_new_constant(im, tensor, out);
}

static tp_status convert_identity(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    return bind_output(im, 0, x);
}

static tp_status convert_dropout(onnx_importer *im) {
    onnx_handle training = onnx_input(im, 2);
    if (training != ONNX_NO_HANDLE) {
        double value;
        TP_TRY(onnx_constant_scalar(im, 2, "training_mode", &value));
        if (value != 0.0)
            return onnx_node_error(im, TP_ERR_UNSUPPORTED, "training_mode=true is not supported");
    }
    TP_TRY(convert_identity(im));
    if (im->node->n_output < 2 || !im->node->output[1][0]) return TP_OK;
    /* Inference keeps every element: the mask is all true. */
    onnx_handle x, mask;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    TP_TRY(static_dims(im, &type, "Dropout's mask"));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = type.ndim;
    memcpy(attrs.shape, type.dims, (size_t)type.ndim * sizeof(int64_t));
    attrs.dtype = TP_BOOL;
    attrs.value = 1.0;
    TP_TRY(onnx_emit(im, "full", NULL, 0, &attrs, output_name(im, 1), &mask));
    return bind_output(im, 1, mask);
}

static tp_status convert_shape(onnx_importer *im) {
    onnx_handle x, result;
    int64_t start, end;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    TP_TRY(onnx_attr_int(im, "start", 0, &start));
    TP_TRY(onnx_attr_int(im, "end", type.ndim, &end));
    if (start < 0) start += type.ndim;
    if (end < 0) end += type.ndim;
    start = start < 0 ? 0 : start > type.ndim ? type.ndim : start;
    end = end < start ? start : end > type.ndim ? type.ndim : end;
    tp_type part = {.dtype = type.dtype, .ndim = (int32_t)(end - start)};
    memcpy(part.dims, type.dims + start, (size_t)part.ndim * sizeof(int64_t));
    TP_TRY(static_dims(im, &part, "Shape"));
    TP_TRY(ints_constant(im, part.dims, part.ndim, &result));
    return bind_output(im, 0, result);
}

static tp_status convert_size(onnx_importer *im) {
    onnx_handle x, result;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    TP_TRY(static_dims(im, &type, "Size"));
    int64_t numel = 1;
    for (int d = 0; d < type.ndim; d++) numel *= type.dims[d];
    TP_TRY(scalar(im, TP_I64, (double)numel, &result));
    return bind_output(im, 0, result);
}

static tp_status convert_reshape(onnx_importer *im) {
    onnx_handle x;
    int64_t allow_zero;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "allowzero", 0, &allow_zero));
    tp_attrs attrs = TP_ATTRS_INIT;
    int count;
    TP_TRY(onnx_constant_ints(im, 1, "shape", attrs.shape, TP_MAX_DIMS, &count));
    if (count < 0) return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "the shape input is missing");
    tp_type type = type_of(im, x);
    for (int d = 0; d < count; d++) {
        if (attrs.shape[d] != 0 || allow_zero) continue;
        if (d >= type.ndim)
            return onnx_node_error(im, TP_ERR_SHAPE,
                                   "shape entry %d is 0 (copy) but the input "
                                   "has rank %d",
                                   d, type.ndim);
        if (TP_DIM_IS_SYMBOL(type.dims[d]))
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "shape entry %d copies the symbolic dimension '%s'", d,
                                   tp_graph_symbol_name(im->graph, type.dims[d]));
        attrs.shape[d] = type.dims[d];
    }
    attrs.shape_ndim = count;
    return emit_output(im, "reshape", &x, 1, &attrs);
}

static tp_status convert_flatten(onnx_importer *im) {
    onnx_handle x;
    int64_t axis;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_type type = type_of(im, x);
    TP_TRY(onnx_attr_int(im, "axis", 1, &axis));
    if (axis < -type.ndim || axis > type.ndim)
        return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT, "axis %" PRId64 " for rank %d", axis,
                               type.ndim);
    if (axis < 0) axis += type.ndim;
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = 2;
    for (int side = 0; side < 2; side++) {
        int64_t product = 1;
        bool symbolic = false;
        for (int d = side ? (int)axis : 0; d < (side ? type.ndim : (int)axis); d++) {
            if (TP_DIM_IS_SYMBOL(type.dims[d]))
                symbolic = true;
            else
                product *= type.dims[d];
        }
        attrs.shape[side] = symbolic ? -1 : product;
    }
    if (attrs.shape[0] < 0 && attrs.shape[1] < 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                               "both sides of axis %" PRId64 " hold symbolic dimensions", axis);
    return emit_output(im, "reshape", &x, 1, &attrs);
}

static tp_status convert_transpose(onnx_importer *im) {
    onnx_handle x;
    TP_TRY(onnx_required_input(im, 0, &x));
    tp_attrs attrs = TP_ATTRS_INIT;
    int rank = type_of(im, x).ndim, count;
    TP_TRY(onnx_attr_ints(im, "perm", attrs.perm, TP_MAX_DIMS, &count));
    if (count < 0) {
        count = rank;
        for (int d = 0; d < rank; d++) attrs.perm[d] = rank - 1 - d;
    }
    attrs.nperm = count;
    return emit_output(im, "permute", &x, 1, &attrs);
}

static tp_status convert_concat(onnx_importer *im) {
    onnx_handle operands[TP_ONNX_MAX_CONCAT];
    int count = 0;
    int64_t axis;
    if (im->node->n_input > TP_ONNX_MAX_CONCAT)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "%zu inputs (at most %d)", im->node->n_input,
                               TP_ONNX_MAX_CONCAT);
    if (im->node->n_input == 0)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "Concat needs at least one input");
    for (int i = 0; i < (int)im->node->n_input; i++) {
        onnx_handle handle;
        TP_TRY(onnx_required_input(im, i, &handle));
        operands[count++] = handle;
    }
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis));
    tp_attrs attrs = TP_ATTRS_INIT;
    TP_TRY(normalize_axis(im, axis, type_of(im, operands[0]).ndim, &attrs.axis));
    return emit_output(im, "concat", operands, count, &attrs);
}

/* Squeeze/Unsqueeze axes: an input from opset 13, an attribute before. */
static tp_status squeeze_axes(onnx_importer *im, int64_t *axes, int *count) {
    TP_TRY(onnx_attr_ints(im, "axes", axes, TP_MAX_DIMS, count));
    if (*count < 0) TP_TRY(onnx_constant_ints(im, 1, "axes", axes, TP_MAX_DIMS, count));
    return TP_OK;
}

static tp_status convert_squeeze(onnx_importer *im) {
    onnx_handle x;
    tp_attrs attrs = TP_ATTRS_INIT;
    int count;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(squeeze_axes(im, attrs.axes, &count));
    int rank = type_of(im, x).ndim;
    for (int i = 0; i < count; i++) TP_TRY(normalize_axis(im, attrs.axes[i], rank, &attrs.axes[i]));
    attrs.naxes = count < 0 ? 0 : count;
    return emit_output(im, "squeeze", &x, 1, &attrs);
}

static int compare_ints(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static tp_status convert_unsqueeze(onnx_importer *im) {
    onnx_handle x;
    int64_t axes[TP_MAX_DIMS];
    int count;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(squeeze_axes(im, axes, &count));
    if (count <= 0) return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "axes are missing");
    int rank = type_of(im, x).ndim + count;
    if (rank > TP_MAX_DIMS)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "the result has rank %d (at most %d)", rank,
                               TP_MAX_DIMS);
    for (int i = 0; i < count; i++) TP_TRY(normalize_axis(im, axes[i], rank, &axes[i]));
    qsort(axes, (size_t)count, sizeof axes[0], compare_ints);
    for (int i = 0; i < count; i++) {
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = axes[i];
        TP_TRY(onnx_emit(im, "unsqueeze", &x, 1, &attrs, i == count - 1 ? output_name(im, 0) : NULL,
                         &x));
    }
    return bind_output(im, 0, x);
}

/* Expand broadcasts both ways: the result is broadcast(input, shape). */
static tp_status convert_expand(onnx_importer *im) {
    onnx_handle x;
    int64_t shape[TP_MAX_DIMS];
    int count;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_constant_ints(im, 1, "shape", shape, TP_MAX_DIMS, &count));
    if (count < 0) return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "the shape input is missing");
    tp_type type = type_of(im, x);
    int rank = type.ndim > count ? type.ndim : count;
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = rank;
    for (int d = 0; d < rank; d++) {
        int in_d = d - (rank - type.ndim), shape_d = d - (rank - count);
        int64_t want = shape_d >= 0 ? shape[shape_d] : 1;
        attrs.shape[d] = want == 1 ? (in_d >= 0 ? -1 : 1) : want;
    }
    return emit_output(im, "expand", &x, 1, &attrs);
}

static tp_status convert_slice(onnx_importer *im) {
    onnx_handle x;
    int64_t starts[TP_MAX_DIMS], ends[TP_MAX_DIMS], axes[TP_MAX_DIMS], steps[TP_MAX_DIMS];
    int count, ends_count, axes_count, steps_count;
    TP_TRY(onnx_required_input(im, 0, &x));
    if (im->opset < 10) {
        TP_TRY(onnx_attr_ints(im, "starts", starts, TP_MAX_DIMS, &count));
        TP_TRY(onnx_attr_ints(im, "ends", ends, TP_MAX_DIMS, &ends_count));
        TP_TRY(onnx_attr_ints(im, "axes", axes, TP_MAX_DIMS, &axes_count));
        steps_count = -1;
    } else {
        TP_TRY(onnx_constant_ints(im, 1, "starts", starts, TP_MAX_DIMS, &count));
        TP_TRY(onnx_constant_ints(im, 2, "ends", ends, TP_MAX_DIMS, &ends_count));
        TP_TRY(onnx_constant_ints(im, 3, "axes", axes, TP_MAX_DIMS, &axes_count));
        TP_TRY(onnx_constant_ints(im, 4, "steps", steps, TP_MAX_DIMS, &steps_count));
    }
    int rank = type_of(im, x).ndim;
    if (count < 0 || ends_count != count || (axes_count >= 0 && axes_count != count) ||
        (steps_count >= 0 && steps_count != count))
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                               "starts, ends, axes and steps must have one entry per sliced axis");
    for (int i = 0; i < count; i++) {
        tp_attrs attrs = TP_ATTRS_INIT;
        int64_t axis = axes_count >= 0 ? axes[i] : i;
        TP_TRY(normalize_axis(im, axis, rank, &attrs.axis));
        attrs.step = steps_count >= 0 ? steps[i] : 1;
        if (attrs.step <= 0)
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "step %" PRId64 " on axis %" PRId64 ": negative steps are not "
                                   "supported",
                                   attrs.step, axis);
        attrs.start = starts[i];
        attrs.stop = ends[i];
        TP_TRY(
            onnx_emit(im, "slice", &x, 1, &attrs, i == count - 1 ? output_name(im, 0) : NULL, &x));
    }
    return bind_output(im, 0, x);
}

/* Gather with indices known at import time (a scalar or a short list, as in
 * x[:, 0]): slices (and a concat) along the axis, which every backend runs;
 * a scalar index drops the axis. */
static tp_status gather_by_slices(onnx_importer *im) {
    onnx_handle x, pieces[TP_ONNX_MAX_CONCAT];
    int64_t axis, indices[TP_ONNX_MAX_CONCAT];
    int count;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis));
    tp_type type = type_of(im, x);
    TP_TRY(normalize_axis(im, axis, type.ndim, &axis));
    onnx_handle index_handle;
    TP_TRY(onnx_required_input(im, 1, &index_handle));
    const tp_tensor *index_tensor = im->values[index_handle].constant
                                        ? im->values[index_handle].constant
                                        : im->values[index_handle].known;
    TP_TRY(onnx_constant_ints(im, 1, "indices", indices, TP_ONNX_MAX_CONCAT, &count));
    int64_t length = type.dims[axis];
    for (int i = 0; i < count; i++) {
        if (TP_DIM_IS_SYMBOL(length) && indices[i] < 0)
            return onnx_node_error(im, TP_ERR_UNSUPPORTED, "negative index on a symbolic axis");
        if (!TP_DIM_IS_SYMBOL(length) && (indices[i] < -length || indices[i] >= length))
            return onnx_node_error(im, TP_ERR_INVALID_ARGUMENT,
                                   "index %" PRId64 " is out of range for axis %" PRId64
                                   " of size %" PRId64,
                                   indices[i], axis, length);
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = axis;
        attrs.start = indices[i] < 0 ? indices[i] + length : indices[i];
        attrs.stop = attrs.start + 1;
        TP_TRY(onnx_emit(im, "slice", &x, 1, &attrs, NULL, &pieces[i]));
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    if (tp_tensor_ndim(index_tensor) == 0) {
        attrs.naxes = 1;
        attrs.axes[0] = axis;
        return emit_output(im, "squeeze", &pieces[0], 1, &attrs);
    }
    if (count == 0)
        return onnx_node_error(im, TP_ERR_UNSUPPORTED, "Gather with no indices is not supported");
    return emit_output(im, "concat", pieces, count, &attrs);
}

static bool indices_fit_slices(const onnx_importer *im, onnx_handle data, onnx_handle indices) {
    const onnx_value *value = &im->values[indices];
    const tp_tensor *known = value->constant ? value->constant : value->known;
    if (im->values[data].constant) return false; /* folds through the gather kernel */
    return known && tp_tensor_ndim(known) <= 1 && tp_tensor_numel(known) >= 1 &&
           tp_tensor_numel(known) <= 8;
}

/* Gather: the gather op, or slices for a few indices known at import time. */
static tp_status convert_gather(onnx_importer *im) {
    onnx_handle operands[2];
    int64_t axis;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    if (indices_fit_slices(im, operands[0], operands[1])) return gather_by_slices(im);
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return emit_output(im, "gather", operands, 2, &attrs);
}

static tp_status convert_gather_elements(onnx_importer *im) {
    onnx_handle operands[2];
    int64_t axis;
    TP_TRY(onnx_required_input(im, 0, &operands[0]));
    TP_TRY(onnx_required_input(im, 1, &operands[1]));
    TP_TRY(onnx_attr_int(im, "axis", 0, &axis));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return emit_output(im, "gather_elements", operands, 2, &attrs);
}

/* Tile with repeats known at import time: a concat of copies per axis. */
static tp_status convert_tile(onnx_importer *im) {
    onnx_handle x;
    int64_t repeats[TP_MAX_DIMS];
    int count;
    TP_TRY(onnx_required_input(im, 0, &x));
    TP_TRY(onnx_constant_ints(im, 1, "repeats", repeats, TP_MAX_DIMS, &count));
    if (count != type_of(im, x).ndim)
        return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "repeats has %d entries for rank %d",
                               count, type_of(im, x).ndim);
    for (int d = 0; d < count; d++) {
        if (repeats[d] == 1) continue;
        if (repeats[d] < 1 || repeats[d] > TP_ONNX_MAX_CONCAT)
            return onnx_node_error(im, TP_ERR_UNSUPPORTED, "repeat %" PRId64 " on axis %d (1..%d)",
                                   repeats[d], d, TP_ONNX_MAX_CONCAT);
        onnx_handle copies[TP_ONNX_MAX_CONCAT];
        for (int64_t r = 0; r < repeats[d]; r++) copies[r] = x;
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = d;
        TP_TRY(onnx_emit(im, "concat", copies, (int)repeats[d], &attrs, NULL, &x));
    }
    return bind_output(im, 0, x);
}

/* ---- creation ---- */

static tp_status convert_constant(onnx_importer *im) {
    const Onnx__NodeProto *node = im->node;
    onnx_handle result;
    for (size_t i = 0; i < node->n_attribute; i++) {
        const Onnx__AttributeProto *attr = node->attribute[i];
        const char *name = attr->name ? attr->name : "";
        tp_tensor *tensor = NULL;
        if (strcmp(name, "value") == 0) {
            if (!attr->t)
                return onnx_node_error(im, TP_ERR_PARSE, "attribute 'value' holds no tensor");
            char what[sizeof im->node_text + 32];
            snprintf(what, sizeof what, "%s: attribute 'value'", im->node_text);
            TP_TRY(onnx_tensor_read(im, attr->t, what, &tensor));
        } else if (strcmp(name, "value_float") == 0 || strcmp(name, "value_int") == 0) {
            bool is_float = name[6] == 'f';
            TP_TRY(tp_tensor_create(is_float ? TP_F32 : TP_I64, 0, NULL, &tensor));
            if (is_float)
                *(float *)tp_tensor_data_mut(tensor) = attr->f;
            else
                *(int64_t *)tp_tensor_data_mut(tensor) = attr->i;
        } else if (strcmp(name, "value_floats") == 0 || strcmp(name, "value_ints") == 0) {
            bool is_float = name[6] == 'f';
            int64_t shape[1] = {(int64_t)(is_float ? attr->n_floats : attr->n_ints)};
            TP_TRY(tp_tensor_from_data(
                is_float ? TP_F32 : TP_I64, 1, shape,
                is_float ? (const void *)attr->floats : (const void *)attr->ints, &tensor));
        } else {
            return onnx_node_error(im, TP_ERR_UNSUPPORTED,
                                   "attribute '%s' is not supported (value, value_float(s) and "
                                   "value_int(s) are)",
                                   name);
        }
        TP_TRY(onnx_new_constant(im, tensor, &result));
        return bind_output(im, 0, result);
    }
    return onnx_node_error(im, TP_ERR_PARSE, "a Constant needs a value attribute");
}

static tp_status convert_constant_of_shape(onnx_importer *im) {
    tp_attrs attrs = TP_ATTRS_INIT;
    int count;
    TP_TRY(onnx_constant_ints(im, 0, "shape", attrs.shape, TP_MAX_DIMS, &count));
    if (count < 0) return onnx_node_error(im, TP_ERR_INVALID_GRAPH, "the shape input is missing");
    attrs.shape_ndim = count;
    attrs.dtype = TP_F32;
    attrs.value = 0.0;
    const Onnx__AttributeProto *value = onnx_attr(im->node, "value");
    if (value && value->t) {
        tp_tensor *tensor;
        TP_TRY(onnx_tensor_read(im, value->t, "attribute 'value'", &tensor));
        attrs.dtype = tp_tensor_dtype(tensor);
        attrs.value = tp_tensor_numel(tensor) ? tp_tensor_get_f64(tensor, 0) : 0.0;
        tp_tensor_release(tensor);
    }
    return emit_output(im, "full", NULL, 0, &attrs);
}

static tp_status convert_range(onnx_importer *im) {
    double start, limit, delta;
    onnx_handle first;
    TP_TRY(onnx_required_input(im, 0, &first));
    TP_TRY(onnx_constant_scalar(im, 0, "start", &start));
    TP_TRY(onnx_constant_scalar(im, 1, "limit", &limit));
    TP_TRY(onnx_constant_scalar(im, 2, "delta", &delta));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.range_start = start;
    attrs.range_stop = limit;
    attrs.range_step = delta;
    attrs.dtype = type_of(im, first).dtype;
    return emit_output(im, "arange", NULL, 0, &attrs);
}

/* ---- the table ---- */

static const struct {
    const char *op_type;
    onnx_convert_fn convert;
} converters[] = {
    {"Abs", convert_abs},
    {"Add", convert_add},
    {"And", convert_and},
    {"ArgMax", convert_argmax},
    {"AveragePool", onnx_convert_average_pool},
    {"Cast", convert_cast},
    {"Ceil", convert_ceil},
    {"Clip", convert_clip},
    {"Concat", convert_concat},
    {"Constant", convert_constant},
    {"ConstantOfShape", convert_constant_of_shape},
    {"Conv", onnx_convert_conv},
    {"ConvTranspose", onnx_convert_conv_transpose},
    {"Cos", convert_cos},
    {"Div", convert_div},
    {"Dropout", convert_dropout},
    {"Elu", convert_elu},
    {"Equal", convert_equal},
    {"Erf", convert_erf},
    {"Exp", convert_exp},
    {"Expand", convert_expand},
    {"Flatten", convert_flatten},
    {"Floor", convert_floor},
    {"Gather", convert_gather},
    {"GatherElements", convert_gather_elements},
    {"Gelu", convert_gelu},
    {"Gemm", convert_gemm},
    {"GlobalAveragePool", onnx_convert_global_average_pool},
    {"GlobalMaxPool", onnx_convert_global_max_pool},
    {"Greater", convert_greater},
    {"GreaterOrEqual", convert_greater_equal},
    {"HardSigmoid", convert_hard_sigmoid},
    {"HardSwish", convert_hard_swish},
    {"Identity", convert_identity},
    {"IsInf", convert_isinf},
    {"IsNaN", convert_isnan},
    {"LayerNormalization", convert_layer_norm},
    {"LeakyRelu", convert_leaky_relu},
    {"Less", convert_less},
    {"LessOrEqual", convert_less_equal},
    {"Log", convert_log},
    {"LogSoftmax", convert_log_softmax},
    {"MatMul", convert_matmul},
    {"Max", convert_max},
    {"MaxPool", onnx_convert_max_pool},
    {"Mean", convert_mean},
    {"Min", convert_min},
    {"Mod", convert_mod},
    {"Mul", convert_mul},
    {"Neg", convert_neg},
    {"Not", convert_not},
    {"Or", convert_or},
    {"PRelu", convert_prelu},
    {"Pow", convert_pow},
    {"Range", convert_range},
    {"Reciprocal", convert_reciprocal},
    {"ReduceL1", convert_reduce_l1},
    {"ReduceL2", convert_reduce_l2},
    {"ReduceLogSum", convert_reduce_log_sum},
    {"ReduceLogSumExp", convert_reduce_log_sum_exp},
    {"ReduceMax", convert_reduce_max},
    {"ReduceMean", convert_reduce_mean},
    {"ReduceMin", convert_reduce_min},
    {"ReduceSum", convert_reduce_sum},
    {"ReduceSumSquare", convert_reduce_sum_square},
    {"Relu", convert_relu},
    {"Reshape", convert_reshape},
    {"Shape", convert_shape},
    {"Sigmoid", convert_sigmoid},
    {"Sign", convert_sign},
    {"Sin", convert_sin},
    {"Size", convert_size},
    {"Slice", convert_slice},
    {"Softmax", convert_softmax},
    {"Softplus", convert_softplus},
    {"Sqrt", convert_sqrt},
    {"Squeeze", convert_squeeze},
    {"Sub", convert_sub},
    {"Sum", convert_sum},
    {"Tanh", convert_tanh},
    {"Tile", convert_tile},
    {"Transpose", convert_transpose},
    {"Unsqueeze", convert_unsqueeze},
    {"Where", convert_where},
    {"Xor", convert_xor},
};

onnx_convert_fn onnx_converter(const char *op_type) {
    for (size_t i = 0; i < sizeof converters / sizeof converters[0]; i++)
        if (strcmp(converters[i].op_type, op_type) == 0) return converters[i].convert;
    return NULL;
}

const char *tp_onnx_supported_op(int index) {
    if (index < 0 || index >= (int)(sizeof converters / sizeof converters[0])) return NULL;
    return converters[index].op_type;
}
