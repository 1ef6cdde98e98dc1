/* The f16/bf16 storage rule for the reference kernels: widen, compute in
 * f32, round on store (storage_kernel.h). Owns only that wrapping; the
 * conversions are core/tensor/half_float.c's, the kernels their kind's. */
#include "storage_kernel.h"

#include <stdint.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"

static bool is_storage_dtype(tp_dtype dtype) {
    return tp_dtype_compute(dtype) != dtype;
}

static bool writes_storage_dtypes_itself(const tp_op_def *op) {
    return op->kind == TP_KIND_CREATION || op->id == TP_OP_CAST;
}

static void widen_to_f32(const tp_tensor *from, tp_tensor *to) {
    const uint16_t *bits = from->data;
    float *values = to->data;
    if (from->dtype == TP_F16)
        for (int64_t i = 0; i < from->numel; i++) values[i] = tp_f16_to_f32(bits[i]);
    else
        for (int64_t i = 0; i < from->numel; i++) values[i] = tp_bf16_to_f32(bits[i]);
}

static void narrow_from_f32(const tp_tensor *from, tp_tensor *to) {
    const float *values = from->data;
    uint16_t *bits = to->data;
    if (to->dtype == TP_F16)
        for (int64_t i = 0; i < to->numel; i++) bits[i] = tp_f16_from_f32(values[i]);
    else
        for (int64_t i = 0; i < to->numel; i++) bits[i] = tp_bf16_from_f32(values[i]);
}

static tp_status f32_twin(const char *op_name, const tp_tensor *of, tp_tensor **out) {
    tp_status status = tp_tensor_create_uninit(TP_F32, of->ndim, of->shape, out);
    if (status != TP_OK)
        return tp_error_prefix(status, "%s: widening an %s tensor to f32: ", op_name,
                               tp_dtype_name(of->dtype));
    return TP_OK;
}

tp_status tp_op_run_storage_kernel(const tp_op_def *op, tp_tensor *const *inputs, int num_inputs,
                                   const tp_attrs *attrs, tp_tensor *out) {
    bool any_storage = is_storage_dtype(out->dtype) && !writes_storage_dtypes_itself(op);
    for (int i = 0; i < num_inputs; i++) any_storage |= is_storage_dtype(inputs[i]->dtype);
    if (!any_storage) return op->kernel(inputs, num_inputs, attrs, out);

    enum { MAX_INPUTS = 64 };
    if (num_inputs > MAX_INPUTS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: %d inputs (at most %d)", op->name,
                            num_inputs, MAX_INPUTS);
    tp_tensor *widened[MAX_INPUTS] = {NULL};
    tp_tensor *operands[MAX_INPUTS];
    tp_tensor *result = out;
    tp_status status = TP_OK;
    for (int i = 0; i < num_inputs && status == TP_OK; i++) {
        operands[i] = inputs[i];
        if (!is_storage_dtype(inputs[i]->dtype)) continue;
        status = f32_twin(op->name, inputs[i], &widened[i]);
        if (status != TP_OK) break;
        widen_to_f32(inputs[i], widened[i]);
        operands[i] = widened[i];
    }
    if (status == TP_OK && is_storage_dtype(out->dtype) && !writes_storage_dtypes_itself(op))
        status = f32_twin(op->name, out, &result);
    if (status == TP_OK) status = op->kernel(operands, num_inputs, attrs, result);
    if (status == TP_OK && result != out) narrow_from_f32(result, out);
    if (result != out) tp_tensor_release(result);
    for (int i = 0; i < num_inputs; i++) tp_tensor_release(widened[i]);
    return status;
}
