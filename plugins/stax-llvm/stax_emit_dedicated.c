/* stax-llvm — kernels for the ops that are neither fused nor views: pad,
 * cumsum, topk / topk_indices, resize, gather and gather_elements (which
 * check their run-time indices: stax_index_check.c), one function per node over the
 * flat output index (pad, resize) or over the lines along the op's axis
 * (cumsum, topk). The operand is read through its strided view, the result
 * written into its contiguous home. Numerics follow the reference kernels
 * (core/ops/pad.c, scan_ops.c, resize.c): cumsum accumulates in f64 / i64,
 * topk ranks with ties to the lower position and NaN above every number,
 * resize computes coordinates and weights in f64. */
#include <stdio.h>
#include <string.h>

#include "stax_emit_core.h"

static ir_val index_value(const char *text) {
    ir_val v = {.t = TP_PLUGIN_I64};
    snprintf(v.s, sizeof v.s, "%s", text);
    return v;
}

static ir_val i64(int64_t value) {
    return lit_int(TP_PLUGIN_I64, value);
}

static void set_index(fn_ctx *f, int32_t axis, ir_val value) {
    snprintf(f->idx[axis], sizeof f->idx[axis], "%s", value.s);
}

/* The iteration indices address a value of `type` (loads right-align with it). */
static void use_space(fn_ctx *f, const tp_plugin_type *type) {
    f->flat = false;
    f->ndim = type->ndim;
    for (int32_t d = 0; d < type->ndim; d++) f->dims[d] = type->dims[d];
}

/* Splits `flat` over dims[first..last) in C order into f->idx[first..last). */
static void split_flat(fn_ctx *f, ir_val flat, const int64_t *dims, int32_t first, int32_t last) {
    ir_val rest = flat;
    for (int32_t d = last - 1; d >= first; d--) {
        if (d == first) {
            set_index(f, d, rest);
            break;
        }
        set_index(f, d, bin(f, "urem", rest, i64(dims[d])));
        rest = bin(f, "udiv", rest, i64(dims[d]));
    }
}

static void store_at(fn_ctx *f, const stax_view *home, ir_val at, ir_val value) {
    ir_val index = bin(f, "add", at, i64(home->offset));
    ir_val p = slot_gep(f, home->slot, value.t, index.s);
    emit(f, "  store %s %s, ptr %s", stax_ty(value.t), value.s, p.s);
}

static ir_val zero_of(int32_t dtype) {
    return tpcommon_dtype_is_float(dtype) ? lit_float(dtype, 0.0) : lit_int(dtype, 0);
}

static ir_val clamp_index(fn_ctx *f, ir_val i, int64_t size) {
    ir_val low = sel(f, cmp(f, "icmp slt", i, i64(0)), i64(0), i);
    return sel(f, cmp(f, "icmp sgt", low, i64(size - 1)), i64(size - 1), low);
}

static int32_t finish(fn_ctx *f, const char *name) {
    int32_t status = fn_finish(f, name);
    fn_free(f);
    return status;
}

/* ---- pad ---- */

/* The input index along an axis for output index `at` (the mode's rule);
 * constant mode clamps it and ands its in-range test into *inside. */
static ir_val pad_source(fn_ctx *f, ir_val at, int64_t before, int64_t size, int64_t mode,
                         ir_val *inside) {
    ir_val i = bin(f, "sub", at, i64(before));
    switch (mode) {
    case TP_PLUGIN_MODE_REFLECT: {
        ir_val mirrored = sel(f, cmp(f, "icmp slt", i, i64(0)), bin(f, "sub", i64(0), i), i);
        ir_val folded = bin(f, "sub", i64(2 * (size - 1)), mirrored);
        return sel(f, cmp(f, "icmp sge", mirrored, i64(size)), folded, mirrored);
    }
    case TP_PLUGIN_MODE_EDGE:
        return clamp_index(f, i, size);
    case TP_PLUGIN_MODE_WRAP: {
        ir_val rest = bin(f, "srem", i, i64(size));
        return bin(f, "srem", bin(f, "add", rest, i64(size)), i64(size));
    }
    default: {
        ir_val ok = bin(f, "and", cmp(f, "icmp sge", i, i64(0)), cmp(f, "icmp slt", i, i64(size)));
        *inside = bin(f, "and", *inside, ok);
        return sel(f, ok, i, i64(0));
    }
    }
}

static int32_t emit_pad(stax_emit_graph *g, const char *name, int32_t v, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *x = &g->values[value->operands[0]];
    int32_t rank = info->type.ndim, dtype = info->type.dtype, counted = 0;
    const int64_t *before = tpcommon_attr_ints(value, "before", &counted);
    int64_t mode = tpcommon_attr_int(value, "mode", TP_PLUGIN_MODE_CONSTANT);
    double fill = tpcommon_attr_float(value, "value", 0.0);
    *count = tpcommon_numel(&info->type);
    fn_ctx f;
    fn_init(&f, g);
    char loop_index[32];
    int loop = loop_open(&f, "%begin", "%end", loop_index);
    ir_val flat = index_value(loop_index);
    use_space(&f, &info->type);
    split_flat(&f, flat, info->type.dims, 0, rank);
    ir_val inside = {.s = "true", .t = STAX_I1};
    for (int32_t d = 0; d < rank; d++) {
        int64_t shift = d < counted ? before[d] : 0;
        if (shift == 0 && info->type.dims[d] == x->type.dims[d]) continue;
        set_index(&f, d,
                  pad_source(&f, index_value(f.idx[d]), shift, x->type.dims[d], mode, &inside));
    }
    use_space(&f, &x->type);
    ir_val element = load_view(&f, &x->view, dtype);
    if (mode == TP_PLUGIN_MODE_CONSTANT) {
        ir_val constant = tpcommon_dtype_is_float(dtype) ? lit_float(dtype, fill)
                          : dtype == TP_PLUGIN_BOOL      ? lit_int(dtype, fill != 0.0)
                                                         : lit_int(dtype, (int64_t)fill);
        element = sel(&f, inside, element, constant);
    }
    store_at(&f, &info->view, flat, element);
    loop_close(&f, loop);
    return finish(&f, name);
}

/* ---- lines along an axis: cumsum, topk ---- */

typedef struct axis_lines {
    int32_t axis;
    int64_t length, inner;
    ir_val outer_index, inner_index; /* of the current line */
} axis_lines;

/* Opens the loop over lines [begin, end) of x along `axis` and sets the
 * indices of every other axis; *count = the number of lines. */
static axis_lines open_lines(fn_ctx *f, const tp_plugin_type *x, int64_t axis, int *loop,
                             int64_t *count) {
    axis_lines lines = {.axis = (int32_t)(axis < 0 ? axis + x->ndim : axis), .inner = 1};
    int64_t outer = 1;
    for (int32_t d = 0; d < x->ndim; d++) {
        if (d < lines.axis) outer *= x->dims[d];
        if (d > lines.axis) lines.inner *= x->dims[d];
    }
    lines.length = x->dims[lines.axis];
    *count = outer * lines.inner;
    char loop_index[32];
    *loop = loop_open(f, "%begin", "%end", loop_index);
    ir_val line = index_value(loop_index);
    use_space(f, x);
    lines.outer_index = bin(f, "udiv", line, i64(lines.inner));
    lines.inner_index = bin(f, "urem", line, i64(lines.inner));
    split_flat(f, lines.outer_index, x->dims, 0, lines.axis);
    split_flat(f, lines.inner_index, x->dims, lines.axis + 1, x->ndim);
    return lines;
}

/* Flat position of element `j` along the axis of a result with `length` there. */
static ir_val line_position(fn_ctx *f, const axis_lines *lines, int64_t length, ir_val j) {
    ir_val row = bin(f, "add", bin(f, "mul", lines->outer_index, i64(length)), j);
    return bin(f, "add", bin(f, "mul", row, i64(lines->inner)), lines->inner_index);
}

static int32_t emit_cumsum(stax_emit_graph *g, const char *name, int32_t v, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *x = &g->values[value->operands[0]];
    bool exclusive = tpcommon_attr_int(value, "exclusive", 0) != 0;
    bool reverse = tpcommon_attr_int(value, "reverse", 0) != 0;
    int32_t dtype = info->type.dtype;
    int32_t acc_t = tpcommon_dtype_is_float(dtype) ? TP_PLUGIN_F64 : TP_PLUGIN_I64;
    fn_ctx f;
    fn_init(&f, g);
    int loop;
    axis_lines lines = open_lines(&f, &x->type, tpcommon_attr_int(value, "axis", 0), &loop, count);
    ir_val sum = var_new(&f, acc_t, zero_of(acc_t));
    char length[32], step_index[32];
    snprintf(length, sizeof length, "%lld", (long long)lines.length);
    int steps = loop_open(&f, "0", length, step_index);
    ir_val step = index_value(step_index);
    ir_val j = reverse ? bin(&f, "sub", i64(lines.length - 1), step) : step;
    set_index(&f, lines.axis, j);
    ir_val element = conv(&f, load_view(&f, &x->view, dtype), acc_t);
    ir_val before = var_get(&f, sum);
    ir_val after = bin(&f, acc_t == TP_PLUGIN_F64 ? "fadd" : "add", before, element);
    var_set(&f, sum, after);
    store_at(&f, &info->view, line_position(&f, &lines, lines.length, j),
             conv(&f, exclusive ? before : after, dtype));
    loop_close(&f, steps);
    loop_close(&f, loop);
    return finish(&f, name);
}

/* Whether (a, at) ranks before (b, bt): larger (or smaller) first, ties to
 * the lower position, NaN above every number. */
static ir_val ranks_before(fn_ctx *f, bool largest, ir_val a, ir_val at, ir_val b, ir_val bt) {
    bool fl = tpcommon_dtype_is_float(a.t);
    ir_val lower = cmp(f, "icmp slt", at, bt);
    const char *order =
        fl ? (largest ? "fcmp ogt" : "fcmp olt") : (largest ? "icmp sgt" : "icmp slt");
    ir_val equal = cmp(f, fl ? "fcmp oeq" : "icmp eq", a, b);
    ir_val numbers = bin(f, "or", cmp(f, order, a, b), bin(f, "and", equal, lower));
    if (!fl) return numbers;
    ir_val truth = {.s = "true", .t = STAX_I1};
    ir_val a_nan = cmp(f, "fcmp uno", a, a), b_nan = cmp(f, "fcmp uno", b, b);
    ir_val both = bin(f, "and", bin(f, "and", a_nan, b_nan), lower);
    ir_val one = largest ? bin(f, "and", a_nan, bin(f, "xor", b_nan, truth))
                         : bin(f, "and", bin(f, "xor", a_nan, truth), b_nan);
    return bin(f, "or", numbers, bin(f, "or", both, one));
}

/* The k passes: pass j finds the best element ranking after pass j-1's. */
static int32_t emit_topk(stax_emit_graph *g, const char *name, int32_t v, bool indices,
                         int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *x = &g->values[value->operands[0]];
    bool largest = tpcommon_attr_int(value, "largest", 1) != 0;
    int64_t k = tpcommon_attr_int(value, "k", 0);
    int32_t t = x->type.dtype;
    fn_ctx f;
    fn_init(&f, g);
    int loop;
    axis_lines lines = open_lines(&f, &x->type, tpcommon_attr_int(value, "axis", -1), &loop, count);
    ir_val previous = var_new(&f, t, zero_of(t));
    ir_val previous_at = var_new(&f, TP_PLUGIN_I64, i64(-1));
    char k_text[32], length[32], pass_index[32], element_index[32];
    snprintf(k_text, sizeof k_text, "%lld", (long long)k);
    snprintf(length, sizeof length, "%lld", (long long)lines.length);
    int passes = loop_open(&f, "0", k_text, pass_index);
    ir_val best = var_new(&f, t, zero_of(t));
    ir_val best_at = var_new(&f, TP_PLUGIN_I64, i64(-1));
    int scan = loop_open(&f, "0", length, element_index);
    ir_val e = index_value(element_index);
    set_index(&f, lines.axis, e);
    ir_val element = load_view(&f, &x->view, t);
    ir_val p = var_get(&f, previous), pa = var_get(&f, previous_at);
    ir_val b = var_get(&f, best), ba = var_get(&f, best_at);
    ir_val after_previous = bin(&f, "or", cmp(&f, "icmp slt", pa, i64(0)),
                                ranks_before(&f, largest, p, pa, element, e));
    ir_val better = bin(&f, "or", cmp(&f, "icmp slt", ba, i64(0)),
                        ranks_before(&f, largest, element, e, b, ba));
    ir_val take = bin(&f, "and", after_previous, better);
    var_set(&f, best, sel(&f, take, element, b));
    var_set(&f, best_at, sel(&f, take, e, ba));
    loop_close(&f, scan);
    ir_val chosen = var_get(&f, best), chosen_at = var_get(&f, best_at);
    var_set(&f, previous, chosen);
    var_set(&f, previous_at, chosen_at);
    ir_val position = line_position(&f, &lines, k, index_value(pass_index));
    store_at(&f, &info->view, position, indices ? chosen_at : chosen);
    loop_close(&f, passes);
    loop_close(&f, loop);
    return finish(&f, name);
}

/* ---- resize ---- */

/* The input coordinate (f64) of output index `at` along an axis in -> out. */
static ir_val resize_coordinate(fn_ctx *f, ir_val at, int64_t in, int64_t out, double scale,
                                int64_t rule) {
    const int32_t t = TP_PLUGIN_F64;
    ir_val o = conv(f, at, t), n = size_float(f, t, in), m = size_float(f, t, out);
    ir_val s = scale > 0 ? lit_float(t, scale) : bin(f, "fdiv", m, n);
    ir_val length = scale > 0 ? bin(f, "fmul", n, s) : m;
    ir_val shifted = bin(f, "fadd", o, lit_float(t, 0.5));
    ir_val half_pixel = bin(f, "fsub", bin(f, "fdiv", shifted, s), lit_float(t, 0.5));
    switch (rule) {
    case TP_PLUGIN_COORDINATES_ASYMMETRIC:
        return bin(f, "fdiv", o, s);
    case TP_PLUGIN_COORDINATES_ALIGN_CORNERS: {
        ir_val span = bin(f, "fsub", length, lit_float(t, 1.0));
        ir_val ratio = bin(f, "fdiv", bin(f, "fmul", o, size_float(f, t, in - 1)), span);
        return sel(f, cmp(f, "fcmp oeq", length, lit_float(t, 1.0)), lit_float(t, 0.0), ratio);
    }
    case TP_PLUGIN_COORDINATES_PYTORCH_HALF_PIXEL:
        return sel(f, cmp(f, "fcmp ogt", length, lit_float(t, 1.0)), half_pixel, lit_float(t, 0.0));
    case TP_PLUGIN_COORDINATES_HALF_PIXEL_SYMMETRIC: {
        ir_val kept = bin(f, "fsub", lit_float(t, 1.0), bin(f, "fdiv", m, length));
        ir_val offset = bin(f, "fmul", bin(f, "fmul", n, lit_float(t, 0.5)), kept);
        return bin(f, "fadd", offset, half_pixel);
    }
    case TP_PLUGIN_COORDINATES_TF_HALF_PIXEL_FOR_NN:
        return bin(f, "fdiv", shifted, s);
    default:
        return half_pixel;
    }
}

static ir_val nearest_index(fn_ctx *f, ir_val c, int64_t size, int64_t rounding) {
    const int32_t t = TP_PLUGIN_F64;
    ir_val r;
    switch (rounding) {
    case TP_PLUGIN_ROUNDING_ROUND_PREFER_CEIL:
        r = call1(f, "llvm.floor.f64", bin(f, "fadd", c, lit_float(t, 0.5)));
        break;
    case TP_PLUGIN_ROUNDING_FLOOR:
        r = call1(f, "llvm.floor.f64", c);
        break;
    case TP_PLUGIN_ROUNDING_CEIL:
        r = call1(f, "llvm.ceil.f64", c);
        break;
    default:
        r = call1(f, "llvm.ceil.f64", bin(f, "fsub", c, lit_float(t, 0.5)));
        break;
    }
    return clamp_index(f, conv(f, r, TP_PLUGIN_I64), size);
}

static int32_t emit_resize(stax_emit_graph *g, const char *name, int32_t v, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *x = &g->values[value->operands[0]];
    int32_t rank = info->type.ndim, dtype = info->type.dtype, h = rank - 2, w = rank - 1;
    int64_t mode = tpcommon_attr_int(value, "mode", TP_PLUGIN_MODE_NEAREST);
    int64_t rule = tpcommon_attr_int(value, "coordinates", TP_PLUGIN_COORDINATES_HALF_PIXEL);
    int64_t rounding = tpcommon_attr_int(value, "rounding", TP_PLUGIN_ROUNDING_ROUND_PREFER_FLOOR);
    int64_t in_h = x->type.dims[h], in_w = x->type.dims[w];
    *count = tpcommon_numel(&info->type);
    fn_ctx f;
    fn_init(&f, g);
    char loop_index[32];
    int loop = loop_open(&f, "%begin", "%end", loop_index);
    ir_val flat = index_value(loop_index);
    use_space(&f, &info->type);
    split_flat(&f, flat, info->type.dims, 0, rank);
    ir_val ch = resize_coordinate(&f, index_value(f.idx[h]), in_h, info->type.dims[h],
                                  tpcommon_attr_float(value, "scale_h", 0.0), rule);
    ir_val cw = resize_coordinate(&f, index_value(f.idx[w]), in_w, info->type.dims[w],
                                  tpcommon_attr_float(value, "scale_w", 0.0), rule);
    use_space(&f, &x->type);
    ir_val result;
    if (mode == TP_PLUGIN_MODE_NEAREST) {
        set_index(&f, h, nearest_index(&f, ch, in_h, rounding));
        set_index(&f, w, nearest_index(&f, cw, in_w, rounding));
        result = load_view(&f, &x->view, dtype);
    } else {
        const int32_t t = TP_PLUGIN_F64;
        ir_val base_h = call1(&f, "llvm.floor.f64", ch), base_w = call1(&f, "llvm.floor.f64", cw);
        ir_val weight_h = bin(&f, "fsub", ch, base_h), weight_w = bin(&f, "fsub", cw, base_w);
        ir_val first_h = conv(&f, base_h, TP_PLUGIN_I64), first_w = conv(&f, base_w, TP_PLUGIN_I64);
        ir_val rows[2] = {clamp_index(&f, first_h, in_h),
                          clamp_index(&f, bin(&f, "add", first_h, i64(1)), in_h)};
        ir_val cols[2] = {clamp_index(&f, first_w, in_w),
                          clamp_index(&f, bin(&f, "add", first_w, i64(1)), in_w)};
        ir_val keep_w = bin(&f, "fsub", lit_float(t, 1.0), weight_w);
        ir_val line[2];
        for (int r = 0; r < 2; r++) {
            set_index(&f, h, rows[r]);
            set_index(&f, w, cols[0]);
            ir_val left = conv(&f, load_view(&f, &x->view, dtype), t);
            set_index(&f, w, cols[1]);
            ir_val right = conv(&f, load_view(&f, &x->view, dtype), t);
            line[r] =
                bin(&f, "fadd", bin(&f, "fmul", left, keep_w), bin(&f, "fmul", right, weight_w));
        }
        ir_val keep_h = bin(&f, "fsub", lit_float(t, 1.0), weight_h);
        result = conv(
            &f,
            bin(&f, "fadd", bin(&f, "fmul", line[0], keep_h), bin(&f, "fmul", line[1], weight_h)),
            dtype);
    }
    store_at(&f, &info->view, flat, result);
    loop_close(&f, loop);
    return finish(&f, name);
}

/* ---- gather, gather_elements ---- */

/* An element of `view` at the current indices as its bits: no widening, so
 * a copy keeps every f16/bf16 (NaN payloads included) exactly. */
static ir_val load_bits(fn_ctx *f, const stax_view *view, int32_t dtype) {
    ir_val index = view_index(f, view);
    ir_val p = slot_gep(f, view->slot, dtype, index.s);
    ir_val r = fresh(f, dtype);
    emit(f, "  %s = load %s, ptr %s", r.s, stax_ty(dtype), p.s);
    return r;
}

/* The index of `indices` at the current iteration indices, wrapped as the
 * op's rule says (negative counts from the end of an axis of `length`) and
 * made safe to address with (0 when out of range); a bad one lowers the
 * running minimum `first_bad` to `position`. */
static ir_val checked_index(fn_ctx *f, const stax_value *indices, int64_t length, ir_val position,
                            ir_val first_bad) {
    ir_val raw = conv(f, load_view(f, &indices->view, indices->type.dtype), TP_PLUGIN_I64);
    ir_val wrapped = sel(f, cmp(f, "icmp slt", raw, i64(0)), bin(f, "add", raw, i64(length)), raw);
    ir_val ok = cmp(f, "icmp ult", wrapped, i64(length));
    ir_val bad_at = sel(f, ok, i64(-1), position); /* -1: u64 max, above every position */
    ir_val lowest = var_get(f, first_bad);
    var_set(f, first_bad, sel(f, cmp(f, "icmp ult", bad_at, lowest), bad_at, lowest));
    return sel(f, ok, wrapped, i64(0));
}

/* After the loop: the chunk's lowest bad position into the status word. */
static void report_first_bad(fn_ctx *f, int32_t status_slot, ir_val first_bad) {
    ir_val lowest = var_get(f, first_bad);
    ir_val p = slot_gep(f, status_slot, TP_PLUGIN_I64, "0");
    ir_val old = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = atomicrmw umin ptr %s, i64 %s monotonic", old.s, p.s, lowest.s);
}

/* The data with its axes after `axis` merged into one when its view walks
 * them contiguously: a row is then one stride-1 loop, without a division
 * per element. */
static void merge_inner_axes(stax_emit_graph *g, const stax_value *data, int32_t axis,
                             stax_view *view, tp_plugin_type *type) {
    *view = data->view;
    *type = data->type;
    int32_t rank = type->ndim;
    if (rank - axis - 1 < 2 || view->ndim != rank) return;
    bool contiguous = true;
    int64_t expect = 1;
    for (int32_t d = rank - 1; d > axis; d--) {
        if (type->dims[d] != 1 && view->strides[d] != expect) contiguous = false;
        expect *= type->dims[d];
    }
    if (!stax_decide(g, contiguous)) return;
    type->dims[axis + 1] = view->dims[axis + 1] = expect;
    view->strides[axis + 1] = 1;
    type->ndim = view->ndim = axis + 2;
}

/* Rows (o, j) over outer x indices: row j of the data's axis picked by index
 * j, its inner elements copied in an inner loop (contiguous for a
 * contiguous table: an embedding row is one vectorised copy). */
static int32_t emit_gather_rows(stax_emit_graph *g, const char *name, int32_t v,
                                int32_t status_slot, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *data = &g->values[value->operands[0]];
    const stax_value *indices = &g->values[value->operands[1]];
    int32_t rank = data->type.ndim, dtype = info->type.dtype;
    int64_t axis = tpcommon_attr_int(value, "axis", 0);
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1, length = data->type.dims[axis];
    int64_t positions = tpcommon_numel(&indices->type);
    for (int32_t d = 0; d < rank; d++) {
        if (d < axis) outer *= data->type.dims[d];
        if (d > axis) inner *= data->type.dims[d];
    }
    *count = outer * positions;
    fn_ctx f;
    fn_init(&f, g);
    ir_val first_bad = var_new(&f, TP_PLUGIN_I64, i64(-1));
    char row_index[32], element_index[32], inner_text[32];
    int rows = loop_open(&f, "%begin", "%end", row_index);
    ir_val row = index_value(row_index);
    ir_val o = bin(&f, "udiv", row, i64(positions)), j = bin(&f, "urem", row, i64(positions));
    use_space(&f, &indices->type);
    split_flat(&f, j, indices->type.dims, 0, indices->type.ndim);
    ir_val picked = checked_index(&f, indices, length, j, first_bad);
    stax_view table;
    tp_plugin_type table_type;
    merge_inner_axes(g, data, (int32_t)axis, &table, &table_type);
    use_space(&f, &table_type);
    split_flat(&f, o, table_type.dims, 0, (int32_t)axis);
    set_index(&f, (int32_t)axis, picked);
    ir_val row_start = bin(&f, "mul", row, i64(inner));
    snprintf(inner_text, sizeof inner_text, "%lld", (long long)inner);
    int elements = loop_open(&f, "0", inner_text, element_index);
    ir_val e = index_value(element_index);
    split_flat(&f, e, table_type.dims, (int32_t)axis + 1, table_type.ndim);
    store_at(&f, &info->view, bin(&f, "add", row_start, e), load_bits(&f, &table, dtype));
    loop_close(&f, elements);
    loop_close(&f, rows);
    report_first_bad(&f, status_slot, first_bad);
    return finish(&f, name);
}

/* One element per index: the data at the index's own position with the
 * axis coordinate replaced by the index. */
static int32_t emit_gather_elements(stax_emit_graph *g, const char *name, int32_t v,
                                    int32_t status_slot, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[v];
    const stax_value *info = &g->values[v], *data = &g->values[value->operands[0]];
    const stax_value *indices = &g->values[value->operands[1]];
    int32_t rank = data->type.ndim, dtype = info->type.dtype;
    int64_t axis = tpcommon_attr_int(value, "axis", 0);
    if (axis < 0) axis += rank;
    *count = tpcommon_numel(&info->type);
    fn_ctx f;
    fn_init(&f, g);
    ir_val first_bad = var_new(&f, TP_PLUGIN_I64, i64(-1));
    char loop_index[32];
    int loop = loop_open(&f, "%begin", "%end", loop_index);
    ir_val flat = index_value(loop_index);
    use_space(&f, &indices->type);
    split_flat(&f, flat, indices->type.dims, 0, rank);
    ir_val picked = checked_index(&f, indices, data->type.dims[axis], flat, first_bad);
    set_index(&f, (int32_t)axis, picked);
    store_at(&f, &info->view, flat, load_bits(&f, &data->view, dtype));
    loop_close(&f, loop);
    report_first_bad(&f, status_slot, first_bad);
    return finish(&f, name);
}

int32_t stax_emit_gather(stax_emit_graph *g, const char *name, int32_t v, int32_t status_slot,
                         int64_t *count) {
    switch (tpcommon_op_of(g->graph, &g->graph->values[v])) {
    case TP_PLUGIN_OP_GATHER:
        return emit_gather_rows(g, name, v, status_slot, count);
    case TP_PLUGIN_OP_GATHER_ELEMENTS:
        return emit_gather_elements(g, name, v, status_slot, count);
    default:
        return tpcommon_error(g->error, g->error_size, "stax: op '%s' is not an indexing op",
                              g->graph->values[v].op);
    }
}

int32_t stax_emit_dedicated(stax_emit_graph *g, const char *name, int32_t v, int64_t *count) {
    switch (tpcommon_op_of(g->graph, &g->graph->values[v])) {
    case TP_PLUGIN_OP_PAD:
        return emit_pad(g, name, v, count);
    case TP_PLUGIN_OP_CUMSUM:
        return emit_cumsum(g, name, v, count);
    case TP_PLUGIN_OP_TOPK:
        return emit_topk(g, name, v, false, count);
    case TP_PLUGIN_OP_TOPK_INDICES:
        return emit_topk(g, name, v, true, count);
    case TP_PLUGIN_OP_RESIZE:
        return emit_resize(g, name, v, count);
    default:
        return tpcommon_error(g->error, g->error_size, "stax: no dedicated kernel for op '%s'",
                              g->graph->values[v].op);
    }
}
