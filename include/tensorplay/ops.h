/* TensorPlay — ops through a tp_ctx.
 *
 * Every op of the op table can be called here. Outside tp_compile the ops run
 * eagerly with the reference kernels; inside a function given to tp_compile
 * the same calls are recorded into a graph and computed only when a value is
 * read (see compile.h).
 *
 * Scope: a tensor returned by an op belongs to the ctx's current scope and is
 * released when that scope ends (tp_ctx_scope_end) or the ctx is destroyed.
 * To keep one longer, tp_tensor_retain it (you then own that reference).
 * Input tensors are borrowed; ops never take ownership of their inputs.
 *
 * Sticky errors: when an op fails it returns NULL and the ctx keeps the first
 * error (op name, input shapes, what to do): tp_ctx_status / tp_ctx_error.
 * An op given a NULL input (the result of an earlier failure) returns NULL
 * without touching the stored error, so a chain of calls can be checked once
 * at the end. While the ctx holds an error, ops still run on valid inputs.
 */
#ifndef TENSORPLAY_OPS_H
#define TENSORPLAY_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "attrs.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_ctx tp_ctx;

/* NULL only when out of memory. */
TP_API tp_ctx *tp_ctx_create(void);
/* Releases every tensor still in the ctx's scopes. NULL is a no-op. */
TP_API void tp_ctx_destroy(tp_ctx *ctx);

/* The first error since creation or tp_ctx_clear_error; TP_OK / "" if none. */
TP_API tp_status tp_ctx_status(const tp_ctx *ctx);
TP_API const char *tp_ctx_error(const tp_ctx *ctx);
TP_API void tp_ctx_clear_error(tp_ctx *ctx);

/* Scopes nest. scope_end releases every tensor produced since the matching
 * scope_begin, except the `num_keep` tensors in `keep`, which move to the
 * enclosing scope. */
TP_API size_t tp_ctx_scope_begin(tp_ctx *ctx);
TP_API void tp_ctx_scope_end(tp_ctx *ctx, size_t mark, tp_tensor *const *keep, int num_keep);
/* Hands one reference of `tensor` to the ctx's current scope; returns it. */
TP_API tp_tensor *tp_ctx_adopt(tp_ctx *ctx, tp_tensor *tensor);

/* Any op by table name with explicit attributes (attrs may be NULL). */
TP_API tp_tensor *tp_op(tp_ctx *ctx, const char *op_name, tp_tensor *const *inputs, int num_inputs,
                        const tp_attrs *attrs);

/* ---- the op table, for bindings and tools that generate one call per op ---- */
typedef struct tp_op_info {
    size_t struct_size;       /* sizeof(tp_op_info) of the caller; filled up to it */
    const char *name;         /* "add", ... as tp_op takes it */
    const char *kind;         /* "pointwise", "reduction", "matmul", "shape", "creation",
                                 "composite" */
    int min_arity, max_arity; /* tensor inputs */
    uint32_t attr_mask;       /* TP_ATTR_BIT(key) of every attribute the op reads */
} tp_op_info;

#define TP_OP_INFO_INIT                                                                            \
    { .struct_size = sizeof(tp_op_info) }

/* Number of ops; ids are 0 .. count-1 in table order (the TP_PLUGIN_OP_* ids). */
TP_API int tp_op_count(void);
/* Describes op `op_id`; TP_ERR_NOT_FOUND outside 0 .. tp_op_count()-1. */
TP_API tp_status tp_op_describe(int op_id, tp_op_info *out);
/* The default of attribute `key` of op `op_id` when .tpir (or a binding)
 * leaves it out: the text of a .tpir attribute value ("false", "-1", "end",
 * "[]", "1e-05"), the text "(from the result type)" for `dtype` and `shape`,
 * which .tpir takes from the node's written type, or NULL when the attribute
 * is required, the op does not read `key`, or either is out of range. The
 * defaults are listed in tensorplay-ops(7). */
TP_API const char *tp_op_attribute_default(int op_id, tp_attr_key key);

/* ---- metadata and values (recorded by capture: see compile.h) ---- */
TP_API int tp_ndim(tp_ctx *ctx, tp_tensor *x);
TP_API int64_t tp_dim(tp_ctx *ctx, tp_tensor *x, int axis);
/* Value of a one-element tensor. On error: records it, returns false/0/NaN. */
TP_API bool tp_item_bool(tp_ctx *ctx, tp_tensor *x);
TP_API int64_t tp_item_i64(tp_ctx *ctx, tp_tensor *x);
TP_API double tp_item_f64(tp_ctx *ctx, tp_tensor *x);

/* ---- unary pointwise ---- */
TP_API tp_tensor *tp_neg(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_abs(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_exp(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_log(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_sqrt(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_rsqrt(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_sin(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_cos(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_tanh(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_sigmoid(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_relu(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_erf(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_floor(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_ceil(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_sign(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_logical_not(tp_ctx *ctx, tp_tensor *x);
TP_API tp_tensor *tp_cast(tp_ctx *ctx, tp_tensor *x, tp_dtype dtype);

/* ---- binary pointwise (NumPy broadcasting) ---- */
TP_API tp_tensor *tp_add(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_sub(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_mul(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_div(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_pow(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_maximum(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_minimum(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_lt(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_le(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_gt(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_ge(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_eq(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_ne(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_logical_and(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_logical_or(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);
TP_API tp_tensor *tp_where(tp_ctx *ctx, tp_tensor *condition, tp_tensor *a, tp_tensor *b);

/* ---- reductions: axes NULL / num_axes 0 reduces every axis ---- */
TP_API tp_tensor *tp_sum(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes,
                         bool keepdim);
TP_API tp_tensor *tp_mean(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes,
                          bool keepdim);
TP_API tp_tensor *tp_max(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes,
                         bool keepdim);
TP_API tp_tensor *tp_min(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes,
                         bool keepdim);
/* Index of the first maximum along `axis` (i64). */
TP_API tp_tensor *tp_argmax(tp_ctx *ctx, tp_tensor *x, int64_t axis, bool keepdim);

/* ---- matmul (numpy.matmul semantics) ---- */
TP_API tp_tensor *tp_matmul(tp_ctx *ctx, tp_tensor *a, tp_tensor *b);

/* ---- shape ---- */
/* One entry of `shape` may be -1 (inferred). */
TP_API tp_tensor *tp_reshape(tp_ctx *ctx, tp_tensor *x, const int64_t *shape, int ndim);
TP_API tp_tensor *tp_permute(tp_ctx *ctx, tp_tensor *x, const int64_t *perm, int ndim);
TP_API tp_tensor *tp_transpose(tp_ctx *ctx, tp_tensor *x, int64_t dim0, int64_t dim1);
/* NumPy broadcast_to; -1 keeps the input's size for that dimension. */
TP_API tp_tensor *tp_expand(tp_ctx *ctx, tp_tensor *x, const int64_t *shape, int ndim);
/* x[start:stop:step] along `axis` with Python semantics; step > 0;
 * stop TP_SLICE_END means the end. */
TP_API tp_tensor *tp_slice(tp_ctx *ctx, tp_tensor *x, int64_t axis, int64_t start, int64_t stop,
                           int64_t step);
TP_API tp_tensor *tp_concat(tp_ctx *ctx, tp_tensor *const *xs, int count, int64_t axis);
/* axes NULL / num_axes 0 removes every size-1 axis; named axes must be size 1. */
TP_API tp_tensor *tp_squeeze(tp_ctx *ctx, tp_tensor *x, const int64_t *axes, int num_axes);
TP_API tp_tensor *tp_unsqueeze(tp_ctx *ctx, tp_tensor *x, int64_t axis);

/* ---- creation ---- */
/* Copies `data` (C order, dtype elements). */
TP_API tp_tensor *tp_constant(tp_ctx *ctx, tp_dtype dtype, int ndim, const int64_t *shape,
                              const void *data);
TP_API tp_tensor *tp_full(tp_ctx *ctx, tp_dtype dtype, int ndim, const int64_t *shape,
                          double value);
/* Like numpy.arange(start, stop, step, dtype). */
TP_API tp_tensor *tp_arange(tp_ctx *ctx, tp_dtype dtype, double start, double stop, double step);
/* A 0-d tensor holding `value` (same as tp_full with ndim 0). */
TP_API tp_tensor *tp_scalar(tp_ctx *ctx, tp_dtype dtype, double value);

/* ---- composites ---- */
TP_API tp_tensor *tp_softmax(tp_ctx *ctx, tp_tensor *x, int64_t axis);
TP_API tp_tensor *tp_log_softmax(tp_ctx *ctx, tp_tensor *x, int64_t axis);
/* Normalises over axes axis..ndim-1 (ONNX LayerNormalization). weight and
 * bias may be NULL (bias requires weight); their shape is x.shape[axis:]. */
TP_API tp_tensor *tp_layer_norm(tp_ctx *ctx, tp_tensor *x, tp_tensor *weight, tp_tensor *bias,
                                int64_t axis, double eps);
TP_API tp_tensor *tp_gelu(tp_ctx *ctx, tp_tensor *x, tp_gelu_approximate approximate);
TP_API tp_tensor *tp_silu(tp_ctx *ctx, tp_tensor *x);
/* log(1 + exp(beta x)) / beta; x where beta x > threshold (PyTorch). */
TP_API tp_tensor *tp_softplus(tp_ctx *ctx, tp_tensor *x, double beta, double threshold);
/* x @ weight^T (+ bias): weight is [out, in] as in PyTorch; bias may be NULL. */
TP_API tp_tensor *tp_linear(tp_ctx *ctx, tp_tensor *x, tp_tensor *weight, tp_tensor *bias);

#ifdef __cplusplus
}
#endif
#endif
