/* See tpcommon_cexpr.h: one pointwise expression per op and compute dtype,
 * spelled in the caller's C dialect. */
#include "tpcommon_cexpr.h"

#include <math.h>
#include <stdio.h>

#include "tensorplay/plugin_ops.h"
#include "tpcommon_graph.h"

static bool is_float(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64;
}

static bool is_integer(int32_t dtype) {
    return dtype == TP_PLUGIN_I32 || dtype == TP_PLUGIN_I64;
}

static const char *ctype(const tpcommon_cdialect *d, int32_t dtype) {
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? d->type_names[dtype] : "?";
}

bool tpcommon_cexpr_defined(int32_t op_id, int32_t compute) {
    bool fl = is_float(compute), in = is_integer(compute);
    if (compute < 0 || compute > TP_PLUGIN_BOOL) return false;
    switch (op_id) {
    case TP_PLUGIN_OP_NEG:
    case TP_PLUGIN_OP_ABS:
    case TP_PLUGIN_OP_SIGN:
    case TP_PLUGIN_OP_CLIP:
    case TP_PLUGIN_OP_ADD:
    case TP_PLUGIN_OP_SUB:
    case TP_PLUGIN_OP_MUL:
    case TP_PLUGIN_OP_POW:
        return fl || in;
    case TP_PLUGIN_OP_EXP:
    case TP_PLUGIN_OP_LOG:
    case TP_PLUGIN_OP_SQRT:
    case TP_PLUGIN_OP_RSQRT:
    case TP_PLUGIN_OP_SIN:
    case TP_PLUGIN_OP_COS:
    case TP_PLUGIN_OP_TANH:
    case TP_PLUGIN_OP_ERF:
    case TP_PLUGIN_OP_SIGMOID:
    case TP_PLUGIN_OP_DIV:
    case TP_PLUGIN_OP_GELU:
    case TP_PLUGIN_OP_SILU:
    case TP_PLUGIN_OP_SOFTPLUS:
        return fl;
    case TP_PLUGIN_OP_RELU:
    case TP_PLUGIN_OP_FLOOR:
    case TP_PLUGIN_OP_CEIL:
    case TP_PLUGIN_OP_LOGICAL_NOT:
    case TP_PLUGIN_OP_CAST:
    case TP_PLUGIN_OP_MAXIMUM:
    case TP_PLUGIN_OP_MINIMUM:
    case TP_PLUGIN_OP_LT:
    case TP_PLUGIN_OP_LE:
    case TP_PLUGIN_OP_GT:
    case TP_PLUGIN_OP_GE:
    case TP_PLUGIN_OP_EQ:
    case TP_PLUGIN_OP_NE:
    case TP_PLUGIN_OP_LOGICAL_AND:
    case TP_PLUGIN_OP_LOGICAL_OR:
    case TP_PLUGIN_OP_WHERE:
        return true;
    default:
        return false;
    }
}

void tpcommon_cexpr_convert(const tpcommon_cdialect *d, int32_t from, int32_t to, const char *expr,
                            char *out, size_t size) {
    if (from == to)
        snprintf(out, size, "%s", expr);
    else if (to == TP_PLUGIN_BOOL)
        snprintf(out, size, "((%s)(%s != 0))", ctype(d, TP_PLUGIN_BOOL), expr);
    else if (is_float(from) && !is_float(to))
        d->saturating_cast(from, to, expr, out, size);
    else
        snprintf(out, size, "((%s)%s)", ctype(d, to), expr);
}

/* A float math function of the dialect: expf / exp. */
static const char *function(const tpcommon_cdialect *d, int32_t compute, const char *name,
                            char *buf, size_t size) {
    bool suffix = d->f32_function_suffix && compute == TP_PLUGIN_F32;
    snprintf(buf, size, "%s%s", name, suffix ? "f" : "");
    return buf;
}

/* Integer `a op b` through the unsigned twin: wraps without undefined behaviour. */
static void wrapped(const tpcommon_cdialect *d, int32_t c, const char *a, const char *op,
                    const char *b, char *out, size_t size) {
    const char *u = d->unsigned_names[c];
    snprintf(out, size, "((%s)((%s)%s %s (%s)%s))", ctype(d, c), u, a, op, u, b);
}

static bool unary_math(const tpcommon_cdialect *d, int32_t op_id, int32_t c, const char *a,
                       char *out, size_t size) {
    static const struct {
        int32_t op_id;
        const char *name;
    } functions[] = {
        {TP_PLUGIN_OP_EXP, "exp"}, {TP_PLUGIN_OP_LOG, "log"},     {TP_PLUGIN_OP_SQRT, "sqrt"},
        {TP_PLUGIN_OP_SIN, "sin"}, {TP_PLUGIN_OP_COS, "cos"},     {TP_PLUGIN_OP_TANH, "tanh"},
        {TP_PLUGIN_OP_ERF, "erf"}, {TP_PLUGIN_OP_FLOOR, "floor"}, {TP_PLUGIN_OP_CEIL, "ceil"}};
    char f[32];
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        if (functions[i].op_id == op_id) {
            snprintf(out, size, "%s(%s)", function(d, c, functions[i].name, f, sizeof f), a);
            return true;
        }
    return false;
}

static const char *comparison(int32_t op_id) {
    switch (op_id) {
    case TP_PLUGIN_OP_LT:
        return "<";
    case TP_PLUGIN_OP_LE:
        return "<=";
    case TP_PLUGIN_OP_GT:
        return ">";
    case TP_PLUGIN_OP_GE:
        return ">=";
    case TP_PLUGIN_OP_EQ:
        return "==";
    case TP_PLUGIN_OP_NE:
        return "!=";
    default:
        return NULL;
    }
}

static void nan_test(const tpcommon_cdialect *d, const char *a, char *out, size_t size) {
    if (d->has_isnan)
        snprintf(out, size, "isnan(%s)", a);
    else
        snprintf(out, size, "%s != %s", a, a);
}

/* clip: min(max(a, lo), hi) spelled with comparisons, so NaN stays NaN; an
 * infinite bound is left out, an integer one rounds into the integers. */
static void clip(const tpcommon_cdialect *d, int32_t c, const tp_plugin_value *attrs, const char *a,
                 char *out, size_t size) {
    const char *t = ctype(d, c);
    double lo = attrs ? tpcommon_attr_float(attrs, "min", -HUGE_VAL) : -HUGE_VAL;
    double hi = attrs ? tpcommon_attr_float(attrs, "max", HUGE_VAL) : HUGE_VAL;
    bool fl = is_float(c);
    char low[160], bound[48];
    if (lo > -HUGE_VAL) {
        if (fl)
            snprintf(bound, sizeof bound, "(%s)%.17g", t, lo);
        else
            snprintf(bound, sizeof bound, "(%s)%.0f", t,
                     ceil(fmax(lo, c == TP_PLUGIN_I32 ? -2147483648.0 : -9.2e18)));
        snprintf(low, sizeof low, "(%s < %s ? %s : %s)", a, bound, bound, a);
    } else {
        snprintf(low, sizeof low, "%s", a);
    }
    if (hi < HUGE_VAL) {
        if (fl)
            snprintf(bound, sizeof bound, "(%s)%.17g", t, hi);
        else
            snprintf(bound, sizeof bound, "(%s)%.0f", t,
                     floor(fmin(hi, c == TP_PLUGIN_I32 ? 2147483647.0 : 9.2e18)));
        snprintf(out, size, "(%s > %s ? %s : %s)", low, bound, bound, low);
    } else {
        snprintf(out, size, "%s", low);
    }
}

static void gelu(const tpcommon_cdialect *d, int32_t c, const tp_plugin_value *attrs, const char *a,
                 char *out, size_t size) {
    const char *t = ctype(d, c);
    char f[32];
    if (attrs && tpcommon_attr_int(attrs, "approximate", 0) == TP_PLUGIN_GELU_TANH)
        snprintf(out, size,
                 "((%s)0.5 * %s * ((%s)1 + %s((%s)0.7978845608028654 * (%s + (%s)0.044715 * %s * "
                 "%s * %s))))",
                 t, a, t, function(d, c, "tanh", f, sizeof f), t, a, t, a, a, a);
    else
        snprintf(out, size, "((%s)0.5 * %s * ((%s)1 + %s(%s * (%s)0.7071067811865476)))", t, a, t,
                 function(d, c, "erf", f, sizeof f), a, t);
}

static void softplus(const tpcommon_cdialect *d, int32_t c, const tp_plugin_value *attrs,
                     const char *a, char *out, size_t size) {
    char beta[64], threshold[64], log1p[32], exp[32];
    d->literal(c, attrs ? tpcommon_attr_float(attrs, "beta", 1.0) : 1.0, beta, sizeof beta);
    d->literal(c, attrs ? tpcommon_attr_float(attrs, "threshold", 20.0) : 20.0, threshold,
               sizeof threshold);
    snprintf(out, size, "(%s * %s > %s ? %s : %s(%s(%s * %s)) / %s)", beta, a, threshold, a,
             function(d, c, "log1p", log1p, sizeof log1p), function(d, c, "exp", exp, sizeof exp),
             beta, a, beta);
}

bool tpcommon_cexpr_pointwise(const tpcommon_cdialect *d, int32_t op_id, int32_t c, int32_t result,
                              const tp_plugin_value *attrs, const char *const *x, char *out,
                              size_t size) {
    if (!tpcommon_cexpr_defined(op_id, c)) return false;
    const char *t = ctype(d, c), *boolean = ctype(d, TP_PLUGIN_BOOL);
    const char *a = x[0], *b = op_id >= TP_PLUGIN_OP_ADD ? x[1] : NULL;
    bool fl = is_float(c);
    char f[32], g[32], inner[512];
    if (unary_math(d, op_id, c, a, out, size)) {
        if ((op_id == TP_PLUGIN_OP_FLOOR || op_id == TP_PLUGIN_OP_CEIL) && !fl)
            snprintf(out, size, "%s", a);
        return true;
    }
    const char *compare = comparison(op_id);
    if (compare) return snprintf(out, size, "((%s)(%s %s %s))", boolean, a, compare, b), true;
    switch (op_id) {
    case TP_PLUGIN_OP_NEG:
        if (fl)
            snprintf(out, size, "(-%s)", a);
        else
            wrapped(d, c, "0", "-", a, out, size);
        return true;
    case TP_PLUGIN_OP_ABS:
        if (fl) return snprintf(out, size, "%s(%s)", function(d, c, "fabs", f, sizeof f), a), true;
        wrapped(d, c, "0", "-", a, inner, sizeof inner);
        return snprintf(out, size, "(%s < 0 ? %s : %s)", a, inner, a), true;
    case TP_PLUGIN_OP_RSQRT:
        return snprintf(out, size, "((%s)1 / %s(%s))", t, function(d, c, "sqrt", f, sizeof f), a),
               true;
    case TP_PLUGIN_OP_SIGMOID:
        function(d, c, "exp", f, sizeof f);
        return snprintf(out, size,
                        "(%s >= (%s)0 ? (%s)1 / ((%s)1 + %s(-%s)) : %s(%s) / ((%s)1 + %s(%s)))", a,
                        t, t, t, f, a, f, a, t, f, a),
               true;
    case TP_PLUGIN_OP_RELU:
        if (c == TP_PLUGIN_BOOL) return snprintf(out, size, "%s", a), true;
        return snprintf(out, size, "(%s < (%s)0 ? (%s)0 : %s)", a, t, t, a), true;
    case TP_PLUGIN_OP_SIGN:
        if (fl)
            return snprintf(out, size,
                            "(%s > (%s)0 ? (%s)1 : %s < (%s)0 ? (%s)-1 : %s == (%s)0 ? (%s)0 : %s)",
                            a, t, t, a, t, t, a, t, t, a),
                   true;
        return snprintf(out, size, "((%s)((%s > 0) - (%s < 0)))", t, a, a), true;
    case TP_PLUGIN_OP_LOGICAL_NOT:
        return snprintf(out, size, "((%s)(%s == 0))", boolean, a), true;
    case TP_PLUGIN_OP_CAST:
        tpcommon_cexpr_convert(d, c, result, a, out, size);
        return true;
    case TP_PLUGIN_OP_ADD:
    case TP_PLUGIN_OP_SUB:
    case TP_PLUGIN_OP_MUL: {
        const char *sign = op_id == TP_PLUGIN_OP_ADD ? "+" : op_id == TP_PLUGIN_OP_SUB ? "-" : "*";
        if (fl)
            snprintf(out, size, "(%s %s %s)", a, sign, b);
        else
            wrapped(d, c, a, sign, b, out, size);
        return true;
    }
    case TP_PLUGIN_OP_DIV:
        return snprintf(out, size, "(%s / %s)", a, b), true;
    case TP_PLUGIN_OP_POW:
        if (fl)
            return snprintf(out, size, "%s(%s, %s)", function(d, c, "pow", f, sizeof f), a, b),
                   true;
        return snprintf(out, size, "((%s)(%s)tp_ipow((%s)%s, (%s)%s))", t, d->unsigned_names[c],
                        ctype(d, TP_PLUGIN_I64), a, ctype(d, TP_PLUGIN_I64), b),
               true;
    case TP_PLUGIN_OP_MAXIMUM:
    case TP_PLUGIN_OP_MINIMUM: {
        bool max = op_id == TP_PLUGIN_OP_MAXIMUM;
        if (c == TP_PLUGIN_BOOL)
            return snprintf(out, size, "((%s)(%s %s %s))", boolean, a, max ? "|" : "&", b), true;
        snprintf(g, sizeof g, "%s", max ? ">=" : "<=");
        if (!fl) return snprintf(out, size, "(%s %s %s ? %s : %s)", a, g, b, a, b), true;
        nan_test(d, a, inner, sizeof inner);
        return snprintf(out, size, "((%s %s %s || %s) ? %s : %s)", a, g, b, inner, a, b), true;
    }
    case TP_PLUGIN_OP_LOGICAL_AND:
        return snprintf(out, size, "((%s)(%s != 0 && %s != 0))", boolean, a, b), true;
    case TP_PLUGIN_OP_LOGICAL_OR:
        return snprintf(out, size, "((%s)(%s != 0 || %s != 0))", boolean, a, b), true;
    case TP_PLUGIN_OP_WHERE:
        return snprintf(out, size, "(%s != 0 ? %s : %s)", a, b, x[2]), true;
    case TP_PLUGIN_OP_GELU:
        gelu(d, c, attrs, a, out, size);
        return true;
    case TP_PLUGIN_OP_SILU:
        function(d, c, "exp", f, sizeof f);
        return snprintf(out, size, "(%s / ((%s)1 + %s(-%s)))", a, t, f, a), true;
    case TP_PLUGIN_OP_SOFTPLUS:
        softplus(d, c, attrs, a, out, size);
        return true;
    case TP_PLUGIN_OP_CLIP:
        clip(d, c, attrs, a, out, size);
        return true;
    default:
        return false;
    }
}
