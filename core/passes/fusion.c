/* The fusion pass: pointwise fusion hints. Groups the nodes of a graph into
 * regions a backend may compile as one loop nest each, and returns them as a
 * tp_fusion_plan beside the graph (the graph is not changed). Owns the
 * grouping rules below and the plan's memory; nothing else.
 *
 * Rules (greedy, one sweep in id order, which is topological):
 *  1. Every pointwise node is in a region. A region has one iteration shape:
 *     every member's result has exactly that shape (dtypes may differ: cast
 *     and comparisons fuse). Operands from outside a region may have any
 *     shape that broadcasts to it (a bias [n] feeding a [m, n] region).
 *  2. A pointwise node joins the region of each operand produced by a
 *     pointwise member of the same iteration shape (producer→consumer
 *     edges); when several operands lie in different such regions, those
 *     regions merge through it. A node whose result has another shape than
 *     its producer's region (it broadcasts that region's value) starts a new
 *     region.
 *  3. A reduction whose operand is a member of an open pointwise region joins
 *     it as the region's reduction tail (kind TP_FUSION_REDUCTION). A tail
 *     closes the region: nothing joins it afterwards. Other reductions,
 *     matmul, shape, creation and composite nodes are in no region (-1), so
 *     they break chains.
 *  4. No join may make a region non-convex: if a path leaves the region and
 *     comes back (x in R → matmul → y, and y feeds R), the region could not
 *     run as one kernel, so that join is skipped.
 *  5. A member is a region output when a node outside its region reads it or
 *     the graph returns it.
 */
#include "pass_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"

typedef struct region_state {
    tp_value_id first;    /* lowest member */
    tp_value_id shape_of; /* a member whose type gives the iteration shape */
    tp_value_id reduction;
    bool closed;
    bool dead; /* merged into another */
} region_state;

typedef struct fusion_builder {
    const tp_graph *graph;
    int num_values;
    int32_t *region_of;
    region_state *regions;
    int num_regions;
    bool *in_set;  /* scratch: region ids in the candidate union */
    bool *reached; /* scratch: per value, depends on the union through outside nodes */
} fusion_builder;

static bool same_shape(const tp_type *a, const tp_type *b) {
    if (a->ndim != b->ndim) return false;
    return memcmp(a->dims, b->dims, (size_t)a->ndim * sizeof a->dims[0]) == 0;
}

static bool in_union(const fusion_builder *b, tp_value_id value, tp_value_id node) {
    return value == node || (b->region_of[value] >= 0 && b->in_set[b->region_of[value]]);
}

/* Whether the regions marked in b->in_set plus `node` (the highest id)
 * form a convex set: no path leaves it and comes back (rule 4). */
static bool union_is_convex(fusion_builder *b, tp_value_id node, tp_value_id low) {
    const tp_graph *g = b->graph;
    for (tp_value_id x = low; x <= node; x++) {
        bool member = in_union(b, x, node);
        bool reaches = false;
        int count = tp_graph_value_num_operands(g, x);
        for (int i = 0; i < count; i++) {
            tp_value_id o = tp_graph_value_operand(g, x, i);
            bool o_member = in_union(b, o, node);
            bool o_reached = o >= low && b->reached[o];
            if (member && !o_member && o_reached) return false;
            if (!member && (o_member || o_reached)) reaches = true;
        }
        b->reached[x] = reaches;
    }
    return true;
}

static void merge_region(fusion_builder *b, int from, int into, tp_value_id upto) {
    for (tp_value_id x = b->regions[from].first; x <= upto; x++)
        if (b->region_of[x] == from) b->region_of[x] = into;
    if (b->regions[from].first < b->regions[into].first)
        b->regions[into].first = b->regions[from].first;
    b->regions[from].dead = true;
}

static int new_region(fusion_builder *b, tp_value_id node) {
    int id = b->num_regions++;
    b->regions[id] = (region_state){.first = node, .shape_of = node, .reduction = TP_NO_VALUE};
    b->region_of[node] = id;
    return id;
}

/* Whether region r plus `node` stays convex. */
static bool can_add(fusion_builder *b, int r, tp_value_id node) {
    b->in_set[r] = true;
    bool convex = union_is_convex(b, node, b->regions[r].first);
    b->in_set[r] = false;
    return convex;
}

static void place_pointwise(fusion_builder *b, tp_value_id node) {
    const tp_graph *g = b->graph;
    const tp_type *type = tp_graph_value_type(g, node);
    int joined = -1;
    int count = tp_graph_value_num_operands(g, node);
    for (int i = 0; i < count; i++) {
        int r = b->region_of[tp_graph_value_operand(g, node, i)];
        if (r < 0 || r == joined || b->regions[r].closed) continue;
        if (!same_shape(tp_graph_value_type(g, b->regions[r].shape_of), type)) continue;
        /* Candidate union: the region joined so far plus r. */
        if (joined >= 0) b->in_set[joined] = true;
        b->in_set[r] = true;
        tp_value_id low = b->regions[r].first;
        if (joined >= 0 && b->regions[joined].first < low) low = b->regions[joined].first;
        bool convex = union_is_convex(b, node, low);
        b->in_set[r] = false;
        if (joined >= 0) b->in_set[joined] = false;
        if (!convex) continue;
        if (joined < 0) {
            joined = r;
            b->region_of[node] = r;
        } else {
            merge_region(b, r, joined, node);
        }
    }
    if (joined < 0) new_region(b, node);
}

static void place_reduction(fusion_builder *b, tp_value_id node) {
    tp_value_id operand = tp_graph_value_operand(b->graph, node, 0);
    int r = b->region_of[operand];
    if (r < 0 || b->regions[r].closed || !can_add(b, r, node)) return;
    b->region_of[node] = r;
    b->regions[r].reduction = node;
    b->regions[r].closed = true;
}

/* Numbers the live regions 0.. in order of their first member and fills
 * the public plan. */
static tp_status finish_plan(fusion_builder *b, tp_fusion_plan *plan) {
    int32_t *renumber = tp_malloc((size_t)(b->num_regions + 1) * sizeof *renumber);
    if (!renumber) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "fusion: out of memory");
    int live = 0;
    for (int r = 0; r < b->num_regions; r++) renumber[r] = -1;
    for (tp_value_id v = 0; v < b->num_values; v++) {
        int r = b->region_of[v];
        if (r >= 0 && renumber[r] < 0) renumber[r] = live++;
    }
    plan->num_regions = live;
    plan->regions = tp_calloc((size_t)live + 1, sizeof *plan->regions);
    if (!plan->regions) {
        free(renumber);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "fusion: out of memory for %d regions", live);
    }
    for (int r = 0; r < b->num_regions; r++) {
        if (renumber[r] < 0) continue;
        tp_fusion_region *region = &plan->regions[renumber[r]];
        region->reduction = b->regions[r].reduction;
        region->kind = region->reduction == TP_NO_VALUE ? TP_FUSION_POINTWISE : TP_FUSION_REDUCTION;
        region->first = TP_NO_VALUE;
    }
    for (tp_value_id v = 0; v < b->num_values; v++) {
        int r = b->region_of[v] >= 0 ? renumber[b->region_of[v]] : -1;
        plan->region_of[v] = r;
        if (r < 0) continue;
        tp_fusion_region *region = &plan->regions[r];
        if (region->first == TP_NO_VALUE) region->first = v;
        region->last = v;
        region->num_members++;
    }
    free(renumber);
    /* Rule 5: region outputs. */
    const tp_graph *g = b->graph;
    for (tp_value_id v = 0; v < b->num_values; v++) {
        int count = tp_graph_value_num_operands(g, v);
        for (int i = 0; i < count; i++) {
            tp_value_id o = tp_graph_value_operand(g, v, i);
            if (plan->region_of[o] >= 0 && plan->region_of[o] != plan->region_of[v])
                plan->is_region_output[o] = true;
        }
    }
    for (int i = 0; i < tp_graph_num_outputs(g); i++) {
        tp_value_id o = tp_graph_output(g, i);
        if (plan->region_of[o] >= 0) plan->is_region_output[o] = true;
    }
    return TP_OK;
}

void tp_fusion_plan_free(tp_fusion_plan *plan) {
    if (!plan) return;
    free(plan->region_of);
    free(plan->is_region_output);
    free(plan->regions);
    free(plan);
}

tp_status tp_fusion_plan_build(const tp_graph *graph, tp_fusion_plan **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_fusion_plan_build: out is NULL");
    *out = NULL;
    if (!graph) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_fusion_plan_build: graph is NULL");
    int n = tp_graph_num_values(graph);
    fusion_builder b = {.graph = graph, .num_values = n};
    tp_fusion_plan *plan = tp_calloc(1, sizeof *plan);
    b.region_of = tp_malloc((size_t)n * sizeof *b.region_of);
    b.regions = tp_malloc((size_t)n * sizeof *b.regions);
    b.in_set = tp_calloc((size_t)n, sizeof *b.in_set);
    b.reached = tp_calloc((size_t)n, sizeof *b.reached);
    tp_status status = TP_OK;
    if (plan) {
        plan->num_values = n;
        plan->region_of = tp_malloc((size_t)n * sizeof *plan->region_of);
        plan->is_region_output = tp_calloc((size_t)n, sizeof *plan->is_region_output);
    }
    if (!plan || !plan->region_of || !plan->is_region_output || !b.region_of || !b.regions ||
        !b.in_set || !b.reached)
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "fusion: out of memory for %d values", n);
    if (status == TP_OK) {
        for (tp_value_id v = 0; v < n; v++) b.region_of[v] = -1;
        for (tp_value_id v = 0; v < n; v++) {
            const tp_op_def *op = tp_pass_value_op(graph, v);
            if (op && op->kind == TP_KIND_POINTWISE)
                place_pointwise(&b, v);
            else if (op && op->kind == TP_KIND_REDUCTION)
                place_reduction(&b, v);
        }
        status = finish_plan(&b, plan);
    }
    free(b.region_of);
    free(b.regions);
    free(b.in_set);
    free(b.reached);
    if (status != TP_OK) {
        tp_fusion_plan_free(plan);
        return status;
    }
    *out = plan;
    return TP_OK;
}
