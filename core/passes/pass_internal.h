/* Shared by the passes: the pass signature and the rewriter, a helper that
 * builds a new graph from an old one through the public graph API only
 * (include/tensorplay/graph.h), so no pass depends on the graph's struct.
 *
 * A rewrite walks the old graph in value-id order (ids are topological: SSA)
 * and for each old value records the new value that stands for it in `map`.
 * Copying every value unchanged gives a graph with the same ids. Internal. */
#ifndef TP_CORE_PASSES_PASS_INTERNAL_H
#define TP_CORE_PASSES_PASS_INTERNAL_H

#include <stdbool.h>

#include "ops/op_table.h"
#include "tensorplay/passes.h"

/* Resolved options every pass reads. */
typedef struct tp_pass_context {
    int64_t constfold_max_elements;
    tp_status (*keep_composites)(const tp_graph *graph, bool *keep, void *user); /* may be NULL */
    void *keep_user;
} tp_pass_context;

/* A pass: builds *out from `in` (never modifies it); *changed tells whether
 * *out differs from `in`. On failure *out is NULL and the error is set. */
typedef tp_status (*tp_pass_fn)(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                                bool *changed);

tp_status tp_pass_normalize(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed);
tp_status tp_pass_constfold(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed);
tp_status tp_pass_decompose(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed);
tp_status tp_pass_cse(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                      bool *changed);
tp_status tp_pass_dce(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                      bool *changed);
tp_status tp_pass_shapeprop(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                            bool *changed);

/* ---- the rewriter ------------------------------------------------------- */

typedef struct tp_rewrite {
    const tp_graph *in;
    tp_graph *out;
    tp_value_id *map; /* old id -> new id (TP_NO_VALUE until set) */
    int num_values;   /* of `in` */
} tp_rewrite;

/* Starts an empty graph named like `in`. */
tp_status tp_rewrite_begin(const tp_graph *in, tp_rewrite *rewrite);
/* Copies input `old` (name and type, symbols re-interned by name). */
tp_status tp_rewrite_input(tp_rewrite *rewrite, tp_value_id old);
/* Adds node `old`'s op with its attributes on `operands` (new ids; NULL:
 * old's operands through the map) and maps `old` to the result. */
tp_status tp_rewrite_node(tp_rewrite *rewrite, tp_value_id old, const tp_value_id *operands);
/* Copies `old` as it is: an input or a node on mapped operands. */
tp_status tp_rewrite_copy(tp_rewrite *rewrite, tp_value_id old);
/* Sets the outputs through the map, hands over the graph, frees the map. */
tp_status tp_rewrite_finish(tp_rewrite *rewrite, tp_graph **out);
/* Frees everything (after a failure). */
void tp_rewrite_abort(tp_rewrite *rewrite);

/* The name a rewritten node keeps: `old`'s name when it is an identifier,
 * NULL (numbered by the builder) when it is a number. */
const char *tp_rewrite_kept_name(const tp_graph *in, tp_value_id old);

/* Old operands of `old` through the map into `operands` (>= 64 entries);
 * returns the count. */
int tp_rewrite_mapped_operands(const tp_rewrite *rewrite, tp_value_id old, tp_value_id *operands);

/* The normalize pass's rewrite of a reshape -> permute -> reshape chain
 * ending in `old` (reshape_chain.c); *rewritten false leaves `old` to the
 * caller. */
tp_status tp_normalize_reshape_chain(tp_rewrite *rewrite, tp_value_id old, bool *rewritten);

/* ---- small queries on a graph ------------------------------------------- */

#define TP_PASS_MAX_OPERANDS 64

/* Op table entry of the node producing `value`; NULL for an input. */
const tp_op_def *tp_pass_value_op(const tp_graph *graph, tp_value_id value);
/* True when `value` is a constant or full whose every element equals
 * `scalar` (compared as doubles; NaN never matches). */
bool tp_pass_value_is_splat(const tp_graph *graph, tp_value_id value, double scalar);
/* Same dtype, rank and dims. */
bool tp_type_equal(const tp_type *a, const tp_type *b);
/* Number of elements; -1 when a dimension is a symbol. */
int64_t tp_type_numel(const tp_type *type);

#endif
