/* The decompose pass: replaces every composite node (softmax, log_softmax,
 * layer_norm, gelu, silu, softplus, linear) by the chain of primitive ops its
 * op-table decomposition appends to the new graph. Owns no decomposition: the
 * op table's tp_op_*_decompose functions do (softmax and log_softmax subtract
 * the row max, gelu uses erf or the tanh chain, ...).
 *
 * Runs before cse so that shared sub-chains of different composites merge
 * (two gelu(x) sites, or softmax and log_softmax of the same x, share their
 * max-subtraction). A decomposition's result must have the composite's exact
 * dtype and shape; anything else is a TensorPlay bug and fails the pass. If a
 * decomposition itself emits a composite, the pass repeats (bounded). A
 * composite without a decomposition stays, with a warning: the reference
 * kernel still runs it, but backends may not.
 */
#include "pass_internal.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/log.h"

#define TP_DECOMPOSE_MAX_ROUNDS 8

static tp_status decompose_node(tp_rewrite *rewrite, tp_value_id old, const bool *keep,
                                bool *changed) {
    const tp_op_def *op = tp_pass_value_op(rewrite->in, old);
    if (!op)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "value %%%s has unknown op '%s'",
                            tp_graph_value_name(rewrite->in, old),
                            tp_graph_value_op(rewrite->in, old));
    if (op->kind != TP_KIND_COMPOSITE || keep[old]) return tp_rewrite_node(rewrite, old, NULL);
    if (!op->decompose) {
        tp_log_message(TP_LOG_WARN, "decompose: %s has no decomposition; %%%s stays a composite",
                       op->name, tp_graph_value_name(rewrite->in, old));
        return tp_rewrite_node(rewrite, old, NULL);
    }
    tp_value_id operands[TP_PASS_MAX_OPERANDS];
    int count = tp_rewrite_mapped_operands(rewrite, old, operands);
    static const tp_attrs defaults = TP_ATTRS_INIT;
    const tp_attrs *attrs = tp_graph_value_attrs(rewrite->in, old);
    tp_value_id result = TP_NO_VALUE;
    tp_status status =
        op->decompose(rewrite->out, operands, count, attrs ? attrs : &defaults, &result);
    if (status != TP_OK)
        return tp_error_prefix(status, "%s of %%%s: ", op->name,
                               tp_graph_value_name(rewrite->in, old));
    const tp_type *want = tp_graph_value_type(rewrite->in, old);
    const tp_type *got = result >= 0 && result < tp_graph_num_values(rewrite->out)
                             ? tp_graph_value_type(rewrite->out, result)
                             : NULL;
    if (!got || !tp_type_equal(want, got)) {
        char want_text[96], got_text[96] = "nothing";
        tp_type_describe(rewrite->in, want, want_text, sizeof want_text);
        if (got) tp_type_describe(rewrite->out, got, got_text, sizeof got_text);
        return tp_error_set(TP_ERR_INTERNAL,
                            "the decomposition of %s (%%%s) gives %s instead of %s "
                            "(a TensorPlay bug: please report it)",
                            op->name, tp_graph_value_name(rewrite->in, old), got_text, want_text);
    }
    /* The decomposition may return an existing value (an operand, for an
     * identity); tp_rewrite's map just points there. */
    rewrite->map[old] = result;
    *changed = true;
    return TP_OK;
}

/* One sweep over `in`. */
static tp_status decompose_once(const tp_graph *in, const bool *keep, tp_graph **out,
                                bool *changed) {
    tp_rewrite rewrite;
    TP_TRY(tp_rewrite_begin(in, &rewrite));
    for (tp_value_id v = 0; v < rewrite.num_values; v++) {
        tp_status status = tp_graph_value_op(in, v) ? decompose_node(&rewrite, v, keep, changed)
                                                    : tp_rewrite_input(&rewrite, v);
        if (status != TP_OK) {
            tp_rewrite_abort(&rewrite);
            return tp_error_prefix(status, "decompose: ");
        }
    }
    return tp_rewrite_finish(&rewrite, out);
}

/* Whether any node of `graph` is a composite that has a decomposition and
 * is not kept. */
static bool has_decomposable(const tp_graph *graph, const bool *keep) {
    int count = tp_graph_num_values(graph);
    for (tp_value_id v = 0; v < count; v++) {
        const tp_op_def *op = tp_pass_value_op(graph, v);
        if (op && op->kind == TP_KIND_COMPOSITE && op->decompose && !keep[v]) return true;
    }
    return false;
}

/* keep[v] for this round's graph (a new array): what the caller keeps. */
static tp_status composites_to_keep(const tp_graph *graph, const tp_pass_context *context,
                                    bool **keep) {
    *keep = calloc((size_t)tp_graph_num_values(graph) + 1, sizeof **keep);
    if (!*keep) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "decompose: out of memory");
    if (!context->keep_composites) return TP_OK;
    tp_status status = context->keep_composites(graph, *keep, context->keep_user);
    if (status != TP_OK) {
        free(*keep);
        *keep = NULL;
        return tp_error_prefix(status, "decompose: asking which composites to keep: ");
    }
    return TP_OK;
}

tp_status tp_pass_decompose(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed) {
    *out = NULL;
    *changed = false;
    const tp_graph *current = in;
    tp_graph *owned = NULL; /* current, once a round has made it */
    bool *keep = NULL;
    for (int round = 0;; round++) {
        tp_status status = composites_to_keep(current, context, &keep);
        if (status != TP_OK) {
            tp_graph_destroy(owned);
            return status;
        }
        if (round == TP_DECOMPOSE_MAX_ROUNDS || !has_decomposable(current, keep)) break;
        tp_graph *next = NULL;
        status = decompose_once(current, keep, &next, changed);
        free(keep);
        keep = NULL;
        tp_graph_destroy(owned);
        if (status != TP_OK) return status;
        current = owned = next;
    }
    bool remaining = has_decomposable(current, keep);
    free(keep);
    if (remaining) {
        tp_graph_destroy(owned);
        return tp_error_set(TP_ERR_INTERNAL,
                            "decompose: composites still remain after %d rounds (a decomposition "
                            "that emits itself? a TensorPlay bug: please report it)",
                            TP_DECOMPOSE_MAX_ROUNDS);
    }
    if (!owned) return tp_graph_clone(in, out);
    *out = owned;
    return TP_OK;
}
