/* Partitioning a graph between backends (internal to core/compile):
 * partition.c splits the nodes into convex regions by backend ("color");
 * partitioned.c compiles each region as its own graph and runs them in order.
 */
#ifndef TP_CORE_COMPILE_PARTITION_H
#define TP_CORE_COMPILE_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/graph.h"

/* Regions in execution order. Every node is in exactly one region; graph
 * inputs are in none (-1). A region is convex: no path leaves it and comes
 * back, so regions run one after the other, each reading only graph inputs
 * and results of earlier regions. */
typedef struct tp_partition {
    int32_t num_values;
    int32_t *region_of; /* per value: region index, -1 for graph inputs */
    int32_t num_regions;
    int32_t *region_color; /* per region: the color (backend index) of its nodes */
    int32_t *region_size;  /* per region: its number of nodes */
} tp_partition;

/* Splits the nodes of `graph` by color[v] (0 .. num_colors-1, read for nodes
 * only) into maximal convex regions of one color each, in O(values +
 * operands) without recursion. Each node gets the earliest stage that has
 * its color (stages cycle through the colors) and comes no earlier than its
 * operands' stages, strictly later than those of other colors; a region is
 * one non-empty stage. Along any path stages never decrease, so a path that
 * leaves a stage never returns to it (convex), and the number of regions is
 * at most num_colors times the longest chain of color changes. */
tp_status tp_partition_compute(const tp_graph *graph, const int32_t *color, int32_t num_colors,
                               tp_partition *out);
void tp_partition_clear(tp_partition *partition);

/* ---- partition_plan.c ---- */

/* One backend's answer per value (claimed, or the reason it is not). */
typedef struct tp_partition_claims {
    bool *claimed;
    char **reasons;
} tp_partition_claims;

/* The split tp_compile_graph would make, without compiling: backends[0] the
 * chosen backend, then the fallback (unless the same, or "none":
 * fallback_none), then eager (unless listed); colors index backends. */
typedef struct tp_partition_plan_state {
    tp_backend *backends[3];
    int32_t num_colors;
    bool fallback_none;
    tp_graph *optimized; /* after the backend's pass pipeline; owned */
    tp_partition_claims claims[3];
    int32_t *color; /* per value of `optimized` */
    tp_partition split;
} tp_partition_plan_state;

tp_status tp_partition_plan_make(const tp_graph *graph, const char *backend_name,
                                 const char *fallback_name, tp_partition_plan_state *plan);
void tp_partition_plan_clear(tp_partition_plan_state *plan);

/* ---- partitioned.c ---- */

typedef struct tp_partitioned tp_partitioned;

/* What to compile: the graph, the chosen backend, where unclaimed nodes go
 * (fallback_name), and
 * whether a split is refused (fullgraph). */
typedef struct tp_partition_request {
    const char *function_name; /* for messages */
    const tp_graph *graph;
    tp_backend *backend;
    /* fallback_backend: a name, "none" (unclaimed nodes are an error), or
     * NULL/"" (stax, or eager where stax is unavailable); looked up only when
     * the backend leaves nodes unclaimed. */
    const char *fallback_name;
    bool fullgraph;
    tp_tensor *const *inputs; /* one per graph input */
    int num_inputs;
    const char *const *options; /* for `backend` only; fallbacks get none */
    int num_options;
} tp_partition_request;

/* Compiles the request. When `backend` claims every node the result is one
 * plain executable in *single (exactly what tp_backend_compile gives) and
 * *partitioned stays NULL; otherwise *partitioned holds one executable per
 * region. *summary (may be NULL) receives the regions (release with free()). */
tp_status tp_partitioned_compile(const tp_partition_request *request, tp_executable **single,
                                 tp_partitioned **partitioned, tp_partition_region_info **summary,
                                 int *num_summary);
/* The fallback backend for a fallback_backend setting (see the request), or
 * NULL for "none". */
tp_status tp_partition_resolve_fallback(const char *name, tp_backend **out);

/* Runs the regions in order; same contract as tp_executable_run. Not
 * reentrant (scratch slots): callers hold the variant's run lock. */
tp_status tp_partitioned_run(tp_partitioned *partitioned, tp_tensor *const *inputs, int num_inputs,
                             tp_tensor **outputs);
void tp_partitioned_destroy(tp_partitioned *partitioned);

/* The per-compile log line (TP_LOG=info): "nodes: stax 12, eager 3; regions
 * 3; tensors crossing 4" — nodes per backend in order of first use, and the
 * distinct tensors `crossing` that a region reads from another region. New
 * string (free()). */
char *tp_partition_summary_text(const tp_partition_region_info *regions, int count,
                                int64_t crossing);

#endif
