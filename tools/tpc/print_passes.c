/* tpc: `tpc print --passes G.tpir` — prints the graph as loaded, then after
 * each pass of the pipeline (include/tensorplay/passes.h). Every line that is not graph text starts
 * with '#', so each printed graph can be cut out and parsed again. Public API only. */
#include <stdio.h>
#include <stdlib.h>

#include "tensorplay/passes.h"
#include "tpc.h"

static void print_graph(const tp_graph *graph) {
    char *text = NULL;
    if (tp_graph_print(graph, &text) != TP_OK) {
        printf("# (cannot print: %s)\n", tp_last_error());
        return;
    }
    fputs(text, stdout);
    tp_free(text);
}

static void after_pass(const char *pass_name, const tp_graph *graph, bool changed, void *user) {
    (void)user;
    int nodes = tp_graph_num_values(graph) - tp_graph_num_inputs(graph);
    printf("\n# ---- after %s (%s, %d nodes)%s\n", pass_name, changed ? "changed" : "unchanged",
           nodes, changed ? "" : ": same graph");
    if (changed) print_graph(graph);
}

int tpc_print_passes(const char *path) {
    tp_graph *graph = NULL, *optimized = NULL;
    if (tpc_load_graph(path, &graph) != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return EXIT_FAILURE;
    }
    printf("# ---- input (%d nodes)\n", tp_graph_num_values(graph) - tp_graph_num_inputs(graph));
    print_graph(graph);
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.after_pass = after_pass;
    tp_status status = tp_pass_pipeline_run(graph, &options, &optimized);
    tp_graph_destroy(graph);
    if (status != TP_OK) {
        fflush(stdout);
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return EXIT_FAILURE;
    }
    tp_graph_destroy(optimized);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
