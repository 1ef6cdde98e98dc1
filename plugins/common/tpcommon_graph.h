/* plugins/common — reading the plugin graph view (plugin.h) the way every
 * backend needs: what kind of op a node is, its attributes by name, dtype
 * names and sizes, the dtype an op computes in (tensor.h's promotion rules),
 * and how often each value is used.
 *
 * Built only on include/tensorplay/plugin.h: the op kinds and dtype rules are
 * restated here from the public contract (op names and tensor.h's header
 * comment), never read from the core. Backend-neutral: the LLVM, OpenCL and
 * CUDA backends all compile this file into themselves. */
#ifndef TPCOMMON_GRAPH_H
#define TPCOMMON_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* What a backend does with a node. */
typedef enum tpcommon_kind {
    TPCOMMON_KIND_INPUT = 0, /* a graph input */
    TPCOMMON_KIND_POINTWISE, /* elementwise (unary, binary, where, cast, gelu, silu, softplus) */
    TPCOMMON_KIND_REDUCTION, /* sum mean max min argmax */
    TPCOMMON_KIND_ROW,       /* softmax log_softmax layer_norm: a reduction and a map over rows */
    TPCOMMON_KIND_MATMUL,    /* matmul, linear */
    TPCOMMON_KIND_SHAPE,     /* reshape permute transpose expand slice concat squeeze unsqueeze */
    TPCOMMON_KIND_CREATION,  /* constant full arange */
    TPCOMMON_KIND_UNKNOWN,   /* an op this helper does not know (a newer core) */
} tpcommon_kind;

/* The op of a value, decoded once. */
typedef enum tpcommon_op {
    TPCOMMON_OP_NONE = 0,
    TPCOMMON_OP_NEG,
    TPCOMMON_OP_ABS,
    TPCOMMON_OP_EXP,
    TPCOMMON_OP_LOG,
    TPCOMMON_OP_SQRT,
    TPCOMMON_OP_RSQRT,
    TPCOMMON_OP_SIN,
    TPCOMMON_OP_COS,
    TPCOMMON_OP_TANH,
    TPCOMMON_OP_SIGMOID,
    TPCOMMON_OP_RELU,
    TPCOMMON_OP_ERF,
    TPCOMMON_OP_FLOOR,
    TPCOMMON_OP_CEIL,
    TPCOMMON_OP_SIGN,
    TPCOMMON_OP_LOGICAL_NOT,
    TPCOMMON_OP_CAST,
    TPCOMMON_OP_ADD,
    TPCOMMON_OP_SUB,
    TPCOMMON_OP_MUL,
    TPCOMMON_OP_DIV,
    TPCOMMON_OP_POW,
    TPCOMMON_OP_MAXIMUM,
    TPCOMMON_OP_MINIMUM,
    TPCOMMON_OP_LT, /* lt ... logical_or stay adjacent (tpcommon_graph.c's predicates) */
    TPCOMMON_OP_LE,
    TPCOMMON_OP_GT,
    TPCOMMON_OP_GE,
    TPCOMMON_OP_EQ,
    TPCOMMON_OP_NE,
    TPCOMMON_OP_LOGICAL_AND,
    TPCOMMON_OP_LOGICAL_OR,
    TPCOMMON_OP_WHERE,
    TPCOMMON_OP_SUM,
    TPCOMMON_OP_MEAN,
    TPCOMMON_OP_MAX,
    TPCOMMON_OP_MIN,
    TPCOMMON_OP_ARGMAX,
    TPCOMMON_OP_MATMUL,
    TPCOMMON_OP_RESHAPE,
    TPCOMMON_OP_PERMUTE,
    TPCOMMON_OP_TRANSPOSE,
    TPCOMMON_OP_EXPAND,
    TPCOMMON_OP_SLICE,
    TPCOMMON_OP_CONCAT,
    TPCOMMON_OP_SQUEEZE,
    TPCOMMON_OP_UNSQUEEZE,
    TPCOMMON_OP_CONSTANT,
    TPCOMMON_OP_FULL,
    TPCOMMON_OP_ARANGE,
    TPCOMMON_OP_SOFTMAX,
    TPCOMMON_OP_LOG_SOFTMAX,
    TPCOMMON_OP_LAYER_NORM,
    TPCOMMON_OP_GELU,
    TPCOMMON_OP_SILU,
    TPCOMMON_OP_SOFTPLUS,
    TPCOMMON_OP_LINEAR,
    TPCOMMON_OP_UNKNOWN,
    TPCOMMON_OP_COUNT
} tpcommon_op;

/* Op code of a value's op name (TPCOMMON_OP_NONE for an input, TPCOMMON_OP_UNKNOWN for
 * a name this helper does not know). */
tpcommon_op tpcommon_op_of(const tp_plugin_value *value);
const char *tpcommon_op_name(tpcommon_op op);
tpcommon_kind tpcommon_op_kind(tpcommon_op op);
/* True for the composite ops of the op table (softmax ... linear). */
bool tpcommon_op_is_composite(tpcommon_op op);

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
/* The dtype a pointwise/reduction/matmul/composite node computes in, from its
 * operand types (tensor.h's rules); the node's result dtype is in its type. */
int32_t tpcommon_compute_dtype(const tp_plugin_graph *graph, const tp_plugin_value *value);
/* The same rule from the op and its operand dtypes alone, for nodes a backend
 * makes itself (decompositions): `operands` holds `count` dtypes; `own` is
 * the dtype of an op without operands (creation ops, inputs). */
int32_t tpcommon_op_compute_dtype(tpcommon_op op, const int32_t *operands, int32_t count,
                                  int32_t own);
/* The result dtype of `op` computing in `compute`: bool for comparisons and
 * logical ops, `cast_to` for cast, i64 for argmax, `compute` otherwise. */
int32_t tpcommon_op_result_dtype(tpcommon_op op, int32_t compute, int32_t cast_to);

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
