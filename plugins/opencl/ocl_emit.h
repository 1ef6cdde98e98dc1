/* Emitting OpenCL C for values of a graph view at an element index.
 *
 * Every value is produced "at a flat C-order index of its own shape". A
 * kernel asks for its region's root at the work-item's index; the emitter
 * walks back through the operands: members of the current region (and the
 * cheap creation ops full/arange, wherever they live) are computed inline,
 * shape ops only remap the index, and anything else is loaded from the
 * value's device buffer (recorded in `loads`, which become kernel
 * arguments). Each (value, index) pair is computed once per scope; index
 * expressions get their own `long` locals so expressions stay short. */
#ifndef TP_OPENCL_EMIT_H
#define TP_OPENCL_EMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "tpcommon_fusion.h"
#include "tpcommon_graph.h"
#include "tpcommon_text.h"

/* What the whole compile knows about the graph, shared by all kernels. */
typedef struct ocl_graph {
    const tp_plugin_graph *view;
    tp_plugin_type *types; /* concrete type per value (symbols bound) */
    int64_t *numel;        /* per value */
    tpcommon_fusion fusion;
    bool uses_f64; /* some value or computation is f64 */
} ocl_graph;

typedef struct ocl_memo_entry ocl_memo_entry;
typedef struct ocl_index_entry ocl_index_entry;

typedef struct ocl_emitter {
    const ocl_graph *graph;
    int32_t region; /* the region being emitted */
    tpcommon_buf *out;
    int indent;
    bool *loads;     /* per value: read from its buffer by this kernel */
    int32_t *loaded; /* the values `loads` marks, in the order first read */
    int32_t loaded_count, loaded_capacity;
    ocl_memo_entry *memo;
    int32_t memo_count, memo_capacity;
    int32_t *memo_heads; /* hash buckets over memo (ocl_emit.c) */
    int32_t memo_buckets;
    ocl_index_entry *indices;
    int32_t index_count, index_capacity;
    int32_t next_local;
    bool failed;
    char error[256];
} ocl_emitter;

void ocl_emitter_init(ocl_emitter *emitter, const ocl_graph *graph, int32_t region,
                      tpcommon_buf *out, bool *loads);
void ocl_emitter_free(ocl_emitter *emitter);

/* Writes one line of code at the current indent. */
void ocl_emit_line(ocl_emitter *emitter, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The local holding `value` at `index` (an identifier or a literal). */
const char *ocl_emit_value(ocl_emitter *emitter, int32_t value, const char *index);
/* A token (identifier or literal) equal to the `long` expression `expr`. */
const char *ocl_emit_index(ocl_emitter *emitter, const char *expr);
/* Records that `local` holds `value` at `index` (kernels bind their
 * reduction / matmul results this way). */
void ocl_emit_bind(ocl_emitter *emitter, int32_t value, const char *index, const char *local);
/* A fresh local name with the given prefix. */
const char *ocl_emit_fresh(ocl_emitter *emitter, const char *prefix, char *buf, size_t size);

/* Scopes: entries made after `ocl_emit_scope_begin` are forgotten at the
 * matching end (a `{ ... }` block the caller writes). */
typedef struct ocl_emit_scope {
    int32_t memo_count, index_count;
} ocl_emit_scope;
ocl_emit_scope ocl_emit_scope_begin(ocl_emitter *emitter);
void ocl_emit_scope_end(ocl_emitter *emitter, ocl_emit_scope scope);

/* ---- helpers shared with the kernel templates ---- */

/* OpenCL C type of a dtype: float double int long uchar. */
const char *ocl_ctype(int32_t dtype);
/* `expr` (of dtype `from`) converted to dtype `to`, as an expression. */
void ocl_convert(int32_t from, int32_t to, const char *expr, char *out, size_t size);
/* A literal of `dtype` with the value `value` converted as the reference
 * kernels convert (floats rounded, integers truncated, bool != 0). */
void ocl_literal(int32_t dtype, double value, char *out, size_t size);
/* Flat index of `in_type` broadcast (NumPy rules) from position `index` of
 * `out_type`, as a token. */
const char *ocl_broadcast_index(ocl_emitter *emitter, const tp_plugin_type *out_type,
                                const tp_plugin_type *in_type, const char *index);
/* Expression for coordinate `axis` of the flat `index` in `type`. */
void ocl_coordinate(const tp_plugin_type *type, int axis, const char *index, char *out,
                    size_t size);
int64_t ocl_stride(const tp_plugin_type *type, int axis);

#endif
