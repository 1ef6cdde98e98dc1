/* The normalize pass: canonical operand order and algebraic identities that
 * are exact. Owns nothing else; it never evaluates anything.
 *
 * Operand order (ops flagged TP_OPF_COMMUTATIVE with two operands): a
 * constant operand (constant, full, arange) goes second; otherwise, or when
 * both are constants, the lower new value id goes first. This gives CSE one
 * spelling of add(a, b) / add(b, a) and the folds below one place to look.
 *
 * Folds, each replacing the node by its operand x:
 *   add(x, 0) add(0, x) sub(x, 0) mul(x, 1) mul(1, x) div(x, 1) neg(neg(x))
 * where "0"/"1" is a constant whose every element is that value or a full of
 * that value — and only when the node's result has exactly x's dtype and
 * shape. add(x: f32, 0: f64) is f64 and add(x: f32[3], zeros: f32[4, 3]) is
 * [4, 3]: both stay. mul(x, 0) is never folded: NaN * 0 and Inf * 0 are NaN.
 * (x + 0 turns -0.0 into +0.0; the two compare equal and we accept that.)
 * The identity is checked in the old graph, whose types the map preserves.
 *
 * A reshape -> permute -> reshape chain whose first reshape merges what the
 * second splits again becomes a reshape that only splits and a permute
 * (reshape_chain.c): a merge of strided dimensions is a copy for a backend.
 */
#include "pass_internal.h"

#include "base/error.h"

static bool is_creation(const tp_graph *graph, tp_value_id value) {
    const tp_op_def *op = tp_pass_value_op(graph, value);
    return op && op->kind == TP_KIND_CREATION;
}

/* Returns the old operand the node `old` reduces to, or TP_NO_VALUE. */
static tp_value_id identity_operand(const tp_graph *in, tp_value_id old, const tp_op_def *op) {
    int count = tp_graph_value_num_operands(in, old);
    tp_value_id a = count > 0 ? tp_graph_value_operand(in, old, 0) : TP_NO_VALUE;
    tp_value_id b = count > 1 ? tp_graph_value_operand(in, old, 1) : TP_NO_VALUE;
    tp_value_id x = TP_NO_VALUE;
    switch (op->id) {
    case TP_OP_ADD:
        if (tp_pass_value_is_splat(in, b, 0.0))
            x = a;
        else if (tp_pass_value_is_splat(in, a, 0.0))
            x = b;
        break;
    case TP_OP_SUB:
        if (tp_pass_value_is_splat(in, b, 0.0)) x = a;
        break;
    case TP_OP_MUL:
        if (tp_pass_value_is_splat(in, b, 1.0))
            x = a;
        else if (tp_pass_value_is_splat(in, a, 1.0))
            x = b;
        break;
    case TP_OP_DIV:
        if (tp_pass_value_is_splat(in, b, 1.0)) x = a;
        break;
    case TP_OP_NEG: {
        const tp_op_def *inner = tp_pass_value_op(in, a);
        if (inner && inner->id == TP_OP_NEG) x = tp_graph_value_operand(in, a, 0);
        break;
    }
    default:
        break;
    }
    if (x == TP_NO_VALUE) return TP_NO_VALUE;
    if (!tp_type_equal(tp_graph_value_type(in, x), tp_graph_value_type(in, old)))
        return TP_NO_VALUE;
    return x;
}

/* Puts a commutative pair in canonical order; true when it swapped. */
static bool canonical_order(const tp_rewrite *rewrite, tp_value_id old, tp_value_id *operands) {
    bool first_constant = is_creation(rewrite->in, tp_graph_value_operand(rewrite->in, old, 0));
    bool second_constant = is_creation(rewrite->in, tp_graph_value_operand(rewrite->in, old, 1));
    bool swap = first_constant != second_constant ? first_constant : operands[0] > operands[1];
    if (swap) {
        tp_value_id t = operands[0];
        operands[0] = operands[1];
        operands[1] = t;
    }
    return swap;
}

static tp_status normalize_node(tp_rewrite *rewrite, tp_value_id old, bool *changed) {
    const tp_op_def *op = tp_pass_value_op(rewrite->in, old);
    if (!op)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "normalize: value %%%s has unknown op '%s'",
                            tp_graph_value_name(rewrite->in, old),
                            tp_graph_value_op(rewrite->in, old));
    bool rewritten;
    TP_TRY(tp_normalize_reshape_chain(rewrite, old, &rewritten));
    if (rewritten) {
        *changed = true;
        return TP_OK;
    }
    tp_value_id x = identity_operand(rewrite->in, old, op);
    if (x != TP_NO_VALUE) {
        rewrite->map[old] = rewrite->map[x];
        *changed = true;
        return TP_OK;
    }
    tp_value_id operands[TP_PASS_MAX_OPERANDS];
    int count = tp_rewrite_mapped_operands(rewrite, old, operands);
    if ((op->flags & TP_OPF_COMMUTATIVE) && count == 2 && canonical_order(rewrite, old, operands))
        *changed = true;
    return tp_rewrite_node(rewrite, old, operands);
}

tp_status tp_pass_normalize(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed) {
    *out = NULL;
    *changed = false;
    tp_rewrite rewrite;
    TP_TRY(tp_rewrite_begin(in, &rewrite));
    for (tp_value_id v = 0; v < rewrite.num_values; v++) {
        tp_status status = tp_graph_value_op(in, v) ? normalize_node(&rewrite, v, changed)
                                                    : tp_rewrite_input(&rewrite, v);
        if (status != TP_OK) {
            tp_rewrite_abort(&rewrite);
            return tp_error_prefix(status, "normalize: ");
        }
    }
    return tp_rewrite_finish(&rewrite, out);
}
