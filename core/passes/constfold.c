/* The constfold pass: evaluates nodes whose every operand is a constant
 * source and replaces each by one `constant` node holding the result. Owns
 * nothing else.
 *
 * Constant sources are the creation ops: `constant`, `full` and `arange`.
 * Creation nodes themselves are never rewritten (a full or an arange is
 * smaller than its payload); they are evaluated only when a consumer folds,
 * and dce removes them once nothing reads them. Folding walks in id order, so
 * a chain of constant work collapses in one run.
 *
 * A node is evaluated by the reference interpreter on a graph of just that
 * node and copies of its constant operands, so folding computes exactly what
 * the unoptimized graph would. Results with more than `constfold_max_elements`
 * elements (default 65536), or with an operand over 16 times that, stay
 * unfolded so folding never blows up the graph or the compile time;
 * a node whose evaluation fails stays too (logged at debug level).
 */
#include "pass_internal.h"

#include "base/error.h"
#include "base/log.h"

/* Operands may be this many times larger than the result cap (a reduction
 * of a modest full still folds). */
#define TP_CONSTFOLD_OPERAND_FACTOR 16

static bool is_constant_source(const tp_graph *graph, tp_value_id value) {
    const tp_op_def *op = tp_pass_value_op(graph, value);
    return op && op->kind == TP_KIND_CREATION;
}

/* Whether `old` (operands already mapped into `operands`) may be folded. */
static bool foldable(const tp_rewrite *rewrite, tp_value_id old, const tp_op_def *op,
                     const tp_value_id *operands, int count, int64_t max_elements) {
    if (op->kind == TP_KIND_CREATION || count == 0) return false;
    for (int i = 0; i < count; i++) {
        if (!is_constant_source(rewrite->out, operands[i])) return false;
        /* sum(full([100000, 100000])) is one element, but evaluating it
         * would materialise the full: operands are capped too. */
        int64_t operand_elements = tp_type_numel(tp_graph_value_type(rewrite->out, operands[i]));
        if (operand_elements < 0 || operand_elements > TP_CONSTFOLD_OPERAND_FACTOR * max_elements)
            return false;
    }
    int64_t elements = tp_type_numel(tp_graph_value_type(rewrite->in, old));
    return elements >= 0 && elements <= max_elements;
}

/* Adds to `scratch` a copy of creation node `value` of `source`. */
static tp_status copy_source(tp_graph *scratch, const tp_graph *source, tp_value_id value,
                             tp_value_id *out) {
    return tp_graph_add_node(scratch, tp_graph_value_op(source, value), NULL, 0,
                             tp_graph_value_attrs(source, value), NULL, out);
}

/* Runs node `old` of rewrite->in on its constant operands (new ids). */
static tp_status evaluate(const tp_rewrite *rewrite, tp_value_id old, const tp_value_id *operands,
                          int count, tp_tensor **result) {
    tp_graph *scratch = NULL;
    TP_TRY(tp_graph_create("constfold", &scratch));
    tp_value_id scratch_operands[TP_PASS_MAX_OPERANDS];
    tp_status status = TP_OK;
    for (int i = 0; i < count && status == TP_OK; i++) {
        int earlier = 0;
        while (earlier < i && operands[earlier] != operands[i]) earlier++;
        if (earlier < i)
            scratch_operands[i] = scratch_operands[earlier];
        else
            status = copy_source(scratch, rewrite->out, operands[i], &scratch_operands[i]);
    }
    tp_value_id node = TP_NO_VALUE;
    if (status == TP_OK)
        status = tp_graph_add_node(scratch, tp_graph_value_op(rewrite->in, old), scratch_operands,
                                   count, tp_graph_value_attrs(rewrite->in, old), NULL, &node);
    if (status == TP_OK) status = tp_graph_set_outputs(scratch, &node, 1);
    if (status == TP_OK) status = tp_graph_run(scratch, NULL, 0, result);
    tp_graph_destroy(scratch);
    return status;
}

static tp_status fold_node(tp_rewrite *rewrite, tp_value_id old, int64_t max_elements,
                           bool *changed) {
    const tp_op_def *op = tp_pass_value_op(rewrite->in, old);
    if (!op)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "constfold: value %%%s has unknown op '%s'",
                            tp_graph_value_name(rewrite->in, old),
                            tp_graph_value_op(rewrite->in, old));
    tp_value_id operands[TP_PASS_MAX_OPERANDS];
    int count = tp_rewrite_mapped_operands(rewrite, old, operands);
    if (!foldable(rewrite, old, op, operands, count, max_elements))
        return tp_rewrite_node(rewrite, old, operands);

    tp_tensor *result = NULL;
    if (evaluate(rewrite, old, operands, count, &result) != TP_OK) {
        tp_log_message(TP_LOG_DEBUG, "constfold: %%%s = %s(...) left unfolded: %s",
                       tp_graph_value_name(rewrite->in, old), op->name, tp_last_error());
        return tp_rewrite_node(rewrite, old, operands);
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.data = result;
    tp_status status =
        tp_graph_add_node(rewrite->out, "constant", NULL, 0, &attrs,
                          tp_rewrite_kept_name(rewrite->in, old), &rewrite->map[old]);
    tp_tensor_release(result);
    if (status == TP_OK) *changed = true;
    return status;
}

tp_status tp_pass_constfold(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed) {
    *out = NULL;
    *changed = false;
    tp_rewrite rewrite;
    TP_TRY(tp_rewrite_begin(in, &rewrite));
    for (tp_value_id v = 0; v < rewrite.num_values; v++) {
        tp_status status = tp_graph_value_op(in, v)
                               ? fold_node(&rewrite, v, context->constfold_max_elements, changed)
                               : tp_rewrite_input(&rewrite, v);
        if (status != TP_OK) {
            tp_rewrite_abort(&rewrite);
            return tp_error_prefix(status, "constfold: ");
        }
    }
    return tp_rewrite_finish(&rewrite, out);
}
