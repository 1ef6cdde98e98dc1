/* stax-llvm — what the backend claims (calls.supports and the compile-time
 * check): every op of plugin_ops.h that stax lowers, by the dtype it computes
 * in. Composites are claimed where stax has a native kernel for them, which
 * is all of them: softmax, log_softmax and layer_norm are row kernels (one
 * pass per row instead of the decomposition's reductions and broadcasts),
 * gelu, silu and softplus are single pointwise expressions fused like any
 * other, and linear is the packed gemm with the bias in its epilogue. Claiming
 * them keeps a graph stax takes whole compiling to the kernels it always did.
 * pad, cumsum, topk, topk_indices and resize have kernels of their own
 * (stax_emit_dedicated.c); batch_norm is refused, so the core decomposes it
 * into pointwise ops that stax fuses. gather and gather_elements copy the
 * elements an index tensor picks, for every dtype (f16/bf16 as their bits). */
#include <stdarg.h>
#include <stdio.h>

#include "stax_internal.h"

/* Whether stax can lower `op` computing in `dtype` (the op table's rules). */
static bool lowers(int32_t op, int32_t dtype) {
    bool is_bool = dtype == TP_PLUGIN_BOOL;
    bool any = dtype >= TP_PLUGIN_F32 && dtype <= TP_PLUGIN_BOOL;
    switch (tpcommon_op_kind(op)) {
    case TPCOMMON_KIND_UNKNOWN:
    case TPCOMMON_KIND_INPUT:
        return false;
    case TPCOMMON_KIND_INDEXING: /* stax_emit_dedicated.c: copies bits, f16/bf16 included */
        return dtype >= TP_PLUGIN_F32 && dtype <= TP_PLUGIN_BF16;
    case TPCOMMON_KIND_WINDOW: /* stax_window.c: f32 */
        return dtype == TP_PLUGIN_F32;
    case TPCOMMON_KIND_DEDICATED: /* stax_emit_dedicated.c; batch_norm decomposes */
        if (op == TP_PLUGIN_OP_PAD || op == TP_PLUGIN_OP_RESIZE) return any;
        return (op == TP_PLUGIN_OP_CUMSUM || op == TP_PLUGIN_OP_TOPK ||
                op == TP_PLUGIN_OP_TOPK_INDICES) &&
               any && !is_bool;
    case TPCOMMON_KIND_SHAPE:
    case TPCOMMON_KIND_CREATION:
    case TPCOMMON_KIND_REDUCTION:
        return any;
    case TPCOMMON_KIND_ROW:
        return tpcommon_dtype_is_float(dtype);
    case TPCOMMON_KIND_MATMUL:
        return any && !is_bool;
    default:
        break;
    }
    switch (op) {
    case TP_PLUGIN_OP_NEG:
    case TP_PLUGIN_OP_ABS:
    case TP_PLUGIN_OP_SIGN:
    case TP_PLUGIN_OP_ADD:
    case TP_PLUGIN_OP_SUB:
    case TP_PLUGIN_OP_MUL:
    case TP_PLUGIN_OP_POW:
    case TP_PLUGIN_OP_CLIP:
        return any && !is_bool;
    case TP_PLUGIN_OP_EXP:
    case TP_PLUGIN_OP_LOG:
    case TP_PLUGIN_OP_SQRT:
    case TP_PLUGIN_OP_RSQRT:
    case TP_PLUGIN_OP_SIN:
    case TP_PLUGIN_OP_COS:
    case TP_PLUGIN_OP_TANH:
    case TP_PLUGIN_OP_SIGMOID:
    case TP_PLUGIN_OP_ERF:
    case TP_PLUGIN_OP_DIV:
    case TP_PLUGIN_OP_GELU:
    case TP_PLUGIN_OP_SILU:
    case TP_PLUGIN_OP_SOFTPLUS:
        return tpcommon_dtype_is_float(dtype);
    default:
        return any;
    }
}

/* f16/bf16 (storage floats): loads widen to f32 and stores round from the
 * f32 result (stax_emit_core.c's conv). The pointwise and shape lowerings go
 * through those loads and stores, and the reductions reduce the widened
 * values; the row, gemm and creation kernels (and any kind added later)
 * address their buffers in the compute type, so they are left to the
 * fallback. A store that must round from anything but f32 (a cast from f64
 * or an integer) would round twice: also left to the fallback. */
static bool lowers_storage_float(const tp_plugin_graph *graph, const tp_plugin_value *node,
                                 int32_t op, int32_t compute) {
    switch (tpcommon_op_kind(op)) { /* the kinds known to widen and round; a new kind is not */
    case TPCOMMON_KIND_POINTWISE:
    case TPCOMMON_KIND_SHAPE:
    case TPCOMMON_KIND_REDUCTION:
        break;
    case TPCOMMON_KIND_INDEXING: /* a copy of the elements' bits: nothing to round */
        return true;
    default:
        return false;
    }
    (void)graph;
    return !tpcommon_dtype_is_storage_float(node->type.dtype) || compute == TP_PLUGIN_F32;
}

__attribute__((format(printf, 3, 4))) static int32_t refuse(char *error, size_t error_size,
                                                            const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (error && error_size) vsnprintf(error, error_size, format, args);
    va_end(args);
    return TP_PLUGIN_UNSUPPORTED;
}

int32_t stax_node_supported(const tp_plugin_graph *graph, int32_t value, char *error,
                            size_t error_size) {
    const tp_plugin_value *node = &graph->values[value];
    const char *op_name = node->op ? node->op : "?";
    if (!tpcommon_graph_has_nodes(graph))
        return refuse(error, error_size,
                      "op '%s' (%%%s): the graph view has no op ids (a core older than contract "
                      "revision 2)",
                      op_name, node->name);
    int32_t op = tpcommon_op_of(graph, node);
    int32_t dtype = tpcommon_compute_dtype(graph, node);
    if (!tpcommon_op_known(op))
        return refuse(error, error_size,
                      "op '%s' (%%%s): stax " STAX_VERSION " does not know this op (newer than "
                      "its plugin_ops.h): upgrade stax or let the fallback backend run it",
                      op_name, node->name);
    if (node->type.ndim > STAX_MAX_DIMS)
        return refuse(error, error_size, "op '%s' (%%%s): more than %d dimensions", op_name,
                      node->name, STAX_MAX_DIMS);
    if (tpcommon_touches_storage_float(graph, node) &&
        !lowers_storage_float(graph, node, op, dtype))
        return refuse(error, error_size,
                      "op '%s' (%%%s) with %s values: stax loads and stores f16/bf16 only in "
                      "pointwise, shape and reduction ops computing in f32; the fallback "
                      "backend runs it",
                      op_name, node->name,
                      tpcommon_dtype_name(tpcommon_dtype_is_storage_float(node->type.dtype)
                                              ? node->type.dtype
                                              : graph->values[node->operands[0]].type.dtype));
    if (!lowers(op, dtype))
        return refuse(error, error_size,
                      "op '%s' (%%%s) on %s operands: stax does not lower it "
                      "for that dtype",
                      op_name, node->name, tpcommon_dtype_name(dtype));
    return TP_PLUGIN_OK;
}
