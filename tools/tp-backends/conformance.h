/* The conformance kit of `tp-backends check NAME --conformance`: a corpus of
 * .tpir graphs (sdk/conformance, installed to share/tensorplay/conformance)
 * run on a backend and on `eager`, outputs compared with per-dtype
 * tolerances.
 *
 *   conformance_corpus.c  finding the corpus, reading its files and their
 *                         directives, expanding them into cases (one per
 *                         dtype and dimension binding), retyping a graph for
 *                         a dtype, making a case's inputs. Public API only;
 *                         the corpus coverage test compiles it too.
 *   conformance_case.c    one case, in the child: compile and run on eager
 *                         and on the backend (through the partitioner when
 *                         it has claims), classify, compare.
 *   conformance_coverage.c which nodes of a case the backend claims
 *                         (tp_backend_claims), counted per op, and the
 *                         coverage table of the summary.
 *   conformance.c         the parent: child processes (restarted after a
 *                         crash or a hang), progress, summary table, JSON.
 *
 * Directives are comment lines of a corpus file, `# @KEY ARGS`:
 *   # @dtypes f32 f64 i32 i64 bool f16 bf16   the variants: inputs written with the
 *                                    first dtype are retyped to each one
 *   # @range [INPUT] LOW HIGH        input values (floats on a 1/8 grid;
 *                                    integers inside the range; bools 0/1);
 *                                    default -3 3
 *   # @bind n=3 m=5                  one run per line: sizes of the symbols
 *   # @option KEY=VALUE              a compile option passed to the backend
 *   # @expect error TEXT             compile must fail naming TEXT
 *   # @group NAME                    table row (default: the graph's op when
 *                                    it has one kind of op, else the folder)
 */
#ifndef TP_TOOLS_CONFORMANCE_H
#define TP_TOOLS_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tensorplay/backend.h"

#define CONFORMANCE_MAX_DTYPES  7
#define CONFORMANCE_MAX_BINDS   8
#define CONFORMANCE_MAX_RANGES  8
#define CONFORMANCE_MAX_SYMBOLS 8
#define CONFORMANCE_MAX_OPTIONS 4

typedef struct conformance_range {
    char input[64]; /* "" = every input */
    double low, high;
} conformance_range;

typedef struct conformance_binding {
    int count;
    char names[CONFORMANCE_MAX_SYMBOLS][32];
    long long sizes[CONFORMANCE_MAX_SYMBOLS];
} conformance_binding;

/* One corpus file. */
typedef struct conformance_file {
    char *path;     /* full path */
    char *relative; /* path inside the corpus, without ".tpir" */
    char group[64];
    tp_graph *graph; /* as parsed (base dtype) */
    int num_dtypes;
    tp_dtype dtypes[CONFORMANCE_MAX_DTYPES]; /* dtypes[0] is the base */
    bool dtypes_given;                       /* @dtypes present: names carry the dtype */
    int num_ranges;
    conformance_range ranges[CONFORMANCE_MAX_RANGES];
    int num_bindings;
    conformance_binding bindings[CONFORMANCE_MAX_BINDS];
    int num_options;
    char *options[CONFORMANCE_MAX_OPTIONS]; /* "key=value" */
    char *expect_error;                     /* NULL: outputs must match eager */
} conformance_file;

/* One run: a file, a dtype variant and a binding. */
typedef struct conformance_case {
    char name[200];
    const conformance_file *file;
    tp_dtype dtype;
    int binding; /* index into file->bindings, -1 when none */
} conformance_case;

typedef struct conformance_corpus {
    char *dir;
    int num_files;
    conformance_file *files;
    int num_cases;
    conformance_case *cases;
} conformance_corpus;

/* Loads every *.tpir under `dir` (sub-folders included, in name order) and
 * expands the cases. On failure returns non-TP_OK with tp_last_error-style
 * text in `error` (a bad directive names FILE:LINE). */
tp_status conformance_corpus_load(const char *dir, conformance_corpus *corpus, char *error,
                                  size_t error_size);
void conformance_corpus_free(conformance_corpus *corpus);

/* Where the corpus is: `explicit_dir` if given, else $TP_CONFORMANCE_DIR,
 * else the source tree's sdk/conformance when this tool runs from the build
 * tree, else <tool's folder>/../share/tensorplay/conformance, else the
 * configured install prefix's. Writes the folder into `out`; false when none
 * exists (`out` then lists what was tried). */
bool conformance_corpus_find(const char *explicit_dir, char *out, size_t size);

/* The graph of `file` with its base-dtype inputs retyped to `dtype` (a clone
 * when dtype is the base). *changed says whether any input changed. */
tp_status conformance_retype(const conformance_file *file, tp_dtype dtype, tp_graph **out,
                             bool *changed);

/* New input tensors for `graph` (one per input): shapes with the case's
 * binding, deterministic values from the case name and the file's ranges. */
tp_status conformance_make_inputs(const conformance_case *item, const tp_graph *graph,
                                  tp_tensor **inputs);

/* Result of one case. */
typedef enum conformance_status {
    CONFORMANCE_PASS = 0,
    CONFORMANCE_FAIL,
    CONFORMANCE_UNSUPPORTED,
    CONFORMANCE_BROKEN, /* the case itself could not run (eager failed, bad corpus) */
    CONFORMANCE_NOT_RUN,
    CONFORMANCE_STATUS_COUNT
} conformance_status;

const char *conformance_status_name(conformance_status status);

#define CONFORMANCE_MAX_CASE_OPS 16
#define CONFORMANCE_MAX_OPS      128

/* Claimed nodes of one op, out of all its nodes (in one case, or summed). */
typedef struct conformance_op_claims {
    char op[32];
    int claimed, nodes;
} conformance_op_claims;

typedef struct conformance_result {
    conformance_status status;
    double max_error; /* largest |got - want| over float outputs; 0 otherwise */
    char detail[512];
    int num_ops; /* the case graph's ops and how many of their nodes the backend claims */
    conformance_op_claims ops[CONFORMANCE_MAX_CASE_OPS];
} conformance_result;

/* Asks `backend` which nodes of `graph` it claims and counts them per op
 * into result->ops (nothing when the backend cannot answer). */
void conformance_count_claims(tp_backend *backend, const tp_graph *graph,
                              conformance_result *result);

/* Adds one case's counts into `totals` (*count rows, CONFORMANCE_MAX_OPS at most). */
void conformance_add_claims(conformance_op_claims *totals, int *count,
                            const conformance_op_claims *op);

/* Prints the coverage table; returns the percentage of claimed nodes. */
double conformance_print_coverage(const conformance_op_claims *totals, int count);
/* The same, as the JSON object `"coverage": {...}` (without a leading comma). */
void conformance_write_coverage_json(FILE *out, const conformance_op_claims *totals, int count);

/* Runs one case on `backend` (in the child): through the partitioner
 * (tp_compile_graph, default fallback) when `partitioned`, the backend's
 * claims deciding what it runs; else the whole graph on the backend. */
void conformance_run_case(tp_backend *backend, tp_backend *eager, bool partitioned,
                          const conformance_case *item, conformance_result *result);

/* Per-dtype tolerance: |got - want| <= atol + rtol * |want|. */
void conformance_tolerance(tp_dtype dtype, double *atol, double *rtol);

typedef struct conformance_options {
    const char *corpus_dir; /* --corpus */
    const char *json_path;  /* --json */
    const char *filter;     /* --filter */
    double min_coverage;    /* --min-coverage P: fail below P percent of nodes claimed */
    bool verbose;
} conformance_options;

/* The whole kit for backend `name`; returns the tool's exit code. */
int conformance_main(const char *name, const conformance_options *options);

#endif
