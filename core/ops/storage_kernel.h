/* Running an op's reference kernel on any dtype, f16 and bf16 included.
 * Internal to libtensorplay. */
#ifndef TP_CORE_OPS_STORAGE_KERNEL_H
#define TP_CORE_OPS_STORAGE_KERNEL_H

#include "op_table.h"

/* Runs op->kernel(inputs, out) (op->kernel must exist: tp_op_run_kernel of
 * kernel_dispatch.h, the one door to the kernels, checks and calls this).
 * The kernels are written for f32, f64, i32,
 * i64 and bool; f16/bf16 inputs are widened to f32 (exactly) first, and an
 * f16/bf16 result is computed in f32 and rounded once on store. Creation ops
 * and cast write f16/bf16 themselves (one rounding from their source). */
tp_status tp_op_run_storage_kernel(const tp_op_def *op, tp_tensor *const *inputs, int num_inputs,
                                   const tp_attrs *attrs, tp_tensor *out);

#endif
