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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_graph.h"
#include "tpcommon_graph.h"
#include "tpcommon_symbols.h"
#include "tpcommon_text.h"

int64_t cu_numel(const cu_node *node) {
    int64_t count = 1;
    for (int d = 0; d < node->ndim; d++) count *= node->dims[d];
    return count;
}

/* ---- building nodes ------------------------------------------------------------------- */

typedef struct lowering {
    cu_graph *graph;
    char *error;
    size_t error_size;
    bool failed;
} lowering;

/* Records the first failure only (later ones follow from it). */
__attribute__((format(printf, 2, 3))) static bool fail(lowering *l, const char *format, ...) {
    if (!l->failed) {
        va_list args;
        va_start(args, format);
        tpcommon_verror(l->error, l->error_size, format, args);
        va_end(args);
    }
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
        if (!grown) return fail(l, "out of memory lowering graph"), -1;
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
    if (!node->operands) return fail(l, "out of memory lowering graph"), -1;
    for (int i = 0; i < num_operands; i++) node->operands[i] = operands[i];
    return g->num_nodes++;
}

static cu_node *node_at(lowering *l, int index) {
    return &l->graph->nodes[index];
}

/* A pointwise node whose shape is the broadcast of its operands'. */
static int pointwise(lowering *l, int32_t op, const char *name, const int *operands, int count,
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
    int32_t compute = tpcommon_op_compute_dtype(op, in, count, TP_PLUGIN_F32);
    int32_t result = tpcommon_op_result_dtype(op, compute, cast_to);
    int index =
        add_node(l, CU_POINTWISE, tpcommon_op_name(op), name, result, ndim, dims, operands, count);
    if (index >= 0) {
        node_at(l, index)->compute = compute;
        node_at(l, index)->op_id = op;
    }
    return index;
}

static int reduce(lowering *l, int32_t op, const char *name, int x, uint32_t mask, bool keepdim) {
    const cu_node *in = node_at(l, x);
    int64_t dims[CU_MAX_DIMS];
    int ndim = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!(mask & (1u << d)))
            dims[ndim++] = in->dims[d];
        else if (keepdim)
            dims[ndim++] = 1;
    }
    int32_t dtype = tpcommon_op_compute_dtype(op, &in->dtype, 1, in->dtype);
    int index = add_node(l, CU_REDUCE, tpcommon_op_name(op), name, dtype, ndim, dims, &x, 1);
    if (index >= 0) {
        node_at(l, index)->reduce_mask = mask;
        node_at(l, index)->keepdim = keepdim;
    }
    return index;
}

/* ---- axes ------------------------------------------------------------------------------ */

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
    int32_t dtype = tpcommon_dtype_promote(node_at(l, a)->dtype, node_at(l, b)->dtype);
    int index = add_node(l, CU_MATMUL, "matmul", name, dtype, ndim, dims, operands, 2);
    if (index >= 0) node_at(l, index)->compute = dtype;
    return index;
}

/* ---- creation ------------------------------------------------------------------------- */

/* arange on the host, NumPy's rule as the reference kernel: elements 0 and 1
 * converted to the dtype, the rest first + i * (second - first). */
static int lower_arange(lowering *l, const tp_plugin_value *value, const cu_node *shape) {
    double start = tpcommon_attr_float(value, "start", 0),
           step = tpcommon_attr_float(value, "step", 1);
    int64_t length = shape->dims[0];
    int32_t dtype = shape->dtype;
    size_t size = tpcommon_dtype_size(dtype);
    void *data = malloc(length ? (size_t)length * size : 1);
    if (!data) return fail(l, "out of memory for arange %%%s", value->name), -1;
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
                return fail(l, "%%%s has a dimension symbol that no input binds", name);
            dim = symbols[symbol];
        }
        out->dims[d] = dim;
    }
    return true;
}

static int lower_reduction(lowering *l, const tp_plugin_value *value, int32_t op, const int *in) {
    const cu_node *x = node_at(l, in[0]);
    int32_t count = 0;
    const int64_t *axes = tpcommon_attr_ints(value, "axes", &count);
    uint32_t mask = count == 0 ? axes_from(0, x->ndim) : 0;
    for (int32_t i = 0; i < count; i++) mask |= 1u << normalize_axis(axes[i], x->ndim);
    return reduce(l, op, value->name, in[0], mask, tpcommon_attr_int(value, "keepdim", 0) != 0);
}

static int lower_argmax(lowering *l, const tp_plugin_value *value, const int *in,
                        const cu_node *type) {
    int axis = normalize_axis(tpcommon_attr_int(value, "axis", 0), node_at(l, in[0])->ndim);
    int index =
        add_node(l, CU_ARGMAX, "argmax", value->name, TP_PLUGIN_I64, type->ndim, type->dims, in, 1);
    if (index >= 0) {
        node_at(l, index)->axis = axis;
        node_at(l, index)->keepdim = tpcommon_attr_int(value, "keepdim", 0) != 0;
    }
    return index;
}

static int lower_permute(lowering *l, const tp_plugin_value *value, int32_t op, const int *in) {
    const cu_node *x = node_at(l, in[0]);
    int perm[CU_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) perm[d] = d;
    if (op == TP_PLUGIN_OP_TRANSPOSE) {
        int a = normalize_axis(tpcommon_attr_int(value, "dim0", 0), x->ndim);
        int b = normalize_axis(tpcommon_attr_int(value, "dim1", 0), x->ndim);
        perm[a] = b;
        perm[b] = a;
    } else {
        int32_t count = 0;
        const int64_t *given = tpcommon_attr_ints(value, "perm", &count);
        for (int d = 0; d < count && d < x->ndim; d++) perm[d] = normalize_axis(given[d], x->ndim);
    }
    return permute(l, value->name, in[0], perm);
}

/* slice: Python semantics for start (negative counts from the end, clamped) */
static int lower_slice(lowering *l, const tp_plugin_value *value, const int *in,
                       const cu_node *type) {
    const cu_node *x = node_at(l, in[0]);
    int axis = normalize_axis(tpcommon_attr_int(value, "axis", 0), x->ndim);
    int64_t size = x->dims[axis], start = tpcommon_attr_int(value, "start", 0);
    int64_t step = tpcommon_attr_int(value, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    int index = view_node(l, CU_VIEW_SLICE, value->name, in[0], type->ndim, type->dims);
    if (index >= 0) {
        node_at(l, index)->axis = axis;
        node_at(l, index)->slice_start = start;
        node_at(l, index)->slice_step = step > 0 ? step : 1;
    }
    return index;
}

static int lower_concat(lowering *l, const tp_plugin_value *value, const int *in,
                        const cu_node *type) {
    int index = add_node(l, CU_CONCAT, "concat", value->name, type->dtype, type->ndim, type->dims,
                         in, value->num_operands);
    if (index >= 0)
        node_at(l, index)->axis = normalize_axis(tpcommon_attr_int(value, "axis", 0), type->ndim);
    return index;
}

static int lower_constant(lowering *l, const tp_plugin_value *value, const cu_node *type) {
    const tp_plugin_attr *data = tpcommon_attr_tensor(value);
    size_t nbytes = (size_t)cu_numel(type) * tpcommon_dtype_size(type->dtype);
    if (!data || data->nbytes != nbytes || data->dtype != type->dtype)
        return fail(l, "%%%s = constant: the payload does not match the value's type", value->name),
               -1;
    int index = add_node(l, CU_CONSTANT, "constant", value->name, type->dtype, type->ndim,
                         type->dims, NULL, 0);
    if (index >= 0) {
        node_at(l, index)->data = data->data;
        node_at(l, index)->nbytes = nbytes;
    }
    return index;
}

static int lower_full(lowering *l, const tp_plugin_value *value, const cu_node *type) {
    int index =
        add_node(l, CU_FULL, "full", value->name, type->dtype, type->ndim, type->dims, NULL, 0);
    if (index >= 0) node_at(l, index)->value = tpcommon_attr_float(value, "value", 0);
    return index;
}

static int lower_pointwise(lowering *l, const tp_plugin_value *value, int32_t op, const int *in,
                           const cu_node *type) {
    int32_t cast_to = (int32_t)tpcommon_attr_int(value, "dtype", type->dtype);
    int index = pointwise(l, op, value->name, in, value->num_operands, cast_to);
    if (index >= 0 &&
        (node_at(l, index)->dtype != type->dtype || node_at(l, index)->ndim != type->ndim))
        return fail(l, "%%%s = %s: the graph's type disagrees with the op's dtype/shape rule",
                    value->name, value->op),
               -1;
    return index;
}

/* The "unsupported: ..." refusal of plugin.h: names the op and its dtypes. */
static int unsupported(lowering *l, const tp_plugin_graph *view, const tp_plugin_value *value,
                       const char *why) {
    char dtypes[64] = "";
    for (int32_t k = 0; k < value->num_operands && k < 4; k++) {
        const char *dtype = tpcommon_dtype_name(view->values[value->operands[k]].type.dtype);
        size_t used = strlen(dtypes);
        snprintf(dtypes + used, sizeof dtypes - used, "%s%s", k ? ", " : "", dtype);
    }
    if (value->num_operands == 0)
        snprintf(dtypes, sizeof dtypes, "%s", tpcommon_dtype_name(value->type.dtype));
    return fail(l, "unsupported: op '%s' (%%%s) on %s operands: %s", value->op, value->name, dtypes,
                why),
           -1;
}

static int lower_value(lowering *l, const tp_plugin_graph *view, const tp_plugin_value *value,
                       const int *in, const cu_node *type) {
    const char *name = value->name;
    int32_t op = tpcommon_op_of(view, value);
    for (int32_t k = 0; k < value->num_operands; k++)
        if (tpcommon_dtype_size(view->values[value->operands[k]].type.dtype) == 0)
            return unsupported(l, view, value, "an operand has a dtype the cuda backend lacks");
    if (tpcommon_dtype_size(type->dtype) == 0)
        return unsupported(l, view, value, "the result has a dtype the cuda backend lacks");
    if (view->nodes[value - view->values].kind == TP_PLUGIN_KIND_COMPOSITE)
        return unsupported(l, view, value,
                           "the cuda backend lowers no composite op (the core decomposes it)");
    switch (op) {
    case TP_PLUGIN_OP_SUM:
    case TP_PLUGIN_OP_MEAN:
    case TP_PLUGIN_OP_MAX:
    case TP_PLUGIN_OP_MIN:
        return lower_reduction(l, value, op, in);
    case TP_PLUGIN_OP_ARGMAX:
        return lower_argmax(l, value, in, type);
    case TP_PLUGIN_OP_MATMUL:
        return matmul(l, name, in[0], in[1], type->dims, type->ndim);
    case TP_PLUGIN_OP_RESHAPE:
    case TP_PLUGIN_OP_SQUEEZE:
    case TP_PLUGIN_OP_UNSQUEEZE:
        return view_node(l, CU_VIEW_RESHAPE, name, in[0], type->ndim, type->dims);
    case TP_PLUGIN_OP_EXPAND:
        return view_node(l, CU_VIEW_EXPAND, name, in[0], type->ndim, type->dims);
    case TP_PLUGIN_OP_PERMUTE:
    case TP_PLUGIN_OP_TRANSPOSE:
        return lower_permute(l, value, op, in);
    case TP_PLUGIN_OP_SLICE:
        return lower_slice(l, value, in, type);
    case TP_PLUGIN_OP_CONCAT:
        return lower_concat(l, value, in, type);
    case TP_PLUGIN_OP_CONSTANT:
        return lower_constant(l, value, type);
    case TP_PLUGIN_OP_FULL:
        return lower_full(l, value, type);
    case TP_PLUGIN_OP_ARANGE:
        return lower_arange(l, value, type);
    default:
        if (tpcommon_op_kind(op) == TPCOMMON_KIND_POINTWISE)
            return lower_pointwise(l, value, op, in, type);
        return unsupported(l, view, value, "the cuda backend does not know this op");
    }
}

/* ---- the graph ------------------------------------------------------------------------ */

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
        fail(&l, "out of memory lowering graph");
    else if (view->num_symbols > 64)
        fail(&l, "unsupported: graph has more than 64 dimension symbols");
    else if (tpcommon_bind_symbols_from_metas(view, inputs, num_inputs, symbols, error,
                                              error_size) != TP_PLUGIN_OK)
        l.failed = true;
    for (int32_t v = 0; v < view->num_values && !l.failed; v++) {
        const tp_plugin_value *value = &view->values[v];
        cu_node type;
        if (!concrete_type(&l, &value->type, symbols, view->num_symbols, value->name, &type)) break;
        if (!value->op) {
            node_of[v] = add_node(&l, CU_INPUT, "input", value->name, type.dtype, type.ndim,
                                  type.dims, NULL, 0);
            continue;
        }
        if (tpcommon_op_kind(tpcommon_op_of(view, value)) == TPCOMMON_KIND_INDEXING ||
            tpcommon_op_kind(tpcommon_op_of(view, value)) == TPCOMMON_KIND_WINDOW) {
            unsupported(&l, view, value, "the cuda backend has no kernel for it yet");
            break;
        }
        int in[64];
        if (value->num_operands > 64) {
            fail(&l, "unsupported: op '%s' (%%%s) with more than 64 operands", value->op,
                 value->name);
            break;
        }
        for (int32_t k = 0; k < value->num_operands; k++) in[k] = node_of[value->operands[k]];
        node_of[v] = lower_value(&l, view, value, in, &type);
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
