/* TensorPlay — the pass pipeline: graph → graph rewrites run before a backend
 * compiles a graph, and the fusion plan handed to the backend beside it.
 *
 * Order: normalize → constfold → decompose → cse → dce →
 * fusion, then shapeprop (advisory). Each pass reads a graph and builds a new
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
 *               its decomposition from the op table.
 *   cse         merges nodes with equal op, operands and attributes (constant
 *               payloads compared byte for byte).
 *   dce         drops nodes that no output depends on; inputs always stay.
 *   fusion      computes the fusion plan (below); the graph is unchanged.
 *   shapeprop   re-derives every type; on failure logs a warning and keeps
 *               the graph (advisory).
 *
 * Ownership: *out is a new graph the caller destroys with tp_graph_destroy;
 * *plan_out is released with tp_fusion_plan_free.
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
    TP_PASS_FUSION,
    TP_PASS_SHAPEPROP,
    TP_PASS_COUNT
} tp_pass_id;

#define TP_PASS_BIT(id) (1u << (id))

/* "normalize", "constfold", "decompose", "cse", "dce", "fusion", "shapeprop";
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
} tp_pass_options;

#define TP_PASS_OPTIONS_INIT                                                                       \
    { .struct_size = sizeof(tp_pass_options) }

/* ---- the fusion plan ---------------------------------------------------- */

typedef enum tp_fusion_kind {
    /* Pointwise ops over one iteration shape: every member's result has the
     * region's shape; operands from outside may broadcast to it. */
    TP_FUSION_POINTWISE = 0,
    /* A pointwise region closed by one reduction that consumes a member (the
     * region's `reduction`); the reduction's result is a region output. */
    TP_FUSION_REDUCTION = 1,
} tp_fusion_kind;

typedef struct tp_fusion_region {
    tp_fusion_kind kind;
    int32_t num_members;   /* nodes in the region */
    tp_value_id first;     /* lowest member id */
    tp_value_id last;      /* highest member id (the reduction, if any) */
    tp_value_id reduction; /* TP_NO_VALUE for TP_FUSION_POINTWISE */
} tp_fusion_region;

/* Indexed by the value ids of the graph it was computed for. A value in a
 * region is a region output when a node outside the region reads it or the
 * graph returns it; other members never need to be materialised. */
typedef struct tp_fusion_plan {
    int32_t num_values;
    int32_t *region_of;     /* num_values entries: region index or -1 */
    bool *is_region_output; /* num_values entries */
    int32_t num_regions;
    tp_fusion_region *regions;
} tp_fusion_plan;

/* Computes the plan of `graph` (what the fusion pass does). */
TP_API tp_status tp_fusion_plan_build(const tp_graph *graph, tp_fusion_plan **out);
/* NULL is a no-op. */
TP_API void tp_fusion_plan_free(tp_fusion_plan *plan);

/* ---- running ------------------------------------------------------------ */

/* Runs the pipeline on `in` (options may be NULL: every pass, defaults).
 * *out receives the final graph. When plan_out is not NULL it receives the
 * fusion plan of *out (NULL when the fusion pass was skipped). A pass that
 * fails stops the pipeline with its error (shapeprop only warns). */
TP_API tp_status tp_pass_pipeline_run(const tp_graph *in, const tp_pass_options *options,
                                      tp_graph **out, tp_fusion_plan **plan_out);

/* Runs one pass alone; for TP_PASS_FUSION *out is an unchanged copy (use
 * tp_fusion_plan_build for the plan). */
TP_API tp_status tp_pass_run(tp_pass_id pass, const tp_graph *in, const tp_pass_options *options,
                             tp_graph **out, bool *changed_out);

#ifdef __cplusplus
}
#endif
#endif
