/* matmul with numpy.matmul semantics: its shape and dtype rule and its
 * reference kernel.
 *
 * Shapes: both operands at least 1-D; a 1-D left operand [k] acts as [1, k]
 * and a 1-D right operand [k] as [k, 1], and the added dimension is dropped
 * from the result (so 1-D @ 1-D is 0-d); the dimensions before the last two
 * are batch dimensions and broadcast (NumPy rules).
 * Dtypes: computes in and gives promote(a, b); bool @ bool is refused (cast
 * first); integers wrap around. f32 accumulates in f32.
 * Kernel: per batch, an i-k-j loop whose inner loop runs along contiguous
 * rows of b and of the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "broadcast.h"
#include "dtype_loops.h"
#include "op_args.h"
#include "op_table.h"

/* The batch dimensions of an operand (all but its matrix dimensions). */
static tp_type batch_type(const tp_type *operand) {
    tp_type batch = *operand;
    batch.ndim = operand->ndim > 2 ? operand->ndim - 2 : 0;
    return batch;
}

static tp_status matmul_error(tp_status status, const tp_type *a, const tp_type *b,
                              const char *what, const char *detail) {
    char a_text[TP_DESCRIBE_MAX], b_text[TP_DESCRIBE_MAX];
    return tp_error_set(status, "matmul: %s: %s @ %s%s", what, tp_type_text(a, a_text),
                        tp_type_text(b, b_text), detail);
}

tp_status tp_op_MATMUL_infer(const tp_type *in, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *a = &in[0], *b = &in[1];
    if (a->ndim == 0 || b->ndim == 0)
        return matmul_error(TP_ERR_SHAPE, a, b, "both operands must be at least 1-D",
                            " (use mul to scale by a 0-d value)");
    tp_dtype dtype = tp_dtype_promote(a->dtype, b->dtype);
    if (dtype == TP_BOOL)
        return matmul_error(TP_ERR_DTYPE, a, b, "not defined for bool operands",
                            " (cast to i32, i64, f32 or f64 first)");
    int64_t k_a = a->dims[a->ndim - 1];
    int64_t k_b = b->ndim >= 2 ? b->dims[b->ndim - 2] : b->dims[0];
    if (k_a != k_b) {
        char detail[96];
        if (TP_DIM_IS_SYMBOL(k_a) || TP_DIM_IS_SYMBOL(k_b))
            snprintf(detail, sizeof detail, " (a symbolic size cannot be decided statically)");
        else
            snprintf(detail, sizeof detail, " (%lld vs %lld)", (long long)k_a, (long long)k_b);
        return matmul_error(TP_ERR_SHAPE, a, b, "inner dimensions differ", detail);
    }
    tp_type batch_a = batch_type(a), batch_b = batch_type(b);
    if (tp_broadcast_shapes("matmul", &batch_a, &batch_b, &out->ndim, out->dims) != TP_OK) {
        char detail[TP_ERROR_MESSAGE_MAX];
        snprintf(detail, sizeof detail, " (%s)", tp_last_error());
        return matmul_error(TP_ERR_SHAPE, a, b, "batch dimensions do not broadcast", detail);
    }
    if (a->ndim >= 2) out->dims[out->ndim++] = a->dims[a->ndim - 2];
    if (b->ndim >= 2) out->dims[out->ndim++] = b->dims[b->ndim - 1];
    out->dtype = dtype;
    return TP_OK;
}

/* c[m, n] = a[m, k] @ b[k, n], all contiguous. */
typedef void (*gemm_fn)(int64_t m, int64_t k, int64_t n, const void *a, const void *b, void *c);

#define DEFINE_GEMM(TAG, T, U, ...)                                                                \
    static void gemm_##TAG(int64_t m, int64_t k, int64_t n, const void *a_data,                    \
                           const void *b_data, void *c_data) {                                     \
        const T *a = a_data, *b = b_data;                                                          \
        for (int64_t i = 0; i < m; i++) {                                                          \
            T *c_row = (T *)c_data + i * n;                                                        \
            for (int64_t j = 0; j < n; j++) c_row[j] = 0;                                          \
            for (int64_t p = 0; p < k; p++) {                                                      \
                const U a_ip = (U)a[i * k + p];                                                    \
                const T *b_row = b + p * n;                                                        \
                for (int64_t j = 0; j < n; j++) c_row[j] = (T)((U)c_row[j] + a_ip * (U)b_row[j]);  \
            }                                                                                      \
        }                                                                                          \
    }

FLOAT_TYPES(DEFINE_GEMM, _)
INT_TYPES(DEFINE_GEMM, _)

static const gemm_fn gemm_loops[TP_DTYPE_COUNT] = {FLOAT_TYPES(LOOP_ENTRY, gemm, _)
                                                       INT_TYPES(LOOP_ENTRY, gemm, _)};

/* `operand` in `dtype`: itself (one more reference) or a converted copy. */
static tp_status as_dtype(tp_tensor *operand, tp_dtype dtype, tp_tensor **out) {
    if (operand->dtype == dtype) {
        *out = tp_tensor_retain(operand);
        return TP_OK;
    }
    TP_TRY(tp_tensor_create_uninit(dtype, operand->ndim, operand->shape, out));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = dtype;
    tp_status status = tp_op_CAST_kernel(&operand, 1, &attrs, *out);
    if (status != TP_OK) {
        tp_tensor_release(*out);
        *out = NULL;
    }
    return status;
}

static void run_batches(const tp_tensor *a, const tp_tensor *b, tp_tensor *out) {
    int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
    int64_t k = a->shape[a->ndim - 1];
    int64_t n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
    int batch_ndim = out->ndim - (a->ndim >= 2) - (b->ndim >= 2);
    int64_t a_strides[TP_MAX_DIMS], b_strides[TP_MAX_DIMS], index[TP_MAX_DIMS] = {0};
    int a_batch_ndim = a->ndim > 2 ? a->ndim - 2 : 0, b_batch_ndim = b->ndim > 2 ? b->ndim - 2 : 0;
    tp_broadcast_strides(a_batch_ndim, a->shape, batch_ndim, out->shape, a_strides);
    tp_broadcast_strides(b_batch_ndim, b->shape, batch_ndim, out->shape, b_strides);
    int64_t batches = 1;
    for (int axis = 0; axis < batch_ndim; axis++) batches *= out->shape[axis];
    size_t size = tp_dtype_size(out->dtype);
    int64_t a_offset = 0, b_offset = 0; /* in matrices */
    gemm_fn gemm = gemm_loops[out->dtype];
    for (int64_t batch = 0; batch < batches; batch++) {
        gemm(m, k, n, (const char *)a->data + a_offset * m * k * (int64_t)size,
             (const char *)b->data + b_offset * k * n * (int64_t)size,
             (char *)out->data + batch * m * n * (int64_t)size);
        for (int axis = batch_ndim - 1; axis >= 0; axis--) { /* advance the odometer */
            a_offset += a_strides[axis];
            b_offset += b_strides[axis];
            if (++index[axis] < out->shape[axis]) break;
            a_offset -= a_strides[axis] * out->shape[axis];
            b_offset -= b_strides[axis] * out->shape[axis];
            index[axis] = 0;
        }
    }
}

tp_status tp_op_MATMUL_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    if (out->numel == 0) return TP_OK;
    tp_tensor *a = NULL, *b = NULL;
    tp_status status = as_dtype(inputs[0], out->dtype, &a);
    if (status == TP_OK) status = as_dtype(inputs[1], out->dtype, &b);
    if (status == TP_OK) run_batches(a, b, out);
    tp_tensor_release(a);
    tp_tensor_release(b);
    return status;
}
