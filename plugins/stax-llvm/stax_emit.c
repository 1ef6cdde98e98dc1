/* stax-llvm — kernel emitters: one LLVM IR function per fusion region.
 *   pointwise  one loop nest over the root's shape; every inlined member is
 *              computed in registers, materialized operands are loaded through
 *              their strided views (broadcast dims have stride 0); when every
 *              view is contiguous (or a scalar) the nest collapses to one flat
 *              loop. Flat index ranges [begin, end) let host->parallel_for split
 *              the work anywhere.
 *   reduction  per output element, nested loops over the reduced axes with the
 *              pointwise producers computed inline (accumulators in allocas
 *              that LLVM promotes to registers; sums reassociate so the loop
 *              vectorizes).
 *   row        softmax / log_softmax / layer_norm per row: statistics passes
 *              and one writing pass, producers inlined.
 *   matmul     a generic i-k-j kernel for any dtype, and the f32 6x16 AVX2/FMA
 *              micro-kernel used by stax_gemm.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_emit_core.h"

/* ---- pointwise ---- */

static bool view_is_contiguous(const stax_view *view) {
    int64_t expect = 1;
    for (int32_t d = view->ndim - 1; d >= 0; d--) {
        if (view->dims[d] != 1 && view->strides[d] != expect) return false;
        expect *= view->dims[d];
    }
    return true;
}

static int64_t view_numel(const stax_view *view) {
    int64_t n = 1;
    for (int32_t d = 0; d < view->ndim; d++) n *= view->dims[d];
    return n;
}

/* Whether a load of `view` can use the flat index of the space. */
static bool flat_compatible(stax_emit_graph *g, const stax_view *view, int64_t space_numel) {
    int64_t n = view_numel(view);
    return stax_decide(g, n == 1 || (n == space_numel && view_is_contiguous(view)));
}

/* Whether every stored value the expression of `root` reads (through its
 * inlined members, a matmul's raw product and bias, a conv's raw result) can
 * use the flat index. A depth-first walk with an explicit stack of value ids, in the
 * order a recursive walk would take (the decisions are recorded and
 * replayed in this order), stopping at the first view that cannot. */
static bool loads_flat(stax_emit_graph *g, int32_t root, int64_t numel) {
    int32_t *stack = NULL;
    int32_t depth = 0, capacity = 0;
    bool flat = true, top = true;
    int32_t v = root;
    for (;;) {
        const stax_value *info = &g->values[v];
        const tp_plugin_value *value = &g->graph->values[v];
        if (!top && info->view.slot >= 0) {
            flat = flat_compatible(g, &info->view, numel);
        } else {
            /* operands to visit next, pushed last-first so the first pops first */
            int32_t first = 0, count = value->num_operands;
            tpcommon_kind kind = tpcommon_op_kind(tpcommon_op_of(g->graph, value));
            if (kind == TPCOMMON_KIND_MATMUL) {
                flat = flat_compatible(g, &info->raw, numel);
                first = 2;
                count = value->num_operands > 2 ? 3 : 2;
            } else if (kind == TPCOMMON_KIND_WINDOW) { /* a conv's result: only its raw view */
                flat = flat_compatible(g, &info->raw, numel);
                first = count = 0;
            }
            if (depth + (count - first) > capacity) {
                int32_t grown_capacity = (capacity + (count - first)) * 2 + 16;
                int32_t *grown = realloc(stack, sizeof *grown * (size_t)grown_capacity);
                if (!grown) {
                    flat = false;
                    break;
                }
                stack = grown;
                capacity = grown_capacity;
            }
            for (int32_t k = count - 1; k >= first && flat; k--)
                stack[depth++] = value->operands[k];
        }
        top = false;
        if (!flat || depth == 0) break;
        v = stack[--depth];
    }
    free(stack);
    return flat;
}

static void set_space(fn_ctx *f, int32_t ndim, const int64_t *dims) {
    f->ndim = ndim;
    for (int32_t d = 0; d < ndim; d++) f->dims[d] = dims[d];
}

int32_t stax_emit_pointwise(stax_emit_graph *g, const char *name, int32_t root,
                            const stax_view *target, int64_t *count) {
    fn_ctx f;
    fn_init(&f, g);
    bool copy = root < 0; /* a copy kernel: the expression is a load of value -1-root */
    int32_t v = copy ? -1 - root : root;
    int64_t numel = view_numel(target);
    *count = numel;
    f.flat = flat_compatible(g, target, numel) &&
             (copy ? flat_compatible(g, &g->values[v].view, numel) : loads_flat(g, v, numel));
    if (f.flat || target->ndim == 0) {
        int64_t one[1] = {numel};
        set_space(&f, 1, one);
        f.flat = true;
    } else {
        set_space(&f, target->ndim, target->dims);
    }
    int32_t dtype = g->values[v].type.dtype;
    if (f.flat && stax_decide(g, stax_streams_output(g, target, numel, dtype))) {
        stax_emit_streamed_flat_loop(&f, v, copy, target, dtype);
        int32_t status = fn_finish(&f, name);
        fn_free(&f);
        return status;
    }
    int64_t inner = f.dims[f.ndim - 1];
    if (f.flat) {
        /* the flat index is the element's: one loop over [begin, end), with
         * no size in its text (the size only tells whether it is short
         * enough to unroll), so that the same expression over tensors of
         * other sizes is one body (stax_kernel_bodies.c) */
        int loop = loop_open_at_most(&f, "%begin", "%end", inner, f.idx[0]);
        ir_val value = copy ? lower_value(&f, v) : lower_compute(&f, v);
        store_view(&f, target, conv(&f, value, dtype));
        loop_close(&f, loop);
        int32_t status = fn_finish(&f, name);
        fn_free(&f);
        return status;
    }
    ir_val iv = var_new(&f, TP_PLUGIN_I64, (ir_val){.s = "%begin", .t = TP_PLUGIN_I64});
    int head = f.next_label++;
    emit(&f, "  br label %%oh%d", head);
    emit(&f, "oh%d:", head);
    ir_val i = var_get(&f, iv);
    emit(&f, "  %%oc%d = icmp slt i64 %s, %%end", head, i.s);
    emit(&f, "  br i1 %%oc%d, label %%ob%d, label %%ox%d", head, head, head);
    emit(&f, "ob%d:", head);
    ir_val inner_v = lit_int(TP_PLUGIN_I64, inner);
    ir_val row = bin(&f, "udiv", i, inner_v);
    ir_val j0 = bin(&f, "urem", i, inner_v);
    ir_val left = bin(&f, "sub", (ir_val){.s = "%end", .t = TP_PLUGIN_I64}, i);
    ir_val jl = bin(&f, "add", j0, left);
    ir_val jn = sel(&f, cmp(&f, "icmp slt", jl, inner_v), jl, inner_v);
    for (int32_t d = f.ndim - 2; d >= 0; d--) {
        if (d == 0) {
            snprintf(f.idx[0], sizeof f.idx[0], "%s", row.s);
            break;
        }
        ir_val size = lit_int(TP_PLUGIN_I64, f.dims[d]);
        ir_val index = bin(&f, "urem", row, size);
        snprintf(f.idx[d], sizeof f.idx[d], "%s", index.s);
        row = bin(&f, "udiv", row, size);
    }
    int loop = loop_open_at_most(&f, j0.s, jn.s, inner, f.idx[f.ndim - 1]);
    ir_val value = copy ? lower_value(&f, v) : lower_compute(&f, v);
    /* a copied f16/bf16 element was widened as it was loaded: store it back
     * in its own dtype (exact: it came from that dtype) */
    value = conv(&f, value, dtype);
    store_view(&f, target, value);
    loop_close(&f, loop);
    ir_val next = bin(&f, "add", i, bin(&f, "sub", jn, j0));
    var_set(&f, iv, next);
    emit(&f, "  br label %%oh%d, " STAX_LOOP_NO_UNROLL, head);
    emit(&f, "ox%d:", head);
    int32_t status = fn_finish(&f, name);
    fn_free(&f);
    return status;
}

/* ---- reductions ---- */

/* Decomposes flat index `flat` over dims[which[0..count)] into f->idx. */
static void decompose(fn_ctx *f, ir_val flat, const int32_t *which, int32_t count) {
    ir_val rest = flat;
    for (int32_t k = count - 1; k >= 0; k--) {
        int32_t axis = which[k];
        if (k == 0) {
            snprintf(f->idx[axis], sizeof f->idx[axis], "%s", rest.s);
            break;
        }
        ir_val size = lit_int(TP_PLUGIN_I64, f->dims[axis]);
        ir_val index = bin(f, "urem", rest, size);
        snprintf(f->idx[axis], sizeof f->idx[axis], "%s", index.s);
        rest = bin(f, "udiv", rest, size);
    }
}

static int32_t reduced_axes(const tp_plugin_graph *graph, const tp_plugin_value *value,
                            int32_t ndim, bool *reduced) {
    int32_t op = tpcommon_op_of(graph, value);
    for (int32_t d = 0; d < STAX_MAX_DIMS; d++) reduced[d] = false;
    if (op == TP_PLUGIN_OP_ARGMAX) {
        int64_t axis = tpcommon_attr_int(value, "axis", 0);
        if (axis < 0) axis += ndim;
        if (axis >= 0 && axis < ndim) reduced[axis] = true;
        return 1;
    }
    int32_t count = 0;
    const int64_t *axes = tpcommon_attr_ints(value, "axes", &count);
    if (count == 0)
        for (int32_t d = 0; d < ndim; d++) reduced[d] = true;
    for (int32_t i = 0; i < count; i++) {
        int64_t axis = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (axis >= 0 && axis < ndim) reduced[axis] = true;
    }
    return count;
}

/* Opens one loop per reduced axis (outermost first); returns how many. */
static int32_t open_axes(fn_ctx *f, const bool *reduced, int *ids) {
    int32_t open = 0;
    for (int32_t d = 0; d < f->ndim; d++) {
        if (!reduced[d]) continue;
        char hi[32];
        snprintf(hi, sizeof hi, "%lld", (long long)f->dims[d]);
        ids[open++] = loop_open(f, "0", hi, f->idx[d]);
    }
    return open;
}

static void close_axes(fn_ctx *f, const int *ids, int32_t open) {
    for (int32_t k = open - 1; k >= 0; k--) loop_close(f, ids[k]);
}

/* Iterates rows: sets the space to x's dims, decomposes the row index `%begin`
 * loop over the kept axes, and returns the loop id. */
static int open_rows(fn_ctx *f, const tp_plugin_type *x, const bool *reduced) {
    set_space(f, x->ndim, x->dims);
    char row[32];
    int id = loop_open(f, "%begin", "%end", row);
    int32_t kept[STAX_MAX_DIMS], count = 0;
    for (int32_t d = 0; d < x->ndim; d++)
        if (!reduced[d]) kept[count++] = d;
    ir_val flat = {.t = TP_PLUGIN_I64};
    snprintf(flat.s, sizeof flat.s, "%s", row);
    decompose(f, flat, kept, count);
    return id;
}

static int64_t reduced_count(const tp_plugin_type *x, const bool *reduced) {
    int64_t n = 1;
    for (int32_t d = 0; d < x->ndim; d++)
        if (reduced[d]) n *= x->dims[d];
    return n;
}

int32_t stax_emit_reduction(stax_emit_graph *g, const char *name, int32_t root, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[root];
    const stax_value *info = &g->values[root];
    int32_t x = value->operands[0];
    const tp_plugin_type *xt = &g->values[x].type;
    int32_t op = tpcommon_op_of(g->graph, value);
    bool reduced[STAX_MAX_DIMS];
    reduced_axes(g->graph, value, xt->ndim, reduced);
    int64_t length = reduced_count(xt, reduced);
    int64_t rows = 1;
    for (int32_t d = 0; d < xt->ndim; d++)
        if (!reduced[d]) rows *= xt->dims[d];
    *count = rows;
    fn_ctx f;
    fn_init(&f, g);
    int row_loop = open_rows(&f, xt, reduced);
    char row_index[32];
    snprintf(row_index, sizeof row_index, "%%li%d", row_loop);
    /* f16/bf16 elements are reduced as the f32 they widen to (a max or min
     * of them is one of them, so its store rounds nothing) */
    int32_t in_t = tpcommon_dtype_is_storage_float(xt->dtype) ? TP_PLUGIN_F32 : xt->dtype;
    bool fl = tpcommon_dtype_is_float(in_t);
    int32_t acc_t = op == TP_PLUGIN_OP_SUM    ? (fl ? TP_PLUGIN_F64 : TP_PLUGIN_I64)
                    : op == TP_PLUGIN_OP_MEAN ? TP_PLUGIN_F64
                                              : in_t;
    ir_val init;
    if (op == TP_PLUGIN_OP_SUM || op == TP_PLUGIN_OP_MEAN)
        init = tpcommon_dtype_is_float(acc_t) ? lit_float(acc_t, 0.0) : lit_int(acc_t, 0);
    else if (fl)
        init = lit_float(acc_t, op == TP_PLUGIN_OP_MIN ? INFINITY : -INFINITY);
    else if (in_t == TP_PLUGIN_BOOL)
        init = lit_int(acc_t, op == TP_PLUGIN_OP_MIN ? 1 : 0);
    else if (in_t == TP_PLUGIN_I32)
        init = lit_int(acc_t, op == TP_PLUGIN_OP_MIN ? INT32_MAX : INT32_MIN);
    else
        init = lit_int(acc_t, op == TP_PLUGIN_OP_MIN ? INT64_MAX : INT64_MIN);
    ir_val acc = var_new(&f, acc_t, init);
    ir_val best_index = var_new(&f, TP_PLUGIN_I64, lit_int(TP_PLUGIN_I64, 0));
    int ids[STAX_MAX_DIMS];
    int32_t open = open_axes(&f, reduced, ids);
    ir_val v = conv(&f, lower_value(&f, x), in_t);
    ir_val a = var_get(&f, acc);
    if (op == TP_PLUGIN_OP_SUM || op == TP_PLUGIN_OP_MEAN) {
        ir_val xv = conv(&f, v, acc_t);
        var_set(&f, acc,
                tpcommon_dtype_is_float(acc_t) ? bin(&f, "fadd reassoc contract", a, xv)
                                               : bin(&f, "add", a, xv));
    } else {
        const char *pred = fl ? (op == TP_PLUGIN_OP_MIN ? "fcmp olt" : "fcmp ogt")
                           : in_t == TP_PLUGIN_BOOL
                               ? (op == TP_PLUGIN_OP_MIN ? "icmp ult" : "icmp ugt")
                               : (op == TP_PLUGIN_OP_MIN ? "icmp slt" : "icmp sgt");
        ir_val better = cmp(&f, pred, v, a);
        if (fl) {
            ir_val nan = cmp(&f, "fcmp uno", v, v);
            better = bin(&f, "or", better, nan);
            if (op == TP_PLUGIN_OP_ARGMAX) { /* a NaN best stays: the first NaN wins */
                ir_val best_nan = cmp(&f, "fcmp uno", a, a);
                ir_val keep = bin(&f, "xor", best_nan, (ir_val){.s = "true", .t = STAX_I1});
                better = bin(&f, "and", better, keep);
            }
        }
        var_set(&f, acc, sel(&f, better, v, a));
        if (op == TP_PLUGIN_OP_ARGMAX) {
            /* flat position along the reduced axis: argmax reduces exactly one axis */
            ir_val pos = {.t = TP_PLUGIN_I64};
            for (int32_t d = 0; d < xt->ndim; d++)
                if (reduced[d]) snprintf(pos.s, sizeof pos.s, "%s", f.idx[d]);
            var_set(&f, best_index, sel(&f, better, pos, var_get(&f, best_index)));
        }
    }
    close_axes(&f, ids, open);
    ir_val result = var_get(&f, op == TP_PLUGIN_OP_ARGMAX ? best_index : acc);
    if (op == TP_PLUGIN_OP_MEAN)
        result = bin(&f, "fdiv", result, size_float(&f, TP_PLUGIN_F64, length));
    result = conv(&f, result, value->type.dtype);
    /* the root's storage is contiguous: element `row` */
    stax_view out = info->view;
    ir_val r = {.t = TP_PLUGIN_I64};
    snprintf(r.s, sizeof r.s, "%s", row_index);
    ir_val at = bin(&f, "add", r, lit_int(TP_PLUGIN_I64, out.offset));
    ir_val p = slot_gep(&f, out.slot, result.t, at.s);
    emit(&f, "  store %s %s, ptr %s", stax_ty(result.t), result.s, p.s);
    loop_close(&f, row_loop);
    int32_t status = fn_finish(&f, name);
    fn_free(&f);
    return status;
}

/* ---- rows: softmax, log_softmax, layer_norm ---- */

/* Softmax's row statistics take one read of x, chunk by chunk: the chunk's
 * max, then (the chunk still in L1) exp(x - running max) summed, and stored
 * as the output when `exps` is given, the running sum rescaled whenever the
 * max grows. The normalising pass then scales each chunk's stored exps by
 * exp(chunk max - row max) / sum: one exp per element in all. Chunks are 512
 * elements, longer for rows past 512 x 1024 so that their maxima fit a
 * fixed array. */
#define STAX_SOFTMAX_CHUNK      512
#define STAX_SOFTMAX_MAX_CHUNKS 1024

typedef struct softmax_chunks {
    int64_t size, count;
    char maxima[32]; /* alloca of the running max each chunk used */
    ir_val max, sum; /* variables: the row's max and sum of exp(x - max) */
} softmax_chunks;

/* Opens the loop over chunks; *chunk gets its index. */
static int open_chunks(fn_ctx *f, const softmax_chunks *sc, ir_val *chunk) {
    char chunk_index[32], count_text[32];
    snprintf(count_text, sizeof count_text, "%lld", (long long)sc->count);
    int loop = loop_open(f, "0", count_text, chunk_index);
    *chunk = (ir_val){.t = TP_PLUGIN_I64};
    snprintf(chunk->s, sizeof chunk->s, "%s", chunk_index);
    return loop;
}

/* Opens the loop over the elements of `chunk` along `axis`. */
static int open_chunk_elements(fn_ctx *f, const softmax_chunks *sc, int64_t axis, int64_t length,
                               ir_val chunk) {
    char index_name[32];
    ir_val lo = bin(f, "mul", chunk, lit_int(TP_PLUGIN_I64, sc->size));
    ir_val end = bin(f, "add", lo, lit_int(TP_PLUGIN_I64, sc->size));
    ir_val row_end = lit_int(TP_PLUGIN_I64, length);
    ir_val hi = sel(f, cmp(f, "icmp slt", end, row_end), end, row_end);
    int loop = loop_open(f, lo.s, hi.s, index_name);
    snprintf(f->idx[axis], sizeof f->idx[axis], "%s", index_name);
    return loop;
}

static ir_val chunk_max_slot(fn_ctx *f, const softmax_chunks *sc, int32_t t, ir_val chunk) {
    ir_val p = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = getelementptr %s, ptr %s, i64 %s", p.s, stax_ty(t), sc->maxima, chunk.s);
    return p;
}

/* The statistics pass (see above); with `exps`, exp(x - running max) is
 * stored there. A row of -inf keeps max -inf and sum 0 (the normalising
 * pass then gives NaN, as NumPy); a chunk of -inf after a finite max adds
 * nothing. */
static void online_max_and_sum(fn_ctx *f, int32_t x, int32_t t, int64_t axis, int64_t length,
                               const stax_view *exps, softmax_chunks *sc) {
    const char *suffix = t == TP_PLUGIN_F32 ? "f32" : "f64";
    char maxnum[32];
    snprintf(maxnum, sizeof maxnum, "llvm.maxnum.%s", suffix);
    sc->size = STAX_SOFTMAX_CHUNK;
    if (length > STAX_SOFTMAX_CHUNK * STAX_SOFTMAX_MAX_CHUNKS)
        sc->size = (length + STAX_SOFTMAX_MAX_CHUNKS - 1) / STAX_SOFTMAX_MAX_CHUNKS;
    sc->count = length > 0 ? (length + sc->size - 1) / sc->size : 0;
    snprintf(sc->maxima, sizeof sc->maxima, "%%chunkmax%d", f->next_tmp++);
    tpcommon_buf_printf(&f->allocas, "  %s = alloca %s, i64 %d\n", sc->maxima, stax_ty(t),
                        STAX_SOFTMAX_MAX_CHUNKS);
    sc->max = var_new(f, t, lit_float(t, -INFINITY));
    sc->sum = var_new(f, t, lit_float(t, 0.0));
    ir_val chunk;
    ir_val chunk_max = var_new(f, t, lit_float(t, -INFINITY));
    int chunk_loop = open_chunks(f, sc, &chunk);
    int inner = open_chunk_elements(f, sc, axis, length, chunk);
    ir_val v = conv(f, lower_value(f, x), t);
    /* nnan nsz let the max reduction vectorize; a NaN in the row still
     * makes the whole row NaN through exp(x - max) and the sum */
    ir_val mx = fresh(f, t), prev = var_get(f, chunk_max);
    emit(f, "  %s = call nnan nsz %s @%s(%s %s, %s %s)", mx.s, stax_ty(t), maxnum, stax_ty(t),
         prev.s, stax_ty(t), v.s);
    var_set(f, chunk_max, mx);
    loop_close(f, inner);
    ir_val old_max = var_get(f, sc->max);
    ir_val new_max = call2(f, maxnum, old_max, var_get(f, chunk_max));
    var_set(f, chunk_max, lit_float(t, -INFINITY)); /* for the next chunk */
    ir_val rescale = sel(f, cmp(f, "fcmp oeq", old_max, new_max), lit_float(t, 1.0),
                         lower_exp(f, bin(f, "fsub", old_max, new_max)));
    emit(f, "  store %s %s, ptr %s", stax_ty(t), new_max.s, chunk_max_slot(f, sc, t, chunk).s);
    ir_val shift =
        sel(f, cmp(f, "fcmp oeq", new_max, lit_float(t, -INFINITY)), lit_float(t, 0.0), new_max);
    ir_val chunk_sum = var_new(f, t, lit_float(t, 0.0));
    inner = open_chunk_elements(f, sc, axis, length, chunk);
    ir_val e = lower_exp_nonpositive(f, bin(f, "fsub", conv(f, lower_value(f, x), t), shift));
    if (exps) store_view(f, exps, e);
    var_set(f, chunk_sum, bin(f, "fadd reassoc contract", var_get(f, chunk_sum), e));
    loop_close(f, inner);
    var_set(f, sc->sum,
            bin(f, "fadd", bin(f, "fmul", var_get(f, sc->sum), rescale), var_get(f, chunk_sum)));
    var_set(f, sc->max, new_max);
    loop_close(f, chunk_loop);
}

/* The normalising pass over exps stored by online_max_and_sum: each chunk's
 * values times exp(its max - the row's) / sum. */
static void scale_stored_exps(fn_ctx *f, int32_t t, int64_t axis, int64_t length,
                              const stax_view *exps, const softmax_chunks *sc) {
    ir_val row_max = var_get(f, sc->max);
    ir_val inverse = bin(f, "fdiv", lit_float(t, 1.0), var_get(f, sc->sum));
    ir_val chunk;
    int chunk_loop = open_chunks(f, sc, &chunk);
    ir_val chunk_max = fresh(f, t);
    emit(f, "  %s = load %s, ptr %s", chunk_max.s, stax_ty(t), chunk_max_slot(f, sc, t, chunk).s);
    ir_val factor = sel(f, cmp(f, "fcmp oeq", chunk_max, row_max), inverse,
                        bin(f, "fmul", lower_exp(f, bin(f, "fsub", chunk_max, row_max)), inverse));
    int inner = open_chunk_elements(f, sc, axis, length, chunk);
    store_view(f, exps, bin(f, "fmul", load_view(f, exps, t), factor));
    loop_close(f, inner);
    loop_close(f, chunk_loop);
}

int32_t stax_emit_row(stax_emit_graph *g, const char *name, int32_t root, int64_t *count) {
    const tp_plugin_value *value = &g->graph->values[root];
    const stax_value *info = &g->values[root];
    int32_t op = tpcommon_op_of(g->graph, value);
    int32_t x = value->operands[0];
    const tp_plugin_type *xt = &g->values[x].type;
    int64_t axis = tpcommon_attr_int(value, "axis", -1);
    if (axis < 0) axis += xt->ndim;
    bool reduced[STAX_MAX_DIMS] = {false};
    for (int32_t d = 0; d < xt->ndim; d++)
        reduced[d] = op == TP_PLUGIN_OP_LAYER_NORM ? d >= axis : d == axis;
    int64_t length = reduced_count(xt, reduced);
    *count = 1;
    for (int32_t d = 0; d < xt->ndim; d++)
        if (!reduced[d]) *count *= xt->dims[d];
    int32_t t = info->compute;                                         /* f32 or f64 */
    int32_t acc_t = op == TP_PLUGIN_OP_LAYER_NORM ? TP_PLUGIN_F64 : t; /* statistics */
    fn_ctx f;
    fn_init(&f, g);
    int row_loop = open_rows(&f, xt, reduced);
    int ids[STAX_MAX_DIMS];
    int32_t open;
    ir_val out_value;
    if (op == TP_PLUGIN_OP_LAYER_NORM) {
        /* the statistics in one read of the row: sums of d = x - x0 and of
         * d^2 in f64, x0 the row's first element (the shift keeps
         * E[d^2] - E[d]^2 from cancelling when the mean is large against
         * the spread; the f64 products of f32 values are exact). Two reads
         * of x in all, not three: x is often an expression (the residual
         * add) recomputed from its operands at each read. */
        ir_val x0 = lit_float(acc_t, 0.0);
        if (length > 0) {
            for (int32_t d = 0; d < xt->ndim; d++)
                if (reduced[d]) snprintf(f.idx[d], sizeof f.idx[d], "0");
            x0 = conv(&f, lower_value(&f, x), acc_t);
        }
        ir_val sum = var_new(&f, acc_t, lit_float(acc_t, 0.0));
        ir_val sq = var_new(&f, acc_t, lit_float(acc_t, 0.0));
        open = open_axes(&f, reduced, ids);
        ir_val d = bin(&f, "fsub", conv(&f, lower_value(&f, x), acc_t), x0);
        var_set(&f, sum, bin(&f, "fadd reassoc contract", var_get(&f, sum), d));
        var_set(&f, sq, bin(&f, "fadd reassoc contract", var_get(&f, sq), bin(&f, "fmul", d, d)));
        close_axes(&f, ids, open);
        ir_val n = size_float(&f, acc_t, length);
        ir_val mean_d = bin(&f, "fdiv", var_get(&f, sum), n);
        ir_val mean = bin(&f, "fadd", x0, mean_d);
        ir_val spread =
            bin(&f, "fsub", bin(&f, "fdiv", var_get(&f, sq), n), bin(&f, "fmul", mean_d, mean_d));
        /* rounding may leave a constant row's variance a hair below 0 */
        ir_val var = sel(&f, cmp(&f, "fcmp olt", spread, lit_float(acc_t, 0.0)),
                         lit_float(acc_t, 0.0), spread);
        ir_val ve = bin(&f, "fadd", var, lit_float(acc_t, tpcommon_attr_float(value, "eps", 1e-5)));
        ir_val rstd = bin(&f, "fdiv", lit_float(acc_t, 1.0), call1(&f, "llvm.sqrt.f64", ve));
        ir_val mean_t = conv(&f, mean, t), rstd_t = conv(&f, rstd, t);
        open = open_axes(&f, reduced, ids);
        ir_val xv = conv(&f, lower_value(&f, x), t);
        out_value = bin(&f, "fmul contract", bin(&f, "fsub contract", xv, mean_t), rstd_t);
        if (value->num_operands > 1)
            out_value = bin(&f, "fmul contract", out_value,
                            conv(&f, lower_value(&f, value->operands[1]), t));
        if (value->num_operands > 2)
            out_value = bin(&f, "fadd contract", out_value,
                            conv(&f, lower_value(&f, value->operands[2]), t));
    } else {
        /* softmax into its own dtype: exp once per element, stored, then
         * scaled in place (the row's chunks in L1/L2 by then) */
        bool store_exp = op == TP_PLUGIN_OP_SOFTMAX && value->type.dtype == t;
        softmax_chunks sc;
        online_max_and_sum(&f, x, t, axis, length, store_exp ? &info->view : NULL, &sc);
        if (store_exp) {
            scale_stored_exps(&f, t, axis, length, &info->view, &sc);
            loop_close(&f, row_loop);
            int32_t status = fn_finish(&f, name);
            fn_free(&f);
            return status;
        }
        ir_val m = var_get(&f, sc.max);
        ir_val s = var_get(&f, sc.sum);
        ir_val scale =
            op == TP_PLUGIN_OP_SOFTMAX ? bin(&f, "fdiv", lit_float(t, 1.0), s) : lower_log(&f, s);
        open = open_axes(&f, reduced, ids);
        ir_val shifted = bin(&f, "fsub", conv(&f, lower_value(&f, x), t), m);
        out_value = op == TP_PLUGIN_OP_SOFTMAX
                        ? bin(&f, "fmul", lower_exp_nonpositive(&f, shifted), scale)
                        : bin(&f, "fsub", shifted, scale);
    }
    store_view(&f, &info->view, conv(&f, out_value, value->type.dtype));
    close_axes(&f, ids, open);
    loop_close(&f, row_loop);
    int32_t status = fn_finish(&f, name);
    fn_free(&f);
    return status;
}

/* ---- matmul ---- */

/* Reads the gemm description the planner stored for `value` (stax_plan.c). */
const stax_gemm *stax_plan_gemm_of(const stax_emit_graph *g, int32_t value);

int32_t stax_emit_matmul_generic(stax_emit_graph *g, const char *name, int32_t value,
                                 int64_t *count) {
    const stax_gemm *gm = stax_plan_gemm_of(g, value);
    const tp_plugin_value *node = &g->graph->values[value];
    int32_t t = g->values[value].compute;
    int32_t a_t = g->values[node->operands[0]].type.dtype;
    int32_t b_t = g->values[node->operands[1]].type.dtype;
    bool fl = tpcommon_dtype_is_float(t);
    *count = gm->batch * gm->m;
    fn_ctx f;
    fn_init(&f, g);
    f.ndim = 0;
    char row_name[32];
    int row_loop = loop_open(&f, "%begin", "%end", row_name);
    ir_val row = {.t = TP_PLUGIN_I64};
    snprintf(row.s, sizeof row.s, "%s", row_name);
    ir_val b = bin(&f, "udiv", row, lit_int(TP_PLUGIN_I64, gm->m));
    ir_val i = bin(&f, "urem", row, lit_int(TP_PLUGIN_I64, gm->m));
    ir_val a_off = lit_int(TP_PLUGIN_I64, gm->a_offset),
           b_off = lit_int(TP_PLUGIN_I64, gm->b_offset);
    ir_val rest = b;
    for (int32_t d = gm->batch_ndim - 1; d >= 0; d--) {
        ir_val size = lit_int(TP_PLUGIN_I64, gm->batch_dims[d]);
        ir_val index = bin(&f, "urem", rest, size);
        rest = bin(&f, "udiv", rest, size);
        a_off = bin(&f, "add", a_off,
                    bin(&f, "mul", index, lit_int(TP_PLUGIN_I64, gm->a_batch_strides[d])));
        b_off = bin(&f, "add", b_off,
                    bin(&f, "mul", index, lit_int(TP_PLUGIN_I64, gm->b_batch_strides[d])));
    }
    a_off = bin(&f, "add", a_off, bin(&f, "mul", i, lit_int(TP_PLUGIN_I64, gm->a_rs)));
    ir_val c_off = bin(&f, "add", lit_int(TP_PLUGIN_I64, gm->c_offset),
                       bin(&f, "mul", row, lit_int(TP_PLUGIN_I64, gm->n)));
    char n_text[32], k_text[32], j_name[32], k_name[32];
    snprintf(n_text, sizeof n_text, "%lld", (long long)gm->n);
    snprintf(k_text, sizeof k_text, "%lld", (long long)gm->k);
    ir_val zero = fl ? lit_float(t, 0.0) : lit_int(t, 0);
    int jz = loop_open(&f, "0", n_text, j_name);
    ir_val jv = {.t = TP_PLUGIN_I64};
    snprintf(jv.s, sizeof jv.s, "%s", j_name);
    ir_val cz = slot_gep(&f, gm->c_slot, t, bin(&f, "add", c_off, jv).s);
    emit(&f, "  store %s %s, ptr %s", stax_ty(t), zero.s, cz.s);
    loop_close(&f, jz);
    int kl = loop_open(&f, "0", k_text, k_name);
    ir_val kv = {.t = TP_PLUGIN_I64};
    snprintf(kv.s, sizeof kv.s, "%s", k_name);
    ir_val ak = bin(&f, "add", a_off, bin(&f, "mul", kv, lit_int(TP_PLUGIN_I64, gm->a_cs)));
    ir_val ap = slot_gep(&f, gm->a_slot, a_t, ak.s);
    ir_val av = fresh(&f, a_t);
    emit(&f, "  %s = load %s, ptr %s", av.s, stax_ty(a_t), ap.s);
    ir_val a = conv(&f, av, t);
    ir_val bk = bin(&f, "add", b_off, bin(&f, "mul", kv, lit_int(TP_PLUGIN_I64, gm->b_rs)));
    int jl = loop_open(&f, "0", n_text, j_name);
    snprintf(jv.s, sizeof jv.s, "%s", j_name);
    ir_val bj = bin(&f, "add", bk, bin(&f, "mul", jv, lit_int(TP_PLUGIN_I64, gm->b_cs)));
    ir_val bp = slot_gep(&f, gm->b_slot, b_t, bj.s);
    ir_val bv = fresh(&f, b_t);
    emit(&f, "  %s = load %s, ptr %s", bv.s, stax_ty(b_t), bp.s);
    ir_val bconv = conv(&f, bv, t);
    ir_val cp = slot_gep(&f, gm->c_slot, t, bin(&f, "add", c_off, jv).s);
    ir_val cv = fresh(&f, t);
    emit(&f, "  %s = load %s, ptr %s", cv.s, stax_ty(t), cp.s);
    ir_val prod = bin(&f, fl ? "fmul contract" : "mul", a, bconv);
    ir_val sum = bin(&f, fl ? "fadd contract" : "add", cv, prod);
    emit(&f, "  store %s %s, ptr %s", stax_ty(t), sum.s, cp.s);
    loop_close(&f, jl);
    loop_close(&f, kl);
    loop_close(&f, row_loop);
    int32_t status = fn_finish(&f, name);
    fn_free(&f);
    return status;
}

/* C[0..mr)[0..16) (+)= sum_k A[r*rsa + k*csa] * B[k*16 + j]: 2*mr <8 x float>
 * accumulators held in registers across the k loop. */
static void emit_microkernel(tpcommon_buf *m, const char *name, int mr) {
    tpcommon_buf_printf(m,
                        "define void @%s(ptr noalias %%a, i64 %%rsa, i64 %%csa, ptr noalias %%b, "
                        "ptr noalias %%c, i64 %%ldc, i64 %%kc, i64 %%acc) #0 {\n"
                        "entry:\n  br label %%loop\nloop:\n",
                        name);
    tpcommon_buf_printf(m, "  %%k = phi i64 [0, %%entry], [%%kn, %%body]\n");
    for (int r = 0; r < mr; r++)
        for (int h = 0; h < 2; h++)
            tpcommon_buf_printf(m,
                                "  %%c%d_%d = phi <8 x float> [zeroinitializer, %%entry], "
                                "[%%d%d_%d, %%body]\n",
                                r, h, r, h);
    tpcommon_buf_printf(m, "  %%more = icmp slt i64 %%k, %%kc\n  br i1 %%more, label %%body, "
                           "label %%done\nbody:\n");
    tpcommon_buf_printf(m, "  %%bo = mul i64 %%k, 16\n"
                           "  %%bp0 = getelementptr inbounds float, ptr %%b, i64 %%bo\n"
                           "  %%bp1 = getelementptr inbounds float, ptr %%bp0, i64 8\n"
                           "  %%b0 = load <8 x float>, ptr %%bp0, align 32\n"
                           "  %%b1 = load <8 x float>, ptr %%bp1, align 32\n"
                           "  %%ak = mul i64 %%k, %%csa\n");
    for (int r = 0; r < mr; r++) {
        tpcommon_buf_printf(m,
                            "  %%ar%d = mul i64 %%rsa, %d\n  %%ao%d = add i64 %%ar%d, %%ak\n"
                            "  %%ap%d = getelementptr inbounds float, ptr %%a, i64 %%ao%d\n"
                            "  %%as%d = load float, ptr %%ap%d\n"
                            "  %%ai%d = insertelement <8 x float> poison, float %%as%d, i64 0\n"
                            "  %%av%d = shufflevector <8 x float> %%ai%d, <8 x float> poison, "
                            "<8 x i32> zeroinitializer\n",
                            r, r, r, r, r, r, r, r, r, r, r, r);
        for (int h = 0; h < 2; h++)
            tpcommon_buf_printf(m,
                                "  %%d%d_%d = call <8 x float> @llvm.fma.v8f32(<8 x float> %%av%d, "
                                "<8 x float> %%b%d, <8 x float> %%c%d_%d)\n",
                                r, h, r, h, r, h);
    }
    tpcommon_buf_printf(m, "  %%kn = add i64 %%k, 1\n  br label %%loop\ndone:\n"
                           "  %%add = icmp ne i64 %%acc, 0\n");
    for (int r = 0; r < mr; r++)
        for (int h = 0; h < 2; h++) {
            tpcommon_buf_printf(
                m,
                "  %%co%d_%d = mul i64 %%ldc, %d\n  %%cq%d_%d = add i64 %%co%d_%d, %d\n"
                "  %%cp%d_%d = getelementptr inbounds float, ptr %%c, i64 %%cq%d_%d\n"
                "  %%old%d_%d = load <8 x float>, ptr %%cp%d_%d, align 4\n"
                "  %%sum%d_%d = fadd <8 x float> %%old%d_%d, %%c%d_%d\n"
                "  %%new%d_%d = select i1 %%add, <8 x float> %%sum%d_%d, "
                "<8 x float> %%c%d_%d\n"
                "  store <8 x float> %%new%d_%d, ptr %%cp%d_%d, align 4\n",
                r, h, r, r, h, r, h, h * 8, r, h, r, h, r, h, r, h, r, h, r, h, r, h, r, h, r, h, r,
                h, r, h, r, h);
        }
    tpcommon_buf_printf(m, "  ret void\n}\n\n");
}

/* The full 6-row kernel and the 4-row one for row edges (m % 6 == 2 or 4:
 * 4-row tiles cover them without padded rows). */
void stax_emit_gemm_microkernel(tpcommon_buf *m) {
    emit_microkernel(m, STAX_GEMM_KERNEL_NAME, STAX_GEMM_MR);
    emit_microkernel(m, STAX_GEMM_KERNEL4_NAME, 4);
}
