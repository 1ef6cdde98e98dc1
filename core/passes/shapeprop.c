/* The shapeprop pass: re-derives every value's type from the op table's
 * shape and dtype rules by rebuilding the graph in id order (the builder
 * infers each node's type from its operands), so the graph handed to a
 * backend carries types computed from its final structure.
 *
 * Advisory: the rebuilt graph keeps every value id. When a rule fails, or a re-derived type differs
 * from the stored one, the pass logs a warning naming the value and keeps its input unchanged; it
 * never fails the pipeline.
 */
#include "pass_internal.h"

#include "base/error.h"
#include "base/log.h"

/* Rebuilds `in`; *differs tells whether some type came out different. */
static tp_status rebuild(const tp_graph *in, tp_graph **out, bool *differs) {
    tp_rewrite rewrite;
    TP_TRY(tp_rewrite_begin(in, &rewrite));
    for (tp_value_id v = 0; v < rewrite.num_values; v++) {
        tp_status status = tp_rewrite_copy(&rewrite, v);
        if (status == TP_OK && rewrite.map[v] != v)
            status = tp_error_set(TP_ERR_INTERNAL, "value %%%s moved from id %d to %d",
                                  tp_graph_value_name(in, v), (int)v, (int)rewrite.map[v]);
        if (status != TP_OK) {
            tp_status prefixed = tp_error_prefix(status, "%%%s: ", tp_graph_value_name(in, v));
            tp_rewrite_abort(&rewrite);
            return prefixed;
        }
        const tp_type *before = tp_graph_value_type(in, v);
        const tp_type *after = tp_graph_value_type(rewrite.out, v);
        if (!tp_type_equal(before, after)) {
            char before_text[96], after_text[96];
            tp_type_describe(in, before, before_text, sizeof before_text);
            tp_type_describe(rewrite.out, after, after_text, sizeof after_text);
            tp_log_message(TP_LOG_WARN, "shapeprop: %%%s was %s, its rule gives %s",
                           tp_graph_value_name(in, v), before_text, after_text);
            *differs = true;
        }
    }
    return tp_rewrite_finish(&rewrite, out);
}

tp_status tp_pass_shapeprop(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed) {
    *out = NULL;
    *changed = false;
    tp_graph *rebuilt = NULL;
    bool differs = false;
    tp_status status = rebuild(in, &rebuilt, &differs);
    if (status != TP_OK)
        tp_log_message(TP_LOG_WARN, "shapeprop: kept the graph unchanged: %s", tp_last_error());
    if (status != TP_OK || differs) {
        tp_graph_destroy(rebuilt);
        return tp_graph_clone(in, out);
    }
    *out = rebuilt;
    return TP_OK;
}
