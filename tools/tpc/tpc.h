/* tpc — run, print and check .tpir graphs. Shared between the command-line
 * front (main.c) and the step that runs a graph (run.c), which is the one
 * place a later `--backend NAME` option will route through the registry. */
#ifndef TP_TOOLS_TPC_H
#define TP_TOOLS_TPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/graph.h"
#include "tensorplay/tensor.h"

/* --profile (profile.c): the core's phase events and tpc's own timings. */
typedef struct tpc_profile tpc_profile;
/* Installs the core's profile handler; NULL when out of memory. */
tpc_profile *tpc_profile_begin(void);
void tpc_profile_add(tpc_profile *profile, const char *name, uint64_t start_ns, uint64_t end_ns);
void tpc_profile_steady_run(tpc_profile *profile, uint64_t start_ns, uint64_t end_ns);
/* Removes the handler, prints the table on stderr, writes the trace-event
 * JSON when json_path is set, frees the profile. */
int tpc_profile_finish(tpc_profile *profile, const char *json_path);

typedef struct tpc_run_options {
    const char *backend;  /* --backend NAME; NULL: the default backend */
    const char *mode;     /* --mode NAME: tp_compile's mode (default, max-autotune, ...) */
    const char **options; /* --option KEY=VALUE, passed to the backend */
    int num_options;
    bool dynamic;         /* --dynamic: compile for any sizes of these ranks */
    bool fullgraph;       /* --fullgraph: refuse to split the graph between backends */
    tpc_profile *profile; /* --profile: time the first run and `repeat` more */
    int repeat;
} tpc_run_options;

/* Compiles `graph` through tp_compile_graph on the chosen backend (the same
 * frontend as a C function: passes, guards, cache) and runs it on `inputs`
 * (one per graph input, in order); fills `outputs` with
 * tp_graph_num_outputs new references. Sets tp_last_error on failure. */
tp_status tpc_run_graph(const tpc_run_options *options, const tp_graph *graph,
                        tp_tensor *const *inputs, int num_inputs, tp_tensor **outputs);

/* Loads a .onnx model (tp_graph_load_onnx) or a .tpir graph (load.c). */
bool tpc_is_onnx_path(const char *path);
tp_status tpc_load_graph(const char *path, tp_graph **out);

/* One member of a .npz archive: its array name and .npy bytes (npz.c).
 * Returns 0 to go on, non-zero (an exit code) to stop. */
typedef int (*tpc_npz_member_fn)(const char *name, const void *npy, size_t size,
                                 const char *archive, void *user);
/* Calls `member` for each array of the archive; returns 0 or an exit code
 * (the message is on stderr). */
int tpc_npz_each(const char *path, tpc_npz_member_fn member, void *user);

/* tpc run's input tensors by name (inputs.c). Functions returning int give
 * 0 or an exit code, with the message on stderr. */
typedef struct tpc_named_tensor {
    char *name;   /* as given (an ONNX name or a graph input name) */
    char *source; /* the file (or archive:member) it came from */
    tp_tensor *tensor;
} tpc_named_tensor;
typedef struct tpc_input_set {
    tpc_named_tensor *items;
    int count, capacity;
} tpc_input_set;
int tpc_inputs_add_file(tpc_input_set *set, const char *name, const char *path);
int tpc_inputs_add_npz(tpc_input_set *set, const char *path);
void tpc_inputs_free(tpc_input_set *set);
/* Fills `inputs` (one per graph input, new references): every input once. */
int tpc_inputs_bind(const tpc_input_set *set, const tp_graph *graph, tp_tensor **inputs);
/* Loads the graph; an ONNX model may read the given inputs at import time. */
tp_status tpc_load_graph_with_inputs(const char *path, const tpc_input_set *set, tp_graph **out);

/* Crash reports (crash_report.c): install once; name the backend, phase
 * ("load", "compile", "run") and graph before each phase; clear after. */
void tpc_crash_report_install(void);
void tpc_crash_report_phase(const char *backend, const char *phase, const char *graph);
void tpc_crash_report_clear(void);

/* `tpc print --passes G.tpir`: the graph after each pass (print_passes.c). */
int tpc_print_passes(const char *path);

/* `tpc dot`: the graph in Graphviz's DOT language (dot.c). */
typedef struct tpc_dot_request {
    const char *graph_path;
    const char *out_path; /* -o FILE.dot; NULL: stdout (or a temporary file with --png) */
    const char *png_path; /* --png FILE.png: rendered by Graphviz's dot */
    const char *backend;  /* --backend NAME: partition for it (implies passes) */
    const char *fallback; /* --fallback NAME (implies passes) */
    bool passes;          /* --passes: after the pipeline, partitioned for the default */
    int max_nodes;        /* --max-nodes N: above it, one box per region */
} tpc_dot_request;
int tpc_dot(const tpc_dot_request *request);

#endif
