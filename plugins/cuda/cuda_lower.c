/* Lowering a plugin graph view into the cuda plugin's graph (cuda_graph.h):
 * symbols bound to the sizes in the input metadata; every op mapped to one
 * of the node kinds; composites decomposed here, with the decompositions the
 * op table documents (softmax = exp(x - max) / sum, layer_norm through two
 * means, gelu through erf or tanh, silu = x * sigmoid(x), softplus through
 * where(beta x > threshold, ...), linear = matmul(x, weight^T) + bias);
 * transpose/squeeze/unsqueeze become permute/reshape views; arange is
 * evaluated on the host into a constant (NumPy's rule, as the reference).
 * Pointwise compute dtypes follow tensor.h's promotion rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_graph.h"

/* ---- dtypes --------------------------------------------------------------------------- */

size_t cu_dtype_size(int32_t dtype) {
    switch (dtype) {
    case TP_PLUGIN_F32:
    case TP_PLUGIN_I32:
        return 4;
    case TP_PLUGIN_F64:
    case TP_PLUGIN_I64:
        return 8;
    case TP_PLUGIN_BOOL:
        return 1;
    default:
        return 0;
    }
}

bool cu_dtype_is_float(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64;
}

static int dtype_rank(int32_t dtype) {
    switch (dtype) {
    case TP_PLUGIN_BOOL:
        return 0;
    case TP_PLUGIN_I32:
        return 1;
    case TP_PLUGIN_I64:
        return 2;
    case TP_PLUGIN_F32:
        return 3;
    default:
        return 4;
    }
}

int32_t cu_dtype_promote(int32_t a, int32_t b) {
    if (cu_dtype_is_float(a) != cu_dtype_is_float(b)) return cu_dtype_is_float(a) ? a : b;
    return dtype_rank(a) >= dtype_rank(b) ? a : b;
}

static int32_t float_of(int32_t dtype) {
    return cu_dtype_is_float(dtype) ? dtype : TP_PLUGIN_F32;
}

int64_t cu_numel(const cu_node *node) {
    int64_t count = 1;
    for (int d = 0; d < node->ndim; d++) count *= node->dims[d];
    return count;
}

/* ---- pointwise dtype rules (tensor.h) ------------------------------------------------- */

typedef enum rule {
    KEEP,
    FLOAT,
    PREDICATE1,
    CAST,
    ARITHMETIC,
    TRUE_DIVIDE,
    PREDICATE2,
    WHERE
} rule;

static const struct {
    const char *name;
    rule rule;
} pointwise_rules[] = {
    {"neg", KEEP},
    {"abs", KEEP},
    {"exp", FLOAT},
    {"log", FLOAT},
    {"sqrt", FLOAT},
    {"rsqrt", FLOAT},
    {"sin", FLOAT},
    {"cos", FLOAT},
    {"tanh", FLOAT},
    {"sigmoid", FLOAT},
    {"relu", KEEP},
    {"erf", FLOAT},
    {"floor", KEEP},
    {"ceil", KEEP},
    {"sign", KEEP},
    {"logical_not", PREDICATE1},
    {"cast", CAST},
    {"add", ARITHMETIC},
    {"sub", ARITHMETIC},
    {"mul", ARITHMETIC},
    {"div", TRUE_DIVIDE},
    {"pow", ARITHMETIC},
    {"maximum", ARITHMETIC},
    {"minimum", ARITHMETIC},
    {"lt", PREDICATE2},
    {"le", PREDICATE2},
    {"gt", PREDICATE2},
    {"ge", PREDICATE2},
    {"eq", PREDICATE2},
    {"ne", PREDICATE2},
    {"logical_and", PREDICATE2},
    {"logical_or", PREDICATE2},
    {"where", WHERE},
    {"copy", KEEP},
};

static int find_rule(const char *op) {
    for (size_t i = 0; i < sizeof pointwise_rules / sizeof pointwise_rules[0]; i++)
        if (strcmp(pointwise_rules[i].name, op) == 0) return (int)i;
    return -1;
}

/* Compute and result dtypes of a pointwise op over operand dtypes `in`. */
static void pointwise_dtypes(rule r, const int32_t *in, int32_t cast_to, int32_t *compute,
                             int32_t *result) {
    switch (r) {
    case KEEP:
    case PREDICATE1:
    case CAST:
        *compute = in[0];
        break;
    case FLOAT:
        *compute = float_of(in[0]);
        break;
    case ARITHMETIC:
    case PREDICATE2:
        *compute = cu_dtype_promote(in[0], in[1]);
        break;
    case TRUE_DIVIDE:
        *compute = float_of(cu_dtype_promote(in[0], in[1]));
        break;
    case WHERE:
        *compute = cu_dtype_promote(in[1], in[2]);
        break;
    }
    *result = r == PREDICATE1 || r == PREDICATE2 ? TP_PLUGIN_BOOL : r == CAST ? cast_to : *compute;
}

/* ---- building nodes ------------------------------------------------------------------- */

typedef struct lowering {
    cu_graph *graph;
    char *error;
    size_t error_size;
    bool failed;
} lowering;

static bool fail(lowering *l, const char *format, const char *a, const char *b) {
    if (!l->failed) snprintf(l->error, l->error_size, format, a, b);
    l->failed = true;
    return false;
}

/* Appends a node (operands copied); returns its index or -1. */
static int add_node(lowering *l, cu_kind kind, const char *op, const char *name, int32_t dtype,
                    int ndim, const int64_t *dims, const int *operands, int num_operands) {
    cu_graph *g = l->graph;
    if (l->failed) return -1;
    if (g->num_nodes == g->capacity) {
        int capacity = g->capacity ? g->capacity * 2 : 64;
        cu_node *grown = realloc(g->nodes, (size_t)capacity * sizeof *grown);
        if (!grown) return fail(l, "out of memory lowering graph%s%s", "", ""), -1;
        g->nodes = grown;
        g->capacity = capacity;
    }
    cu_node *node = &g->nodes[g->num_nodes];
    memset(node, 0, sizeof *node);
    node->kind = kind;
    node->op = op;
    node->name = name;
    node->dtype = dtype;
    node->compute = dtype;
    node->ndim = ndim;
    if (ndim) memcpy(node->dims, dims, sizeof(int64_t) * (size_t)ndim);
    node->num_operands = num_operands;
    node->operands = calloc((size_t)num_operands + 1, sizeof(int));
    if (!node->operands) return fail(l, "out of memory lowering graph%s%s", "", ""), -1;
    for (int i = 0; i < num_operands; i++) node->operands[i] = operands[i];
    return g->num_nodes++;
}

static cu_node *node_at(lowering *l, int index) {
    return &l->graph->nodes[index];
}

/* A pointwise node whose shape is the broadcast of its operands'. */
static int pointwise(lowering *l, const char *op, const char *name, const int *operands, int count,
                     int32_t cast_to) {
    if (l->failed) return -1;
    int64_t dims[CU_MAX_DIMS];
    int ndim = 0;
    int32_t in[3];
    for (int k = 0; k < count; k++)
        if (node_at(l, operands[k])->ndim > ndim) ndim = node_at(l, operands[k])->ndim;
    for (int d = 0; d < ndim; d++) dims[d] = 1;
    for (int k = 0; k < count; k++) { /* NumPy broadcasting, right-aligned */
        const cu_node *operand = node_at(l, operands[k]);
        in[k] = operand->dtype;
        for (int d = 0; d < operand->ndim; d++) {
            int64_t *target = &dims[ndim - operand->ndim + d];
            if (*target == 1) *target = operand->dims[d];
        }
    }
    int32_t compute = TP_PLUGIN_F32, result = TP_PLUGIN_F32;
    pointwise_dtypes(pointwise_rules[find_rule(op)].rule, in, cast_to, &compute, &result);
    int index = add_node(l, CU_POINTWISE, op, name, result, ndim, dims, operands, count);
    if (index >= 0) node_at(l, index)->compute = compute;
    return index;
}

static int unary(lowering *l, const char *op, const char *name, int x) {
    return pointwise(l, op, name, &x, 1, 0);
}

static int binary(lowering *l, const char *op, const char *name, int a, int b) {
    int operands[2] = {a, b};
    return pointwise(l, op, name, operands, 2, 0);
}

/* A 0-d literal of `dtype`. */
static int scalar(lowering *l, const char *name, int32_t dtype, double value) {
    int index = add_node(l, CU_FULL, "full", name, dtype, 0, NULL, NULL, 0);
    if (index >= 0) node_at(l, index)->value = value;
    return index;
}

static int scalar_like(lowering *l, const char *name, int like, double value) {
    return scalar(l, name, node_at(l, like)->dtype, value);
}

static int as_float(lowering *l, const char *name, int x) {
    int32_t dtype = node_at(l, x)->dtype;
    return cu_dtype_is_float(dtype) ? x : pointwise(l, "cast", name, &x, 1, TP_PLUGIN_F32);
}

static int reduce(lowering *l, const char *op, const char *name, int x, uint32_t mask,
                  bool keepdim) {
    const cu_node *in = node_at(l, x);
    int64_t dims[CU_MAX_DIMS];
    int ndim = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!(mask & (1u << d)))
            dims[ndim++] = in->dims[d];
        else if (keepdim)
            dims[ndim++] = 1;
    }
    int32_t dtype = in->dtype;
    if (strcmp(op, "sum") == 0 && !cu_dtype_is_float(dtype)) dtype = TP_PLUGIN_I64;
    if (strcmp(op, "mean") == 0) dtype = float_of(dtype);
    int index = add_node(l, CU_REDUCE, op, name, dtype, ndim, dims, &x, 1);
    if (index >= 0) {
        node_at(l, index)->reduce_mask = mask;
        node_at(l, index)->keepdim = keepdim;
    }
    return index;
}

/* ---- attributes ----------------------------------------------------------------------- */

static const tp_plugin_attr *find_attr(const tp_plugin_value *value, const char *name, int type) {
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (strcmp(value->attrs[i].name, name) == 0 && value->attrs[i].type == type)
            return &value->attrs[i];
    return NULL;
}

static int64_t attr_int(const tp_plugin_value *value, const char *name, int64_t fallback) {
    const tp_plugin_attr *attr = find_attr(value, name, TP_PLUGIN_ATTR_INT);
    if (!attr) attr = find_attr(value, name, TP_PLUGIN_ATTR_BOOL);
    if (!attr) attr = find_attr(value, name, TP_PLUGIN_ATTR_DTYPE);
    return attr ? attr->i : fallback;
}

static double attr_float(const tp_plugin_value *value, const char *name, double fallback) {
    const tp_plugin_attr *attr = find_attr(value, name, TP_PLUGIN_ATTR_FLOAT);
    return attr ? attr->f : fallback;
}

static int normalize_axis(int64_t axis, int ndim) {
    if (axis < 0) axis += ndim;
    return axis < 0 ? 0 : axis >= ndim ? (ndim > 0 ? ndim - 1 : 0) : (int)axis;
}

/* Bits of the axes from `first` to the last. */
static uint32_t axes_from(int first, int ndim) {
    uint32_t mask = 0;
    for (int d = first; d < ndim; d++) mask |= 1u << d;
    return mask;
}

/* ---- composites ----------------------------------------------------------------------- */

static int lower_softmax(lowering *l, const tp_plugin_value *value, const int *in, bool log) {
    const char *name = value->name;
    int x = as_float(l, name, in[0]);
    int ndim = node_at(l, x)->ndim;
    uint32_t mask = ndim ? 1u << normalize_axis(attr_int(value, "axis", -1), ndim) : 0;
    int max = reduce(l, "max", name, x, mask, true);
    int shifted = binary(l, "sub", name, x, max);
    int exps = unary(l, "exp", name, shifted);
    int total = reduce(l, "sum", name, exps, mask, true);
    if (!log) return binary(l, "div", name, exps, total);
    return binary(l, "sub", name, shifted, unary(l, "log", name, total));
}

static int lower_layer_norm(lowering *l, const tp_plugin_value *value, const int *in) {
    const char *name = value->name;
    int x = as_float(l, name, in[0]);
    int ndim = node_at(l, x)->ndim;
    uint32_t mask = axes_from(normalize_axis(attr_int(value, "axis", -1), ndim), ndim);
    int mean = reduce(l, "mean", name, x, mask, true);
    int centered = binary(l, "sub", name, x, mean);
    int squares = binary(l, "mul", name, centered, centered);
    int variance = reduce(l, "mean", name, squares, mask, true);
    int eps = scalar_like(l, name, variance, attr_float(value, "eps", 1e-5));
    int inverse = unary(l, "rsqrt", name, binary(l, "add", name, variance, eps));
    int y = binary(l, "mul", name, centered, inverse);
    if (value->num_operands > 1) y = binary(l, "mul", name, y, in[1]);
    if (value->num_operands > 2) y = binary(l, "add", name, y, in[2]);
    return y;
}

static int scale(lowering *l, const char *name, int x, double factor) {
    return binary(l, "mul", name, x, scalar_like(l, name, x, factor));
}

static int offset(lowering *l, const char *name, int x, double amount) {
    return binary(l, "add", name, x, scalar_like(l, name, x, amount));
}

static int lower_gelu(lowering *l, const tp_plugin_value *value, const int *in) {
    const char *name = value->name;
    int x = as_float(l, name, in[0]), curve;
    if (attr_int(value, "approximate", TP_PLUGIN_GELU_NONE) == TP_PLUGIN_GELU_TANH) {
        int cube = binary(l, "mul", name, binary(l, "mul", name, x, x), x);
        int inner = binary(l, "add", name, x, scale(l, name, cube, 0.044715));
        curve = unary(l, "tanh", name, scale(l, name, inner, 0.7978845608028654));
    } else {
        curve = unary(l, "erf", name, scale(l, name, x, 0.7071067811865476));
    }
    return binary(l, "mul", name, scale(l, name, x, 0.5), offset(l, name, curve, 1.0));
}

static int lower_softplus(lowering *l, const tp_plugin_value *value, const int *in) {
    const char *name = value->name;
    double beta = attr_float(value, "beta", 1.0);
    int x = as_float(l, name, in[0]);
    int scaled = scale(l, name, x, beta);
    int threshold = scalar_like(l, name, scaled, attr_float(value, "threshold", 20.0));
    int linear_region = binary(l, "gt", name, scaled, threshold);
    int logs = unary(l, "log", name, offset(l, name, unary(l, "exp", name, scaled), 1.0));
    int operands[3] = {linear_region, x, scale(l, name, logs, 1.0 / beta)};
    return pointwise(l, "where", name, operands, 3, 0);
}

/* A view node of `x` with explicit result dims. */
static int view_node(lowering *l, cu_view_op op, const char *name, int x, int ndim,
                     const int64_t *dims) {
    int index = add_node(l, CU_VIEW, "view", name, node_at(l, x)->dtype, ndim, dims, &x, 1);
    if (index >= 0) node_at(l, index)->view_op = op;
    return index;
}

static int permute(lowering *l, const char *name, int x, const int *perm) {
    const cu_node *in = node_at(l, x);
    int ndim = in->ndim;
    int64_t dims[CU_MAX_DIMS];
    for (int d = 0; d < ndim; d++) dims[d] = in->dims[perm[d]];
    int index = view_node(l, CU_VIEW_PERMUTE, name, x, ndim, dims);
    if (index >= 0) memcpy(node_at(l, index)->perm, perm, sizeof(int) * (size_t)ndim);
    return index;
}

/* numpy.matmul result shape. */
static int matmul(lowering *l, const char *name, int a, int b, const int64_t *dims, int ndim) {
    int operands[2] = {a, b};
    int32_t dtype = cu_dtype_promote(node_at(l, a)->dtype, node_at(l, b)->dtype);
    int index = add_node(l, CU_MATMUL, "matmul", name, dtype, ndim, dims, operands, 2);
    if (index >= 0) node_at(l, index)->compute = dtype;
    return index;
}

static int lower_linear(lowering *l, const tp_plugin_value *value, const int *in) {
    const char *name = value->name;
    int perm[2] = {1, 0};
    int weight_t = permute(l, name, in[1], perm);
    int64_t dims[CU_MAX_DIMS];
    const cu_node *x = node_at(l, in[0]);
    int ndim = x->ndim;
    memcpy(dims, x->dims, sizeof dims);
    dims[ndim - 1] = node_at(l, in[1])->dims[0];
    int product = matmul(l, name, in[0], weight_t, dims, ndim);
    return value->num_operands > 2 ? binary(l, "add", name, product, in[2]) : product;
}

/* ---- creation ------------------------------------------------------------------------- */

/* arange on the host, NumPy's rule as the reference kernel: elements 0 and 1
 * converted to the dtype, the rest first + i * (second - first). */
static int lower_arange(lowering *l, const tp_plugin_value *value, const cu_node *shape) {
    double start = attr_float(value, "start", 0), step = attr_float(value, "step", 1);
    int64_t length = shape->dims[0];
    int32_t dtype = shape->dtype;
    size_t size = cu_dtype_size(dtype);
    void *data = malloc(length ? (size_t)length * size : 1);
    if (!data) return fail(l, "out of memory for arange %%%s%s", value->name, ""), -1;
    for (int64_t i = 0; i < length; i++) {
        if (dtype == TP_PLUGIN_F32) {
            float first = (float)start, second = (float)(start + step);
            ((float *)data)[i] = i == 1 ? second : first + (float)i * (second - first);
        } else if (dtype == TP_PLUGIN_F64) {
            double second = start + step;
            ((double *)data)[i] = i == 1 ? second : start + (double)i * (second - start);
        } else {
            int64_t first = (int64_t)start, delta = (int64_t)(start + step) - first;
            int64_t element = (int64_t)((uint64_t)first + (uint64_t)i * (uint64_t)delta);
            if (dtype == TP_PLUGIN_I32)
                ((int32_t *)data)[i] = (int32_t)(uint32_t)(uint64_t)element;
            else
                ((int64_t *)data)[i] = element;
        }
    }
    int index = add_node(l, CU_CONSTANT, "arange", value->name, dtype, 1, shape->dims, NULL, 0);
    if (index < 0) {
        free(data);
        return -1;
    }
    node_at(l, index)->owned_data = data;
    node_at(l, index)->data = data;
    node_at(l, index)->nbytes = (size_t)length * size;
    return index;
}

/* ---- one value ------------------------------------------------------------------------ */

/* The value's type with symbols replaced by their bound sizes. */
static bool concrete_type(lowering *l, const tp_plugin_type *type, const int64_t *symbols,
                          int num_symbols, const char *name, cu_node *out) {
    out->dtype = type->dtype;
    out->ndim = type->ndim;
    for (int d = 0; d < type->ndim; d++) {
        int64_t dim = type->dims[d];
        if (dim < 0) {
            int64_t symbol = -dim - 1;
            if (symbol >= num_symbols || symbols[symbol] < 0)
                return fail(l, "%%%s has a dimension symbol%s that no input binds", name, "");
            dim = symbols[symbol];
        }
        out->dims[d] = dim;
    }
    return true;
}

static int lower_reduction(lowering *l, const tp_plugin_value *value, const int *in) {
    const cu_node *x = node_at(l, in[0]);
    const tp_plugin_attr *axes = find_attr(value, "axes", TP_PLUGIN_ATTR_INTS);
    uint32_t mask = 0;
    if (!axes || axes->count == 0) mask = axes_from(0, x->ndim);
    for (int i = 0; axes && i < axes->count; i++)
        mask |= 1u << normalize_axis(axes->ints[i], x->ndim);
    return reduce(l, value->op, value->name, in[0], mask, attr_int(value, "keepdim", 0) != 0);
}

static int lower_view_op(lowering *l, const tp_plugin_value *value, const int *in,
                         const cu_node *type) {
    const char *op = value->op, *name = value->name;
    const cu_node *x = node_at(l, in[0]);
    if (strcmp(op, "reshape") == 0 || strcmp(op, "squeeze") == 0 || strcmp(op, "unsqueeze") == 0)
        return view_node(l, CU_VIEW_RESHAPE, name, in[0], type->ndim, type->dims);
    if (strcmp(op, "expand") == 0)
        return view_node(l, CU_VIEW_EXPAND, name, in[0], type->ndim, type->dims);
    if (strcmp(op, "permute") == 0 || strcmp(op, "transpose") == 0) {
        int perm[CU_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) perm[d] = d;
        if (op[0] == 't') {
            int a = normalize_axis(attr_int(value, "dim0", 0), x->ndim);
            int b = normalize_axis(attr_int(value, "dim1", 0), x->ndim);
            perm[a] = b;
            perm[b] = a;
        } else {
            const tp_plugin_attr *attr = find_attr(value, "perm", TP_PLUGIN_ATTR_INTS);
            for (int d = 0; attr && d < attr->count && d < x->ndim; d++)
                perm[d] = normalize_axis(attr->ints[d], x->ndim);
        }
        return permute(l, name, in[0], perm);
    }
    /* slice: Python semantics for start (negative counts from the end, clamped) */
    int axis = normalize_axis(attr_int(value, "axis", 0), x->ndim);
    int64_t size = x->dims[axis], start = attr_int(value, "start", 0);
    int64_t step = attr_int(value, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    int index = view_node(l, CU_VIEW_SLICE, name, in[0], type->ndim, type->dims);
    if (index >= 0) {
        node_at(l, index)->axis = axis;
        node_at(l, index)->slice_start = start;
        node_at(l, index)->slice_step = step > 0 ? step : 1;
    }
    return index;
}

static int lower_value(lowering *l, const tp_plugin_value *value, const int *in,
                       const cu_node *type) {
    const char *op = value->op, *name = value->name;
    int rule_index = find_rule(op);
    if (rule_index >= 0 && strcmp(op, "copy") != 0) {
        int32_t cast_to = (int32_t)attr_int(value, "dtype", type->dtype);
        int index = pointwise(l, op, name, in, value->num_operands, cast_to);
        if (index >= 0 &&
            (node_at(l, index)->dtype != type->dtype || node_at(l, index)->ndim != type->ndim))
            return fail(l, "%%%s = %s: the graph's type disagrees with the op's dtype/shape rule",
                        name, op),
                   -1;
        return index;
    }
    if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "max") || !strcmp(op, "min"))
        return lower_reduction(l, value, in);
    if (!strcmp(op, "argmax")) {
        int axis = normalize_axis(attr_int(value, "axis", 0), node_at(l, in[0])->ndim);
        int index = add_node(l, CU_ARGMAX, op, name, TP_PLUGIN_I64, type->ndim, type->dims, in, 1);
        if (index >= 0) {
            node_at(l, index)->axis = axis;
            node_at(l, index)->keepdim = attr_int(value, "keepdim", 0) != 0;
        }
        return index;
    }
    if (!strcmp(op, "matmul")) return matmul(l, name, in[0], in[1], type->dims, type->ndim);
    if (!strcmp(op, "reshape") || !strcmp(op, "squeeze") || !strcmp(op, "unsqueeze") ||
        !strcmp(op, "expand") || !strcmp(op, "permute") || !strcmp(op, "transpose") ||
        !strcmp(op, "slice"))
        return lower_view_op(l, value, in, type);
    if (!strcmp(op, "concat")) {
        int index = add_node(l, CU_CONCAT, op, name, type->dtype, type->ndim, type->dims, in,
                             value->num_operands);
        if (index >= 0)
            node_at(l, index)->axis = normalize_axis(attr_int(value, "axis", 0), type->ndim);
        return index;
    }
    if (!strcmp(op, "constant")) {
        /* the payload is the node's one TENSOR attribute (named "value" in .tpir) */
        const tp_plugin_attr *data = NULL;
        for (int32_t i = 0; i < value->num_attrs; i++)
            if (value->attrs[i].type == TP_PLUGIN_ATTR_TENSOR) data = &value->attrs[i];
        size_t nbytes = (size_t)cu_numel(type) * cu_dtype_size(type->dtype);
        if (!data || data->nbytes != nbytes || data->dtype != type->dtype)
            return fail(l, "%%%s = constant: the payload does not match the value's type%s", name,
                        ""),
                   -1;
        int index =
            add_node(l, CU_CONSTANT, op, name, type->dtype, type->ndim, type->dims, NULL, 0);
        if (index >= 0) {
            node_at(l, index)->data = data->data;
            node_at(l, index)->nbytes = nbytes;
        }
        return index;
    }
    if (!strcmp(op, "full")) {
        int index = add_node(l, CU_FULL, op, name, type->dtype, type->ndim, type->dims, NULL, 0);
        if (index >= 0) node_at(l, index)->value = attr_float(value, "value", 0);
        return index;
    }
    if (!strcmp(op, "arange")) return lower_arange(l, value, type);
    if (!strcmp(op, "softmax")) return lower_softmax(l, value, in, false);
    if (!strcmp(op, "log_softmax")) return lower_softmax(l, value, in, true);
    if (!strcmp(op, "layer_norm")) return lower_layer_norm(l, value, in);
    if (!strcmp(op, "gelu")) return lower_gelu(l, value, in);
    if (!strcmp(op, "silu")) {
        int x = as_float(l, name, in[0]);
        return binary(l, "mul", name, x, unary(l, "sigmoid", name, x));
    }
    if (!strcmp(op, "softplus")) return lower_softplus(l, value, in);
    if (!strcmp(op, "linear")) return lower_linear(l, value, in);
    return fail(l, "%%%s: op '%s' is not supported by the cuda backend", name, op), -1;
}

/* ---- the graph ------------------------------------------------------------------------ */

static bool bind_inputs(lowering *l, const tp_plugin_graph *view,
                        const tp_plugin_tensor_meta *inputs, int32_t num_inputs, int64_t *symbols) {
    char text[160];
    if (num_inputs != view->num_inputs) {
        snprintf(text, sizeof text, "%d", (int)num_inputs);
        return fail(l, "graph has a different number of inputs than the %s metadata given%s", text,
                    "");
    }
    for (int32_t s = 0; s < view->num_symbols; s++) symbols[s] = -1;
    for (int32_t i = 0; i < num_inputs; i++) {
        const tp_plugin_type *type = &view->values[view->inputs[i]].type;
        const char *name = view->values[view->inputs[i]].name;
        bool ok = type->dtype == inputs[i].dtype && type->ndim == inputs[i].ndim;
        for (int d = 0; ok && d < type->ndim; d++) {
            int64_t dim = type->dims[d];
            if (dim >= 0) {
                ok = dim == inputs[i].dims[d];
            } else if (-dim - 1 < view->num_symbols) {
                int64_t *bound = &symbols[-dim - 1];
                if (*bound < 0) *bound = inputs[i].dims[d];
                ok = *bound == inputs[i].dims[d];
            }
        }
        if (!ok) return fail(l, "input %%%s: the metadata does not match its type%s", name, "");
    }
    return true;
}

bool cu_graph_lower(const tp_plugin_graph *view, const tp_plugin_tensor_meta *inputs,
                    int32_t num_inputs, cu_graph *out, char *error, size_t error_size) {
    memset(out, 0, sizeof *out);
    out->name = view->name;
    lowering l = {.graph = out, .error = error, .error_size = error_size};
    int64_t symbols[64];
    int *node_of = calloc((size_t)view->num_values + 1, sizeof(int));
    out->inputs = calloc((size_t)view->num_inputs + 1, sizeof(int));
    out->outputs = calloc((size_t)view->num_outputs + 1, sizeof(int));
    if (!node_of || !out->inputs || !out->outputs)
        fail(&l, "out of memory lowering graph%s%s", "", "");
    else if (view->num_symbols > 64)
        fail(&l, "graph has more than 64 dimension symbols%s%s", "", "");
    else
        bind_inputs(&l, view, inputs, num_inputs, symbols);
    for (int32_t v = 0; v < view->num_values && !l.failed; v++) {
        const tp_plugin_value *value = &view->values[v];
        cu_node type;
        if (!concrete_type(&l, &value->type, symbols, view->num_symbols, value->name, &type)) break;
        if (!value->op) {
            node_of[v] = add_node(&l, CU_INPUT, "input", value->name, type.dtype, type.ndim,
                                  type.dims, NULL, 0);
            continue;
        }
        int in[64];
        if (value->num_operands > 64) {
            fail(&l, "%%%s = %s: more than 64 operands", value->name, value->op);
            break;
        }
        for (int32_t k = 0; k < value->num_operands; k++) in[k] = node_of[value->operands[k]];
        node_of[v] = lower_value(&l, value, in, &type);
    }
    for (int32_t i = 0; !l.failed && i < view->num_inputs; i++) {
        out->inputs[i] = node_of[view->inputs[i]];
        out->nodes[out->inputs[i]].has_where = true;
    }
    out->num_inputs = view->num_inputs;
    for (int32_t i = 0; !l.failed && i < view->num_outputs; i++)
        out->outputs[i] = node_of[view->outputs[i]];
    out->num_outputs = view->num_outputs;
    free(node_of);
    if (l.failed) cu_graph_free(out);
    return !l.failed;
}

void cu_graph_free(cu_graph *graph) {
    for (int i = 0; i < graph->num_nodes; i++) {
        free(graph->nodes[i].operands);
        free(graph->nodes[i].owned_data);
    }
    free(graph->nodes);
    free(graph->inputs);
    free(graph->outputs);
    free(graph->buffers);
    free(graph->kernels);
    memset(graph, 0, sizeof *graph);
}
