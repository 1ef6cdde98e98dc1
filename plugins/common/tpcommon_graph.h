/* plugins/common — reading the plugin graph view (plugin.h) the way every
 * backend needs: what a node is (its op id, the backend-side kind of the op,
 * its compute dtype, all read from tp_plugin_graph.nodes), its attributes by
 * name, dtype names and sizes, and how often each value is used.
 *
 * Built only on include/tensorplay/plugin.h and plugin_ops.h: op knowledge
 * comes from the view's nodes (the core's op table), never from op names.
 * The one per-op table kept here (the backend-side kind, which tells row ops
 * apart from other composites) is indexed by op id and checked against
 * TP_PLUGIN_OP_COUNT at build time. Backend-neutral: the LLVM, OpenCL and
 * CUDA backends all compile this file into themselves. */
#ifndef TPCOMMON_GRAPH_H
#define TPCOMMON_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"

/* What a backend does with a node: the core's kind (plugin.h), except that
 * each composite op is given the kind of kernel it lowers to. */
typedef enum tpcommon_kind {
    TPCOMMON_KIND_INPUT = 0, /* a graph input */
    TPCOMMON_KIND_POINTWISE, /* elementwise (unary, binary, where, cast, gelu, silu, softplus) */
    TPCOMMON_KIND_REDUCTION, /* sum mean max min argmax */
    TPCOMMON_KIND_ROW,       /* softmax log_softmax layer_norm: a reduction and a map over rows */
    TPCOMMON_KIND_MATMUL,    /* matmul, linear */
    TPCOMMON_KIND_SHAPE,     /* reshape permute transpose expand slice concat squeeze unsqueeze */
    TPCOMMON_KIND_CREATION,  /* constant full arange */
    TPCOMMON_KIND_INDEXING,  /* gather gather_elements: reads at run-time indices */
    TPCOMMON_KIND_WINDOW,    /* conv conv_transpose max_pool avg_pool: sliding windows */
    TPCOMMON_KIND_UNKNOWN,   /* an op newer than plugin_ops.h, or a view without nodes */
} tpcommon_kind;

/* The op id tpcommon_op_of gives a graph input. */
#define TPCOMMON_OP_INPUT (-1)
/* The op id tpcommon_op_of gives when the view has no nodes (a revision-1
 * core); like every id >= TP_PLUGIN_OP_COUNT, tpcommon_op_known is false. */
#define TPCOMMON_OP_UNKNOWN INT32_MAX

/* True when the view carries tp_plugin_graph.nodes (revision 2 on). */
bool tpcommon_graph_has_nodes(const tp_plugin_graph *graph);
/* The node of `value`, which points into graph->values; NULL when the view
 * has no nodes. */
const tp_plugin_node *tpcommon_node_of(const tp_plugin_graph *graph, const tp_plugin_value *value);
/* The op id (TP_PLUGIN_OP_*) of `value` (which points into graph->values):
 * TPCOMMON_OP_INPUT for a graph input, TPCOMMON_OP_UNKNOWN without nodes. */
int32_t tpcommon_op_of(const tp_plugin_graph *graph, const tp_plugin_value *value);
/* True for an id of plugin_ops.h (0 .. TP_PLUGIN_OP_COUNT - 1). */
bool tpcommon_op_known(int32_t op);
/* The op's .tpir name ("add"), "input" for TPCOMMON_OP_INPUT, "?" otherwise. */
const char *tpcommon_op_name(int32_t op);
/* The backend-side kind of an op id (TPCOMMON_KIND_INPUT for
 * TPCOMMON_OP_INPUT, TPCOMMON_KIND_UNKNOWN for an id this build does not know). */
tpcommon_kind tpcommon_op_kind(int32_t op);
/* True for the composite ops of the op table (softmax ... linear). */
bool tpcommon_op_is_composite(int32_t op);

/* ---- attributes by name ---- */
const tp_plugin_attr *tpcommon_attr_find(const tp_plugin_value *value, const char *name);
int64_t tpcommon_attr_int(const tp_plugin_value *value, const char *name, int64_t fallback);
double tpcommon_attr_float(const tp_plugin_value *value, const char *name, double fallback);
/* Elements of an INTS attribute; *count 0 and NULL when absent. */
const int64_t *tpcommon_attr_ints(const tp_plugin_value *value, const char *name, int32_t *count);
/* The payload of a `constant`: the TENSOR attribute named "value" (the .tpir
 * name), else the node's first TENSOR attribute; NULL when it has none. */
const tp_plugin_attr *tpcommon_attr_tensor(const tp_plugin_value *value);

/* ---- dtypes ---- */
const char *tpcommon_dtype_name(int32_t dtype); /* "f32" ... "bool"; "?" otherwise */
size_t tpcommon_dtype_size(int32_t dtype);
bool tpcommon_dtype_is_float(int32_t dtype);
bool tpcommon_dtype_is_integer(int32_t dtype); /* i32 i64, not bool */
/* tensor.h's promote(a, b): category bool < integer < float, then width;
 * an integer meeting a float gives the float. */
int32_t tpcommon_dtype_promote(int32_t a, int32_t b);
/* The dtype `value` (a node of graph->values) computes in, as the view's
 * node says (for an input: its dtype). */
int32_t tpcommon_compute_dtype(const tp_plugin_graph *graph, const tp_plugin_value *value);
/* The op table's compute-dtype rule from an op id and its operand dtypes
 * alone, for nodes a backend makes itself (decompositions), which the view
 * cannot describe: `operands` holds `count` dtypes; `own` is the dtype of an
 * op without operands (creation ops, inputs). */
int32_t tpcommon_op_compute_dtype(int32_t op, const int32_t *operands, int32_t count, int32_t own);
/* The result dtype of `op` computing in `compute`: bool for comparisons and
 * logical ops, `cast_to` for cast, i64 for argmax, `compute` otherwise. */
int32_t tpcommon_op_result_dtype(int32_t op, int32_t compute, int32_t cast_to);

/* ---- types ---- */
int64_t tpcommon_numel(const tp_plugin_type *type); /* -1 when a dim is symbolic */
bool tpcommon_same_shape(const tp_plugin_type *a, const tp_plugin_type *b);
/* True when elements laid out with `strides` (in elements) are in C order
 * with no gaps, size-1 dimensions ignored: a strided view that is a plain
 * contiguous buffer. */
bool tpcommon_strides_contiguous(int32_t ndim, const int64_t *dims, const int64_t *strides);
/* Writes "f32[2, 3]" (symbols by name when graph is given). */
char *tpcommon_type_text(const tp_plugin_graph *graph, const tp_plugin_type *type, char *buf,
                         size_t size);

/* ---- uses ---- */
/* uses[v] = number of operand slots reading v plus the number of times v is
 * returned. Caller frees with free(). NULL when out of memory. */
int32_t *tpcommon_count_uses(const tp_plugin_graph *graph);
bool tpcommon_is_output(const tp_plugin_graph *graph, int32_t value);

#endif
