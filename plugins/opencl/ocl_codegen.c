/* The kernel templates and the program assembly (see ocl_codegen.h). The
 * values inside a kernel come from the emitter (ocl_emit.c); this file owns
 * the iteration structure of each region kind, binding of symbolic
 * dimensions, the f64 check and which values get device buffers. */
#include "ocl_codegen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpcommon_symbols.h"

#define MAX_LOCAL 256

/* ---- concrete types ------------------------------------------------------------ */

/* Binds the dimension symbols from the input metadata (plugins/common's
 * binder: dtype, rank, static dims and symbol agreement are checked there)
 * and gives every value its concrete type. */
static int concrete_types(const tp_plugin_graph *view, const tp_plugin_tensor_meta *inputs,
                          int32_t num_inputs, ocl_graph *graph, char *error, size_t size) {
    int32_t n = view->num_values;
    int64_t *symbols = malloc(sizeof(int64_t) * ((size_t)view->num_symbols + 1));
    graph->types = calloc((size_t)n + 1, sizeof *graph->types);
    graph->numel = calloc((size_t)n + 1, sizeof *graph->numel);
    if (!symbols || !graph->types || !graph->numel) {
        free(symbols);
        return tpcommon_error(error, size, "out of memory for %d values", (int)n);
    }
    if (tpcommon_bind_symbols_from_metas(view, inputs, num_inputs, symbols, error, size) !=
        TP_PLUGIN_OK) {
        free(symbols);
        return TP_PLUGIN_ERROR;
    }
    for (int32_t v = 0; v < n; v++) {
        tp_plugin_type *type = &graph->types[v];
        *type = view->values[v].type;
        graph->numel[v] = 1;
        for (int d = 0; d < type->ndim; d++) {
            if (type->dims[d] < 0) {
                int64_t symbol = -type->dims[d] - 1;
                if (symbol >= view->num_symbols || symbols[symbol] < 0) {
                    free(symbols);
                    return tpcommon_error(error, size,
                                          "%%%s: dimension %d is a symbol no input binds",
                                          view->values[v].name, d);
                }
                type->dims[d] = symbols[symbol];
            }
            graph->numel[v] *= type->dims[d];
        }
    }
    free(symbols);
    return TP_PLUGIN_OK;
}

/* A refusal of plugin.h's kind (TP_PLUGIN_UNSUPPORTED), reason in `error`. */
__attribute__((format(printf, 3, 4))) static int refuse(char *error, size_t size,
                                                        const char *format, ...) {
    va_list args;
    va_start(args, format);
    tpcommon_verror(error, size, format, args);
    va_end(args);
    return TP_PLUGIN_UNSUPPORTED;
}

/* Unknown ops and f64 on devices without cl_khr_fp64 are refused here. */
static int check_ops(ocl_graph *graph, const ocl_device *device, char *error, size_t size) {
    const tp_plugin_graph *view = graph->view;
    for (int32_t v = 0; v < view->num_values; v++) {
        const tp_plugin_value *value = &view->values[v];
        int32_t op = tpcommon_op_of(view, value);
        if (value->op && !tpcommon_op_known(op))
            return tpcommon_error(error, size,
                                  "op '%s' (%%%s) is not supported by the opencl backend",
                                  value->op, value->name);
        if (value->op && (tpcommon_op_kind(op) == TPCOMMON_KIND_INDEXING ||
                          tpcommon_op_kind(op) == TPCOMMON_KIND_WINDOW))
            return tpcommon_error(error, size,
                                  "unsupported: op '%s' (%%%s): the opencl backend has no kernel "
                                  "for it yet (the fallback backend runs it)",
                                  value->op, value->name);
        int32_t compute = value->op ? tpcommon_compute_dtype(view, value) : value->type.dtype;
        bool f64 = graph->types[v].dtype == TP_PLUGIN_F64 || compute == TP_PLUGIN_F64;
        if (!f64) continue;
        graph->uses_f64 = true;
        if (device->fp64) continue;
        if (!value->op)
            return refuse(error, size,
                          "input %%%s is f64, which device '%s' does not support (no "
                          "cl_khr_fp64): pass f32",
                          value->name, device->name);
        return refuse(error, size,
                      "op '%s' (%%%s) computes in f64, which device '%s' does not support (no "
                      "cl_khr_fp64): cast to f32 first",
                      value->op, value->name, device->name);
    }
    return TP_PLUGIN_OK;
}

/* ---- shared pieces of the templates ------------------------------------------------ */

typedef struct region_code {
    ocl_codegen *codegen;
    const ocl_device *device;
    int32_t region;
    const tpcommon_region *info;
    ocl_emitter emitter;
    tpcommon_buf body;
    bool *loads;
    ocl_launch *launch;
} region_code;

static size_t local_size(const ocl_device *device, size_t wanted) {
    size_t limit = device->max_work_group < MAX_LOCAL ? device->max_work_group : MAX_LOCAL;
    size_t size = 1;
    while (size * 2 <= wanted && size * 2 <= limit) size *= 2;
    return size;
}

static size_t round_up(int64_t count, size_t multiple) {
    size_t n = (size_t)count;
    return (n + multiple - 1) / multiple * multiple;
}

static const tp_plugin_value *value_of(region_code *code, int32_t v) {
    return &code->codegen->graph.view->values[v];
}

static const tp_plugin_type *type_of(region_code *code, int32_t v) {
    return &code->codegen->graph.types[v];
}

static void store_root(region_code *code, const char *index) {
    int32_t root = code->info->root;
    const char *local = ocl_emit_value(&code->emitter, root, index);
    ocl_emit_line(&code->emitter, "b%d[%s] = %s;", (int)root, index, local);
}

/* ---- pointwise, shape and creation regions ---------------------------------------- */

static void pointwise_kernel(region_code *code) {
    int32_t root = code->info->root;
    int64_t count = code->codegen->graph.numel[root];
    size_t local = local_size(code->device, MAX_LOCAL);
    /* A bounds check keeps PoCL from vectorizing the work-group loop (2x
     * slower measured), so when a power-of-two group size of 64 or more
     * divides the count the grid is exact and there is none. */
    size_t exact = local;
    while (exact >= 64 && (size_t)count % exact != 0) exact /= 2;
    ocl_emit_line(&code->emitter, "const long i = get_global_id(0);");
    if (exact >= 64) {
        local = exact;
    } else {
        ocl_emit_line(&code->emitter, "if (i >= %lldL) return;", (long long)count);
    }
    store_root(code, "i");
    code->launch->work_dim = 1;
    code->launch->global[0] = round_up(count, local);
    code->launch->local[0] = local;
}

/* ---- reductions ---------------------------------------------------------------------- */

typedef struct reduction_shape {
    bool reduced[TP_PLUGIN_MAX_DIMS];
    int64_t outputs, length; /* output elements, elements folded into each */
} reduction_shape;

static void reduction_axes(region_code *code, int32_t root, reduction_shape *shape) {
    const tp_plugin_value *value = value_of(code, root);
    const tp_plugin_type *in = type_of(code, value->operands[0]);
    memset(shape, 0, sizeof *shape);
    if (tpcommon_op_of(code->codegen->graph.view, value) == TP_PLUGIN_OP_ARGMAX) {
        int64_t axis = tpcommon_attr_int(value, "axis", 0);
        shape->reduced[axis < 0 ? axis + in->ndim : axis] = true;
    } else {
        int32_t count = 0;
        const int64_t *axes = tpcommon_attr_ints(value, "axes", &count);
        for (int d = 0; d < in->ndim; d++) shape->reduced[d] = count == 0;
        for (int32_t k = 0; k < count; k++)
            shape->reduced[axes[k] < 0 ? axes[k] + in->ndim : axes[k]] = true;
    }
    shape->outputs = 1;
    shape->length = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (shape->reduced[d])
            shape->length *= in->dims[d];
        else
            shape->outputs *= in->dims[d];
    }
}

/* Index into the input of element `k` of the row of output `o`. */
static const char *reduction_input_index(region_code *code, const tp_plugin_type *in,
                                         const reduction_shape *shape, const char *o,
                                         const char *k) {
    tpcommon_buf sum;
    tpcommon_buf_init(&sum);
    for (int pass = 0; pass < 2; pass++) {
        bool want_reduced = pass == 1;
        tp_plugin_type part = {.dtype = in->dtype}; /* the kept (or reduced) axes alone */
        int axis_in_part[TP_PLUGIN_MAX_DIMS];
        for (int d = 0; d < in->ndim; d++)
            if (shape->reduced[d] == want_reduced) {
                axis_in_part[d] = part.ndim;
                part.dims[part.ndim++] = in->dims[d];
            }
        for (int d = 0; d < in->ndim; d++) {
            if (shape->reduced[d] != want_reduced || in->dims[d] == 1) continue;
            char coordinate[128];
            ocl_coordinate(&part, axis_in_part[d], want_reduced ? k : o, coordinate,
                           sizeof coordinate);
            if (sum.length) tpcommon_buf_append(&sum, " + ");
            int64_t stride = ocl_stride(in, d);
            if (stride == 1)
                tpcommon_buf_append(&sum, coordinate);
            else
                tpcommon_buf_printf(&sum, "%s * %lldL", coordinate, (long long)stride);
        }
    }
    const char *token = ocl_emit_index(&code->emitter, sum.length ? sum.data : "0");
    tpcommon_buf_free(&sum);
    return token;
}

/* The accumulator: its dtype, identity and how an element joins it. */
typedef struct accumulator {
    int32_t op;
    int32_t in_dtype, acc_dtype, out_dtype;
    char acc_type[16];
    char identity[64];
} accumulator;

static void accumulator_of(region_code *code, int32_t root, accumulator *acc) {
    const tp_plugin_value *value = value_of(code, root);
    acc->op = tpcommon_op_of(code->codegen->graph.view, value);
    acc->in_dtype = type_of(code, value->operands[0])->dtype;
    acc->out_dtype = type_of(code, root)->dtype;
    bool floating = tpcommon_dtype_is_float(acc->in_dtype);
    switch (acc->op) {
    case TP_PLUGIN_OP_SUM:
    case TP_PLUGIN_OP_MEAN:
        acc->acc_dtype = floating ? acc->in_dtype : TP_PLUGIN_I64;
        snprintf(acc->acc_type, sizeof acc->acc_type, "%s",
                 floating ? ocl_ctype(acc->in_dtype) : "ulong");
        snprintf(acc->identity, sizeof acc->identity, "0");
        break;
    default: { /* max, min, argmax */
        acc->acc_dtype = acc->in_dtype;
        snprintf(acc->acc_type, sizeof acc->acc_type, "%s", ocl_ctype(acc->in_dtype));
        bool low = acc->op != TP_PLUGIN_OP_MIN;
        static const char *const lows[] = {"(-INFINITY)", "(-INFINITY)", "INT_MIN", "LONG_MIN",
                                           "0"};
        static const char *const highs[] = {"INFINITY", "INFINITY", "INT_MAX", "LONG_MAX", "1"};
        snprintf(acc->identity, sizeof acc->identity, "(%s)%s", acc->acc_type,
                 (low ? lows : highs)[acc->in_dtype]);
        break;
    }
    }
}

/* Code folding value `x` (index `xi`) into `a` (and index `ai` for argmax). */
static void fold(region_code *code, const accumulator *acc, const char *a, const char *ai,
                 const char *x, const char *xi) {
    ocl_emitter *e = &code->emitter;
    bool floating = tpcommon_dtype_is_float(acc->in_dtype);
    switch (acc->op) {
    case TP_PLUGIN_OP_SUM:
    case TP_PLUGIN_OP_MEAN:
        if (floating)
            ocl_emit_line(e, "%s += %s;", a, x);
        else
            ocl_emit_line(e, "%s += (ulong)(long)%s;", a, x);
        break;
    case TP_PLUGIN_OP_MAX:
    case TP_PLUGIN_OP_MIN: {
        const char *cmp = acc->op == TP_PLUGIN_OP_MAX ? ">" : "<";
        if (acc->in_dtype == TP_PLUGIN_BOOL)
            ocl_emit_line(e, "%s = (uchar)(%s %s %s);", a, a,
                          acc->op == TP_PLUGIN_OP_MAX ? "|" : "&", x);
        else if (floating)
            ocl_emit_line(e, "%s = (%s %s %s || isnan(%s)) ? %s : %s;", a, x, cmp, a, x, x, a);
        else
            ocl_emit_line(e, "%s = %s %s %s ? %s : %s;", a, x, cmp, a, x, a);
        break;
    }
    default: { /* argmax: the first maximum; the first NaN beats everything */
        char better[512];
        if (floating)
            snprintf(better, sizeof better,
                     "%s >= 0 && (%s < 0 || (isnan(%s) ? (!isnan(%s) || %s < %s) : (!isnan(%s) && "
                     "(%s > %s || (%s == %s && %s < %s)))))",
                     xi, ai, x, a, xi, ai, a, x, a, x, a, xi, ai);
        else
            snprintf(better, sizeof better,
                     "%s >= 0 && (%s < 0 || %s > %s || (%s == %s && %s < %s))", xi, ai, x, a, x, a,
                     xi, ai);
        ocl_emit_line(e, "if (%s) { %s = %s; %s = %s; }", better, a, x, ai, xi);
        break;
    }
    }
}

/* The reduction's result (in the root's dtype) from the accumulator. */
static void finish(region_code *code, const accumulator *acc, const reduction_shape *shape,
                   const char *a, const char *ai, const char *result) {
    ocl_emitter *e = &code->emitter;
    const char *out_type = ocl_ctype(acc->out_dtype);
    switch (acc->op) {
    case TP_PLUGIN_OP_SUM:
        if (tpcommon_dtype_is_float(acc->in_dtype))
            ocl_emit_line(e, "const %s %s = %s;", out_type, result, a);
        else
            ocl_emit_line(e, "const long %s = (long)%s;", result, a);
        break;
    case TP_PLUGIN_OP_MEAN:
        if (tpcommon_dtype_is_float(acc->in_dtype))
            ocl_emit_line(e, "const %s %s = %s / (%s)%lld;", out_type, result, a, out_type,
                          (long long)shape->length);
        else
            ocl_emit_line(e, "const %s %s = (%s)(long)%s / (%s)%lld;", out_type, result, out_type,
                          a, out_type, (long long)shape->length);
        break;
    case TP_PLUGIN_OP_ARGMAX:
        ocl_emit_line(e, "const long %s = %s < 0 ? 0 : %s;", result, ai, ai);
        break;
    default:
        ocl_emit_line(e, "const %s %s = %s;", out_type, result, a);
        break;
    }
}

/* Emits the loop folding elements [first, length) step `step` of row `o`. */
static void fold_loop(region_code *code, const accumulator *acc, const reduction_shape *shape,
                      const char *o, const char *first, const char *step) {
    ocl_emitter *e = &code->emitter;
    int32_t root = code->info->root;
    int32_t input = value_of(code, root)->operands[0];
    ocl_emit_line(e, "for (long k = %s; k < %lldL; k += %s) {", first, (long long)shape->length,
                  step);
    e->indent++;
    ocl_emit_scope scope = ocl_emit_scope_begin(e);
    const char *index = reduction_input_index(code, type_of(code, input), shape, o, "k");
    const char *x = ocl_emit_value(e, input, index);
    fold(code, acc, "acc", "at", x, "k");
    ocl_emit_scope_end(e, scope);
    e->indent--;
    ocl_emit_line(e, "}");
}

static void reduction_kernel(region_code *code) {
    ocl_emitter *e = &code->emitter;
    int32_t root = code->info->root;
    reduction_shape shape;
    accumulator acc;
    reduction_axes(code, root, &shape);
    accumulator_of(code, root, &acc);
    bool argmax = acc.op == TP_PLUGIN_OP_ARGMAX;
    /* Many outputs with short rows: one work-item per output is enough. */
    bool serial = shape.length <= 64 || shape.outputs >= 4096;
    size_t local = serial ? local_size(code->device, MAX_LOCAL)
                          : local_size(code->device, (size_t)shape.length);
    if (!serial && local < 2) serial = true;
    code->launch->work_dim = 1;
    code->launch->local[0] = local;
    if (serial) {
        code->launch->global[0] = round_up(shape.outputs, local);
        ocl_emit_line(e, "const long o = get_global_id(0);");
        ocl_emit_line(e, "if (o >= %lldL) return;", (long long)shape.outputs);
        ocl_emit_line(e, "%s acc = %s;", acc.acc_type, acc.identity);
        ocl_emit_line(e, "long at = -1;");
        fold_loop(code, &acc, &shape, "o", "0", "1");
    } else {
        code->launch->global[0] = (size_t)shape.outputs * local;
        ocl_emit_line(e, "const long o = get_group_id(0);");
        ocl_emit_line(e, "const int lid = (int)get_local_id(0);");
        ocl_emit_line(e, "__local %s part[%zu];", acc.acc_type, local);
        if (argmax) ocl_emit_line(e, "__local long part_at[%zu];", local);
        ocl_emit_line(e, "%s acc = %s;", acc.acc_type, acc.identity);
        ocl_emit_line(e, "long at = -1;");
        char step[32];
        snprintf(step, sizeof step, "%zuL", local);
        fold_loop(code, &acc, &shape, "o", "(long)lid", step);
        ocl_emit_line(e, "part[lid] = acc;");
        if (argmax) ocl_emit_line(e, "part_at[lid] = at;");
        ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
        ocl_emit_line(e, "for (int span = %zu; span > 0; span >>= 1) {", local / 2);
        e->indent++;
        ocl_emit_line(e, "if (lid < span) {");
        e->indent++;
        ocl_emit_line(e, "%s x = part[lid + span];", acc.acc_type);
        ocl_emit_line(e, "long xk = %s;", argmax ? "part_at[lid + span]" : "0");
        ocl_emit_line(e, "acc = part[lid];");
        if (argmax) ocl_emit_line(e, "at = part_at[lid];");
        fold(code, &acc, "acc", "at", "x", "xk");
        ocl_emit_line(e, "part[lid] = acc;");
        if (argmax) ocl_emit_line(e, "part_at[lid] = at;");
        e->indent--;
        ocl_emit_line(e, "}");
        ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
        e->indent--;
        ocl_emit_line(e, "}");
        ocl_emit_line(e, "if (lid != 0) return;");
        ocl_emit_line(e, "acc = part[0];");
        if (argmax) ocl_emit_line(e, "at = part_at[0];");
    }
    finish(code, &acc, &shape, "acc", "at", "result");
    ocl_emit_bind(e, root, "o", "result");
    store_root(code, "o");
}

/* ---- row ops: softmax, log_softmax, layer_norm ------------------------------------------ */

/* Tree-combines `name` (of `type`) across the work-group into every item. */
static void group_combine(ocl_emitter *e, const char *type, const char *name, const char *scratch,
                          size_t local, bool maximum) {
    ocl_emit_line(e, "%s[lid] = %s;", scratch, name);
    ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
    ocl_emit_line(e, "for (int span = %zu; span > 0; span >>= 1) {", local / 2);
    e->indent++;
    if (maximum)
        ocl_emit_line(e,
                      "if (lid < span) { %s y = %s[lid + span], z = %s[lid]; %s[lid] = (y > z || "
                      "isnan(y)) ? y : z; }",
                      type, scratch, scratch, scratch);
    else
        ocl_emit_line(e, "if (lid < span) %s[lid] += %s[lid + span];", scratch, scratch);
    ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
    e->indent--;
    ocl_emit_line(e, "}");
    ocl_emit_line(e, "%s = %s[0];", name, scratch);
    ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* Opens `for (k ...)` over the row and returns the element's index token. */
static const char *row_loop_open(region_code *code, int64_t length, int64_t inner, size_t local,
                                 ocl_emit_scope *scope) {
    ocl_emitter *e = &code->emitter;
    ocl_emit_line(e, "for (long k = lid; k < %lldL; k += %zuL) {", (long long)length, local);
    e->indent++;
    *scope = ocl_emit_scope_begin(e);
    char expr[160];
    if (inner == 1)
        snprintf(expr, sizeof expr, "row * %lldL + k", (long long)length);
    else
        snprintf(expr, sizeof expr, "(row / %lldL * %lldL + k) * %lldL + row %% %lldL",
                 (long long)inner, (long long)length, (long long)inner, (long long)inner);
    return ocl_emit_index(e, expr);
}

static void row_loop_close(region_code *code, ocl_emit_scope scope) {
    ocl_emit_scope_end(&code->emitter, scope);
    code->emitter.indent--;
    ocl_emit_line(&code->emitter, "}");
}

static void row_kernel(region_code *code) {
    ocl_emitter *e = &code->emitter;
    int32_t root = code->info->root;
    const tp_plugin_value *value = value_of(code, root);
    int32_t op = tpcommon_op_of(code->codegen->graph.view, value);
    const tp_plugin_type *in = type_of(code, value->operands[0]);
    int32_t dtype = type_of(code, root)->dtype;
    const char *t = ocl_ctype(dtype);
    int axis = (int)tpcommon_attr_int(value, "axis", -1);
    if (axis < 0) axis += in->ndim;
    int64_t outer = 1, length = 1, inner = 1;
    for (int d = 0; d < in->ndim; d++) {
        bool in_row = op == TP_PLUGIN_OP_LAYER_NORM ? d >= axis : d == axis;
        int64_t *part = d < axis ? &outer : in_row ? &length : &inner;
        *part *= in->dims[d];
    }
    size_t local = local_size(code->device, (size_t)length);
    code->launch->work_dim = 1;
    code->launch->local[0] = local;
    code->launch->global[0] = (size_t)(outer * inner) * local;
    ocl_emit_line(e, "const long row = get_group_id(0);");
    ocl_emit_line(e, "const int lid = (int)get_local_id(0);");
    ocl_emit_line(e, "__local %s scratch[%zu];", t, local);
    char x_expr[160];
    ocl_emit_scope scope;
    const char *index;
    if (op == TP_PLUGIN_OP_LAYER_NORM) {
        double eps = tpcommon_attr_float(value, "eps", 1e-5);
        char eps_text[64];
        ocl_literal(dtype, eps, eps_text, sizeof eps_text);
        ocl_emit_line(e, "%s mean = 0;", t);
        index = row_loop_open(code, length, inner, local, &scope);
        ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                    sizeof x_expr);
        ocl_emit_line(e, "mean += %s;", x_expr);
        row_loop_close(code, scope);
        group_combine(e, t, "mean", "scratch", local, false);
        ocl_emit_line(e, "mean /= (%s)%lld;", t, (long long)length);
        ocl_emit_line(e, "%s variance = 0;", t);
        index = row_loop_open(code, length, inner, local, &scope);
        ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                    sizeof x_expr);
        ocl_emit_line(e, "{ const %s centered = %s - mean; variance += centered * centered; }", t,
                      x_expr);
        row_loop_close(code, scope);
        group_combine(e, t, "variance", "scratch", local, false);
        ocl_emit_line(e, "const %s scale = (%s)1 / sqrt(variance / (%s)%lld + %s);", t, t, t,
                      (long long)length, eps_text);
        index = row_loop_open(code, length, inner, local, &scope);
        ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                    sizeof x_expr);
        ocl_emit_line(e, "%s y = (%s - mean) * scale;", t, x_expr);
        for (int32_t k = 1; k < value->num_operands; k++) {
            int32_t param = value->operands[k];
            char p_expr[160];
            ocl_convert(type_of(code, param)->dtype, dtype, ocl_emit_value(e, param, "k"), p_expr,
                        sizeof p_expr);
            ocl_emit_line(e, "y %s= %s;", k == 1 ? "*" : "+", p_expr);
        }
        ocl_emit_line(e, "b%d[%s] = y;", (int)root, index);
        row_loop_close(code, scope);
        return;
    }
    ocl_emit_line(e, "%s top = -INFINITY;", t);
    index = row_loop_open(code, length, inner, local, &scope);
    ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                sizeof x_expr);
    ocl_emit_line(e, "{ const %s x = %s; top = (x > top || isnan(x)) ? x : top; }", t, x_expr);
    row_loop_close(code, scope);
    group_combine(e, t, "top", "scratch", local, true);
    ocl_emit_line(e, "%s total = 0;", t);
    index = row_loop_open(code, length, inner, local, &scope);
    ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                sizeof x_expr);
    ocl_emit_line(e, "total += exp(%s - top);", x_expr);
    row_loop_close(code, scope);
    group_combine(e, t, "total", "scratch", local, false);
    if (op == TP_PLUGIN_OP_LOG_SOFTMAX) ocl_emit_line(e, "const %s log_total = log(total);", t);
    index = row_loop_open(code, length, inner, local, &scope);
    ocl_convert(in->dtype, dtype, ocl_emit_value(e, value->operands[0], index), x_expr,
                sizeof x_expr);
    if (op == TP_PLUGIN_OP_LOG_SOFTMAX)
        ocl_emit_line(e, "b%d[%s] = (%s - top) - log_total;", (int)root, index, x_expr);
    else
        ocl_emit_line(e, "b%d[%s] = exp(%s - top) / total;", (int)root, index, x_expr);
    row_loop_close(code, scope);
}

/* ---- matmul and linear, tiled, with the region's epilogue -------------------------------- */

typedef struct matmul_shape {
    int64_t m, k, n, batches;
    bool linear;
    tp_plugin_type out_batch, a_batch, b_batch;
} matmul_shape;

static void matmul_shape_of(region_code *code, int32_t mm, matmul_shape *s) {
    const tp_plugin_value *value = value_of(code, mm);
    const tp_plugin_type *a = type_of(code, value->operands[0]);
    const tp_plugin_type *b = type_of(code, value->operands[1]);
    const tp_plugin_type *out = type_of(code, mm);
    memset(s, 0, sizeof *s);
    s->linear = tpcommon_op_of(code->codegen->graph.view, value) == TP_PLUGIN_OP_LINEAR;
    s->k = a->dims[a->ndim - 1];
    s->batches = 1;
    if (s->linear) { /* x [..., k] @ weight[n, k]^T: rows are all leading elements */
        s->n = b->dims[0];
        s->m = s->k > 0 ? code->codegen->graph.numel[value->operands[0]] / s->k : 0;
        if (s->k == 0) {
            s->m = 1;
            for (int d = 0; d + 1 < a->ndim; d++) s->m *= a->dims[d];
        }
        return;
    }
    s->m = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    s->n = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
    int batch_ndim = out->ndim - (a->ndim >= 2) - (b->ndim >= 2);
    s->out_batch.ndim = batch_ndim;
    for (int d = 0; d < batch_ndim; d++) {
        s->out_batch.dims[d] = out->dims[d];
        s->batches *= out->dims[d];
    }
    s->a_batch.ndim = a->ndim > 2 ? a->ndim - 2 : 0;
    for (int d = 0; d < s->a_batch.ndim; d++) s->a_batch.dims[d] = a->dims[d];
    s->b_batch.ndim = b->ndim > 2 ? b->ndim - 2 : 0;
    for (int d = 0; d < s->b_batch.ndim; d++) s->b_batch.dims[d] = b->dims[d];
}

/* Loads one tile element of operand `operand` into `target`. */
static void tile_load(region_code *code, int32_t operand, int32_t compute, const char *guard,
                      const char *index_expr, const char *target) {
    ocl_emitter *e = &code->emitter;
    ocl_emit_line(e, "{");
    e->indent++;
    ocl_emit_line(e, "%s v = 0;", ocl_ctype(compute));
    ocl_emit_line(e, "if (%s) {", guard);
    e->indent++;
    ocl_emit_scope scope = ocl_emit_scope_begin(e);
    const char *index = ocl_emit_index(e, index_expr);
    char converted[160];
    ocl_convert(type_of(code, operand)->dtype, compute, ocl_emit_value(e, operand, index),
                converted, sizeof converted);
    ocl_emit_line(e, "v = %s;", converted);
    ocl_emit_scope_end(e, scope);
    e->indent--;
    ocl_emit_line(e, "}");
    ocl_emit_line(e, "%s = v;", target);
    e->indent--;
    ocl_emit_line(e, "}");
}

static void matmul_kernel(region_code *code) {
    ocl_emitter *e = &code->emitter;
    int32_t mm = code->info->matmul >= 0 ? code->info->matmul : code->info->root;
    const tp_plugin_value *value = value_of(code, mm);
    matmul_shape s;
    matmul_shape_of(code, mm, &s);
    int32_t a = value->operands[0], b = value->operands[1];
    int32_t compute = tpcommon_dtype_promote(type_of(code, a)->dtype, type_of(code, b)->dtype);
    const char *t = ocl_ctype(compute);
    size_t tile = code->device->max_work_group >= 256 ? 16 : 8;
    code->launch->work_dim = 3;
    code->launch->global[0] = round_up(s.n, tile);
    code->launch->global[1] = round_up(s.m, tile);
    code->launch->global[2] = (size_t)s.batches;
    code->launch->local[0] = tile;
    code->launch->local[1] = tile;
    code->launch->local[2] = 1;
    ocl_emit_line(e, "const long col = get_global_id(0), row = get_global_id(1);");
    ocl_emit_line(e, "const long bt = get_global_id(2);");
    ocl_emit_line(e, "const int lc = (int)get_local_id(0), lr = (int)get_local_id(1);");
    ocl_emit_line(e, "__local %s tile_a[%zu][%zu];", t, tile, tile);
    ocl_emit_line(e, "__local %s tile_b[%zu][%zu];", t, tile, tile + 1);
    ocl_emit_line(e, "%s acc = 0;", t);
    /* Operand offsets of this batch (broadcast batch dimensions). */
    const char *a_batch = "0", *b_batch = "0";
    if (!s.linear) {
        a_batch = ocl_broadcast_index(e, &s.out_batch, &s.a_batch, "bt");
        b_batch = ocl_broadcast_index(e, &s.out_batch, &s.b_batch, "bt");
    }
    char a_base[96], b_base[96];
    snprintf(a_base, sizeof a_base, "%s", a_batch);
    snprintf(b_base, sizeof b_base, "%s", b_batch);
    ocl_emit_line(e, "for (long k0 = 0; k0 < %lldL; k0 += %zuL) {", (long long)s.k, tile);
    e->indent++;
    char guard[128], index[256];
    snprintf(guard, sizeof guard, "row < %lldL && k0 + lc < %lldL", (long long)s.m, (long long)s.k);
    snprintf(index, sizeof index, "%s * %lldL + row * %lldL + k0 + lc", a_base,
             (long long)(s.m * s.k), (long long)s.k);
    tile_load(code, a, compute, guard, index, "tile_a[lr][lc]");
    snprintf(guard, sizeof guard, "col < %lldL && k0 + lr < %lldL", (long long)s.n, (long long)s.k);
    if (s.linear)
        snprintf(index, sizeof index, "col * %lldL + k0 + lr", (long long)s.k);
    else
        snprintf(index, sizeof index, "%s * %lldL + (k0 + lr) * %lldL + col", b_base,
                 (long long)(s.k * s.n), (long long)s.n);
    tile_load(code, b, compute, guard, index, "tile_b[lr][lc]");
    ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
    if (tpcommon_dtype_is_float(compute))
        ocl_emit_line(e, "for (int t = 0; t < %zu; t++) acc += tile_a[lr][t] * tile_b[t][lc];",
                      tile);
    else {
        const char *u = compute == TP_PLUGIN_I64 ? "ulong" : "uint";
        ocl_emit_line(e,
                      "for (int t = 0; t < %zu; t++) acc = (%s)((%s)acc + (%s)tile_a[lr][t] * "
                      "(%s)tile_b[t][lc]);",
                      tile, t, u, u, u);
    }
    ocl_emit_line(e, "barrier(CLK_LOCAL_MEM_FENCE);");
    e->indent--;
    ocl_emit_line(e, "}");
    ocl_emit_line(e, "if (row >= %lldL || col >= %lldL) return;", (long long)s.m, (long long)s.n);
    ocl_emit_line(e, "const long o = (bt * %lldL + row) * %lldL + col;", (long long)s.m,
                  (long long)s.n);
    int32_t result_dtype = type_of(code, mm)->dtype;
    char result[200];
    ocl_convert(compute, result_dtype, "acc", result, sizeof result);
    if (s.linear && value->num_operands > 2) {
        int32_t bias = value->operands[2];
        char bias_expr[160];
        ocl_convert(type_of(code, bias)->dtype, result_dtype, ocl_emit_value(e, bias, "col"),
                    bias_expr, sizeof bias_expr);
        if (tpcommon_dtype_is_float(result_dtype))
            ocl_emit_line(e, "const %s product = %s + %s;", ocl_ctype(result_dtype), result,
                          bias_expr);
        else {
            const char *u = result_dtype == TP_PLUGIN_I64 ? "ulong" : "uint";
            ocl_emit_line(e, "const %s product = (%s)((%s)%s + (%s)%s);", ocl_ctype(result_dtype),
                          ocl_ctype(result_dtype), u, result, u, bias_expr);
        }
    } else {
        ocl_emit_line(e, "const %s product = %s;", ocl_ctype(result_dtype), result);
    }
    ocl_emit_bind(e, mm, "o", "product");
    store_root(code, "o");
}

/* ---- assembling the program ---------------------------------------------------------- */

static const char preamble[] =
    "/* Generated by the TensorPlay opencl backend. */\n"
    "long tp_ipow(long base, long exponent) {\n"
    "    if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;\n"
    "    ulong result = 1, factor = (ulong)base;\n"
    "    for (ulong rest = (ulong)exponent; rest; rest >>= 1) {\n"
    "        if (rest & 1) result *= factor;\n"
    "        factor *= factor;\n"
    "    }\n"
    "    return (long)result;\n"
    "}\n"
    "int tp_sat_i32_f32(float x) {\n"
    "    return isnan(x) ? 0 : x >= 2147483648.0f ? INT_MAX : x <= -2147483648.0f ? INT_MIN : "
    "(int)x;\n"
    "}\n"
    "long tp_sat_i64_f32(float x) {\n"
    "    return isnan(x) ? 0 : x >= 9223372036854775808.0f ? LONG_MAX : x <= "
    "-9223372036854775808.0f ? LONG_MIN : (long)x;\n"
    "}\n";

static const char preamble_f64[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "int tp_sat_i32_f64(double x) {\n"
    "    return isnan(x) ? 0 : x >= 2147483648.0 ? INT_MAX : x <= -2147483648.0 ? INT_MIN : "
    "(int)x;\n"
    "}\n"
    "long tp_sat_i64_f64(double x) {\n"
    "    return isnan(x) ? 0 : x >= 9223372036854775808.0 ? LONG_MAX : x <= "
    "-9223372036854775808.0 ? LONG_MIN : (long)x;\n"
    "}\n";

static int emit_region(ocl_codegen *codegen, const ocl_device *device, int32_t r, bool *loads,
                       ocl_launch *launch, tpcommon_buf *kernel_text, char *error, size_t size) {
    region_code code = {.codegen = codegen,
                        .device = device,
                        .region = r,
                        .info = &codegen->graph.fusion.regions[r],
                        .loads = loads,
                        .launch = launch};
    tpcommon_buf_init(&code.body);
    ocl_emitter_init(&code.emitter, &codegen->graph, r, &code.body, loads);
    launch->root = code.info->root;
    switch (code.info->kind) {
    case TPCOMMON_REGION_REDUCTION:
        reduction_kernel(&code);
        break;
    case TPCOMMON_REGION_ROW:
        row_kernel(&code);
        break;
    case TPCOMMON_REGION_MATMUL:
        matmul_kernel(&code);
        break;
    default:
        pointwise_kernel(&code);
        break;
    }
    int status = TP_PLUGIN_OK;
    if (code.emitter.failed)
        status = tpcommon_error(error, size, "%s", code.emitter.error);
    else if (code.body.failed)
        status = tpcommon_error(error, size, "out of memory generating code");
    ocl_emitter_free(&code.emitter);
    if (status != TP_PLUGIN_OK) {
        tpcommon_buf_free(&code.body);
        return status;
    }
    /* The signature: every loaded buffer, then the stored root. */
    const tpcommon_region *info = code.info;
    const char *ops[64];
    int32_t num_ops = 0;
    for (int32_t m = 0; m < info->num_members && num_ops < 64; m++)
        ops[num_ops++] = codegen->graph.view->values[info->members[m]].op;
    tpcommon_kernel_name(codegen->graph.view->name, r, ops, num_ops, launch->name,
                         sizeof launch->name);
    tpcommon_buf_printf(kernel_text, "__kernel void %s(", launch->name);
    int32_t n = codegen->graph.view->num_values;
    launch->args = malloc(sizeof(int32_t) * ((size_t)n + 1));
    if (!launch->args) {
        tpcommon_buf_free(&code.body);
        return tpcommon_error(error, size, "out of memory");
    }
    for (int32_t v = 0; v < n; v++) {
        if (!loads[v]) continue;
        tpcommon_buf_printf(kernel_text, "%s__global const %s *restrict b%d",
                            launch->num_args ? ", " : "", ocl_ctype(codegen->graph.types[v].dtype),
                            (int)v);
        launch->args[launch->num_args++] = v;
    }
    tpcommon_buf_printf(kernel_text, "%s__global %s *restrict b%d) {\n%s}\n\n",
                        launch->num_args ? ", " : "",
                        ocl_ctype(codegen->graph.types[info->root].dtype), (int)info->root,
                        code.body.data ? code.body.data : "");
    launch->args[launch->num_args++] = info->root;
    tpcommon_buf_free(&code.body);
    return TP_PLUGIN_OK;
}

/* A region needs no kernel when its root is a constant (uploaded at
 * compile) or holds no elements. */
static bool region_has_kernel(const ocl_codegen *codegen, const tpcommon_region *region) {
    const tp_plugin_value *root = &codegen->graph.view->values[region->root];
    return tpcommon_op_of(codegen->graph.view, root) != TP_PLUGIN_OP_CONSTANT &&
           codegen->graph.numel[region->root] > 0;
}

int ocl_codegen_run(const tp_plugin_graph *view, const tp_plugin_tensor_meta *inputs,
                    int32_t num_inputs, const ocl_device *device, ocl_codegen *out, char *error,
                    size_t error_size) {
    memset(out, 0, sizeof *out);
    out->graph.view = view;
    if (concrete_types(view, inputs, num_inputs, &out->graph, error, error_size) != TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    int refused = check_ops(&out->graph, device, error, error_size);
    if (refused != TP_PLUGIN_OK) return refused;
    if (tpcommon_fusion_compute(view, &out->graph.fusion, error, error_size) != TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    int32_t n = view->num_values, regions = out->graph.fusion.num_regions;
    bool *loads = calloc((size_t)(regions + 1) * (size_t)(n + 1), sizeof(bool));
    ocl_launch *launches = calloc((size_t)regions + 1, sizeof *launches);
    tpcommon_buf *texts = calloc((size_t)regions + 1, sizeof *texts);
    out->needs_buffer = calloc((size_t)n + 1, sizeof(bool));
    int status = loads && launches && texts && out->needs_buffer
                     ? TP_PLUGIN_OK
                     : tpcommon_error(error, error_size, "out of memory");
    for (int32_t r = 0; r < regions && status == TP_PLUGIN_OK; r++) {
        tpcommon_buf_init(&texts[r]);
        if (region_has_kernel(out, &out->graph.fusion.regions[r]))
            status = emit_region(out, device, r, &loads[(size_t)r * (size_t)(n + 1)], &launches[r],
                                 &texts[r], error, error_size);
    }
    if (status == TP_PLUGIN_OK) {
        /* From the last region back: a kernel runs when its root is returned
         * or read by a kernel that runs. */
        for (int32_t i = 0; i < view->num_outputs; i++) out->needs_buffer[view->outputs[i]] = true;
        bool *runs = calloc((size_t)regions + 1, sizeof(bool));
        out->launches = calloc((size_t)regions + 1, sizeof *out->launches);
        tpcommon_buf program;
        tpcommon_buf_init(&program);
        tpcommon_buf_append(&program, out->graph.uses_f64 ? preamble_f64 : "");
        tpcommon_buf_append(&program, preamble);
        if (!runs || !out->launches) status = tpcommon_error(error, error_size, "out of memory");
        for (int32_t r = regions - 1; r >= 0 && status == TP_PLUGIN_OK; r--) {
            const tpcommon_region *region = &out->graph.fusion.regions[r];
            runs[r] = region_has_kernel(out, region) && out->needs_buffer[region->root];
            if (!runs[r]) continue;
            for (int32_t v = 0; v < n; v++)
                if (loads[(size_t)r * (size_t)(n + 1) + (size_t)v]) out->needs_buffer[v] = true;
        }
        for (int32_t r = 0; r < regions && status == TP_PLUGIN_OK; r++) {
            if (!runs[r]) continue;
            tpcommon_buf_append(&program, texts[r].data ? texts[r].data : "");
            out->launches[out->num_launches++] = launches[r];
            launches[r].args = NULL;
        }
        free(runs);
        out->source = tpcommon_buf_take(&program);
        if (status == TP_PLUGIN_OK && !out->source)
            status = tpcommon_error(error, error_size, "out of memory");
    }
    for (int32_t r = 0; r < regions; r++) {
        if (texts) tpcommon_buf_free(&texts[r]);
        if (launches) free(launches[r].args);
    }
    free(texts);
    free(launches);
    free(loads);
    return status;
}

void ocl_codegen_free(ocl_codegen *codegen) {
    for (int32_t i = 0; i < codegen->num_launches; i++) free(codegen->launches[i].args);
    free(codegen->launches);
    free(codegen->needs_buffer);
    free(codegen->source);
    free(codegen->graph.types);
    free(codegen->graph.numel);
    if (codegen->graph.fusion.regions || codegen->graph.fusion.region_of)
        tpcommon_fusion_free(&codegen->graph.fusion);
    memset(codegen, 0, sizeof *codegen);
}
