/* The rewriter shared by the passes (pass_internal.h): builds a new graph
 * from an old one through the public graph API, with an old→new value map,
 * and the small graph queries the passes share. Owns no pass logic.
 *
 * Names: inputs keep their names (they are the graph's signature). A node
 * keeps its name when it is an identifier ("h", "logits"); numbered names
 * ("%7") are left to the builder, which numbers new values after their id,
 * so a rewritten graph reads in order and never collides with a kept name. */
#include "pass_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"

tp_status tp_rewrite_begin(const tp_graph *in, tp_rewrite *rewrite) {
    memset(rewrite, 0, sizeof *rewrite);
    rewrite->in = in;
    rewrite->num_values = tp_graph_num_values(in);
    rewrite->map = tp_malloc((size_t)rewrite->num_values * sizeof *rewrite->map);
    if (!rewrite->map)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "passes: out of memory for a value map of %d",
                            rewrite->num_values);
    for (int i = 0; i < rewrite->num_values; i++) rewrite->map[i] = TP_NO_VALUE;
    tp_status status = tp_graph_create(tp_graph_name(in), &rewrite->out);
    if (status != TP_OK) tp_rewrite_abort(rewrite);
    return status;
}

void tp_rewrite_abort(tp_rewrite *rewrite) {
    tp_graph_destroy(rewrite->out);
    free(rewrite->map);
    rewrite->out = NULL;
    rewrite->map = NULL;
}

const char *tp_rewrite_kept_name(const tp_graph *in, tp_value_id old) {
    const char *name = tp_graph_value_name(in, old);
    if (!name) return NULL;
    for (const char *c = name; *c; c++)
        if (*c < '0' || *c > '9') return name;
    return NULL;
}

tp_status tp_rewrite_input(tp_rewrite *rewrite, tp_value_id old) {
    tp_type type = *tp_graph_value_type(rewrite->in, old);
    for (int i = 0; i < type.ndim; i++) {
        if (!TP_DIM_IS_SYMBOL(type.dims[i])) continue;
        const char *symbol = tp_graph_symbol_name(rewrite->in, type.dims[i]);
        TP_TRY(tp_graph_symbol(rewrite->out, symbol, &type.dims[i]));
    }
    return tp_graph_add_input(rewrite->out, tp_graph_value_name(rewrite->in, old), &type,
                              &rewrite->map[old]);
}

int tp_rewrite_mapped_operands(const tp_rewrite *rewrite, tp_value_id old, tp_value_id *operands) {
    int count = tp_graph_value_num_operands(rewrite->in, old);
    for (int i = 0; i < count; i++)
        operands[i] = rewrite->map[tp_graph_value_operand(rewrite->in, old, i)];
    return count;
}

tp_status tp_rewrite_node(tp_rewrite *rewrite, tp_value_id old, const tp_value_id *operands) {
    tp_value_id mapped[TP_PASS_MAX_OPERANDS];
    int count = tp_rewrite_mapped_operands(rewrite, old, mapped);
    if (!operands) operands = mapped;
    return tp_graph_add_node(rewrite->out, tp_graph_value_op(rewrite->in, old), operands, count,
                             tp_graph_value_attrs(rewrite->in, old),
                             tp_rewrite_kept_name(rewrite->in, old), &rewrite->map[old]);
}

tp_status tp_rewrite_copy(tp_rewrite *rewrite, tp_value_id old) {
    if (!tp_graph_value_op(rewrite->in, old)) return tp_rewrite_input(rewrite, old);
    return tp_rewrite_node(rewrite, old, NULL);
}

tp_status tp_rewrite_finish(tp_rewrite *rewrite, tp_graph **out) {
    int count = tp_graph_num_outputs(rewrite->in);
    tp_value_id *outputs = tp_malloc((size_t)count * sizeof *outputs);
    if (!outputs) {
        tp_rewrite_abort(rewrite);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "passes: out of memory for outputs");
    }
    for (int i = 0; i < count; i++) outputs[i] = rewrite->map[tp_graph_output(rewrite->in, i)];
    tp_status status = tp_graph_set_outputs(rewrite->out, outputs, count);
    free(outputs);
    if (status != TP_OK) {
        tp_rewrite_abort(rewrite);
        return status;
    }
    free(rewrite->map);
    rewrite->map = NULL;
    *out = rewrite->out;
    rewrite->out = NULL;
    return TP_OK;
}

/* ---- queries ------------------------------------------------------------ */

const tp_op_def *tp_pass_value_op(const tp_graph *graph, tp_value_id value) {
    const char *name = tp_graph_value_op(graph, value);
    return name ? tp_op_find(name) : NULL;
}

bool tp_pass_value_is_splat(const tp_graph *graph, tp_value_id value, double scalar) {
    const tp_op_def *op = tp_pass_value_op(graph, value);
    if (!op) return false;
    const tp_attrs *attrs = tp_graph_value_attrs(graph, value);
    if (op->id == TP_OP_FULL) return attrs && attrs->value == scalar;
    if (op->id != TP_OP_CONSTANT || !attrs || !attrs->data) return false;
    int64_t count = tp_tensor_numel(attrs->data);
    for (int64_t i = 0; i < count; i++)
        if (tp_tensor_get_f64(attrs->data, i) != scalar) return false;
    return true;
}

bool tp_type_equal(const tp_type *a, const tp_type *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

int64_t tp_type_numel(const tp_type *type) {
    int64_t count = 1;
    for (int i = 0; i < type->ndim; i++) {
        if (TP_DIM_IS_SYMBOL(type->dims[i])) return -1;
        count *= type->dims[i];
    }
    return count;
}
