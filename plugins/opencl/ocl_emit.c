/* The value emitter (see ocl_emit.h): pointwise expressions per op and
 * dtype, index remapping of the shape ops and broadcasting, creation ops
 * computed in place. The semantics are tensor.h's and the reference
 * kernels': wrap-around integer arithmetic (through unsigned types),
 * NaN-propagating maximum/minimum, saturating float->integer casts, the
 * overflow-free sigmoid. Owns nothing else. */
#include "ocl_emit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpcommon_cexpr.h"

struct ocl_memo_entry {
    int32_t value;
    int32_t next; /* the previous entry of the same bucket, or -1 */
    char index[32];
    char local[64]; /* a local's name or a literal */
};

struct ocl_index_entry {
    char *expr;
    char name[32];
};

void ocl_emitter_init(ocl_emitter *emitter, const ocl_graph *graph, int32_t region,
                      tpcommon_buf *out, bool *loads) {
    memset(emitter, 0, sizeof *emitter);
    emitter->graph = graph;
    emitter->region = region;
    emitter->out = out;
    emitter->loads = loads;
    emitter->indent = 1;
}

void ocl_emitter_free(ocl_emitter *emitter) {
    for (int32_t i = 0; i < emitter->index_count; i++) free(emitter->indices[i].expr);
    free(emitter->indices);
    free(emitter->memo);
    free(emitter->memo_heads);
    free(emitter->loaded);
    emitter->loaded = NULL;
    emitter->indices = NULL;
    emitter->memo = NULL;
    emitter->memo_heads = NULL;
}

static void fail(ocl_emitter *emitter, const char *format, ...) {
    if (emitter->failed) return;
    emitter->failed = true;
    va_list args;
    va_start(args, format);
    vsnprintf(emitter->error, sizeof emitter->error, format, args);
    va_end(args);
}

void ocl_emit_line(ocl_emitter *emitter, const char *format, ...) {
    for (int i = 0; i < emitter->indent; i++) tpcommon_buf_append(emitter->out, "    ");
    va_list args;
    va_start(args, format);
    tpcommon_buf_vprintf(emitter->out, format, args);
    va_end(args);
    tpcommon_buf_append(emitter->out, "\n");
}

const char *ocl_emit_fresh(ocl_emitter *emitter, const char *prefix, char *buf, size_t size) {
    snprintf(buf, size, "%s%d", prefix, (int)emitter->next_local++);
    return buf;
}

ocl_emit_scope ocl_emit_scope_begin(ocl_emitter *emitter) {
    return (ocl_emit_scope){emitter->memo_count, emitter->index_count};
}

static void memo_pop(ocl_emitter *emitter);

void ocl_emit_scope_end(ocl_emitter *emitter, ocl_emit_scope scope) {
    while (emitter->memo_count > scope.memo_count) memo_pop(emitter);
    for (int32_t i = scope.index_count; i < emitter->index_count; i++)
        free(emitter->indices[i].expr);
    emitter->index_count = scope.index_count;
}

/* ---- memo ----------------------------------------------------------------
 *
 * A stack of (value, index) -> local entries, newest binding first, with
 * hash buckets over it so that a lookup costs O(1) in a region of thousands
 * of nodes: each bucket is a chain of entry positions, newest first (an
 * entry is always its bucket's head when the scope that made it ends, so
 * popping it restores the bucket). */

static uint32_t memo_hash(int32_t value, const char *index) {
    uint32_t hash = 2166136261u ^ (uint32_t)value;
    for (const char *c = index; *c; c++) hash = (hash ^ (uint8_t)*c) * 16777619u;
    hash ^= hash >> 15;
    hash *= 0x2c1b3c6du;
    return hash ^ (hash >> 12);
}

static void memo_link(ocl_emitter *emitter, int32_t position) {
    ocl_memo_entry *entry = &emitter->memo[position];
    uint32_t bucket = memo_hash(entry->value, entry->index) & (uint32_t)(emitter->memo_buckets - 1);
    entry->next = emitter->memo_heads[bucket];
    emitter->memo_heads[bucket] = position;
}

static void memo_pop(ocl_emitter *emitter) {
    const ocl_memo_entry *entry = &emitter->memo[--emitter->memo_count];
    uint32_t bucket = memo_hash(entry->value, entry->index) & (uint32_t)(emitter->memo_buckets - 1);
    emitter->memo_heads[bucket] = entry->next;
}

/* Keeps at most one entry per bucket on average: doubles the buckets and
 * relinks the entries oldest first (so the newest is again each head). */
static bool memo_grow_buckets(ocl_emitter *emitter) {
    int32_t buckets = emitter->memo_buckets ? emitter->memo_buckets * 2 : 64;
    int32_t *heads = malloc(sizeof *heads * (size_t)buckets);
    if (!heads) return false;
    for (int32_t b = 0; b < buckets; b++) heads[b] = -1;
    free(emitter->memo_heads);
    emitter->memo_heads = heads;
    emitter->memo_buckets = buckets;
    for (int32_t i = 0; i < emitter->memo_count; i++) memo_link(emitter, i);
    return true;
}

static const char *memo_find(const ocl_emitter *emitter, int32_t value, const char *index) {
    if (emitter->memo_buckets == 0) return NULL;
    uint32_t bucket = memo_hash(value, index) & (uint32_t)(emitter->memo_buckets - 1);
    for (int32_t i = emitter->memo_heads[bucket]; i >= 0; i = emitter->memo[i].next)
        if (emitter->memo[i].value == value && strcmp(emitter->memo[i].index, index) == 0)
            return emitter->memo[i].local;
    return NULL;
}

static const char *memo_add(ocl_emitter *emitter, int32_t value, const char *index,
                            const char *local) {
    if (emitter->memo_count == emitter->memo_capacity) {
        int32_t capacity = emitter->memo_capacity ? emitter->memo_capacity * 2 : 64;
        ocl_memo_entry *grown = realloc(emitter->memo, sizeof *grown * (size_t)capacity);
        if (!grown) {
            fail(emitter, "out of memory");
            return "0";
        }
        emitter->memo = grown;
        emitter->memo_capacity = capacity;
    }
    if (emitter->memo_count >= emitter->memo_buckets && !memo_grow_buckets(emitter)) {
        fail(emitter, "out of memory");
        return "0";
    }
    int32_t position = emitter->memo_count++;
    ocl_memo_entry *entry = &emitter->memo[position];
    entry->value = value;
    snprintf(entry->index, sizeof entry->index, "%s", index);
    snprintf(entry->local, sizeof entry->local, "%s", local);
    memo_link(emitter, position);
    return entry->local;
}

void ocl_emit_bind(ocl_emitter *emitter, int32_t value, const char *index, const char *local) {
    memo_add(emitter, value, index, local);
}

static bool is_token(const char *expr) {
    if (strlen(expr) >= 24) return false;
    for (const char *c = expr; *c; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9')))
            return false;
    return *expr != '\0';
}

const char *ocl_emit_index(ocl_emitter *emitter, const char *expr) {
    for (int32_t i = emitter->index_count - 1; i >= 0; i--)
        if (strcmp(emitter->indices[i].expr, expr) == 0) return emitter->indices[i].name;
    if (emitter->index_count == emitter->index_capacity) {
        int32_t capacity = emitter->index_capacity ? emitter->index_capacity * 2 : 64;
        ocl_index_entry *grown = realloc(emitter->indices, sizeof *grown * (size_t)capacity);
        if (!grown) {
            fail(emitter, "out of memory");
            return "0";
        }
        emitter->indices = grown;
        emitter->index_capacity = capacity;
    }
    ocl_index_entry *entry = &emitter->indices[emitter->index_count];
    entry->expr = strdup(expr);
    if (!entry->expr) {
        fail(emitter, "out of memory");
        return "0";
    }
    emitter->index_count++;
    if (is_token(expr)) {
        snprintf(entry->name, sizeof entry->name, "%s", expr);
    } else {
        ocl_emit_fresh(emitter, "j", entry->name, sizeof entry->name);
        ocl_emit_line(emitter, "const long %s = %s;", entry->name, expr);
    }
    return entry->name;
}

/* ---- types and literals ------------------------------------------------------ */

const char *ocl_ctype(int32_t dtype) {
    switch (dtype) {
    case TP_PLUGIN_F32:
        return "float";
    case TP_PLUGIN_F64:
        return "double";
    case TP_PLUGIN_I32:
        return "int";
    case TP_PLUGIN_I64:
        return "long";
    default:
        return "uchar";
    }
}

static const char *dtype_suffix(int32_t dtype) {
    return tpcommon_dtype_name(dtype);
}

static void saturating_cast(int32_t from, int32_t to, const char *x, char *out, size_t size) {
    snprintf(out, size, "tp_sat_%s_%s(%s)", dtype_suffix(to), dtype_suffix(from), x);
}

/* OpenCL C's spelling of the shared pointwise expressions (tpcommon_cexpr.h). */
static const tpcommon_cdialect opencl_dialect = {
    .type_names = {"float", "double", "int", "long", "uchar"},
    .unsigned_names = {"uint", "ulong", "uint", "ulong", "uchar"},
    .f32_function_suffix = false, /* exp, sqrt, ... are overloaded */
    .has_isnan = true,
    .saturating_cast = saturating_cast,
    .literal = ocl_literal,
};

void ocl_convert(int32_t from, int32_t to, const char *expr, char *out, size_t size) {
    tpcommon_cexpr_convert(&opencl_dialect, from, to, expr, out, size);
}

void ocl_literal(int32_t dtype, double value, char *out, size_t size) {
    switch (dtype) {
    case TP_PLUGIN_F32:
    case TP_PLUGIN_F64: {
        const char *type = dtype == TP_PLUGIN_F32 ? "float" : "double";
        double rounded = dtype == TP_PLUGIN_F32 ? (double)(float)value : value;
        if (isnan(rounded))
            snprintf(out, size, "((%s)NAN)", type);
        else if (isinf(rounded))
            snprintf(out, size, "((%s)%sINFINITY)", type, rounded < 0 ? "-" : "");
        else
            snprintf(out, size, "((%s)%a%s)", type, rounded, dtype == TP_PLUGIN_F32 ? "f" : "");
        break;
    }
    case TP_PLUGIN_I32:
        snprintf(out, size, "((int)%lld)", (long long)(int32_t)(int64_t)value);
        break;
    case TP_PLUGIN_I64: {
        int64_t integer = (value >= 9223372036854775808.0)    ? INT64_MAX
                          : (value <= -9223372036854775808.0) ? INT64_MIN
                                                              : (int64_t)value;
        if (integer == INT64_MIN)
            snprintf(out, size, "((long)(-9223372036854775807L - 1L))");
        else
            snprintf(out, size, "((long)%lldL)", (long long)integer);
        break;
    }
    default:
        snprintf(out, size, "((uchar)%d)", value != 0 ? 1 : 0);
        break;
    }
}

/* ---- index arithmetic ---------------------------------------------------------- */

int64_t ocl_stride(const tp_plugin_type *type, int axis) {
    int64_t stride = 1;
    for (int d = axis + 1; d < type->ndim; d++) stride *= type->dims[d];
    return stride;
}

void ocl_coordinate(const tp_plugin_type *type, int axis, const char *index, char *out,
                    size_t size) {
    int64_t stride = ocl_stride(type, axis);
    char divided[64];
    if (stride == 1)
        snprintf(divided, sizeof divided, "%s", index);
    else
        snprintf(divided, sizeof divided, "(%s / %lldL)", index, (long long)stride);
    /* The first axis needs no modulo: the index is below the element count. */
    bool first = true;
    for (int d = 0; d < axis; d++) first = first && type->dims[d] == 1;
    if (first)
        snprintf(out, size, "%s", divided);
    else
        snprintf(out, size, "(%s %% %lldL)", divided, (long long)type->dims[axis]);
}

static int64_t numel_of(const tp_plugin_type *type) {
    int64_t count = 1;
    for (int d = 0; d < type->ndim; d++) count *= type->dims[d];
    return count;
}

/* Appends "+ term" to a sum expression. */
static void add_term(tpcommon_buf *sum, const char *coordinate, int64_t stride) {
    if (sum->length) tpcommon_buf_append(sum, " + ");
    if (stride == 1)
        tpcommon_buf_append(sum, coordinate);
    else
        tpcommon_buf_printf(sum, "%s * %lldL", coordinate, (long long)stride);
}

static const char *finish_index(ocl_emitter *emitter, tpcommon_buf *sum) {
    if (sum->failed) fail(emitter, "out of memory");
    const char *token = ocl_emit_index(emitter, sum->length ? sum->data : "0");
    tpcommon_buf_free(sum);
    return token;
}

const char *ocl_broadcast_index(ocl_emitter *emitter, const tp_plugin_type *out_type,
                                const tp_plugin_type *in_type, const char *index) {
    /* Broadcasting only adds or stretches size-1 axes: the same element count
     * means the same C-order layout. */
    if (numel_of(in_type) == numel_of(out_type)) return index;
    if (numel_of(in_type) <= 1) return "0";
    tpcommon_buf sum;
    tpcommon_buf_init(&sum);
    int offset = out_type->ndim - in_type->ndim;
    for (int d = 0; d < in_type->ndim; d++) {
        if (in_type->dims[d] == 1) continue;
        char coordinate[128];
        ocl_coordinate(out_type, d + offset, index, coordinate, sizeof coordinate);
        add_term(&sum, coordinate, ocl_stride(in_type, d));
    }
    return finish_index(emitter, &sum);
}

/* ---- shape ops -------------------------------------------------------------------- */

static int normalize_axis(int64_t axis, int ndim) {
    return (int)(axis < 0 ? axis + ndim : axis);
}

static const char *permuted_index(ocl_emitter *emitter, int32_t v, const int64_t *perm,
                                  const char *index) {
    const tp_plugin_type *out_type = &emitter->graph->types[v];
    const tp_plugin_type *in_type =
        &emitter->graph->types[emitter->graph->view->values[v].operands[0]];
    tpcommon_buf sum;
    tpcommon_buf_init(&sum);
    for (int d = 0; d < out_type->ndim; d++) {
        if (out_type->dims[d] == 1) continue;
        char coordinate[128];
        ocl_coordinate(out_type, d, index, coordinate, sizeof coordinate);
        add_term(&sum, coordinate, ocl_stride(in_type, normalize_axis(perm[d], in_type->ndim)));
    }
    return finish_index(emitter, &sum);
}

static const char *shape_operand_index(ocl_emitter *emitter, int32_t v, int32_t op,
                                       const char *index) {
    const tp_plugin_value *value = &emitter->graph->view->values[v];
    const tp_plugin_type *out_type = &emitter->graph->types[v];
    const tp_plugin_type *in_type = &emitter->graph->types[value->operands[0]];
    switch (op) {
    case TP_PLUGIN_OP_PERMUTE: {
        int32_t count = 0;
        const int64_t *perm = tpcommon_attr_ints(value, "perm", &count);
        return permuted_index(emitter, v, perm, index);
    }
    case TP_PLUGIN_OP_TRANSPOSE: {
        int64_t perm[TP_PLUGIN_MAX_DIMS];
        for (int d = 0; d < in_type->ndim; d++) perm[d] = d;
        int dim0 = normalize_axis(tpcommon_attr_int(value, "dim0", 0), in_type->ndim);
        int dim1 = normalize_axis(tpcommon_attr_int(value, "dim1", 1), in_type->ndim);
        perm[dim0] = dim1;
        perm[dim1] = dim0;
        return permuted_index(emitter, v, perm, index);
    }
    case TP_PLUGIN_OP_EXPAND:
        return ocl_broadcast_index(emitter, out_type, in_type, index);
    case TP_PLUGIN_OP_SLICE: {
        int axis = normalize_axis(tpcommon_attr_int(value, "axis", 0), in_type->ndim);
        int64_t size = in_type->dims[axis];
        int64_t start = tpcommon_attr_int(value, "start", 0);
        int64_t step = tpcommon_attr_int(value, "step", 1);
        if (start < 0) start += size;
        start = start < 0 ? 0 : start > size ? size : start;
        tpcommon_buf sum;
        tpcommon_buf_init(&sum);
        for (int d = 0; d < out_type->ndim; d++) {
            char coordinate[160], shifted[200];
            if (out_type->dims[d] == 1 && d != axis) continue;
            ocl_coordinate(out_type, d, index, coordinate, sizeof coordinate);
            if (d == axis) {
                snprintf(shifted, sizeof shifted, "(%lldL + %s * %lldL)", (long long)start,
                         coordinate, (long long)step);
                add_term(&sum, shifted, ocl_stride(in_type, d));
            } else {
                add_term(&sum, coordinate, ocl_stride(in_type, d));
            }
        }
        return finish_index(emitter, &sum);
    }
    default: /* reshape, squeeze, unsqueeze: C order is unchanged */
        return index;
    }
}

/* concat: picks the operand whose span holds the coordinate along the axis. */
static const char *emit_concat(ocl_emitter *emitter, int32_t v, const char *index) {
    const tp_plugin_value *value = &emitter->graph->view->values[v];
    const tp_plugin_type *out_type = &emitter->graph->types[v];
    int axis = normalize_axis(tpcommon_attr_int(value, "axis", 0), out_type->ndim);
    char coordinate[128], result[16];
    ocl_coordinate(out_type, axis, index, coordinate, sizeof coordinate);
    const char *along = ocl_emit_index(emitter, coordinate);
    ocl_emit_fresh(emitter, "t", result, sizeof result);
    ocl_emit_line(emitter, "%s %s = 0;", ocl_ctype(out_type->dtype), result);
    int64_t offset = 0;
    int opened = 0;
    for (int32_t k = 0; k < value->num_operands; k++) {
        int32_t operand = value->operands[k];
        const tp_plugin_type *in_type = &emitter->graph->types[operand];
        int64_t span = in_type->dims[axis];
        if (span == 0) continue;
        bool last = true;
        for (int32_t rest = k + 1; rest < value->num_operands; rest++)
            last = last && emitter->graph->types[value->operands[rest]].dims[axis] == 0;
        if (last)
            ocl_emit_line(emitter, "%s{", opened ? "else " : "");
        else
            ocl_emit_line(emitter, "%sif (%s < %lldL) {", opened ? "else " : "", along,
                          (long long)(offset + span));
        opened++;
        emitter->indent++;
        ocl_emit_scope scope = ocl_emit_scope_begin(emitter);
        tpcommon_buf sum;
        tpcommon_buf_init(&sum);
        for (int d = 0; d < out_type->ndim; d++) {
            char term[200];
            if (d == axis) {
                snprintf(term, sizeof term, "(%s - %lldL)", along, (long long)offset);
            } else {
                if (out_type->dims[d] == 1) continue;
                ocl_coordinate(out_type, d, index, term, sizeof term);
            }
            add_term(&sum, term, ocl_stride(in_type, d));
        }
        const char *inner = finish_index(emitter, &sum);
        const char *local = ocl_emit_value(emitter, operand, inner);
        ocl_emit_line(emitter, "%s = %s;", result, local);
        ocl_emit_scope_end(emitter, scope);
        emitter->indent--;
        ocl_emit_line(emitter, "}");
        offset += span;
        if (last) break;
    }
    return memo_add(emitter, v, index, result);
}

/* ---- creation ops --------------------------------------------------------------- */

static void arange_expr(const tp_plugin_value *value, int32_t dtype, const char *index, char *out,
                        size_t size) {
    double start = tpcommon_attr_float(value, "start", 0.0);
    double step = tpcommon_attr_float(value, "step", 1.0);
    char first[64], second[64], delta[64];
    if (dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64) {
        double a = dtype == TP_PLUGIN_F32 ? (double)(float)start : start;
        double b = dtype == TP_PLUGIN_F32 ? (double)(float)(start + step) : start + step;
        double d = dtype == TP_PLUGIN_F32 ? (double)((float)b - (float)a) : b - a;
        ocl_literal(dtype, a, first, sizeof first);
        ocl_literal(dtype, b, second, sizeof second);
        ocl_literal(dtype, d, delta, sizeof delta);
        snprintf(out, size, "(%s == 1 ? %s : %s + (%s)%s * %s)", index, second, first,
                 ocl_ctype(dtype), index, delta);
        return;
    }
    int64_t first_int = (int64_t)start, delta_int = (int64_t)(start + step) - first_int;
    snprintf(out, size, "((%s)(long)((ulong)%lldL + (ulong)%s * (ulong)%lldL))", ocl_ctype(dtype),
             (long long)first_int, index, (long long)delta_int);
}

/* ---- pointwise ops ---------------------------------------------------------------- */

/* ---- pointwise ops ----------------------------------------------------------------
 *
 * A pointwise member of the region is computed from its operands, which may
 * be pointwise members in turn: a chain as deep as the region. The walk
 * keeps one frame per value being computed on a heap stack (not the C
 * stack); a frame gathers its operands' converted texts one by one, in the
 * order (and with the index lines at the points) a recursive walk would. */

typedef struct pointwise_frame {
    int32_t value, op, compute;
    int32_t next; /* operands gathered so far */
    char index[32];
    char operands[3][160];
} pointwise_frame;

typedef struct pointwise_stack {
    pointwise_frame *frames;
    int32_t depth, capacity;
} pointwise_stack;

static bool is_pointwise_here(const ocl_emitter *emitter, int32_t v) {
    const tp_plugin_value *value = &emitter->graph->view->values[v];
    if (!value->op || emitter->graph->fusion.region_of[v] != emitter->region) return false;
    int32_t op = tpcommon_op_of(emitter->graph->view, value);
    return op != TP_PLUGIN_OP_FULL && op != TP_PLUGIN_OP_ARANGE && op != TP_PLUGIN_OP_CONSTANT &&
           tpcommon_op_kind(op) == TPCOMMON_KIND_POINTWISE;
}

static bool pointwise_push(ocl_emitter *emitter, pointwise_stack *stack, int32_t v,
                           const char *index) {
    if (stack->depth == stack->capacity) {
        int32_t capacity = stack->capacity ? stack->capacity * 2 : 16;
        pointwise_frame *grown = realloc(stack->frames, sizeof *grown * (size_t)capacity);
        if (!grown) {
            fail(emitter, "out of memory");
            return false;
        }
        stack->frames = grown;
        stack->capacity = capacity;
    }
    const ocl_graph *graph = emitter->graph;
    const tp_plugin_value *value = &graph->view->values[v];
    pointwise_frame *frame = &stack->frames[stack->depth++];
    memset(frame, 0, sizeof *frame);
    frame->value = v;
    frame->op = tpcommon_op_of(graph->view, value);
    frame->compute = tpcommon_compute_dtype(graph->view, value);
    if (frame->op == TP_PLUGIN_OP_CAST) frame->compute = graph->types[value->operands[0]].dtype;
    snprintf(frame->index, sizeof frame->index, "%s", index);
    return true;
}

/* Stores operand `local` (the text of the frame's next operand) converted. */
static void pointwise_gather(ocl_emitter *emitter, pointwise_frame *frame, const char *local) {
    const ocl_graph *graph = emitter->graph;
    int32_t operand = graph->view->values[frame->value].operands[frame->next];
    int32_t target = frame->op == TP_PLUGIN_OP_WHERE && frame->next == 0
                         ? graph->types[operand].dtype
                         : frame->compute;
    ocl_convert(graph->types[operand].dtype, target, local, frame->operands[frame->next],
                sizeof frame->operands[frame->next]);
    frame->next++;
}

/* The frame's value from its gathered operands: one `const T tN = ...;`. */
static const char *pointwise_finish(ocl_emitter *emitter, const pointwise_frame *frame) {
    const ocl_graph *graph = emitter->graph;
    int32_t v = frame->value;
    const tp_plugin_value *value = &graph->view->values[v];
    const char *names[3] = {"", "", ""};
    for (int32_t k = 0; k < frame->next; k++) names[k] = frame->operands[k];
    char expr[1024], local[16];
    if (!tpcommon_cexpr_pointwise(&opencl_dialect, frame->op, frame->compute, graph->types[v].dtype,
                                  value, names, expr, sizeof expr)) {
        fail(emitter, "op '%s' (%%%s) is not defined for dtype %s", value->op, value->name,
             tpcommon_dtype_name(frame->compute));
        return "0";
    }
    ocl_emit_fresh(emitter, "t", local, sizeof local);
    ocl_emit_line(emitter, "const %s %s = %s;", ocl_ctype(graph->types[v].dtype), local, expr);
    return memo_add(emitter, v, frame->index, local);
}

static const char *emit_pointwise(ocl_emitter *emitter, int32_t root, const char *index) {
    const ocl_graph *graph = emitter->graph;
    pointwise_stack stack = {0};
    const char *result = "0";
    if (!pointwise_push(emitter, &stack, root, index)) return result;
    while (stack.depth > 0 && !emitter->failed) {
        pointwise_frame *top = &stack.frames[stack.depth - 1];
        const tp_plugin_value *value = &graph->view->values[top->value];
        if (top->next < value->num_operands && top->next < 3) {
            int32_t operand = value->operands[top->next];
            const char *at = ocl_broadcast_index(emitter, &graph->types[top->value],
                                                 &graph->types[operand], top->index);
            if (is_pointwise_here(emitter, operand) && !memo_find(emitter, operand, at)) {
                char operand_index[32];
                snprintf(operand_index, sizeof operand_index, "%s", at);
                pointwise_push(emitter, &stack, operand, operand_index);
            } else {
                pointwise_gather(emitter, top, ocl_emit_value(emitter, operand, at));
            }
            continue;
        }
        const char *local = pointwise_finish(emitter, top);
        stack.depth--;
        if (stack.depth == 0)
            result = local;
        else
            pointwise_gather(emitter, &stack.frames[stack.depth - 1], local);
    }
    free(stack.frames);
    return emitter->failed ? "0" : result;
}

static const char *emit_load(ocl_emitter *emitter, int32_t v, const char *index) {
    char local[16];
    if (!emitter->loads[v]) {
        if (emitter->loaded_count == emitter->loaded_capacity) {
            int32_t capacity = emitter->loaded_capacity ? emitter->loaded_capacity * 2 : 16;
            int32_t *grown = realloc(emitter->loaded, sizeof *grown * (size_t)capacity);
            if (!grown) {
                fail(emitter, "out of memory");
                return "0";
            }
            emitter->loaded = grown;
            emitter->loaded_capacity = capacity;
        }
        emitter->loaded[emitter->loaded_count++] = v;
    }
    emitter->loads[v] = true;
    ocl_emit_fresh(emitter, "t", local, sizeof local);
    ocl_emit_line(emitter, "const %s %s = b%d[%s];", ocl_ctype(emitter->graph->types[v].dtype),
                  local, (int)v, index);
    return memo_add(emitter, v, index, local);
}

const char *ocl_emit_value(ocl_emitter *emitter, int32_t v, const char *index) {
    if (emitter->failed) return "0";
    const char *known = memo_find(emitter, v, index);
    if (known) return known;
    const ocl_graph *graph = emitter->graph;
    const tp_plugin_value *value = &graph->view->values[v];
    if (!value->op) return emit_load(emitter, v, index);
    int32_t op = tpcommon_op_of(graph->view, value);
    tpcommon_kind kind = tpcommon_op_kind(op);
    bool here = graph->fusion.region_of[v] == emitter->region;
    if (op == TP_PLUGIN_OP_FULL) {
        char literal[64];
        ocl_literal(graph->types[v].dtype, tpcommon_attr_float(value, "value", 0.0), literal,
                    sizeof literal);
        return memo_add(emitter, v, index, literal);
    }
    if (op == TP_PLUGIN_OP_ARANGE) {
        char expr[256], local[16];
        arange_expr(value, graph->types[v].dtype, index, expr, sizeof expr);
        ocl_emit_fresh(emitter, "t", local, sizeof local);
        ocl_emit_line(emitter, "const %s %s = %s;", ocl_ctype(graph->types[v].dtype), local, expr);
        return memo_add(emitter, v, index, local);
    }
    if (!here || op == TP_PLUGIN_OP_CONSTANT) return emit_load(emitter, v, index);
    if (kind == TPCOMMON_KIND_POINTWISE) return emit_pointwise(emitter, v, index);
    if (kind == TPCOMMON_KIND_SHAPE) {
        if (op == TP_PLUGIN_OP_CONCAT) return emit_concat(emitter, v, index);
        const char *at = shape_operand_index(emitter, v, op, index);
        const char *local = ocl_emit_value(emitter, value->operands[0], at);
        return memo_add(emitter, v, index, local);
    }
    /* A reduction, row op or matmul of this region not bound at this index:
     * the kernel template must bind it first. */
    fail(emitter, "internal: %%%s (%s) is needed at an index its kernel does not produce",
         value->name, value->op);
    return "0";
}
