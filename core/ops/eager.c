/* The eager API of ops.h: the generic path tp_op (look up, infer, allocate,
 * run the reference kernel, hand the result to the ctx's scope, tell the
 * capture recorder), one typed wrapper per op that only fills tp_attrs, and
 * the metadata and value reads. Owns no op semantics: those are the op
 * table's infer and kernel functions. */
#include <math.h>
#include <string.h>

#include "../tensor/tensor_internal.h"
#include "ctx_internal.h"
#include "kernel_dispatch.h"
#include "op_args.h"

static tp_type type_of(const tp_tensor *tensor) {
    tp_type type = {.dtype = tensor->dtype, .ndim = tensor->ndim};
    memcpy(type.dims, tensor->shape, sizeof(int64_t) * (size_t)tensor->ndim);
    return type;
}

/* Makes the thread's message start with "OP: " and keeps it in the ctx. */
static tp_status op_failed(tp_ctx *ctx, const char *op_name, tp_status status) {
    size_t length = strlen(op_name);
    const char *message = tp_last_error();
    if (strncmp(message, op_name, length) != 0 || message[length] != ':')
        tp_error_prefix(status, "%s: ", op_name);
    return tp_ctx_record_error(ctx, status);
}

/* A traced tensor belongs to the capture running on one ctx: an op on any
 * other ctx would run outside the graph and its result would be frozen. */
static tp_status check_same_capture(tp_ctx *ctx, const char *what, const tp_tensor *input) {
    tp_tensor_trace_hook *hook = input->trace;
    if (!hook || hook->recorder == (const void *)ctx->recorder) return TP_OK;
    hook->on_foreign_ctx(hook, input, what);
    return tp_error_set(TP_ERR_STATE,
                        "%s: the tp_ctx %p is not the ctx of the capture that traces this input; "
                        "run every op of a compiled function on the ctx it receives",
                        what, (void *)ctx);
}

/* For reads (tp_ndim, tp_dim, tp_item_*): true when `x` may be read on
 * `ctx`; otherwise the ctx keeps the foreign-ctx error. */
static bool read_on_own_ctx(tp_ctx *ctx, const char *what, const tp_tensor *x) {
    tp_status status = check_same_capture(ctx, what, x);
    if (status == TP_OK) return true;
    tp_ctx_record_error(ctx, status);
    return false;
}

static tp_status run_op(tp_ctx *ctx, const tp_op_def *op, tp_tensor *const *inputs, int num_inputs,
                        const tp_attrs *attrs, tp_tensor **out) {
    tp_type types[64];
    if (num_inputs < 0 || num_inputs > (int)(sizeof types / sizeof types[0]) ||
        (num_inputs > 0 && !inputs))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: invalid input list (%d inputs)", op->name,
                            num_inputs);
    for (int i = 0; i < num_inputs; i++) {
        TP_TRY(check_same_capture(ctx, op->name, inputs[i]));
        types[i] = type_of(inputs[i]);
    }
    tp_type result_type;
    TP_TRY(tp_op_infer(op, types, num_inputs, attrs, &result_type));
    /* A constant's payload is read as data: a traced one must be computed. */
    tp_tensor_note_raw_access(attrs->data, op->name);
    if (ctx->recorder && ctx->recorder->trace_op)
        return ctx->recorder->trace_op(ctx->recorder, op, inputs, num_inputs, attrs, &result_type,
                                       out);
    tp_tensor *result = NULL;
    TP_TRY(tp_tensor_create_uninit(result_type.dtype, result_type.ndim, result_type.dims, &result));
    tp_status status = tp_op_run_kernel(op, inputs, num_inputs, attrs, result);
    if (status == TP_OK && ctx->recorder && ctx->recorder->on_op)
        status = ctx->recorder->on_op(ctx->recorder, op, inputs, num_inputs, attrs, result);
    if (status != TP_OK) {
        tp_tensor_release(result);
        return status;
    }
    *out = result;
    return TP_OK;
}

tp_tensor *tp_op(tp_ctx *ctx, const char *op_name, tp_tensor *const *inputs, int num_inputs,
                 const tp_attrs *attrs) {
    if (!ctx) return NULL;
    for (int i = 0; inputs && i < num_inputs; i++)
        if (!inputs[i]) return NULL; /* an earlier failure, already recorded */
    const tp_op_def *op = tp_op_find(op_name);
    if (!op) {
        tp_error_set(TP_ERR_NOT_FOUND, "unknown op '%s' (see core/ops/op_list.def for the list)",
                     op_name ? op_name : "(null)");
        tp_ctx_record_error(ctx, TP_ERR_NOT_FOUND);
        return NULL;
    }
    static const tp_attrs default_attrs = TP_ATTRS_INIT;
    tp_tensor *result = NULL;
    tp_status status = run_op(ctx, op, inputs, num_inputs, attrs ? attrs : &default_attrs, &result);
    if (status != TP_OK) {
        op_failed(ctx, op->name, status);
        return NULL;
    }
    return tp_ctx_adopt(ctx, result);
}

/* ---- metadata and values ---- */

int tp_ndim(tp_ctx *ctx, tp_tensor *x) {
    if (!ctx || !x || !read_on_own_ctx(ctx, "ndim", x)) return -1;
    if (ctx->recorder && ctx->recorder->on_metadata)
        ctx->recorder->on_metadata(ctx->recorder, x, -1);
    return x->ndim;
}

int64_t tp_dim(tp_ctx *ctx, tp_tensor *x, int axis) {
    if (!ctx || !x || !read_on_own_ctx(ctx, "dim", x)) return -1;
    tp_type type = type_of(x);
    int normalized;
    tp_status status = tp_axis_normalize("dim", "axis", axis, x->ndim, &type, &normalized);
    if (status != TP_OK) {
        tp_ctx_record_error(ctx, status);
        return -1;
    }
    if (ctx->recorder && ctx->recorder->on_metadata)
        ctx->recorder->on_metadata(ctx->recorder, x, normalized);
    return x->shape[normalized];
}

/* Checks that x has one element; records the error otherwise. */
static bool item_ready(tp_ctx *ctx, tp_tensor *x, const char *what, tp_item_kind kind) {
    if (!ctx || !x || !read_on_own_ctx(ctx, what, x)) return false;
    if (x->numel != 1) {
        tp_type type = type_of(x);
        char text[TP_DESCRIBE_MAX];
        tp_ctx_record_error(ctx,
                            tp_error_set(TP_ERR_SHAPE,
                                         "%s: needs a tensor with exactly one element, got "
                                         "%s (%lld elements)",
                                         what, tp_type_text(&type, text), (long long)x->numel));
        return false;
    }
    if (ctx->recorder && ctx->recorder->on_item) {
        tp_status status = ctx->recorder->on_item(ctx->recorder, x, kind);
        if (status != TP_OK) {
            tp_ctx_record_error(ctx, tp_error_prefix(status, "%s: ", what));
            return false;
        }
    }
    return true;
}

bool tp_item_bool(tp_ctx *ctx, tp_tensor *x) {
    if (!item_ready(ctx, x, "item_bool", TP_ITEM_BOOL)) return false;
    return tp_tensor_element_f64(x, 0) != 0.0; /* NaN is nonzero: true */
}

int64_t tp_item_i64(tp_ctx *ctx, tp_tensor *x) {
    if (!item_ready(ctx, x, "item_i64", TP_ITEM_I64)) return 0;
    switch (x->dtype) {
    case TP_I64:
        return *(const int64_t *)x->data;
    case TP_I32:
        return *(const int32_t *)x->data;
    case TP_BOOL:
        return *(const uint8_t *)x->data;
    default:
        break;
    }
    double value = tp_tensor_element_f64(x, 0);
    if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0)) {
        tp_ctx_record_error(ctx, tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                              "item_i64: %s value %g has no int64 value",
                                              tp_dtype_name(x->dtype), value));
        return 0;
    }
    return (int64_t)value; /* truncates toward zero */
}

double tp_item_f64(tp_ctx *ctx, tp_tensor *x) {
    if (!item_ready(ctx, x, "item_f64", TP_ITEM_F64)) return NAN;
    return tp_tensor_element_f64(x, 0);
}

/* ---- typed wrappers: fill attrs, call the generic path ---- */

static tp_tensor *op1(tp_ctx *ctx, const char *name, tp_tensor *x, const tp_attrs *attrs) {
    return tp_op(ctx, name, &x, 1, attrs);
}

static tp_tensor *op2(tp_ctx *ctx, const char *name, tp_tensor *a, tp_tensor *b) {
    tp_tensor *inputs[2] = {a, b};
    return tp_op(ctx, name, inputs, 2, NULL);
}

#define UNARY_WRAPPER(fn)                                                                          \
    tp_tensor *tp_##fn(tp_ctx *ctx, tp_tensor *x) {                                                \
        return op1(ctx, #fn, x, NULL);                                                             \
    }
#define BINARY_WRAPPER(fn)                                                                         \
    tp_tensor *tp_##fn(tp_ctx *ctx, tp_tensor *a, tp_tensor *b) {                                  \
        return op2(ctx, #fn, a, b);                                                                \
    }

UNARY_WRAPPER(neg)
UNARY_WRAPPER(abs)
UNARY_WRAPPER(exp)
UNARY_WRAPPER(log)
UNARY_WRAPPER(sqrt)
UNARY_WRAPPER(rsqrt)
UNARY_WRAPPER(sin)
UNARY_WRAPPER(cos)
UNARY_WRAPPER(tanh)
UNARY_WRAPPER(sigmoid)
UNARY_WRAPPER(relu)
UNARY_WRAPPER(erf)
UNARY_WRAPPER(floor)
UNARY_WRAPPER(ceil)
UNARY_WRAPPER(sign)
UNARY_WRAPPER(logical_not)
UNARY_WRAPPER(silu)

BINARY_WRAPPER(add)
BINARY_WRAPPER(sub)
BINARY_WRAPPER(mul)
BINARY_WRAPPER(div)
BINARY_WRAPPER(pow)
BINARY_WRAPPER(maximum)
BINARY_WRAPPER(minimum)
BINARY_WRAPPER(lt)
BINARY_WRAPPER(le)
BINARY_WRAPPER(gt)
BINARY_WRAPPER(ge)
BINARY_WRAPPER(eq)
BINARY_WRAPPER(ne)
BINARY_WRAPPER(logical_and)
BINARY_WRAPPER(logical_or)
BINARY_WRAPPER(matmul)

tp_tensor *tp_cast(tp_ctx *ctx, tp_tensor *x, tp_dtype dtype) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    return op1(ctx, "cast", x, &attrs);
}

tp_tensor *tp_where(tp_ctx *ctx, tp_tensor *condition, tp_tensor *a, tp_tensor *b) {
    tp_tensor *inputs[3] = {condition, a, b};
    return tp_op(ctx, "where", inputs, 3, NULL);
}

/* Copies a caller's int list into an attrs list field; records an error
 * (naming the op) when it does not fit. */
static bool set_ints(tp_ctx *ctx, const char *op_name, const char *what, int64_t *field,
                     int32_t *count, const int64_t *values, int num_values) {
    if (num_values < 0 || num_values > TP_MAX_DIMS || (num_values > 0 && !values)) {
        tp_ctx_record_error(ctx, tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                              "%s: %d %s given; expected 0 to %d", op_name,
                                              num_values, what, TP_MAX_DIMS));
        return false;
    }
    if (num_values > 0) memcpy(field, values, sizeof(int64_t) * (size_t)num_values);
    *count = num_values;
    return true;
}

static tp_tensor *reduce(tp_ctx *ctx, const char *name, tp_tensor *x, const int64_t *axes,
                         int num_axes, bool keepdim) {
    if (!ctx || !x) return NULL;
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.keepdim = keepdim;
    if (!set_ints(ctx, name, "axes", attrs.axes, &attrs.naxes, axes, num_axes)) return NULL;
    return op1(ctx, name, x, &attrs);
}

tp_tensor *tp_sum(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes, bool keepdim) {
    return reduce(ctx, "sum", x, axes, num_axes, keepdim);
}
tp_tensor *tp_mean(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes, bool keepdim) {
    return reduce(ctx, "mean", x, axes, num_axes, keepdim);
}
tp_tensor *tp_max(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes, bool keepdim) {
    return reduce(ctx, "max", x, axes, num_axes, keepdim);
}
tp_tensor *tp_min(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes, bool keepdim) {
    return reduce(ctx, "min", x, axes, num_axes, keepdim);
}

tp_tensor *tp_argmax(tp_ctx *ctx, tp_tensor *x, int64_t axis, bool keepdim) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    attrs.keepdim = keepdim;
    return op1(ctx, "argmax", x, &attrs);
}

/* ---- shape ---- */

/* reshape and expand: one input and a target shape. */
static tp_tensor *to_shape(tp_ctx *ctx, const char *name, tp_tensor *x, const int64_t *shape,
                           int ndim) {
    if (!ctx || !x) return NULL;
    tp_attrs attrs = TP_ATTRS_INIT;
    if (!set_ints(ctx, name, "dimensions", attrs.shape, &attrs.shape_ndim, shape, ndim))
        return NULL;
    return op1(ctx, name, x, &attrs);
}

tp_tensor *tp_reshape(tp_ctx *ctx, tp_tensor *x, const int64_t *shape, int ndim) {
    return to_shape(ctx, "reshape", x, shape, ndim);
}

tp_tensor *tp_permute(tp_ctx *ctx, tp_tensor *x, const int64_t *perm, int ndim) {
    if (!ctx || !x) return NULL;
    tp_attrs attrs = TP_ATTRS_INIT;
    if (!set_ints(ctx, "permute", "axes", attrs.perm, &attrs.nperm, perm, ndim)) return NULL;
    return op1(ctx, "permute", x, &attrs);
}

tp_tensor *tp_transpose(tp_ctx *ctx, tp_tensor *x, int64_t dim0, int64_t dim1) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = dim0;
    attrs.dim1 = dim1;
    return op1(ctx, "transpose", x, &attrs);
}

tp_tensor *tp_expand(tp_ctx *ctx, tp_tensor *x, const int64_t *shape, int ndim) {
    return to_shape(ctx, "expand", x, shape, ndim);
}

tp_tensor *tp_slice(tp_ctx *ctx, tp_tensor *x, int64_t axis, int64_t start, int64_t stop,
                    int64_t step) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    attrs.start = start;
    attrs.stop = stop;
    attrs.step = step;
    return op1(ctx, "slice", x, &attrs);
}

tp_tensor *tp_concat(tp_ctx *ctx, tp_tensor *const *xs, int count, int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return tp_op(ctx, "concat", xs, count, &attrs);
}

tp_tensor *tp_squeeze(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes) {
    if (!ctx || !x) return NULL;
    tp_attrs attrs = TP_ATTRS_INIT;
    if (!set_ints(ctx, "squeeze", "axes", attrs.axes, &attrs.naxes, axes, num_axes)) return NULL;
    return op1(ctx, "squeeze", x, &attrs);
}

tp_tensor *tp_unsqueeze(tp_ctx *ctx, tp_tensor *x, int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return op1(ctx, "unsqueeze", x, &attrs);
}

/* ---- creation ---- */

tp_tensor *tp_constant(tp_ctx *ctx, tp_dtype dtype, int ndim, const int64_t *shape,
                       const void *data) {
    if (!ctx) return NULL;
    tp_tensor *payload = NULL;
    tp_status status = tp_tensor_from_data(dtype, ndim, shape, data, &payload);
    if (status != TP_OK) {
        op_failed(ctx, "constant", status);
        return NULL;
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    attrs.data = payload;
    tp_tensor *result = tp_op(ctx, "constant", NULL, 0, &attrs);
    tp_tensor_release(payload);
    return result;
}

tp_tensor *tp_full(tp_ctx *ctx, tp_dtype dtype, int ndim, const int64_t *shape, double value) {
    if (!ctx) return NULL;
    tp_attrs attrs = TP_ATTRS_INIT;
    if (!set_ints(ctx, "full", "dimensions", attrs.shape, &attrs.shape_ndim, shape, ndim))
        return NULL;
    attrs.dtype = dtype;
    attrs.value = value;
    return tp_op(ctx, "full", NULL, 0, &attrs);
}

tp_tensor *tp_arange(tp_ctx *ctx, tp_dtype dtype, double start, double stop, double step) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    attrs.range_start = start;
    attrs.range_stop = stop;
    attrs.range_step = step;
    return tp_op(ctx, "arange", NULL, 0, &attrs);
}

tp_tensor *tp_scalar(tp_ctx *ctx, tp_dtype dtype, double value) {
    return tp_full(ctx, dtype, 0, NULL, value);
}

/* ---- composites ---- */

tp_tensor *tp_softmax(tp_ctx *ctx, tp_tensor *x, int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return op1(ctx, "softmax", x, &attrs);
}

tp_tensor *tp_log_softmax(tp_ctx *ctx, tp_tensor *x, int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    return op1(ctx, "log_softmax", x, &attrs);
}

/* Optional operands: NULL weight/bias mean "none" here (not an earlier
 * failure), so check a failed weight or bias before calling. */
tp_tensor *tp_layer_norm(tp_ctx *ctx, tp_tensor *x, tp_tensor *weight, tp_tensor *bias,
                         int64_t axis, double eps) {
    if (!ctx || !x) return NULL;
    if (bias && !weight) {
        tp_ctx_record_error(ctx, tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                              "layer_norm: a bias needs a weight (pass a weight "
                                              "of ones)"));
        return NULL;
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    attrs.eps = eps;
    tp_tensor *inputs[3] = {x, weight, bias};
    return tp_op(ctx, "layer_norm", inputs, bias ? 3 : weight ? 2 : 1, &attrs);
}

tp_tensor *tp_gelu(tp_ctx *ctx, tp_tensor *x, tp_gelu_approximate approximate) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.approximate = approximate;
    return op1(ctx, "gelu", x, &attrs);
}

tp_tensor *tp_softplus(tp_ctx *ctx, tp_tensor *x, double beta, double threshold) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.beta = beta;
    attrs.threshold = threshold;
    return op1(ctx, "softplus", x, &attrs);
}

/* bias NULL means "no bias" (see tp_layer_norm). */
tp_tensor *tp_linear(tp_ctx *ctx, tp_tensor *x, tp_tensor *weight, tp_tensor *bias) {
    if (!ctx || !x || !weight) return NULL;
    tp_tensor *inputs[3] = {x, weight, bias};
    return tp_op(ctx, "linear", inputs, bias ? 3 : 2, NULL);
}
