/* The dce pass (dead-code elimination): keeps the nodes some output depends
 * on and drops the rest. Inputs are always kept, used or not, because they
 * are the graph's calling signature. Every op is pure, so an unread node has
 * no effect. Owns nothing else.
 */
#include "pass_internal.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "base/error.h"

/* live[v] for every value: reachable backwards from an output. Ids are
 * topological, so one sweep from the highest id down suffices. */
static tp_status mark_live(const tp_graph *graph, bool **live_out) {
    int count = tp_graph_num_values(graph);
    bool *live = tp_calloc((size_t)count, sizeof *live);
    if (!live) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "dce: out of memory for %d marks", count);
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) live[tp_graph_output(graph, i)] = true;
    for (tp_value_id v = count - 1; v >= 0; v--) {
        if (!live[v]) continue;
        int operands = tp_graph_value_num_operands(graph, v);
        for (int i = 0; i < operands; i++) live[tp_graph_value_operand(graph, v, i)] = true;
    }
    *live_out = live;
    return TP_OK;
}

tp_status tp_pass_dce(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                      bool *changed) {
    *out = NULL;
    *changed = false;
    bool *live = NULL;
    TP_TRY(mark_live(in, &live));
    tp_rewrite rewrite;
    tp_status status = tp_rewrite_begin(in, &rewrite);
    for (tp_value_id v = 0; v < rewrite.num_values && status == TP_OK; v++) {
        bool is_input = tp_graph_value_op(in, v) == NULL;
        if (is_input || live[v])
            status = tp_rewrite_copy(&rewrite, v);
        else
            *changed = true;
    }
    free(live);
    if (status != TP_OK) {
        if (rewrite.map) tp_rewrite_abort(&rewrite);
        return tp_error_prefix(status, "dce: ");
    }
    return tp_rewrite_finish(&rewrite, out);
}
