/* bench_scale: how the compiler scales with graph size (a benchmark, not a
 * test: it prints figures and asserts no time). For each node count N it
 * builds a chain of N `add` nodes (v = v + x) through the public graph API
 * and times the verifier, the printer, the parser, each pass of the
 * pipeline and the whole pipeline; with backends named it also times
 * tp_backend_compile + one run of the chain on each.
 *   build/tests/scale/bench_scale [-b eager,stax,opencl] [-o FILE.tpir] N...
 * -o writes the last chain as .tpir (what `tpc check` is timed on).
 * Each figure is wall time, then this process's CPU time in parentheses
 * (on a loaded machine the second is the one to compare). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/passes.h"
#include "tensorplay/tensor.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A phase's start: wall and CPU clocks. */
typedef struct stamp {
    double wall, cpu;
} stamp;

static stamp stamp_now(void) {
    return (stamp){now_s(), cpu_s()};
}

/* "  WHAT   wall s (cpu s)" for the time since `start`. */
static void report(const char *what, stamp start) {
    printf("  %-16s %8.3f s (%.3f s cpu)", what, now_s() - start.wall, cpu_s() - start.cpu);
}

static void check(tp_status status, const char *what) {
    if (status == TP_OK) return;
    fprintf(stderr, "bench_scale: %s: %s\n", what, tp_last_error());
    exit(1);
}

static tp_graph *add_chain(int nodes) {
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_value_id x = 0, v = 0;
    check(tp_graph_create("chain", &graph), "create");
    check(tp_graph_add_input(graph, "x", &type, &x), "input");
    v = x;
    for (int i = 0; i < nodes; i++) {
        tp_value_id operands[2] = {v, x};
        check(tp_graph_add_node(graph, "add", operands, 2, NULL, NULL, &v), "add");
    }
    check(tp_graph_set_outputs(graph, &v, 1), "outputs");
    return graph;
}

static void time_passes(const tp_graph *graph) {
    for (int pass = 0; pass < TP_PASS_COUNT; pass++) {
        tp_graph *out = NULL;
        char what[32];
        snprintf(what, sizeof what, "pass %s", tp_pass_name(pass));
        stamp start = stamp_now();
        check(tp_pass_run((tp_pass_id)pass, graph, NULL, &out, NULL), tp_pass_name(pass));
        report(what, start);
        printf("\n");
        tp_graph_destroy(out);
    }
    tp_graph *out = NULL;
    stamp start = stamp_now();
    check(tp_pass_pipeline_run(graph, NULL, &out), "pipeline");
    report("pipeline", start);
    printf("\n");
    tp_graph_destroy(out);
}

static void time_text(const tp_graph *graph) {
    stamp start = stamp_now();
    check(tp_graph_verify(graph), "verify");
    report("verify", start);
    printf("\n");
    char *text = NULL;
    start = stamp_now();
    check(tp_graph_print(graph, &text), "print");
    report("print", start);
    printf("  (%zu bytes)\n", strlen(text));
    tp_graph *parsed = NULL;
    start = stamp_now();
    check(tp_graph_parse(text, strlen(text), "chain.tpir", &parsed), "parse");
    report("parse", start);
    printf("\n");
    tp_graph_destroy(parsed);
    tp_free(text);
}

static void time_backend(const char *name, const tp_graph *graph, int nodes) {
    tp_backend *backend = NULL;
    if (tp_backend_lookup(name, &backend) != TP_OK) {
        printf("  %-8s unavailable: %s\n", name, tp_last_error());
        return;
    }
    tp_tensor *x = NULL;
    int64_t shape[1] = {4};
    check(tp_tensor_create(TP_F32, 1, shape, &x), "tensor");
    float *data = tp_tensor_data_mut(x);
    for (int i = 0; i < 4; i++) data[i] = (float)(i + 1);
    tp_executable *executable = NULL;
    stamp start = stamp_now();
    tp_status status = tp_backend_compile(backend, graph, &x, 1, NULL, 0, &executable);
    char what[32];
    snprintf(what, sizeof what, "%s compile", name);
    report(what, start);
    printf("\n");
    if (status != TP_OK) {
        printf("  %s compile failed: %s\n", name, tp_last_error());
        tp_tensor_release(x);
        return;
    }
    tp_tensor *out = NULL;
    start = stamp_now();
    check(tp_executable_run(executable, &x, 1, &out), "run");
    snprintf(what, sizeof what, "%s run", name);
    report(what, start);
    printf("  out[3] = %g (expect %d)\n", tp_tensor_get_f64(out, 3), 4 * (nodes + 1));
    tp_tensor_release(out);
    tp_executable_destroy(executable);
    tp_tensor_release(x);
}

int main(int argc, char **argv) {
    const char *backends = NULL, *save = NULL;
    int first = 1;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-b") == 0) backends = argv[first + 1];
        if (strcmp(argv[first], "-o") == 0) save = argv[first + 1];
        first += 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench_scale [-b BACKENDS] [-o FILE.tpir] N...\n");
        return 2;
    }
    for (int a = first; a < argc; a++) {
        int nodes = atoi(argv[a]);
        double start = now_s();
        tp_graph *graph = add_chain(nodes);
        printf("chain of %d add nodes (built in %.3f s)\n", nodes, now_s() - start);
        time_text(graph);
        time_passes(graph);
        if (backends) {
            char list[256];
            snprintf(list, sizeof list, "%s", backends);
            for (char *name = strtok(list, ","); name; name = strtok(NULL, ","))
                time_backend(name, graph, nodes);
        }
        if (save && a == argc - 1) check(tp_graph_save(graph, save), "save");
        tp_graph_destroy(graph);
    }
    return 0;
}
