/* Coverage for the conformance kit: which nodes of each case the backend
 * claims (tp_backend_claims: a revision-2 backend's `supports` answers, all
 * nodes for a whole-graph backend), counted per op, summed over the cases
 * and printed as claimed nodes / all nodes. A partial backend passes the kit
 * with a low coverage; --min-coverage sets the floor a release wants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

static conformance_op_claims *find_row(conformance_op_claims *rows, int *count, int max,
                                       const char *op) {
    for (int r = 0; r < *count; r++)
        if (strcmp(rows[r].op, op) == 0) return &rows[r];
    if (*count == max) return NULL;
    conformance_op_claims *row = &rows[(*count)++];
    memset(row, 0, sizeof *row);
    snprintf(row->op, sizeof row->op, "%s", op);
    return row;
}

void conformance_count_claims(tp_backend *backend, const tp_graph *graph,
                              conformance_result *result) {
    result->num_ops = 0;
    int num_values = tp_graph_num_values(graph);
    bool *claimed = calloc((size_t)num_values + 1, sizeof *claimed);
    if (!claimed) return;
    if (tp_backend_claims(backend, graph, claimed, NULL) == TP_OK) {
        for (int v = 0; v < num_values; v++) {
            const char *op = tp_graph_value_op(graph, v);
            if (!op) continue; /* a graph input */
            conformance_op_claims *row =
                find_row(result->ops, &result->num_ops, CONFORMANCE_MAX_CASE_OPS, op);
            if (!row) continue;
            row->nodes++;
            row->claimed += claimed[v];
        }
    }
    free(claimed);
}

void conformance_add_claims(conformance_op_claims *totals, int *count,
                            const conformance_op_claims *op) {
    conformance_op_claims *row = find_row(totals, count, CONFORMANCE_MAX_OPS, op->op);
    if (!row) return;
    row->claimed += op->claimed;
    row->nodes += op->nodes;
}

static void sum(const conformance_op_claims *totals, int count, int *claimed, int *nodes) {
    *claimed = *nodes = 0;
    for (int r = 0; r < count; r++) *claimed += totals[r].claimed, *nodes += totals[r].nodes;
}

static double percent(int claimed, int nodes) {
    return nodes ? 100.0 * claimed / nodes : 0.0;
}

double conformance_print_coverage(const conformance_op_claims *totals, int count) {
    int claimed, nodes;
    sum(totals, count, &claimed, &nodes);
    printf("\ncoverage (nodes the backend claims; the rest runs on the fallback):\n");
    printf("%-20s %8s %8s %8s\n", "OP", "NODES", "CLAIMED", "PERCENT");
    for (int r = 0; r < count; r++)
        printf("%-20s %8d %8d %7.1f%%\n", totals[r].op, totals[r].nodes, totals[r].claimed,
               percent(totals[r].claimed, totals[r].nodes));
    printf("%-20s %8d %8d %7.1f%%\n", "total", nodes, claimed, percent(claimed, nodes));
    return percent(claimed, nodes);
}

void conformance_write_coverage_json(FILE *out, const conformance_op_claims *totals, int count) {
    int claimed, nodes;
    sum(totals, count, &claimed, &nodes);
    fprintf(out, "\"coverage\": {\"nodes\": %d, \"claimed\": %d, \"percent\": %.2f, \"ops\": [",
            nodes, claimed, percent(claimed, nodes));
    for (int r = 0; r < count; r++)
        fprintf(out, "%s{\"op\": \"%s\", \"nodes\": %d, \"claimed\": %d}", r ? ", " : "",
                totals[r].op, totals[r].nodes, totals[r].claimed);
    fputs("]}", out);
}
