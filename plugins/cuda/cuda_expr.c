/* CUDA C text for one pointwise op: the expression over operand expressions
 * per compute dtype, the C type of each dtype, literals, and the device
 * helper functions every generated module starts with. Numerics follow the
 * reference kernels (core/ops/pointwise.c's documented choices): integer
 * arithmetic wraps (computed in the unsigned twin, so no undefined
 * behaviour), maximum/minimum and max/min propagate NaN, sign(NaN) = NaN,
 * sigmoid never overflows, float -> integer casts truncate and saturate with
 * NaN -> 0, integer pow with a negative exponent is 0 except for bases +-1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_emit.h"

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

static const char *unsigned_type(int32_t dtype) {
    return dtype == TP_PLUGIN_I64 ? "unsigned long long" : "unsigned int";
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

/* Float function name: expf for f32, exp for f64. */
static void fn(char *out, size_t size, const char *name, int32_t dtype) {
    snprintf(out, size, "%s%s", name, dtype == TP_PLUGIN_F32 ? "f" : "");
}

/* Integer arithmetic through the unsigned twin: wraps without UB. */
static bool wrap(char *out, size_t size, int32_t dtype, const char *a, const char *op,
                 const char *b) {
    const char *u = unsigned_type(dtype);
    snprintf(out, size, "((%s)((%s)%s %s (%s)%s))", cu_ctype(dtype), u, a, op, u, b);
    return true;
}

bool cu_expr_pointwise(const char *op, int32_t compute, int32_t result, const char *const *x,
                       char *out, size_t size) {
    const char *T = cu_ctype(compute), *a = x[0], *b = x[1];
    bool is_float = tpcommon_dtype_is_float(compute);
    bool is_bool = compute == TP_PLUGIN_BOOL;
    char f[32], g[32];
    if (!strcmp(op, "copy")) return snprintf(out, size, "%s", a), true;
    if (!strcmp(op, "neg"))
        return is_float ? (snprintf(out, size, "(-%s)", a), true)
                        : wrap(out, size, compute, "0", "-", a);
    if (!strcmp(op, "abs")) {
        if (is_float)
            return fn(f, sizeof f, "fabs", compute), snprintf(out, size, "%s(%s)", f, a), true;
        char negated[256];
        wrap(negated, sizeof negated, compute, "0", "-", a);
        return snprintf(out, size, "(%s < 0 ? %s : %s)", a, negated, a), true;
    }
    static const char *const float_functions[] = {"exp", "log",  "sqrt", "sin",
                                                  "cos", "tanh", "erf"};
    for (size_t i = 0; i < sizeof float_functions / sizeof float_functions[0]; i++)
        if (!strcmp(op, float_functions[i])) {
            fn(f, sizeof f, float_functions[i], compute);
            return snprintf(out, size, "%s(%s)", f, a), true;
        }
    if (!strcmp(op, "rsqrt")) {
        fn(f, sizeof f, "sqrt", compute);
        return snprintf(out, size, "((%s)1 / %s(%s))", T, f, a), true;
    }
    if (!strcmp(op, "sigmoid")) {
        fn(f, sizeof f, "exp", compute);
        return snprintf(out, size,
                        "(%s >= 0 ? (%s)1 / ((%s)1 + %s(-%s)) : %s(%s) / ((%s)1 + %s(%s)))", a, T,
                        T, f, a, f, a, T, f, a),
               true;
    }
    if (!strcmp(op, "relu"))
        return is_bool ? snprintf(out, size, "%s", a)
                       : snprintf(out, size, "(%s < 0 ? (%s)0 : %s)", a, T, a),
               true;
    if (!strcmp(op, "floor") || !strcmp(op, "ceil")) {
        if (!is_float) return snprintf(out, size, "%s", a), true;
        fn(f, sizeof f, op, compute);
        return snprintf(out, size, "%s(%s)", f, a), true;
    }
    if (!strcmp(op, "sign")) {
        if (is_float)
            return snprintf(out, size, "(%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s == 0 ? (%s)0 : %s)",
                            a, T, a, T, a, T, a),
                   true;
        return snprintf(out, size, "((%s)((%s > 0) - (%s < 0)))", T, a, a), true;
    }
    if (!strcmp(op, "logical_not")) return snprintf(out, size, "((tp_bool)(%s == 0))", a), true;
    if (!strcmp(op, "cast")) {
        switch (result) {
        case TP_PLUGIN_BOOL:
            return snprintf(out, size, "((tp_bool)(%s != 0))", a), true;
        case TP_PLUGIN_I32:
            if (is_float) return snprintf(out, size, "tp_to_i32((double)%s)", a), true;
            return snprintf(out, size, "((int)%s)", a), true;
        case TP_PLUGIN_I64:
            if (is_float) return snprintf(out, size, "tp_to_i64((double)%s)", a), true;
            return snprintf(out, size, "((long long)%s)", a), true;
        default:
            return snprintf(out, size, "((%s)%s)", cu_ctype(result), a), true;
        }
    }
    static const char *const arithmetic[][2] = {{"add", "+"}, {"sub", "-"}, {"mul", "*"}};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(op, arithmetic[i][0])) {
            if (is_float) return snprintf(out, size, "(%s %s %s)", a, arithmetic[i][1], b), true;
            return wrap(out, size, compute, a, arithmetic[i][1], b);
        }
    if (!strcmp(op, "div")) return snprintf(out, size, "(%s / %s)", a, b), true;
    if (!strcmp(op, "pow")) {
        if (is_float)
            return fn(f, sizeof f, "pow", compute), snprintf(out, size, "%s(%s, %s)", f, a, b),
                   true;
        return snprintf(out, size, "((%s)(%s)tp_ipow(%s, %s))", T, unsigned_type(compute), a, b),
               true;
    }
    if (!strcmp(op, "maximum") || !strcmp(op, "minimum")) {
        bool max = op[1] == 'a';
        if (is_bool)
            return snprintf(out, size, "((tp_bool)(%s %s %s))", a, max ? "|" : "&", b), true;
        snprintf(g, sizeof g, "%s", max ? ">=" : "<=");
        if (is_float)
            return snprintf(out, size, "((%s %s %s || %s != %s) ? %s : %s)", a, g, b, a, a, a, b),
                   true;
        return snprintf(out, size, "(%s %s %s ? %s : %s)", a, g, b, a, b), true;
    }
    static const char *const comparisons[][2] = {{"lt", "<"},  {"le", "<="}, {"gt", ">"},
                                                 {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
    for (size_t i = 0; i < 6; i++)
        if (!strcmp(op, comparisons[i][0]))
            return snprintf(out, size, "((tp_bool)(%s %s %s))", a, comparisons[i][1], b), true;
    if (!strcmp(op, "logical_and"))
        return snprintf(out, size, "((tp_bool)(%s != 0 && %s != 0))", a, b), true;
    if (!strcmp(op, "logical_or"))
        return snprintf(out, size, "((tp_bool)(%s != 0 || %s != 0))", a, b), true;
    if (!strcmp(op, "where")) return snprintf(out, size, "(%s ? %s : %s)", a, b, x[2]), true;
    return false;
}
