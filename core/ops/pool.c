/* max_pool and avg_pool over NCW / NCHW data: their shape and dtype rules
 * and reference kernels (docs/ops/semantics.txt). Each output element
 * reduces one window (kernel_shape taps, spaced by dilations, stepped by
 * strides) of its channel plane; taps in the padding are skipped by
 * max_pool and count as zeros for avg_pool with count_include_pad (which
 * then divides by the taps inside the padded input, not beyond it in
 * ceil_mode); without it avg_pool divides by the taps inside the input.
 * Dtypes: max_pool f32 f64 f16 bf16 i32 i64, avg_pool f32 f64 f16 bf16 (f16
 * and bf16 computed in f32); the result has the input's dtype. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "op_args.h"
#include "op_table.h"
#include "window.h"

static tp_status pool_window(const char *op, const tp_type *x, const tp_attrs *attrs,
                             bool integers_allowed, tp_window *w) {
    char text[TP_DESCRIBE_MAX], list[TP_DESCRIBE_MAX];
    bool float_dtype = tp_dtype_is_float(x->dtype); /* f16/bf16 compute in f32 */
    bool int_dtype = x->dtype == TP_I32 || x->dtype == TP_I64;
    if (!float_dtype && !(integers_allowed && int_dtype))
        return tp_error_set(TP_ERR_DTYPE, "%s: the input must be %s, got %s", op,
                            integers_allowed ? "f32, f64, f16, bf16, i32 or i64"
                                             : "f32, f64, f16 or bf16",
                            tp_type_text(x, text));
    if (x->ndim != 3 && x->ndim != 4)
        return tp_error_set(TP_ERR_SHAPE,
                            "%s: the input %s must be NCW (rank 3) or NCHW (rank 4), got rank %d",
                            op, tp_type_text(x, text), x->ndim);
    int spatial = x->ndim - 2;
    if (attrs->nkernel_shape != spatial)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: kernel_shape %s must have %d entries (one per spatial axis of "
                            "the input %s)",
                            op, tp_ints_text(attrs->kernel_shape, attrs->nkernel_shape, list),
                            spatial, tp_type_text(x, text));
    for (int i = 0; i < spatial; i++)
        if (attrs->kernel_shape[i] < 1)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: kernel_shape %s: every entry must be at least 1", op,
                                tp_ints_text(attrs->kernel_shape, spatial, list));
    TP_TRY(tp_window_read(op, x, attrs, attrs->kernel_shape, false, w));
    return tp_window_forward_sizes(op, x, attrs->ceil_mode, w);
}

tp_status tp_op_MAX_POOL_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_type *out) {
    tp_window w;
    TP_TRY(pool_window("max_pool", &inputs[0], attrs, true, &w));
    tp_window_result_type(&w, &inputs[0], inputs[0].dims[1], inputs[0].dtype, out);
    return TP_OK;
}

tp_status tp_op_AVG_POOL_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_type *out) {
    tp_window w;
    TP_TRY(pool_window("avg_pool", &inputs[0], attrs, false, &w));
    tp_window_result_type(&w, &inputs[0], inputs[0].dims[1], inputs[0].dtype, out);
    return TP_OK;
}

static tp_type type_of_tensor(const tp_tensor *t) {
    tp_type type = {.dtype = t->dtype, .ndim = t->ndim};
    for (int d = 0; d < t->ndim; d++) type.dims[d] = t->shape[d];
    return type;
}

/* The taps of window `o` along axis `a`: positions first + i * dilation for
 * i in [0, kernel); `inside` counts those in [0, in), `padded` those in
 * [-pad_begin, in + pad_end). */
static void count_taps(const tp_window *w, int a, int64_t o, int64_t *inside, int64_t *padded) {
    int64_t first = o * w->stride[a] - w->pad_begin[a];
    *inside = *padded = 0;
    for (int64_t i = 0; i < w->kernel[a]; i++) {
        int64_t p = first + i * w->dilation[a];
        *inside += p >= 0 && p < w->in[a];
        *padded += p >= -w->pad_begin[a] && p < w->in[a] + w->pad_end[a];
    }
}

/* One generated function per dtype: POOL_MAX_TAG and POOL_AVG_TAG. */
#define POOL_LOOPS(T, TAG, LOWEST)                                                                 \
    static void pool_max_##TAG(const T *x, T *out, int64_t planes, const tp_window *w) {           \
        for (int64_t c = 0; c < planes; c++) {                                                     \
            const T *plane = x + c * w->in[0] * w->in[1];                                          \
            for (int64_t oh = 0; oh < w->out[0]; oh++)                                             \
                for (int64_t ow = 0; ow < w->out[1]; ow++) {                                       \
                    T best = LOWEST;                                                               \
                    for (int64_t kh = 0; kh < w->kernel[0]; kh++) {                                \
                        int64_t ih = oh * w->stride[0] + kh * w->dilation[0] - w->pad_begin[0];    \
                        if (ih < 0 || ih >= w->in[0]) continue;                                    \
                        for (int64_t kw = 0; kw < w->kernel[1]; kw++) {                            \
                            int64_t iw =                                                           \
                                ow * w->stride[1] + kw * w->dilation[1] - w->pad_begin[1];         \
                            if (iw < 0 || iw >= w->in[1]) continue;                                \
                            T v = plane[ih * w->in[1] + iw];                                       \
                            if (v > best || v != v) best = v; /* NaN propagates */                 \
                        }                                                                          \
                    }                                                                              \
                    *out++ = best;                                                                 \
                }                                                                                  \
        }                                                                                          \
    }

POOL_LOOPS(float, F32, -INFINITY)
POOL_LOOPS(double, F64, -INFINITY)
POOL_LOOPS(int32_t, I32, INT32_MIN)
POOL_LOOPS(int64_t, I64, INT64_MIN)

#define AVG_LOOP(T, TAG)                                                                           \
    static void pool_avg_##TAG(const T *x, T *out, int64_t planes, const tp_window *w,             \
                               bool include_pad) {                                                 \
        for (int64_t c = 0; c < planes; c++) {                                                     \
            const T *plane = x + c * w->in[0] * w->in[1];                                          \
            for (int64_t oh = 0; oh < w->out[0]; oh++) {                                           \
                int64_t inside_h, padded_h;                                                        \
                count_taps(w, 0, oh, &inside_h, &padded_h);                                        \
                for (int64_t ow = 0; ow < w->out[1]; ow++) {                                       \
                    int64_t inside_w, padded_w;                                                    \
                    count_taps(w, 1, ow, &inside_w, &padded_w);                                    \
                    double sum = 0.0;                                                              \
                    for (int64_t kh = 0; kh < w->kernel[0]; kh++) {                                \
                        int64_t ih = oh * w->stride[0] + kh * w->dilation[0] - w->pad_begin[0];    \
                        if (ih < 0 || ih >= w->in[0]) continue;                                    \
                        for (int64_t kw = 0; kw < w->kernel[1]; kw++) {                            \
                            int64_t iw =                                                           \
                                ow * w->stride[1] + kw * w->dilation[1] - w->pad_begin[1];         \
                            if (iw >= 0 && iw < w->in[1]) sum += plane[ih * w->in[1] + iw];        \
                        }                                                                          \
                    }                                                                              \
                    double count = include_pad ? (double)(padded_h * padded_w)                     \
                                               : (double)(inside_h * inside_w);                    \
                    *out++ = (T)(sum / count);                                                     \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

AVG_LOOP(float, F32)
AVG_LOOP(double, F64)

tp_status tp_op_MAX_POOL_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_tensor *out) {
    tp_type type = type_of_tensor(inputs[0]);
    tp_window w;
    TP_TRY(pool_window("max_pool", &type, attrs, true, &w));
    int64_t planes = inputs[0]->shape[0] * inputs[0]->shape[1];
    switch (inputs[0]->dtype) {
    case TP_F32:
        pool_max_F32(inputs[0]->data, out->data, planes, &w);
        break;
    case TP_F64:
        pool_max_F64(inputs[0]->data, out->data, planes, &w);
        break;
    case TP_I32:
        pool_max_I32(inputs[0]->data, out->data, planes, &w);
        break;
    default:
        pool_max_I64(inputs[0]->data, out->data, planes, &w);
        break;
    }
    return TP_OK;
}

tp_status tp_op_AVG_POOL_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_tensor *out) {
    tp_type type = type_of_tensor(inputs[0]);
    tp_window w;
    TP_TRY(pool_window("avg_pool", &type, attrs, false, &w));
    int64_t planes = inputs[0]->shape[0] * inputs[0]->shape[1];
    if (inputs[0]->dtype == TP_F64)
        pool_avg_F64(inputs[0]->data, out->data, planes, &w, attrs->count_include_pad);
    else
        pool_avg_F32(inputs[0]->data, out->data, planes, &w, attrs->count_include_pad);
    return TP_OK;
}
