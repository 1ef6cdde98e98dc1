/* TensorPlay — the pass pipeline: graph → graph rewrites run before a backend
 * compiles a graph. Fusion is each backend's own business (contract
 * revision 2): the core hands over the graph only.
 *
 * Order: normalize → constfold → decompose → cse → dce →
 * shapeprop (advisory). Each pass reads a graph and builds a new
 * one through the public graph API, reporting whether anything changed; the
 * input graph is never modified.
 *
 *   normalize   canonical operand order of commutative ops (a constant operand
 *               second, else the lower value id first); folds x+0, 0+x, x-0,
 *               x*1, 1*x, x/1 and neg(neg(x)) only where the result's dtype
 *               and shape equal x's. Never folds x*0 (NaN * 0 is NaN).
 *   constfold   evaluates nodes whose operands are all constants (constant,
 *               full, arange) with the reference kernels into one `constant`;
 *               results over `constfold_max_elements` stay unfolded.
 *   decompose   replaces every composite (softmax, gelu, layer_norm, ...) by
 *               its decomposition from the op table, except those that
 *               options->keep_composites keeps (tp_compile: the composites
 *               the chosen backend claims).
 *   cse         merges nodes with equal op, operands and attributes (constant
 *               payloads compared byte for byte).
 *   dce         drops nodes that no output depends on; inputs always stay.
 *   shapeprop   re-derives every type; on failure logs a warning and keeps
 *               the graph (advisory).
 *
 * Ownership: *out is a new graph the caller destroys with tp_graph_destroy.
 */
#ifndef TENSORPLAY_PASSES_H
#define TENSORPLAY_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tp_pass_id {
    TP_PASS_NORMALIZE = 0,
    TP_PASS_CONSTFOLD,
    TP_PASS_DECOMPOSE,
    TP_PASS_CSE,
    TP_PASS_DCE,
    TP_PASS_SHAPEPROP,
    TP_PASS_COUNT
} tp_pass_id;

#define TP_PASS_BIT(id) (1u << (id))

/* "normalize", "constfold", "decompose", "cse", "dce", "shapeprop";
 * "?" for an invalid id. The pipeline runs them in this order. */
TP_API const char *tp_pass_name(tp_pass_id pass);
/* TP_ERR_NOT_FOUND with the list of pass names when `name` is unknown. */
TP_API tp_status tp_pass_from_name(const char *name, tp_pass_id *out);

/* Called after each pass that ran with the graph it produced (valid only
 * during the call) and whether the pass changed anything. */
typedef void (*tp_pass_callback)(const char *pass_name, const tp_graph *graph, bool changed,
                                 void *user);

typedef struct tp_pass_options {
    size_t struct_size;             /* sizeof(tp_pass_options) */
    uint32_t skip;                  /* TP_PASS_BIT(id) of each pass not to run */
    int64_t constfold_max_elements; /* largest folded result; <= 0: 65536 */
    bool verify_each_pass;          /* tp_graph_verify after every pass (tests) */
    tp_pass_callback after_pass;    /* may be NULL */
    void *user;                     /* handed to after_pass */
    /* Which composites decompose keeps (the chosen backend claims them, e.g.
     * stax's row kernels for softmax): called once per decompose round with
     * the round's graph; sets keep[v] (tp_graph_num_values entries, all
     * false on entry) for each composite to keep. NULL: every composite is
     * decomposed. */
    tp_status (*keep_composites)(const tp_graph *graph, bool *keep, void *user);
    void *keep_user; /* handed to keep_composites */
} tp_pass_options;

#define TP_PASS_OPTIONS_INIT                                                                       \
    { .struct_size = sizeof(tp_pass_options) }

typedef struct tp_backend tp_backend;
/* The options tp_compile and tp_compile_graph run the pipeline with for
 * `backend`: the defaults, with decompose keeping the composites the
 * backend claims; a backend without claims (contract revision 1) gets every
 * composite decomposed. keep_user holds `backend`, which must outlive any
 * pipeline run with these options. For a tool that compiles a graph with
 * tp_backend_compile and wants the graph those calls would hand over. */
TP_API void tp_pass_options_for_backend(tp_backend *backend, tp_pass_options *options);

/* ---- running ------------------------------------------------------------ */

/* Runs the pipeline on `in` (options may be NULL: every pass, defaults).
 * *out receives the final graph. A pass that fails stops the pipeline with
 * its error (shapeprop only warns). */
TP_API tp_status tp_pass_pipeline_run(const tp_graph *in, const tp_pass_options *options,
                                      tp_graph **out);

/* Runs one pass alone. */
TP_API tp_status tp_pass_run(tp_pass_id pass, const tp_graph *in, const tp_pass_options *options,
                             tp_graph **out, bool *changed_out);

#ifdef __cplusplus
}
#endif
#endif
