/* CUDA C generation: one module per executable, one extern "C" kernel per
 * planned kernel (cuda_graph.h). Every kernel takes the executable's device
 * buffers, all of them, in buffer order, so one parameter array serves every
 * launch. Sizes and strides are compile-time constants (an executable is
 * specialized for exact shapes). */
#ifndef TP_PLUGIN_CUDA_EMIT_H
#define TP_PLUGIN_CUDA_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_graph.h"

/* The module source (caller frees), or NULL with the reason in `error`. */
char *cu_emit_module(const cu_graph *graph, char *error, size_t error_size);

/* ---- cuda_expr.c ---- */
/* C type of a dtype ("float", "long long", "tp_bool", ...). */
const char *cu_ctype(int32_t dtype);
/* A literal of `dtype` holding `value` (non-finite floats included). */
void cu_literal(int32_t dtype, double value, char *out, size_t size);
/* Device helpers every module starts with (tp_bool, saturating casts, ipow). */
const char *cu_prelude(void);
/* The CUDA C expression of pointwise op `op_id` (TP_PLUGIN_OP_*) over operand
 * expressions x[] (already of the compute dtype; where's condition already a
 * truth value), through plugins/common's tpcommon_cexpr. False for an op it
 * does not lower at this dtype. */
bool cu_expr_pointwise(int32_t op_id, int32_t compute, int32_t result, const char *const *x,
                       char *out, size_t size);

#endif
