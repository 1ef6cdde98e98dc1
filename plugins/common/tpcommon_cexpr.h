/* plugins/common — C-dialect expressions for pointwise ops: the text of one
 * pointwise op (unary and binary math, casts, comparisons, logical ops,
 * where, and the pointwise composites gelu / silu / softplus) over operand
 * expressions already converted to the op's compute dtype, for OpenCL C and
 * CUDA C alike. What differs between the two dialects (type spellings,
 * f32 function names, the NaN test, saturating casts, literals) comes in a
 * small tpcommon_cdialect table from the plugin.
 *
 * Numerics are the reference kernels': integer arithmetic wraps (computed in
 * the unsigned twin, so no undefined behaviour), maximum/minimum propagate
 * NaN, sign(NaN) = NaN, sigmoid never overflows, float -> integer casts
 * saturate (the dialect's helper), integer pow goes through the prelude's
 * tp_ipow(i64, i64). Built only on plugin.h and plugin_ops.h; owns no state. */
#ifndef TPCOMMON_CEXPR_H
#define TPCOMMON_CEXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

typedef struct tpcommon_cdialect {
    /* C spelling of each dtype, indexed by TP_PLUGIN_F32 .. TP_PLUGIN_BOOL. */
    const char *type_names[5];
    /* The unsigned twin of each integer dtype (i32, i64; the others unused). */
    const char *unsigned_names[5];
    /* CUDA: expf/sqrtf/... for f32; OpenCL: the overloaded exp/sqrt/... */
    bool f32_function_suffix;
    /* OpenCL has isnan(); CUDA C tests x != x. */
    bool has_isnan;
    /* Writes `x` (a float of dtype `from`) converted to integer dtype `to`,
     * truncating and saturating, NaN -> 0 (the dialect's prelude helper). */
    void (*saturating_cast)(int32_t from, int32_t to, const char *x, char *out, size_t size);
    /* Writes a literal of `dtype` equal to `value`. */
    void (*literal)(int32_t dtype, double value, char *out, size_t size);
} tpcommon_cdialect;

/* Whether tpcommon_cexpr_pointwise has an expression for op `op_id`
 * (TP_PLUGIN_OP_*) computing in `compute`; what a plugin's supports claims
 * for its pointwise nodes. */
bool tpcommon_cexpr_defined(int32_t op_id, int32_t compute);

/* Writes the expression of op `op_id` over `x` (operands converted to
 * `compute`, except where's condition, which keeps its dtype) into out.
 * `result` is the node's result dtype (cast's target); `attrs` holds the
 * node's attributes (gelu's approximate, softplus' beta and threshold; NULL
 * for none). Returns false (out untouched) when the op has no expression at
 * this dtype (tpcommon_cexpr_defined). */
bool tpcommon_cexpr_pointwise(const tpcommon_cdialect *dialect, int32_t op_id, int32_t compute,
                              int32_t result, const tp_plugin_value *attrs, const char *const *x,
                              char *out, size_t size);

/* `expr` of dtype `from` converted to dtype `to` (bool: != 0; float to
 * integer: the dialect's saturating cast; otherwise a C cast). */
void tpcommon_cexpr_convert(const tpcommon_cdialect *dialect, int32_t from, int32_t to,
                            const char *expr, char *out, size_t size);

#endif
