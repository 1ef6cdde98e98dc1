/* plugins/common — reading the plugin graph view (plugin.h) the way every
 * backend needs: what kind of op a node is, its attributes by name, dtype
 * names and sizes, the dtype an op computes in (tensor.h's promotion rules),
 * and how often each value is used.
 *
 * Built only on include/tensorplay/plugin.h: the op kinds and dtype rules are
 * restated here from the public contract (op names and tensor.h's header
 * comment), never read from the core. Backend-neutral: the LLVM, OpenCL and
 * CUDA backends all compile this file into themselves. */
#ifndef TPC_GRAPH_H
#define TPC_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* What a backend does with a node. */
typedef enum tpc_kind {
    TPC_KIND_INPUT = 0, /* a graph input */
    TPC_KIND_POINTWISE, /* elementwise (unary, binary, where, cast, gelu, silu, softplus) */
    TPC_KIND_REDUCTION, /* sum mean max min argmax */
    TPC_KIND_ROW,       /* softmax log_softmax layer_norm: a reduction and a map over rows */
    TPC_KIND_MATMUL,    /* matmul, linear */
    TPC_KIND_SHAPE,     /* reshape permute transpose expand slice concat squeeze unsqueeze */
    TPC_KIND_CREATION,  /* constant full arange */
    TPC_KIND_UNKNOWN,   /* an op this helper does not know (a newer core) */
} tpc_kind;

/* The op of a value, decoded once. */
typedef enum tpc_op {
    TPC_OP_NONE = 0,
    TPC_OP_NEG,
    TPC_OP_ABS,
    TPC_OP_EXP,
    TPC_OP_LOG,
    TPC_OP_SQRT,
    TPC_OP_RSQRT,
    TPC_OP_SIN,
    TPC_OP_COS,
    TPC_OP_TANH,
    TPC_OP_SIGMOID,
    TPC_OP_RELU,
    TPC_OP_ERF,
    TPC_OP_FLOOR,
    TPC_OP_CEIL,
    TPC_OP_SIGN,
    TPC_OP_LOGICAL_NOT,
    TPC_OP_CAST,
    TPC_OP_ADD,
    TPC_OP_SUB,
    TPC_OP_MUL,
    TPC_OP_DIV,
    TPC_OP_POW,
    TPC_OP_MAXIMUM,
    TPC_OP_MINIMUM,
    TPC_OP_LT, /* lt ... logical_or stay adjacent (tpc_graph.c's predicates) */
    TPC_OP_LE,
    TPC_OP_GT,
    TPC_OP_GE,
    TPC_OP_EQ,
    TPC_OP_NE,
    TPC_OP_LOGICAL_AND,
    TPC_OP_LOGICAL_OR,
    TPC_OP_WHERE,
    TPC_OP_SUM,
    TPC_OP_MEAN,
    TPC_OP_MAX,
    TPC_OP_MIN,
    TPC_OP_ARGMAX,
    TPC_OP_MATMUL,
    TPC_OP_RESHAPE,
    TPC_OP_PERMUTE,
    TPC_OP_TRANSPOSE,
    TPC_OP_EXPAND,
    TPC_OP_SLICE,
    TPC_OP_CONCAT,
    TPC_OP_SQUEEZE,
    TPC_OP_UNSQUEEZE,
    TPC_OP_CONSTANT,
    TPC_OP_FULL,
    TPC_OP_ARANGE,
    TPC_OP_SOFTMAX,
    TPC_OP_LOG_SOFTMAX,
    TPC_OP_LAYER_NORM,
    TPC_OP_GELU,
    TPC_OP_SILU,
    TPC_OP_SOFTPLUS,
    TPC_OP_LINEAR,
    TPC_OP_UNKNOWN,
    TPC_OP_COUNT
} tpc_op;

/* Op code of a value's op name (TPC_OP_NONE for an input, TPC_OP_UNKNOWN for
 * a name this helper does not know). */
tpc_op tpc_op_of(const tp_plugin_value *value);
const char *tpc_op_name(tpc_op op);
tpc_kind tpc_op_kind(tpc_op op);
/* True for the composite ops of the op table (softmax ... linear). */
bool tpc_op_is_composite(tpc_op op);

/* ---- attributes by name ---- */
const tp_plugin_attr *tpc_attr_find(const tp_plugin_value *value, const char *name);
int64_t tpc_attr_int(const tp_plugin_value *value, const char *name, int64_t fallback);
double tpc_attr_float(const tp_plugin_value *value, const char *name, double fallback);
/* Elements of an INTS attribute; *count 0 and NULL when absent. */
const int64_t *tpc_attr_ints(const tp_plugin_value *value, const char *name, int32_t *count);
/* The payload of a `constant`: the TENSOR attribute named "value" (the .tpir
 * name), else the node's first TENSOR attribute; NULL when it has none. */
const tp_plugin_attr *tpc_attr_tensor(const tp_plugin_value *value);

/* ---- dtypes ---- */
const char *tpc_dtype_name(int32_t dtype); /* "f32" ... "bool"; "?" otherwise */
size_t tpc_dtype_size(int32_t dtype);
bool tpc_dtype_is_float(int32_t dtype);
bool tpc_dtype_is_integer(int32_t dtype); /* i32 i64, not bool */
/* tensor.h's promote(a, b): category bool < integer < float, then width;
 * an integer meeting a float gives the float. */
int32_t tpc_dtype_promote(int32_t a, int32_t b);
/* The dtype a pointwise/reduction/matmul/composite node computes in, from its
 * operand types (tensor.h's rules); the node's result dtype is in its type. */
int32_t tpc_compute_dtype(const tp_plugin_graph *graph, const tp_plugin_value *value);
/* The same rule from the op and its operand dtypes alone, for nodes a backend
 * makes itself (decompositions): `operands` holds `count` dtypes; `own` is
 * the dtype of an op without operands (creation ops, inputs). */
int32_t tpc_op_compute_dtype(tpc_op op, const int32_t *operands, int32_t count, int32_t own);
/* The result dtype of `op` computing in `compute`: bool for comparisons and
 * logical ops, `cast_to` for cast, i64 for argmax, `compute` otherwise. */
int32_t tpc_op_result_dtype(tpc_op op, int32_t compute, int32_t cast_to);

/* ---- types ---- */
int64_t tpc_numel(const tp_plugin_type *type); /* -1 when a dim is symbolic */
bool tpc_same_shape(const tp_plugin_type *a, const tp_plugin_type *b);
/* True when elements laid out with `strides` (in elements) are in C order
 * with no gaps, size-1 dimensions ignored: a strided view that is a plain
 * contiguous buffer. */
bool tpc_strides_contiguous(int32_t ndim, const int64_t *dims, const int64_t *strides);
/* Writes "f32[2, 3]" (symbols by name when graph is given). */
char *tpc_type_text(const tp_plugin_graph *graph, const tp_plugin_type *type, char *buf,
                    size_t size);

/* ---- uses ---- */
/* uses[v] = number of operand slots reading v plus the number of times v is
 * returned. Caller frees with free(). NULL when out of memory. */
int32_t *tpc_count_uses(const tp_plugin_graph *graph);
bool tpc_is_output(const tp_plugin_graph *graph, int32_t value);

#endif
