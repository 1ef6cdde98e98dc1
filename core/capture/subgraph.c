/* Copying part of a graph into another through the public builder, so that
 * types are re-derived by the op table's rules (capture.h:
 * tp_subgraph_append). Used for gate programs and for making a captured
 * graph symbolic. */
#include <stdlib.h>

#include "../base/error.h"
#include "capture.h"

tp_status tp_subgraph_append(tp_graph *dst, const tp_graph *src, const bool *keep,
                             const tp_type *input_types, tp_value_id *map) {
    int count = tp_graph_num_values(src);
    for (int i = 0; i < count; i++) map[i] = TP_NO_VALUE;
    for (int i = 0; i < tp_graph_num_inputs(src); i++) {
        tp_value_id value = tp_graph_input(src, i);
        const tp_type *type = input_types ? &input_types[i] : tp_graph_value_type(src, value);
        TP_TRY(tp_graph_add_input(dst, tp_graph_value_name(src, value), type, &map[value]));
    }
    tp_value_id operands[64];
    for (tp_value_id value = 0; value < count; value++) {
        const char *op = tp_graph_value_op(src, value);
        if (!op || (keep && !keep[value])) continue;
        int num_operands = tp_graph_value_num_operands(src, value);
        if (num_operands > 64)
            return tp_error_set(TP_ERR_UNSUPPORTED, "subgraph: %s with %d operands", op,
                                num_operands);
        for (int i = 0; i < num_operands; i++) {
            operands[i] = map[tp_graph_value_operand(src, value, i)];
            if (operands[i] == TP_NO_VALUE)
                return tp_error_set(TP_ERR_INTERNAL,
                                    "subgraph: %%%s needs a value that was not kept",
                                    tp_graph_value_name(src, value));
        }
        TP_TRY(tp_graph_add_node(dst, op, operands, num_operands, tp_graph_value_attrs(src, value),
                                 NULL, &map[value]));
    }
    return TP_OK;
}
