/* stax-llvm — IR text building blocks (stax_emit_core.h): temporaries,
 * literals, conversions with tensor.h's semantics, alloca loops, strided
 * loads and stores, and the kernel function frame with noalias buffers. */
#include "stax_emit_core.h"
#include "stax_kernel_bodies.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *stax_ty(int32_t t) {
    /* bf16 travels as its bits (i16): LLVM lowers bfloat conversions to
     * libcalls on hosts without AVX512-BF16, which a JIT module cannot reach */
    static const char *const names[] = {"float", "double", "i32", "i64", "i8", "half", "i16", "i1"};
    return t >= 0 && t <= STAX_I1 ? names[t] : "void";
}

void fn_init(fn_ctx *f, stax_emit_graph *g) {
    memset(f, 0, sizeof *f);
    f->g = g;
    tpcommon_buf_init(&f->body);
    tpcommon_buf_init(&f->allocas);
    f->slot_used = calloc((size_t)g->num_slots + 1, sizeof(bool));
    f->region_matmul = -1;
    if (!f->slot_used) f->failed = true;
}

void fn_free(fn_ctx *f) {
    tpcommon_buf_free(&f->body);
    tpcommon_buf_free(&f->allocas);
    free(f->slot_used);
    f->slot_used = NULL;
}

void emit(fn_ctx *f, const char *format, ...) {
    va_list args;
    va_start(args, format);
    tpcommon_buf_vprintf(&f->body, format, args);
    va_end(args);
    tpcommon_buf_append(&f->body, "\n");
}

ir_val fresh(fn_ctx *f, int32_t t) {
    ir_val v;
    snprintf(v.s, sizeof v.s, "%%t%d", f->next_tmp++);
    v.t = t;
    return v;
}

ir_val lit_float(int32_t t, double value) {
    ir_val v;
    double exact = t == TP_PLUGIN_F32 ? (double)(float)value : value;
    uint64_t bits;
    memcpy(&bits, &exact, sizeof bits);
    snprintf(v.s, sizeof v.s, "0x%016llX", (unsigned long long)bits);
    v.t = t;
    return v;
}

ir_val lit_int(int32_t t, int64_t value) {
    ir_val v;
    snprintf(v.s, sizeof v.s, "%lld", (long long)value);
    v.t = t;
    return v;
}

ir_val size_float(fn_ctx *f, int32_t t, int64_t value) {
    ir_val r = fresh(f, t);
    emit(f, "  %s = sitofp i64 %lld to %s", r.s, (long long)value, stax_ty(t));
    return r;
}

ir_val to_i1(fn_ctx *f, ir_val v) {
    if (v.t == STAX_I1) return v;
    ir_val r = fresh(f, STAX_I1);
    if (tpcommon_dtype_is_float(v.t))
        emit(f, "  %s = fcmp une %s %s, 0.0", r.s, stax_ty(v.t), v.s);
    else
        emit(f, "  %s = icmp ne %s %s, 0", r.s, stax_ty(v.t), v.s);
    return r;
}

ir_val bool_of(fn_ctx *f, ir_val i1) {
    ir_val r = fresh(f, TP_PLUGIN_BOOL);
    emit(f, "  %s = zext i1 %s to i8", r.s, i1.s);
    return r;
}

/* f16/bf16 to f32, exactly: fpext from half (F16C's vcvtph2ps); a bf16's
 * bits are the top half of the f32's. */
static ir_val widen_storage_float(fn_ctx *f, ir_val v) {
    ir_val r = fresh(f, TP_PLUGIN_F32);
    if (v.t == TP_PLUGIN_F16) {
        emit(f, "  %s = fpext half %s to float", r.s, v.s);
        return r;
    }
    ir_val wide = fresh(f, TP_PLUGIN_I32), high = fresh(f, TP_PLUGIN_I32);
    emit(f, "  %s = zext i16 %s to i32", wide.s, v.s);
    emit(f, "  %s = shl i32 %s, 16", high.s, wide.s);
    emit(f, "  %s = bitcast i32 %s to float", r.s, high.s);
    return r;
}

/* f32 to f16/bf16, to nearest, ties to even: fptrunc to half (vcvtps2ph
 * with the MXCSR rounding, nearest-even); for bf16 the integer form of the
 * same rounding (add 0x7FFF plus the lowest kept bit, keep the top 16
 * bits), a NaN keeping its sign and top payload with the quiet bit set. */
static ir_val narrow_to_storage_float(fn_ctx *f, ir_val v, int32_t to) {
    ir_val r = fresh(f, to);
    if (to == TP_PLUGIN_F16) {
        emit(f, "  %s = fptrunc float %s to half", r.s, v.s);
        return r;
    }
    ir_val bits = fresh(f, TP_PLUGIN_I32), shifted = fresh(f, TP_PLUGIN_I32);
    ir_val lowest = fresh(f, TP_PLUGIN_I32), bias = fresh(f, TP_PLUGIN_I32);
    ir_val sum = fresh(f, TP_PLUGIN_I32), rounded = fresh(f, TP_PLUGIN_I32);
    ir_val quiet = fresh(f, TP_PLUGIN_I32), nan = fresh(f, STAX_I1),
           chosen = fresh(f, TP_PLUGIN_I32);
    emit(f, "  %s = bitcast float %s to i32", bits.s, v.s);
    emit(f, "  %s = lshr i32 %s, 16", shifted.s, bits.s);
    emit(f, "  %s = and i32 %s, 1", lowest.s, shifted.s);
    emit(f, "  %s = add i32 %s, 32767", bias.s, lowest.s);
    emit(f, "  %s = add i32 %s, %s", sum.s, bits.s, bias.s);
    emit(f, "  %s = lshr i32 %s, 16", rounded.s, sum.s);
    emit(f, "  %s = or i32 %s, 64", quiet.s, shifted.s);
    emit(f, "  %s = fcmp uno float %s, 0.0", nan.s, v.s);
    emit(f, "  %s = select i1 %s, i32 %s, i32 %s", chosen.s, nan.s, quiet.s, rounded.s);
    emit(f, "  %s = trunc i32 %s to i16", r.s, chosen.s);
    return r;
}

static bool is_storage_float(int32_t t) {
    return t == TP_PLUGIN_F16 || t == TP_PLUGIN_BF16;
}

/* Conversions as the reference kernels do them: ints sign-extend or wrap,
 * bools are 0/1, float -> int saturates with NaN -> 0, -> bool is != 0;
 * f16/bf16 widen to f32 first, and narrow from the value converted to f32
 * (the result an op computing in f32 gives, rounded once more on store). */
ir_val conv(fn_ctx *f, ir_val v, int32_t to) {
    if (v.t == to) return v;
    if (is_storage_float(v.t)) v = widen_storage_float(f, v);
    if (v.t == to) return v;
    if (is_storage_float(to)) return narrow_to_storage_float(f, conv(f, v, TP_PLUGIN_F32), to);
    if (to == TP_PLUGIN_BOOL) return bool_of(f, to_i1(f, v));
    if (v.t == STAX_I1) v = bool_of(f, v);
    if (v.t == to) return v;
    ir_val r = fresh(f, to);
    bool from_float = tpcommon_dtype_is_float(v.t), to_float = tpcommon_dtype_is_float(to);
    const char *from_ty = stax_ty(v.t), *to_ty = stax_ty(to);
    if (from_float && to_float)
        emit(f, "  %s = %s %s %s to %s", r.s, to == TP_PLUGIN_F64 ? "fpext" : "fptrunc", from_ty,
             v.s, to_ty);
    else if (from_float)
        emit(f, "  %s = call %s @llvm.fptosi.sat.%s.%s(%s %s)", r.s, to_ty, to_ty,
             v.t == TP_PLUGIN_F32 ? "f32" : "f64", from_ty, v.s);
    else if (to_float)
        emit(f, "  %s = %s %s %s to %s", r.s, v.t == TP_PLUGIN_BOOL ? "uitofp" : "sitofp", from_ty,
             v.s, to_ty);
    else if (tpcommon_dtype_size(v.t) < tpcommon_dtype_size(to))
        emit(f, "  %s = %s %s %s to %s", r.s, v.t == TP_PLUGIN_BOOL ? "zext" : "sext", from_ty, v.s,
             to_ty);
    else
        emit(f, "  %s = trunc %s %s to %s", r.s, from_ty, v.s, to_ty);
    return r;
}

ir_val bin(fn_ctx *f, const char *opcode, ir_val a, ir_val b) {
    ir_val r = fresh(f, a.t);
    emit(f, "  %s = %s %s %s, %s", r.s, opcode, stax_ty(a.t), a.s, b.s);
    return r;
}

ir_val cmp(fn_ctx *f, const char *predicate, ir_val a, ir_val b) {
    ir_val r = fresh(f, STAX_I1);
    emit(f, "  %s = %s %s %s, %s", r.s, predicate, stax_ty(a.t), a.s, b.s);
    return r;
}

ir_val sel(fn_ctx *f, ir_val c, ir_val a, ir_val b) {
    ir_val r = fresh(f, a.t);
    emit(f, "  %s = select i1 %s, %s %s, %s %s", r.s, c.s, stax_ty(a.t), a.s, stax_ty(b.t), b.s);
    return r;
}

ir_val call1(fn_ctx *f, const char *fn, ir_val a) {
    ir_val r = fresh(f, a.t);
    emit(f, "  %s = call %s @%s(%s %s)", r.s, stax_ty(a.t), fn, stax_ty(a.t), a.s);
    return r;
}

ir_val call2(fn_ctx *f, const char *fn, ir_val a, ir_val b) {
    ir_val r = fresh(f, a.t);
    emit(f, "  %s = call %s @%s(%s %s, %s %s)", r.s, stax_ty(a.t), fn, stax_ty(a.t), a.s,
         stax_ty(b.t), b.s);
    return r;
}

/* Whether `text` is an integer literal; its value in *value. */
static bool integer_literal(const char *text, int64_t *value) {
    char *end;
    long long parsed = strtoll(text, &end, 10);
    if (end == text || *end) return false;
    *value = parsed;
    return true;
}

int loop_open(fn_ctx *f, const char *lo, const char *hi, char *index) {
    return loop_open_at_most(f, lo, hi, -1, index);
}

int loop_open_at_most(fn_ctx *f, const char *lo, const char *hi, int64_t max_trips, char *index) {
    int id = f->next_label++;
    int64_t first, last;
    bool few = max_trips >= 0 ? max_trips <= STAX_UNROLL_MAX_TRIPS
                              : integer_literal(lo, &first) && integer_literal(hi, &last) &&
                                    last - first <= STAX_UNROLL_MAX_TRIPS;
    /* a decision (stax_decide): a dynamic graph's sizes are literals here,
       and its generic plan replays the choice its first sizes made */
    if (stax_decide(f->g, few)) loop_keep_unrolling(f, id);
    if (f->num_open_loops < STAX_MAX_TAGGED_LOOPS) {
        f->open_loops[f->num_open_loops] = id;
        f->open_first_var[f->num_open_loops++] = f->next_tmp;
    }
    tpcommon_buf_printf(&f->allocas, "  %%lv%d = alloca i64\n", id);
    emit(f, "  store i64 %s, ptr %%lv%d", lo, id);
    emit(f, "  br label %%lh%d", id);
    emit(f, "lh%d:", id);
    emit(f, "  %%li%d = load i64, ptr %%lv%d", id, id);
    emit(f, "  %%lc%d = icmp slt i64 %%li%d, %s", id, id, hi);
    emit(f, "  br i1 %%lc%d, label %%lb%d, label %%lx%d", id, id, id);
    emit(f, "lb%d:", id);
    snprintf(index, 32, "%%li%d", id);
    return id;
}

void loop_keep_unrolling(fn_ctx *f, int id) {
    if (id >= 0 && id < STAX_MAX_TAGGED_LOOPS) f->unrollable[id / 64] |= 1ull << (id % 64);
}

void loop_close(fn_ctx *f, int id) {
    emit(f, "  %%ln%d = add nuw nsw i64 %%li%d, 1", id, id);
    emit(f, "  store i64 %%ln%d, ptr %%lv%d", id, id);
    if (f->num_open_loops > 0 && f->open_loops[f->num_open_loops - 1] == id) f->num_open_loops--;
    bool unrollable = id >= STAX_MAX_TAGGED_LOOPS || (f->unrollable[id / 64] >> (id % 64) & 1);
    emit(f, "  br label %%lh%d%s", id, unrollable ? "" : ", " STAX_LOOP_NO_UNROLL);
    emit(f, "lx%d:", id);
}

ir_val var_new(fn_ctx *f, int32_t t, ir_val init) {
    ir_val var;
    snprintf(var.s, sizeof var.s, "%%var%d", f->next_tmp++);
    var.t = t;
    tpcommon_buf_printf(&f->allocas, "  %s = alloca %s\n", var.s, stax_ty(t));
    var_set(f, var, init);
    return var;
}

ir_val var_get(fn_ctx *f, ir_val var) {
    ir_val r = fresh(f, var.t);
    emit(f, "  %s = load %s, ptr %s", r.s, stax_ty(var.t), var.s);
    return r;
}

void var_set(fn_ctx *f, ir_val var, ir_val v) {
    emit(f, "  store %s %s, ptr %s", stax_ty(var.t), v.s, var.s);
    int number;
    if (sscanf(var.s, "%%var%d", &number) != 1) return;
    /* set inside loops it was made outside of: they carry it (reductions) */
    for (int i = 0; i < f->num_open_loops; i++)
        if (number < f->open_first_var[i]) loop_keep_unrolling(f, f->open_loops[i]);
}

bool stax_decide(stax_emit_graph *g, bool cond) {
    stax_decisions *d = g->decisions;
    if (!d || d->mode == 0) return cond;
    if (d->mode == 2) {
        if (d->cursor < d->count) return d->taken[d->cursor++] != 0;
        d->failed = true;
        return cond;
    }
    if (d->count == d->capacity) {
        int32_t capacity = d->capacity ? d->capacity * 2 : 64;
        uint8_t *taken = realloc(d->taken, (size_t)capacity);
        if (!taken) {
            d->failed = true;
            return cond;
        }
        d->taken = taken;
        d->capacity = capacity;
    }
    d->taken[d->count++] = cond;
    return cond;
}

ir_val view_index(fn_ctx *f, const stax_view *view) {
    ir_val index = lit_int(TP_PLUGIN_I64, view->offset);
    if (f->flat) {
        int64_t numel = 1;
        for (int32_t d = 0; d < view->ndim; d++) numel *= view->dims[d];
        if (stax_decide(f->g, numel <= 1 && f->dims[0] != 1)) return index;
        ir_val i = {.t = TP_PLUGIN_I64};
        snprintf(i.s, sizeof i.s, "%s", f->idx[0]);
        return stax_decide(f->g, view->offset != 0) ? bin(f, "add nsw", i, index) : i;
    }
    int32_t shift = f->ndim - view->ndim;
    for (int32_t d = 0; d < view->ndim; d++) {
        int32_t axis = d + shift;
        if (axis < 0 || stax_decide(f->g, view->dims[d] == 1 || view->strides[d] == 0)) continue;
        ir_val i = {.t = TP_PLUGIN_I64};
        snprintf(i.s, sizeof i.s, "%s", f->idx[axis]);
        ir_val term = stax_decide(f->g, view->strides[d] == 1)
                          ? i
                          : bin(f, "mul nsw", i, lit_int(TP_PLUGIN_I64, view->strides[d]));
        index = bin(f, "add nsw", index, term);
    }
    return index;
}

ir_val slot_gep(fn_ctx *f, int32_t slot, int32_t dtype, const char *index) {
    f->slot_used[slot] = true;
    ir_val p = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = getelementptr inbounds %s, ptr %%s%d, i64 %s", p.s, stax_ty(dtype), slot,
         index);
    return p;
}

/* An f16/bf16 element is widened to f32 as it is loaded. */
ir_val load_view(fn_ctx *f, const stax_view *view, int32_t dtype) {
    ir_val index = view_index(f, view);
    ir_val p = slot_gep(f, view->slot, dtype, index.s);
    ir_val r = fresh(f, dtype);
    emit(f, "  %s = load %s, ptr %s", r.s, stax_ty(dtype), p.s);
    return is_storage_float(dtype) ? widen_storage_float(f, r) : r;
}

void store_view(fn_ctx *f, const stax_view *view, ir_val value) {
    ir_val index = view_index(f, view);
    ir_val p = slot_gep(f, view->slot, value.t, index.s);
    emit(f, "  store %s %s, ptr %s", stax_ty(value.t), value.s, p.s);
}

/* Adds the function's slots to the kernel being emitted (the arena's live
 * ranges need every slot a step touches). */
static void record_slots(fn_ctx *f) {
    stax_slot_list *list = f->g->emitting;
    for (int32_t s = 0; list && s < f->g->num_slots; s++) {
        if (!f->slot_used[s]) continue;
        bool known = false;
        for (int32_t i = 0; i < list->count && !known; i++) known = list->slots[i] == s;
        if (known) continue;
        if (list->count == list->capacity) {
            int32_t capacity = list->capacity ? list->capacity * 2 : 8;
            int32_t *slots = realloc(list->slots, sizeof *slots * (size_t)capacity);
            if (!slots) {
                f->failed = true;
                return;
            }
            list->slots = slots;
            list->capacity = capacity;
        }
        list->slots[list->count++] = s;
    }
}

/* The body as a function of its own, @NAME_body. */
static void define_own_body(fn_ctx *f, const char *name) {
    tpcommon_buf *m = f->g->module;
    tpcommon_buf_printf(m, "define internal void @%s_body(", name);
    for (int32_t s = 0; s < f->g->num_slots; s++)
        if (f->slot_used[s]) tpcommon_buf_printf(m, "ptr noalias %%s%d, ", s);
    tpcommon_buf_printf(m, "ptr %%params, i64 %%begin, i64 %%end) #1 {\nentry:\n");
    /* where stax_dynamic.c loads the size arguments (a comment otherwise) */
    tpcommon_buf_append(m, STAX_PARAMS_MARKER "\n");
    tpcommon_buf_append(m, f->allocas.data ? f->allocas.data : "");
    tpcommon_buf_append(m, f->body.data ? f->body.data : "");
    tpcommon_buf_printf(m, "  ret void\n}\n\n");
}

/* The body handed to the shared table (stax_kernel_bodies.c): the name of
 * the body the kernel calls, an equal earlier one's when there is one. */
static bool share_body(fn_ctx *f, char *body_name, size_t size, int32_t *order) {
    tpcommon_buf text;
    tpcommon_buf_init(&text);
    tpcommon_buf_append(&text, "entry:\n" STAX_PARAMS_MARKER "\n");
    tpcommon_buf_append(&text, f->allocas.data ? f->allocas.data : "");
    tpcommon_buf_append(&text, f->body.data ? f->body.data : "");
    tpcommon_buf_append(&text, "  ret void\n");
    char *body = tpcommon_buf_take(&text);
    int32_t index =
        body ? stax_kernel_bodies_add(f->g->bodies, body, f->slot_used, f->g->num_slots, order)
             : -1;
    free(body);
    if (index < 0) return false;
    stax_kernel_body_name(index, body_name, size);
    return true;
}

int32_t fn_finish(fn_ctx *f, const char *name) {
    tpcommon_buf *m = f->g->module;
    record_slots(f);
    char body_name[200];
    /* the slots in the order the body takes them: by first use in a shared
     * body (stax_kernel_bodies_add), else by number */
    int32_t *order = malloc(sizeof *order * ((size_t)f->g->num_slots + 1)), count = 0;
    if (!order) f->failed = true;
    for (int32_t s = 0; order && s < f->g->num_slots; s++)
        if (f->slot_used[s]) order[count++] = s;
    if (order && f->g->bodies) {
        if (!share_body(f, body_name, sizeof body_name, order)) f->failed = true;
    } else {
        define_own_body(f, name);
        snprintf(body_name, sizeof body_name, "%s_body", name);
    }
    tpcommon_buf_printf(m, "define void @%s(ptr %%slots, i64 %%begin, i64 %%end) #%d {\n", name,
                        stax_ir_calls_float_math(f->body.data) ? STAX_ATTRS_WIDE : 0);
    for (int32_t s = 0; s < f->g->num_slots; s++)
        if (f->slot_used[s]) {
            tpcommon_buf_printf(m, "  %%a%d = getelementptr ptr, ptr %%slots, i64 %d\n", s, s);
            tpcommon_buf_printf(m, "  %%s%d = load ptr, ptr %%a%d\n", s, s);
        }
    /* the size arguments' array is the pointer just before the slots */
    tpcommon_buf_printf(m, "  %%pa = getelementptr ptr, ptr %%slots, i64 -1\n");
    tpcommon_buf_printf(m, "  %%params = load ptr, ptr %%pa\n");
    tpcommon_buf_printf(m, "  call void @%s(", body_name);
    for (int32_t k = 0; order && k < count; k++) tpcommon_buf_printf(m, "ptr %%s%d, ", order[k]);
    tpcommon_buf_printf(m, "ptr %%params, i64 %%begin, i64 %%end)\n  ret void\n}\n\n");
    free(order);
    bool failed = f->failed || f->body.failed || f->allocas.failed || m->failed;
    return failed ? tpcommon_error(f->g->error, f->g->error_size, "stax: out of memory emitting %s",
                                   name)
                  : TP_PLUGIN_OK;
}
