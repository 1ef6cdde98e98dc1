/* bench_partition: what partitioning adds to a 1,000-node compile (not a
 * test; prints figures). A registered revision-2 backend claims only `add`;
 * the graph alternates add and exp, so every node is a region boundary
 * candidate. Reports claims + region split alone, and the whole partitioned
 * compile (region graphs + eager compiles) against one whole-graph eager
 * compile.
 *   build/tests/compile/bench_partition [iterations] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/partition.h"
#include "registry/registry_internal.h"
#include "tensorplay/plugin_ops.h"

static int32_t add_only_supports(void *context, const tp_plugin_graph *graph, int32_t value) {
    (void)context;
    return graph->nodes[value].op_id == TP_PLUGIN_OP_ADD ? TP_PLUGIN_OK : TP_PLUGIN_UNSUPPORTED;
}
static const tp_plugin_backend *eager_calls(void) {
    return tp_builtin_eager_table();
}
static tp_plugin_backend add_only_table;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what) {
    fprintf(stderr, "bench_partition: %s: %s\n", what, tp_last_error());
    exit(1);
}

int main(int argc, char **argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 50;
    add_only_table = *eager_calls(); /* eager's compile/run: it runs what it is given */
    add_only_table.name = "add_only";
    add_only_table.calls.supports = add_only_supports;
    if (tp_backend_register(&add_only_table, NULL) != TP_OK) die("register");
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {16}};
    tp_value_id x = 0, current;
    if (tp_graph_create("chain", &graph) != TP_OK || tp_graph_add_input(graph, "x", &type, &x))
        die("graph");
    current = x;
    for (int i = 0; i < 1000; i++) {
        tp_value_id operands[2] = {current, x};
        if (tp_graph_add_node(graph, i % 2 ? "exp" : "add", operands, i % 2 ? 1 : 2, NULL, NULL,
                              &current) != TP_OK)
            die("node");
    }
    tp_graph_set_outputs(graph, &current, 1);
    tp_backend *partial = NULL, *eager = NULL;
    if (tp_backend_lookup("add_only", &partial) || tp_backend_lookup("eager", &eager))
        die("lookup");
    bool *claimed = malloc(2000 * sizeof *claimed);
    int32_t *color = malloc(2000 * sizeof *color);
    double start = now_us();
    int regions = 0;
    for (int it = 0; it < iterations; it++) {
        if (tp_backend_claims(partial, graph, claimed, NULL) != TP_OK) die("claims");
        for (int v = 0; v < tp_graph_num_values(graph); v++) color[v] = claimed[v] ? 0 : 1;
        tp_partition partition;
        if (tp_partition_compute(graph, color, 3, &partition) != TP_OK) die("partition");
        regions = partition.num_regions;
        tp_partition_clear(&partition);
    }
    double split = (now_us() - start) / iterations;
    start = now_us();
    for (int it = 0; it < iterations; it++) {
        tp_executable *executable = NULL;
        if (tp_backend_compile(eager, graph, NULL, 0, NULL, 0, &executable) != TP_OK) die("eager");
        tp_executable_destroy(executable);
    }
    double whole = (now_us() - start) / iterations;
    tp_partition_request request = {
        .function_name = "chain", .graph = graph, .backend = partial, .fallback_name = "eager"};
    start = now_us();
    for (int it = 0; it < iterations; it++) {
        tp_executable *single = NULL;
        tp_partitioned *partitioned = NULL;
        if (tp_partitioned_compile(&request, &single, &partitioned, NULL, NULL) != TP_OK)
            die("partitioned compile");
        tp_partitioned_destroy(partitioned);
    }
    double split_compile = (now_us() - start) / iterations;
    printf("1000-node add/exp chain, %d iterations\n", iterations);
    printf("  claims + convex split          %8.1f us (%d regions)\n", split, regions);
    printf("  whole-graph eager compile      %8.1f us\n", whole);
    printf("  partitioned compile (all)      %8.1f us\n", split_compile);
    free(claimed);
    free(color);
    tp_graph_destroy(graph);
    return 0;
}
