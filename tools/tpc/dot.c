/* tpc: `tpc dot G.tpir [--passes] [--backend NAME] [--fallback NAME]
 * [--max-nodes N] [-o FILE.dot] [--png FILE.png]` — the graph in Graphviz's
 * DOT language. As loaded: one box per node (name, op, type), one ellipse per
 * input, an edge per operand, outputs drawn with a double border. With
 * --passes or --backend: the graph after the pass pipeline, each partition
 * region a cluster filled with its backend's colour, and every tensor that
 * crosses from one region to another drawn as a thick red edge labelled
 * with its type; above --max-nodes nodes each region is one box with its
 * node count. Fusion clusters are the backends' own and are not drawn.
 * Public API only; --png runs Graphviz's `dot`. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tpc.h"

/* Fill colours by backend, in order of first use (Tableau's light tones). */
static const char *const backend_colors[] = {"#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5",
                                             "#f7b6d2", "#dbdb8d", "#9edae5", "#c49c94"};
#define NUM_BACKEND_COLORS ((int)(sizeof backend_colors / sizeof backend_colors[0]))
#define CROSSING_COLOR     "#d62728"

typedef struct dot_partition {
    int32_t *region_of; /* per value, -1 for inputs; NULL: not partitioned */
    tp_partition_region_info *regions;
    int num_regions;
    int *region_color; /* per region: index into backend_colors */
} dot_partition;

/* Writes `text` as the inside of a DOT string (quotes and backslashes). */
static void put_escaped(FILE *out, const char *text) {
    for (; *text; text++) {
        if (*text == '"' || *text == '\\') fputc('\\', out);
        fputc(*text, out);
    }
}

static bool is_output(const tp_graph *graph, tp_value_id value) {
    for (int i = 0; i < tp_graph_num_outputs(graph); i++)
        if (tp_graph_output(graph, i) == value) return true;
    return false;
}

static void put_value_node(FILE *out, const tp_graph *graph, tp_value_id value,
                           const char *indent) {
    char type[256];
    const char *op = tp_graph_value_op(graph, value);
    fprintf(out, "%sv%d [label=\"%%", indent, (int)value);
    put_escaped(out, tp_graph_value_name(graph, value));
    if (op) {
        fputs(" = ", out);
        put_escaped(out, op);
    }
    fputs("\\n", out);
    put_escaped(out, tp_type_describe(graph, tp_graph_value_type(graph, value), type, sizeof type));
    fprintf(out, "\"%s%s];\n", op ? "" : ", shape=ellipse",
            is_output(graph, value) ? ", peripheries=2" : "");
}

static void put_region_header(FILE *out, const dot_partition *split, int r) {
    const tp_partition_region_info *region = &split->regions[r];
    fprintf(out, "  subgraph cluster_r%d {\n    label=\"region %d: ", r, r);
    put_escaped(out, region->backend);
    fprintf(out, " (%d node%s)\";\n    style=filled; fillcolor=\"%s\";\n", (int)region->num_nodes,
            region->num_nodes == 1 ? "" : "s", backend_colors[split->region_color[r]]);
}

static void put_edges(FILE *out, const tp_graph *graph, const dot_partition *split) {
    char type[256];
    for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++)
        for (int k = 0; k < tp_graph_value_num_operands(graph, v); k++) {
            tp_value_id operand = tp_graph_value_operand(graph, v, k);
            bool crossing = split->region_of && split->region_of[operand] >= 0 &&
                            split->region_of[operand] != split->region_of[v];
            fprintf(out, "  v%d -> v%d", (int)operand, (int)v);
            if (crossing) {
                fprintf(out, " [color=\"%s\", penwidth=2.5, label=\"", CROSSING_COLOR);
                put_escaped(out, tp_type_describe(graph, tp_graph_value_type(graph, operand), type,
                                                  sizeof type));
                fputs("\"]", out);
            }
            fputs(";\n", out);
        }
}

static void put_full(FILE *out, const tp_graph *graph, const dot_partition *split) {
    for (int i = 0; i < tp_graph_num_inputs(graph); i++)
        put_value_node(out, graph, tp_graph_input(graph, i), "  ");
    for (int r = 0; r < split->num_regions; r++) {
        put_region_header(out, split, r);
        for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++)
            if (split->region_of[v] == r) put_value_node(out, graph, v, "    ");
        fputs("  }\n", out);
    }
    if (!split->region_of) /* not partitioned: every node outside any cluster */
        for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++)
            if (tp_graph_value_op(graph, v)) put_value_node(out, graph, v, "  ");
    put_edges(out, graph, split);
}

/* One box per region; an edge per pair of regions (or input and region)
 * that a tensor crosses, labelled with how many distinct tensors do. */
static int put_collapsed(FILE *out, const tp_graph *graph, const dot_partition *split) {
    int n = split->num_regions, num_values = tp_graph_num_values(graph);
    int *tensors = calloc((size_t)n * (size_t)n + 1, sizeof *tensors);
    int *last_reader = malloc(((size_t)num_values + 1) * sizeof *last_reader);
    if (!tensors || !last_reader) {
        free(tensors);
        free(last_reader);
        fprintf(stderr, "tpc: dot: out of memory\n");
        return EXIT_FAILURE;
    }
    for (int i = 0; i < tp_graph_num_inputs(graph); i++)
        put_value_node(out, graph, tp_graph_input(graph, i), "  ");
    for (int r = 0; r < n; r++) {
        put_region_header(out, split, r);
        fprintf(out, "    r%d [label=\"", r);
        put_escaped(out, split->regions[r].backend);
        fprintf(out, "\\n%d node%s\"];\n  }\n", (int)split->regions[r].num_nodes,
                split->regions[r].num_nodes == 1 ? "" : "s");
    }
    /* per reading region: one edge per input it reads, distinct tensors counted */
    for (int v = 0; v < num_values; v++) last_reader[v] = -1;
    for (int to = 0; to < n; to++)
        for (tp_value_id v = 0; v < num_values; v++) {
            if (split->region_of[v] != to) continue;
            for (int k = 0; k < tp_graph_value_num_operands(graph, v); k++) {
                tp_value_id operand = tp_graph_value_operand(graph, v, k);
                int from = split->region_of[operand];
                if (from == to || last_reader[operand] == to) continue;
                last_reader[operand] = to;
                if (from < 0)
                    fprintf(out, "  v%d -> r%d;\n", (int)operand, to);
                else
                    tensors[from * n + to]++;
            }
        }
    for (int from = 0; from < n; from++)
        for (int to = 0; to < n; to++)
            if (tensors[from * n + to])
                fprintf(out, "  r%d -> r%d [color=\"%s\", penwidth=2.5, label=\"%d tensor%s\"];\n",
                        from, to, CROSSING_COLOR, tensors[from * n + to],
                        tensors[from * n + to] == 1 ? "" : "s");
    free(tensors);
    free(last_reader);
    return EXIT_SUCCESS;
}

static int write_dot(FILE *out, const tp_graph *graph, const dot_partition *split, int max_nodes,
                     const char *title) {
    fputs("digraph \"", out);
    put_escaped(out, tp_graph_name(graph));
    fputs("\" {\n  graph [label=\"", out);
    put_escaped(out, title);
    fputs("\", labelloc=t, fontname=\"Helvetica\"];\n"
          "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n"
          "  edge [fontname=\"Helvetica\", fontsize=10];\n",
          out);
    int nodes = tp_graph_num_values(graph) - tp_graph_num_inputs(graph);
    int code = split->region_of && nodes > max_nodes ? put_collapsed(out, graph, split)
                                                     : (put_full(out, graph, split), EXIT_SUCCESS);
    fputs("}\n", out);
    return code;
}

/* Pipes the DOT text of `dot_path` through `dot -Tpng -o png_path`. */
static int render_png(const char *dot_path, const char *png_path) {
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "tpc: --png: cannot start Graphviz's dot: %s\n", strerror(errno));
        return EXIT_FAILURE;
    }
    if (child == 0) {
        execlp("dot", "dot", "-Tpng", dot_path, "-o", png_path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return EXIT_FAILURE;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fprintf(stderr,
                "tpc: --png needs Graphviz's 'dot' on PATH (install graphviz); %s was written\n",
                dot_path);
        return EXIT_FAILURE;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tpc: --png: Graphviz's dot failed on %s\n", dot_path);
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}

/* Colours by backend in order of first use. */
static int color_regions(dot_partition *split) {
    split->region_color = calloc((size_t)split->num_regions + 1, sizeof *split->region_color);
    if (!split->region_color) return EXIT_FAILURE;
    const char *seen[NUM_BACKEND_COLORS];
    int num_seen = 0;
    for (int r = 0; r < split->num_regions; r++) {
        int c = 0;
        while (c < num_seen && strcmp(seen[c], split->regions[r].backend) != 0) c++;
        if (c == num_seen && num_seen < NUM_BACKEND_COLORS)
            seen[num_seen++] = split->regions[r].backend;
        split->region_color[r] = c % NUM_BACKEND_COLORS;
    }
    return EXIT_SUCCESS;
}

static int emit(const tpc_dot_request *request, const tp_graph *graph, const dot_partition *split) {
    char title[512];
    if (split->region_of)
        snprintf(
            title, sizeof title, "%s after the pass pipeline, partitioned for backend '%s'%s%s%s",
            request->graph_path, request->backend ? request->backend : tp_backend_get_default(),
            request->fallback ? " (fallback '" : "", request->fallback ? request->fallback : "",
            request->fallback ? "')" : "");
    else
        snprintf(title, sizeof title, "%s as loaded", request->graph_path);
    const char *dot_path = request->out_path;
    char temp_path[] = "/tmp/tpc-dot-XXXXXX";
    FILE *out = stdout;
    if (!dot_path && request->png_path) {
        int fd = mkstemp(temp_path);
        out = fd >= 0 ? fdopen(fd, "w") : NULL;
        dot_path = temp_path;
    } else if (dot_path) {
        out = fopen(dot_path, "w");
    }
    if (!out) {
        fprintf(stderr, "tpc: cannot write %s: %s\n", dot_path, strerror(errno));
        return EXIT_FAILURE;
    }
    int code = write_dot(out, graph, split, request->max_nodes, title);
    if ((out == stdout ? fflush(out) : fclose(out)) != 0 && code == EXIT_SUCCESS) {
        fprintf(stderr, "tpc: cannot write %s: %s\n", dot_path ? dot_path : "stdout",
                strerror(errno));
        code = EXIT_FAILURE;
    }
    if (code == EXIT_SUCCESS && request->png_path) code = render_png(dot_path, request->png_path);
    if (dot_path == temp_path) unlink(temp_path);
    return code;
}

int tpc_dot(const tpc_dot_request *request) {
    tp_graph *loaded = NULL, *optimized = NULL;
    dot_partition split = {0};
    if (tp_graph_load(request->graph_path, &loaded) != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return EXIT_FAILURE;
    }
    bool partitioned = request->passes || request->backend || request->fallback;
    int code = EXIT_SUCCESS;
    if (partitioned &&
        tp_partition_plan(loaded, request->backend, request->fallback, &optimized, &split.region_of,
                          &split.regions, &split.num_regions) != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        code = EXIT_FAILURE;
    }
    if (code == EXIT_SUCCESS && partitioned && color_regions(&split) != EXIT_SUCCESS) {
        fprintf(stderr, "tpc: dot: out of memory\n");
        code = EXIT_FAILURE;
    }
    if (code == EXIT_SUCCESS) code = emit(request, partitioned ? optimized : loaded, &split);
    tp_free(split.region_of);
    tp_free(split.regions);
    free(split.region_color);
    tp_graph_destroy(optimized);
    tp_graph_destroy(loaded);
    return code;
}
