/* TensorPlay — the op ids plugins see (tp_plugin_node.op_id).
 *
 * GENERATED from the core's op table by cmake/PluginOps.cmake; do not edit.
 * Standalone, like plugin.h. Ids are stable across releases: a new op gets
 * the next free id, so a plugin built against this header meets ids >=
 * TP_PLUGIN_OP_COUNT only for ops newer than itself (refuse them in
 * supports).
 *
 * TP_PLUGIN_OP_LIST(X) calls X(ID, "name", KIND, MIN_ARITY, MAX_ARITY) once
 * per op in id order; KIND is POINTWISE, REDUCTION, MATMUL, SHAPE, CREATION
 * or COMPOSITE (TP_PLUGIN_KIND_##KIND in plugin.h). A table indexed by op id
 * can check its length against TP_PLUGIN_OP_COUNT at build time, so an op
 * added to the core cannot be forgotten:
 *   _Static_assert(sizeof table / sizeof table[0] == TP_PLUGIN_OP_COUNT, ...);
 */
#ifndef TENSORPLAY_PLUGIN_OPS_H
#define TENSORPLAY_PLUGIN_OPS_H
/* clang-format off */

#define TP_PLUGIN_OP_NEG                   0
#define TP_PLUGIN_OP_ABS                   1
#define TP_PLUGIN_OP_EXP                   2
#define TP_PLUGIN_OP_LOG                   3
#define TP_PLUGIN_OP_SQRT                  4
#define TP_PLUGIN_OP_RSQRT                 5
#define TP_PLUGIN_OP_SIN                   6
#define TP_PLUGIN_OP_COS                   7
#define TP_PLUGIN_OP_TANH                  8
#define TP_PLUGIN_OP_SIGMOID               9
#define TP_PLUGIN_OP_RELU                  10
#define TP_PLUGIN_OP_ERF                   11
#define TP_PLUGIN_OP_FLOOR                 12
#define TP_PLUGIN_OP_CEIL                  13
#define TP_PLUGIN_OP_SIGN                  14
#define TP_PLUGIN_OP_LOGICAL_NOT           15
#define TP_PLUGIN_OP_CAST                  16
#define TP_PLUGIN_OP_ADD                   17
#define TP_PLUGIN_OP_SUB                   18
#define TP_PLUGIN_OP_MUL                   19
#define TP_PLUGIN_OP_DIV                   20
#define TP_PLUGIN_OP_POW                   21
#define TP_PLUGIN_OP_MAXIMUM               22
#define TP_PLUGIN_OP_MINIMUM               23
#define TP_PLUGIN_OP_LT                    24
#define TP_PLUGIN_OP_LE                    25
#define TP_PLUGIN_OP_GT                    26
#define TP_PLUGIN_OP_GE                    27
#define TP_PLUGIN_OP_EQ                    28
#define TP_PLUGIN_OP_NE                    29
#define TP_PLUGIN_OP_LOGICAL_AND           30
#define TP_PLUGIN_OP_LOGICAL_OR            31
#define TP_PLUGIN_OP_WHERE                 32
#define TP_PLUGIN_OP_SUM                   33
#define TP_PLUGIN_OP_MEAN                  34
#define TP_PLUGIN_OP_MAX                   35
#define TP_PLUGIN_OP_MIN                   36
#define TP_PLUGIN_OP_ARGMAX                37
#define TP_PLUGIN_OP_MATMUL                38
#define TP_PLUGIN_OP_RESHAPE               39
#define TP_PLUGIN_OP_PERMUTE               40
#define TP_PLUGIN_OP_TRANSPOSE             41
#define TP_PLUGIN_OP_EXPAND                42
#define TP_PLUGIN_OP_SLICE                 43
#define TP_PLUGIN_OP_CONCAT                44
#define TP_PLUGIN_OP_SQUEEZE               45
#define TP_PLUGIN_OP_UNSQUEEZE             46
#define TP_PLUGIN_OP_CONSTANT              47
#define TP_PLUGIN_OP_FULL                  48
#define TP_PLUGIN_OP_ARANGE                49
#define TP_PLUGIN_OP_SOFTMAX               50
#define TP_PLUGIN_OP_LOG_SOFTMAX           51
#define TP_PLUGIN_OP_LAYER_NORM            52
#define TP_PLUGIN_OP_GELU                  53
#define TP_PLUGIN_OP_SILU                  54
#define TP_PLUGIN_OP_SOFTPLUS              55
#define TP_PLUGIN_OP_LINEAR                56
#define TP_PLUGIN_OP_GATHER                57
#define TP_PLUGIN_OP_GATHER_ELEMENTS       58
#define TP_PLUGIN_OP_CONV                  59
#define TP_PLUGIN_OP_CONV_TRANSPOSE        60
#define TP_PLUGIN_OP_MAX_POOL              61
#define TP_PLUGIN_OP_AVG_POOL              62

#define TP_PLUGIN_OP_COUNT 63

#define TP_PLUGIN_OP_LIST(X) \
    X(NEG, "neg", POINTWISE, 1, 1) \
    X(ABS, "abs", POINTWISE, 1, 1) \
    X(EXP, "exp", POINTWISE, 1, 1) \
    X(LOG, "log", POINTWISE, 1, 1) \
    X(SQRT, "sqrt", POINTWISE, 1, 1) \
    X(RSQRT, "rsqrt", POINTWISE, 1, 1) \
    X(SIN, "sin", POINTWISE, 1, 1) \
    X(COS, "cos", POINTWISE, 1, 1) \
    X(TANH, "tanh", POINTWISE, 1, 1) \
    X(SIGMOID, "sigmoid", POINTWISE, 1, 1) \
    X(RELU, "relu", POINTWISE, 1, 1) \
    X(ERF, "erf", POINTWISE, 1, 1) \
    X(FLOOR, "floor", POINTWISE, 1, 1) \
    X(CEIL, "ceil", POINTWISE, 1, 1) \
    X(SIGN, "sign", POINTWISE, 1, 1) \
    X(LOGICAL_NOT, "logical_not", POINTWISE, 1, 1) \
    X(CAST, "cast", POINTWISE, 1, 1) \
    X(ADD, "add", POINTWISE, 2, 2) \
    X(SUB, "sub", POINTWISE, 2, 2) \
    X(MUL, "mul", POINTWISE, 2, 2) \
    X(DIV, "div", POINTWISE, 2, 2) \
    X(POW, "pow", POINTWISE, 2, 2) \
    X(MAXIMUM, "maximum", POINTWISE, 2, 2) \
    X(MINIMUM, "minimum", POINTWISE, 2, 2) \
    X(LT, "lt", POINTWISE, 2, 2) \
    X(LE, "le", POINTWISE, 2, 2) \
    X(GT, "gt", POINTWISE, 2, 2) \
    X(GE, "ge", POINTWISE, 2, 2) \
    X(EQ, "eq", POINTWISE, 2, 2) \
    X(NE, "ne", POINTWISE, 2, 2) \
    X(LOGICAL_AND, "logical_and", POINTWISE, 2, 2) \
    X(LOGICAL_OR, "logical_or", POINTWISE, 2, 2) \
    X(WHERE, "where", POINTWISE, 3, 3) \
    X(SUM, "sum", REDUCTION, 1, 1) \
    X(MEAN, "mean", REDUCTION, 1, 1) \
    X(MAX, "max", REDUCTION, 1, 1) \
    X(MIN, "min", REDUCTION, 1, 1) \
    X(ARGMAX, "argmax", REDUCTION, 1, 1) \
    X(MATMUL, "matmul", MATMUL, 2, 2) \
    X(RESHAPE, "reshape", SHAPE, 1, 1) \
    X(PERMUTE, "permute", SHAPE, 1, 1) \
    X(TRANSPOSE, "transpose", SHAPE, 1, 1) \
    X(EXPAND, "expand", SHAPE, 1, 1) \
    X(SLICE, "slice", SHAPE, 1, 1) \
    X(CONCAT, "concat", SHAPE, 1, 64) \
    X(SQUEEZE, "squeeze", SHAPE, 1, 1) \
    X(UNSQUEEZE, "unsqueeze", SHAPE, 1, 1) \
    X(CONSTANT, "constant", CREATION, 0, 0) \
    X(FULL, "full", CREATION, 0, 0) \
    X(ARANGE, "arange", CREATION, 0, 0) \
    X(SOFTMAX, "softmax", COMPOSITE, 1, 1) \
    X(LOG_SOFTMAX, "log_softmax", COMPOSITE, 1, 1) \
    X(LAYER_NORM, "layer_norm", COMPOSITE, 1, 3) \
    X(GELU, "gelu", COMPOSITE, 1, 1) \
    X(SILU, "silu", COMPOSITE, 1, 1) \
    X(SOFTPLUS, "softplus", COMPOSITE, 1, 1) \
    X(LINEAR, "linear", COMPOSITE, 2, 3) \
    X(GATHER, "gather", SHAPE, 2, 2) \
    X(GATHER_ELEMENTS, "gather_elements", SHAPE, 2, 2) \
    X(CONV, "conv", MATMUL, 2, 3) \
    X(CONV_TRANSPOSE, "conv_transpose", MATMUL, 2, 3) \
    X(MAX_POOL, "max_pool", REDUCTION, 1, 1) \
    X(AVG_POOL, "avg_pool", REDUCTION, 1, 1)

/* clang-format on */
#endif
