/* CUDA C's dialect for plugins/common's pointwise expressions
 * (tpcommon_cexpr.h): the C type of each dtype, literals, saturating casts,
 * and the device helper functions every generated module starts with. Numerics follow the
 * reference kernels (core/ops/pointwise.c's documented choices): integer
 * arithmetic wraps (computed in the unsigned twin, so no undefined
 * behaviour), maximum/minimum and max/min propagate NaN, sign(NaN) = NaN,
 * sigmoid never overflows, float -> integer casts truncate and saturate with
 * NaN -> 0, integer pow with a negative exponent is 0 except for bases +-1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_emit.h"
#include "tpcommon_cexpr.h"

const char *cu_ctype(int32_t dtype) {
    switch (dtype) {
    case TP_PLUGIN_F32:
        return "float";
    case TP_PLUGIN_F64:
        return "double";
    case TP_PLUGIN_I32:
        return "int";
    case TP_PLUGIN_I64:
        return "long long";
    default:
        return "tp_bool";
    }
}

void cu_literal(int32_t dtype, double value, char *out, size_t size) {
    switch (dtype) {
    case TP_PLUGIN_F32:
    case TP_PLUGIN_F64: {
        bool f32 = dtype == TP_PLUGIN_F32;
        if (isnan(value))
            snprintf(out, size, "%s",
                     f32 ? "__int_as_float(0x7fc00000)"
                         : "__longlong_as_double(0x7ff8000000000000LL)");
        else if (isinf(value))
            snprintf(out, size, "%s%s", value < 0 ? "-" : "",
                     f32 ? "__int_as_float(0x7f800000)"
                         : "__longlong_as_double(0x7ff0000000000000LL)");
        else if (f32)
            snprintf(out, size, "%.9gf", (double)(float)value);
        else
            snprintf(out, size, "%.17g", value);
        if (!isnan(value) && !isinf(value) && !strpbrk(out, ".eEn")) {
            size_t length = strlen(out); /* "2f" is not a float literal: "2.0f" */
            if (f32 && length + 3 < size) {
                out[length - 1] = '\0';
                strcat(out, ".0f");
            } else if (!f32 && length + 3 < size) {
                strcat(out, ".0");
            }
        }
        break;
    }
    case TP_PLUGIN_I32:
        snprintf(out, size, "(%lld)", (long long)(int32_t)value);
        break;
    case TP_PLUGIN_I64: {
        long long v = (long long)value;
        if (value <= -9223372036854775808.0)
            snprintf(out, size, "(-9223372036854775807LL - 1)");
        else
            snprintf(out, size, "(%lldLL)", v);
        break;
    }
    default:
        snprintf(out, size, "((tp_bool)%d)", value != 0);
        break;
    }
}

const char *cu_prelude(void) {
    return "typedef unsigned char tp_bool;\n"
           "static __device__ __forceinline__ int tp_to_i32(double x) {\n"
           "    if (x != x) return 0;\n"
           "    if (x >= 2147483648.0) return 2147483647;\n"
           "    if (x <= -2147483648.0) return -2147483647 - 1;\n"
           "    return (int)x;\n"
           "}\n"
           "static __device__ __forceinline__ long long tp_to_i64(double x) {\n"
           "    if (x != x) return 0;\n"
           "    if (x >= 9223372036854775808.0) return 9223372036854775807LL;\n"
           "    if (x <= -9223372036854775808.0) return -9223372036854775807LL - 1;\n"
           "    return (long long)x;\n"
           "}\n"
           "static __device__ __forceinline__ long long tp_ipow(long long base, long long e) {\n"
           "    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;\n"
           "    unsigned long long result = 1, factor = (unsigned long long)base;\n"
           "    for (unsigned long long rest = (unsigned long long)e; rest; rest >>= 1) {\n"
           "        if (rest & 1) result *= factor;\n"
           "        factor *= factor;\n"
           "    }\n"
           "    return (long long)result;\n"
           "}\n";
}

static void saturating_cast(int32_t from, int32_t to, const char *x, char *out, size_t size) {
    (void)from; /* the helpers take a double: exact for f32 too */
    snprintf(out, size, "tp_to_%s((double)%s)", tpcommon_dtype_name(to), x);
}

/* CUDA C's spelling of the shared pointwise expressions (tpcommon_cexpr.h). */
static const tpcommon_cdialect cuda_dialect = {
    .type_names = {"float", "double", "int", "long long", "tp_bool"},
    .unsigned_names = {"unsigned int", "unsigned long long", "unsigned int", "unsigned long long",
                       "tp_bool"},
    .f32_function_suffix = true, /* expf, sqrtf, ... */
    .has_isnan = false,
    .saturating_cast = saturating_cast,
    .literal = cu_literal,
};

bool cu_expr_pointwise(int32_t op_id, int32_t compute, int32_t result, const char *const *x,
                       char *out, size_t size) {
    return tpcommon_cexpr_pointwise(&cuda_dialect, op_id, compute, result, NULL, x, out, size);
}
