/* Times the pass pipeline (normalize → … → shapeprop)
 * on a 50-node graph: four transformer-like blocks (layer_norm, linear,
 * bias, gelu, an x*1 and an x+0 left by a tracer, softmax, a duplicated gelu,
 * residual add). Public API only. Prints the node counts and the median and
 * mean time per pipeline run. Usage: bench_passes [runs (default 500)] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tensorplay/graph.h"
#include "tensorplay/passes.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != TP_OK) {                                                                     \
            fprintf(stderr, "bench_passes: %s: %s\n", #call, tp_last_error());                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static tp_value_id node(tp_graph *g, const char *op, tp_value_id a, tp_value_id b, int n,
                        const tp_attrs *attrs) {
    tp_value_id ins[2] = {a, b}, out;
    CHECK(tp_graph_add_node(g, op, ins, n, attrs, NULL, &out));
    return out;
}

static tp_value_id full(tp_graph *g, double value) {
    tp_attrs a = TP_ATTRS_INIT;
    a.dtype = TP_F32;
    a.value = value;
    return node(g, "full", 0, 0, 0, &a);
}

static tp_graph *build_graph(void) {
    tp_graph *g;
    CHECK(tp_graph_create("bench", &g));
    tp_type x_type = {.dtype = TP_F32, .ndim = 2, .dims = {32, 64}};
    tp_type w_type = {.dtype = TP_F32, .ndim = 2, .dims = {64, 64}};
    tp_type b_type = {.dtype = TP_F32, .ndim = 1, .dims = {64}};
    tp_value_id x, w, bias;
    CHECK(tp_graph_add_input(g, "x", &x_type, &x));
    CHECK(tp_graph_add_input(g, "w", &w_type, &w));
    CHECK(tp_graph_add_input(g, "b", &b_type, &bias));
    tp_attrs last = TP_ATTRS_INIT;
    last.axis = -1;
    tp_attrs erf_gelu = TP_ATTRS_INIT;
    for (int block = 0; block < 4; block++) {
        tp_value_id ln = node(g, "layer_norm", x, 0, 1, &last);
        tp_value_id h = node(g, "linear", ln, w, 2, NULL);
        h = node(g, "add", h, bias, 2, NULL);
        tp_value_id one = full(g, 1.0), zero = full(g, 0.0);
        h = node(g, "mul", h, one, 2, NULL);
        h = node(g, "add", zero, h, 2, NULL);
        tp_value_id g1 = node(g, "gelu", h, 0, 1, &erf_gelu);
        tp_value_id g2 = node(g, "gelu", h, 0, 1, &erf_gelu);
        tp_value_id s = node(g, "softmax", node(g, "add", g1, g2, 2, NULL), 0, 1, &last);
        tp_value_id e = block < 2 ? node(g, "tanh", s, 0, 1, NULL) : s; /* 50 nodes in all */
        x = node(g, "add", x, e, 2, NULL);
    }
    CHECK(tp_graph_set_outputs(g, &x, 1));
    return g;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 500;
    if (runs < 1) runs = 1;
    tp_graph *g = build_graph();
    int nodes = tp_graph_num_values(g) - tp_graph_num_inputs(g);
    double *times = malloc((size_t)runs * sizeof *times);
    tp_graph *out = NULL;
    for (int i = 0; i < 5; i++) { /* warm-up */
        CHECK(tp_pass_pipeline_run(g, NULL, &out));
        tp_graph_destroy(out);
    }
    double total = 0;
    for (int i = 0; i < runs; i++) {
        double start = now_seconds();
        CHECK(tp_pass_pipeline_run(g, NULL, &out));
        times[i] = now_seconds() - start;
        total += times[i];
        if (i + 1 < runs) tp_graph_destroy(out);
    }
    qsort(times, (size_t)runs, sizeof *times, compare_doubles);
    printf("passes: %d-node graph -> %d nodes\n", nodes,
           tp_graph_num_values(out) - tp_graph_num_inputs(out));
    printf("passes: pipeline median %.1f us, mean %.1f us over %d runs\n", times[runs / 2] * 1e6,
           total / runs * 1e6, runs);
    tp_graph_destroy(out);
    tp_graph_destroy(g);
    free(times);
    return 0;
}
