/* stax-llvm — lowering one node to scalar LLVM IR at the current iteration
 * indices: every pointwise op (and the pointwise composites gelu, silu,
 * softplus) for every dtype tensor.h's promotion rules allow, following the
 * reference kernels' numerics (NaN-propagating maximum/minimum, sign(NaN) =
 * NaN, saturating float -> int casts, wrapping integers, integer pow rules).
 * f32 transcendentals call the vectorizable functions of stax_mathlib.c;
 * f64 ones call the C library. Floating adds and multiplies carry the
 * `contract` flag (FMA formation), except in a node whose result is rounded
 * into f16/bf16; nothing else is relaxed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_emit_core.h"

static bool is_f32(ir_val x) {
    return x.t == TP_PLUGIN_F32;
}

static ir_val f_op(fn_ctx *f, const char *op, ir_val a, ir_val b) {
    if (f->rounds_to_storage_float) return bin(f, op, a, b);
    char opcode[32];
    snprintf(opcode, sizeof opcode, "%s contract", op);
    return bin(f, opcode, a, b);
}

static ir_val fk(ir_val like, double value) {
    return lit_float(like.t, value);
}

/* llvm.NAME.f32 / .f64 intrinsic call. */
static ir_val intrinsic1(fn_ctx *f, const char *name, ir_val x) {
    char fn[64];
    snprintf(fn, sizeof fn, "llvm.%s.%s", name, is_f32(x) ? "f32" : "f64");
    return call1(f, fn, x);
}

ir_val lower_exp(fn_ctx *f, ir_val x) {
    return call1(f, is_f32(x) ? "stax_expf" : "exp", x);
}

ir_val lower_exp_nonpositive(fn_ctx *f, ir_val x) {
    return call1(f, is_f32(x) ? "stax_expf_nonpositive" : "exp", x);
}

ir_val lower_log(fn_ctx *f, ir_val x) {
    return call1(f, is_f32(x) ? "stax_logf" : "log", x);
}

static ir_val lower_tanh(fn_ctx *f, ir_val x) {
    return call1(f, is_f32(x) ? "stax_tanhf" : "tanh", x);
}

static ir_val lower_erf(fn_ctx *f, ir_val x) {
    return call1(f, is_f32(x) ? "stax_erff" : "erf", x);
}

static ir_val lower_sigmoid(fn_ctx *f, ir_val x) {
    if (is_f32(x)) return call1(f, "stax_sigmoidf", x);
    /* x >= 0: 1/(1+e^-x); else e^x/(1+e^x): exp of a non-positive number only */
    ir_val a = intrinsic1(f, "fabs", x);
    ir_val na = fresh(f, x.t);
    emit(f, "  %s = fneg double %s", na.s, a.s);
    ir_val e = lower_exp(f, na);
    ir_val d = f_op(f, "fadd", e, fk(x, 1.0));
    ir_val r = f_op(f, "fdiv", fk(x, 1.0), d);
    ir_val tr = f_op(f, "fdiv", e, d);
    return sel(f, cmp(f, "fcmp uge", x, fk(x, 0.0)), r, tr);
}

static ir_val lower_neg(fn_ctx *f, ir_val x) {
    if (tpcommon_dtype_is_float(x.t)) {
        ir_val r = fresh(f, x.t);
        emit(f, "  %s = fneg %s %s", r.s, stax_ty(x.t), x.s);
        return r;
    }
    return bin(f, "sub", lit_int(x.t, 0), x);
}

static ir_val lower_sign(fn_ctx *f, ir_val x) {
    if (tpcommon_dtype_is_float(x.t)) {
        ir_val r0 = sel(f, cmp(f, "fcmp oeq", x, fk(x, 0.0)), fk(x, 0.0), x);
        ir_val r1 = sel(f, cmp(f, "fcmp olt", x, fk(x, 0.0)), fk(x, -1.0), r0);
        return sel(f, cmp(f, "fcmp ogt", x, fk(x, 0.0)), fk(x, 1.0), r1);
    }
    ir_val pos = conv(f, cmp(f, "icmp sgt", x, lit_int(x.t, 0)), x.t);
    ir_val neg = conv(f, cmp(f, "icmp slt", x, lit_int(x.t, 0)), x.t);
    return bin(f, "sub", pos, neg);
}

static ir_val lower_minmax(fn_ctx *f, bool is_max, ir_val x, ir_val y) {
    if (x.t == TP_PLUGIN_BOOL) return bin(f, is_max ? "or" : "and", x, y);
    if (tpcommon_dtype_is_float(x.t)) {
        ir_val c = cmp(f, is_max ? "fcmp oge" : "fcmp ole", x, y);
        ir_val nan = cmp(f, "fcmp uno", x, x);
        return sel(f, bin(f, "or", c, nan), x, y);
    }
    return sel(f, cmp(f, is_max ? "icmp sge" : "icmp sle", x, y), x, y);
}

static ir_val lower_compare(fn_ctx *f, int32_t op, ir_val x, ir_val y) {
    static const char *const fpred[] = {"olt", "ole", "ogt", "oge", "oeq", "une"};
    static const char *const spred[] = {"slt", "sle", "sgt", "sge", "eq", "ne"};
    static const char *const upred[] = {"ult", "ule", "ugt", "uge", "eq", "ne"};
    int k = (int)(op - TP_PLUGIN_OP_LT);
    char predicate[32];
    if (tpcommon_dtype_is_float(x.t))
        snprintf(predicate, sizeof predicate, "fcmp %s", fpred[k]);
    else
        snprintf(predicate, sizeof predicate, "icmp %s",
                 x.t == TP_PLUGIN_BOOL ? upred[k] : spred[k]);
    return bool_of(f, cmp(f, predicate, x, y));
}

static ir_val lower_pow(fn_ctx *f, ir_val x, ir_val y) {
    if (tpcommon_dtype_is_float(x.t)) return call2(f, is_f32(x) ? "powf" : "pow", x, y);
    ir_val r = fresh(f, TP_PLUGIN_I64);
    ir_val a = conv(f, x, TP_PLUGIN_I64), b = conv(f, y, TP_PLUGIN_I64);
    emit(f, "  %s = call i64 @stax_ipow(i64 %s, i64 %s)", r.s, a.s, b.s);
    return conv(f, r, x.t);
}

/* log1p(t) for t >= 0 without losing small t: log(u) * t / (u - 1), u = 1 + t. */
static ir_val lower_log1p(fn_ctx *f, ir_val t) {
    ir_val u = f_op(f, "fadd", t, fk(t, 1.0));
    ir_val um1 = f_op(f, "fsub", u, fk(t, 1.0));
    ir_val l = lower_log(f, u);
    ir_val q = f_op(f, "fdiv", f_op(f, "fmul", l, t), um1);
    ir_val exact = cmp(f, "fcmp oeq", u, fk(t, 1.0));
    ir_val big = cmp(f, "fcmp oeq", t, fk(t, INFINITY));
    return sel(f, exact, t, sel(f, big, t, q));
}

static ir_val lower_gelu(fn_ctx *f, const tp_plugin_value *value, ir_val x) {
    ir_val half_x = f_op(f, "fmul", x, fk(x, 0.5));
    ir_val inner;
    if (tpcommon_attr_int(value, "approximate", TP_PLUGIN_GELU_NONE) == TP_PLUGIN_GELU_TANH) {
        ir_val x3 = f_op(f, "fmul", f_op(f, "fmul", x, x), x);
        ir_val poly = f_op(f, "fadd", x, f_op(f, "fmul", x3, fk(x, 0.044715)));
        inner = lower_tanh(f, f_op(f, "fmul", poly, fk(x, 0.79788456080286535588)));
    } else {
        inner = lower_erf(f, f_op(f, "fmul", x, fk(x, 0.70710678118654752440)));
    }
    return f_op(f, "fmul", half_x, f_op(f, "fadd", inner, fk(x, 1.0)));
}

static ir_val lower_softplus(fn_ctx *f, const tp_plugin_value *value, ir_val x) {
    double beta = tpcommon_attr_float(value, "beta", 1.0);
    double threshold = tpcommon_attr_float(value, "threshold", 20.0);
    ir_val scaled = f_op(f, "fmul", x, fk(x, beta));
    ir_val soft = f_op(f, "fdiv", lower_log1p(f, lower_exp(f, scaled)), fk(x, beta));
    return sel(f, cmp(f, "fcmp ogt", scaled, fk(x, threshold)), x, soft);
}

/* clip: min(max(x, lo), hi) by comparisons (NaN stays NaN); infinite bounds
 * are left out, integer bounds round into the integers as the reference's. */
static ir_val lower_clip(fn_ctx *f, const tp_plugin_value *value, ir_val x) {
    double lo = tpcommon_attr_float(value, "min", -HUGE_VAL);
    double hi = tpcommon_attr_float(value, "max", HUGE_VAL);
    bool fl = tpcommon_dtype_is_float(x.t);
    double limit = x.t == TP_PLUGIN_I32 ? 2147483647.0 : 9223372036854774784.0;
    if (lo > -HUGE_VAL) {
        ir_val bound = fl ? fk(x, lo) : lit_int(x.t, (int64_t)ceil(fmax(lo, -limit - 1)));
        x = sel(f, cmp(f, fl ? "fcmp olt" : "icmp slt", x, bound), bound, x);
    }
    if (hi < HUGE_VAL) {
        ir_val bound = fl ? fk(x, hi) : lit_int(x.t, (int64_t)floor(fmin(hi, limit)));
        x = sel(f, cmp(f, fl ? "fcmp ogt" : "icmp sgt", x, bound), bound, x);
    }
    return x;
}

/* The node's result from its operands, already converted to `compute`. */
static ir_val lower_op(fn_ctx *f, const tp_plugin_value *value, int32_t op, const ir_val *in) {
    ir_val x = in[0], y = in[1];
    bool fl = tpcommon_dtype_is_float(x.t);
    switch (op) {
    case TP_PLUGIN_OP_NEG:
        return lower_neg(f, x);
    case TP_PLUGIN_OP_ABS:
        return fl ? intrinsic1(f, "fabs", x)
                  : sel(f, cmp(f, "icmp slt", x, lit_int(x.t, 0)), lower_neg(f, x), x);
    case TP_PLUGIN_OP_EXP:
        return lower_exp(f, x);
    case TP_PLUGIN_OP_LOG:
        return lower_log(f, x);
    case TP_PLUGIN_OP_SQRT:
        return intrinsic1(f, "sqrt", x);
    case TP_PLUGIN_OP_RSQRT:
        return f_op(f, "fdiv", fk(x, 1.0), intrinsic1(f, "sqrt", x));
    case TP_PLUGIN_OP_SIN:
        return call1(f, is_f32(x) ? "stax_sinf" : "sin", x);
    case TP_PLUGIN_OP_COS:
        return call1(f, is_f32(x) ? "stax_cosf" : "cos", x);
    case TP_PLUGIN_OP_TANH:
        return lower_tanh(f, x);
    case TP_PLUGIN_OP_SIGMOID:
        return lower_sigmoid(f, x);
    case TP_PLUGIN_OP_ERF:
        return lower_erf(f, x);
    case TP_PLUGIN_OP_RELU:
        if (x.t == TP_PLUGIN_BOOL) return x;
        return fl ? sel(f, cmp(f, "fcmp olt", x, fk(x, 0.0)), fk(x, 0.0), x)
                  : sel(f, cmp(f, "icmp slt", x, lit_int(x.t, 0)), lit_int(x.t, 0), x);
    case TP_PLUGIN_OP_FLOOR:
        return fl ? intrinsic1(f, "floor", x) : x;
    case TP_PLUGIN_OP_CEIL:
        return fl ? intrinsic1(f, "ceil", x) : x;
    case TP_PLUGIN_OP_SIGN:
        return lower_sign(f, x);
    case TP_PLUGIN_OP_LOGICAL_NOT:
        return bool_of(f,
                       cmp(f, fl ? "fcmp oeq" : "icmp eq", x, fl ? fk(x, 0.0) : lit_int(x.t, 0)));
    case TP_PLUGIN_OP_CAST:
        return conv(f, x, value->type.dtype);
    case TP_PLUGIN_OP_ADD:
        return fl ? f_op(f, "fadd", x, y) : bin(f, "add", x, y);
    case TP_PLUGIN_OP_SUB:
        return fl ? f_op(f, "fsub", x, y) : bin(f, "sub", x, y);
    case TP_PLUGIN_OP_MUL:
        return fl ? f_op(f, "fmul", x, y) : bin(f, "mul", x, y);
    case TP_PLUGIN_OP_DIV:
        return bin(f, "fdiv", x, y);
    case TP_PLUGIN_OP_POW:
        return lower_pow(f, x, y);
    case TP_PLUGIN_OP_MAXIMUM:
    case TP_PLUGIN_OP_MINIMUM:
        return lower_minmax(f, op == TP_PLUGIN_OP_MAXIMUM, x, y);
    case TP_PLUGIN_OP_LT:
    case TP_PLUGIN_OP_LE:
    case TP_PLUGIN_OP_GT:
    case TP_PLUGIN_OP_GE:
    case TP_PLUGIN_OP_EQ:
    case TP_PLUGIN_OP_NE:
        return lower_compare(f, op, x, y);
    case TP_PLUGIN_OP_LOGICAL_AND:
        return bool_of(f, bin(f, "and", to_i1(f, x), to_i1(f, y)));
    case TP_PLUGIN_OP_LOGICAL_OR:
        return bool_of(f, bin(f, "or", to_i1(f, x), to_i1(f, y)));
    case TP_PLUGIN_OP_WHERE:
        return sel(f, to_i1(f, in[0]), in[1], in[2]);
    case TP_PLUGIN_OP_GELU:
        return lower_gelu(f, value, x);
    case TP_PLUGIN_OP_SILU:
        return f_op(f, "fmul", x, lower_sigmoid(f, x));
    case TP_PLUGIN_OP_SOFTPLUS:
        return lower_softplus(f, value, x);
    case TP_PLUGIN_OP_CLIP:
        return lower_clip(f, value, x);
    default:
        f->failed = true;
        return x;
    }
}

/* ---- expressions: a value and its inlined producers, without recursion ----
 *
 * A value that is not stored (view.slot < 0: an inlined member of the
 * region, the region's root, or a matmul or conv read as its raw product) is
 * computed from its operands; a stored one is loaded. The expression tree is
 * walked with an explicit stack of frames (one per value being computed,
 * holding the operands gathered so far), so its depth is bounded by memory,
 * not by the C stack: operand k of a frame is computed completely before
 * operand k + 1, which emits the instructions in the same order a recursive
 * walk would. */

typedef struct expr_frame {
    int32_t value;
    int32_t next;  /* the next operand slot to gather */
    int32_t count; /* operand slots this value lowers */
    ir_val in[3];
    ir_val raw; /* matmul: the raw product, loaded when the frame opens */
} expr_frame;

typedef struct expr_stack {
    expr_frame *frames;
    int32_t depth, capacity;
} expr_stack;

/* A matmul or a conv read inside an epilogue: its f32 result lies in its
 * raw view, written by its step before the epilogue runs (stax_plan.c). */
static bool is_product(fn_ctx *f, int32_t v) {
    const tp_plugin_value *value = &f->g->graph->values[v];
    tpcommon_kind kind = tpcommon_op_kind(tpcommon_op_of(f->g->graph, value));
    return kind == TPCOMMON_KIND_MATMUL || kind == TPCOMMON_KIND_WINDOW;
}

/* The operand of `v` lowered into slot k (a matmul lowers only its bias). */
static int32_t frame_operand(fn_ctx *f, const expr_frame *frame, int32_t k) {
    const tp_plugin_value *value = &f->g->graph->values[frame->value];
    return is_product(f, frame->value) ? value->operands[2] : value->operands[k];
}

static bool frame_push(fn_ctx *f, expr_stack *stack, int32_t v) {
    if (stack->depth == stack->capacity) {
        int32_t capacity = stack->capacity ? stack->capacity * 2 : 32;
        expr_frame *grown = realloc(stack->frames, sizeof *grown * (size_t)capacity);
        if (!grown) {
            f->failed = true;
            return false;
        }
        stack->frames = grown;
        stack->capacity = capacity;
    }
    expr_frame *frame = &stack->frames[stack->depth++];
    memset(frame, 0, sizeof *frame);
    frame->value = v;
    const tp_plugin_value *value = &f->g->graph->values[v];
    if (is_product(f, v)) {
        const stax_value *info = &f->g->values[v];
        /* an f16/bf16 product is written in f32 (stax_plan.c) */
        int32_t raw_dtype =
            tpcommon_dtype_is_storage_float(info->type.dtype) ? TP_PLUGIN_F32 : info->type.dtype;
        frame->raw = load_view(f, &info->raw, raw_dtype);
        bool bias =
            tpcommon_op_of(f->g->graph, value) == TP_PLUGIN_OP_LINEAR && value->num_operands > 2;
        frame->count = bias ? 1 : 0;
    } else {
        frame->count = value->num_operands < 3 ? value->num_operands : 3;
    }
    return true;
}

/* The value of a frame whose operands are all gathered (raw, not converted). */
static ir_val frame_finish(fn_ctx *f, const expr_frame *frame) {
    int32_t v = frame->value;
    const tp_plugin_value *value = &f->g->graph->values[v];
    if (is_product(f, v)) {
        ir_val r = frame->raw;
        if (frame->count > 0) {
            ir_val bias = conv(f, frame->in[0], r.t);
            r = tpcommon_dtype_is_float(r.t) ? f_op(f, "fadd", r, bias) : bin(f, "add", r, bias);
        }
        return conv(f, r, value->type.dtype); /* f16/bf16: rounded once */
    }
    int32_t op = tpcommon_op_of(f->g->graph, value);
    int32_t compute = f->g->values[v].compute;
    ir_val in[3];
    memset(in, 0, sizeof in);
    for (int32_t k = 0; k < frame->count; k++) {
        bool keep = op == TP_PLUGIN_OP_CAST || (op == TP_PLUGIN_OP_WHERE && k == 0);
        in[k] = keep ? frame->in[k] : conv(f, frame->in[k], compute);
    }
    if (tpcommon_op_kind(op) != TPCOMMON_KIND_POINTWISE) {
        f->failed = true;
        return in[0];
    }
    int32_t dtype = value->type.dtype;
    f->rounds_to_storage_float = dtype == TP_PLUGIN_F16 || dtype == TP_PLUGIN_BF16;
    ir_val result = lower_op(f, value, op, in);
    f->rounds_to_storage_float = false;
    return conv(f, result, dtype);
}

/* `v` computed (never loaded, even when stored) with its inlined producers. */
ir_val lower_compute(fn_ctx *f, int32_t v) {
    expr_stack stack = {0};
    ir_val result = {.s = "0", .t = f->g->values[v].type.dtype};
    if (!frame_push(f, &stack, v)) return result;
    while (stack.depth > 0) {
        expr_frame *top = &stack.frames[stack.depth - 1];
        if (top->next < top->count) {
            int32_t operand = frame_operand(f, top, top->next);
            const stax_value *info = &f->g->values[operand];
            if (info->view.slot >= 0) {
                top->in[top->next++] = load_view(f, &info->view, info->type.dtype);
            } else if (!frame_push(f, &stack, operand)) {
                break;
            }
            continue;
        }
        ir_val value = frame_finish(f, top);
        stack.depth--;
        if (stack.depth == 0) {
            result = value;
        } else {
            expr_frame *parent = &stack.frames[stack.depth - 1];
            parent->in[parent->next++] = value;
        }
    }
    free(stack.frames);
    return result;
}

ir_val lower_value(fn_ctx *f, int32_t v) {
    const stax_value *info = &f->g->values[v];
    if (info->view.slot < 0) return lower_compute(f, v);
    return load_view(f, &info->view, info->type.dtype);
}
