/* The split tp_compile_graph would make, without compiling: the pass
 * pipeline for the chosen backend, every node coloured by the first of
 * (backend, fallback, eager) that claims it, and the convex regions of
 * partition.c. Shared by tp_partition_describe (words) and
 * tp_partition_plan (data, for `tpc dot`); compiles and runs nothing. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile_internal.h"
#include "ir/graph_internal.h"
#include "partition.h"

static tp_status claim_table_fill(tp_backend *backend, const tp_graph *graph,
                                  tp_partition_claims *table) {
    table->claimed = malloc(((size_t)graph->num_values + 1) * sizeof *table->claimed);
    table->reasons = calloc((size_t)graph->num_values + 1, sizeof *table->reasons);
    if (!table->claimed || !table->reasons)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    return tp_backend_claims(backend, graph, table->claimed, table->reasons);
}

/* backends[0] the chosen one, then the fallback (unless it is the same or
 * "none"), then eager (unless already listed). */
static tp_status resolve_backends(const char *backend_name, const char *fallback_name,
                                  tp_partition_plan_state *plan) {
    TP_TRY(tp_backend_lookup(backend_name, &plan->backends[0]));
    tp_compile_policy policy;
    TP_TRY(tp_config_snapshot(&policy));
    tp_backend *fallback = NULL;
    TP_TRY(tp_partition_resolve_fallback(fallback_name ? fallback_name : policy.fallback_backend,
                                         &fallback));
    plan->fallback_none = !fallback;
    plan->num_colors = 1;
    if (fallback && fallback != plan->backends[0]) plan->backends[plan->num_colors++] = fallback;
    tp_backend *eager = NULL;
    TP_TRY(tp_backend_lookup("eager", &eager));
    bool listed = false;
    for (int32_t c = 0; c < plan->num_colors; c++) listed = listed || plan->backends[c] == eager;
    if (!listed) plan->backends[plan->num_colors++] = eager;
    return TP_OK;
}

static tp_status color_nodes(tp_partition_plan_state *plan) {
    const tp_graph *graph = plan->optimized;
    plan->color = malloc(((size_t)graph->num_values + 1) * sizeof *plan->color);
    if (!plan->color) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t c = 0; c < plan->num_colors; c++)
        TP_TRY(claim_table_fill(plan->backends[c], graph, &plan->claims[c]));
    for (int32_t v = 0; v < graph->num_values; v++) {
        plan->color[v] = plan->num_colors - 1;
        for (int32_t c = plan->num_colors - 1; c >= 0; c--)
            if (plan->claims[c].claimed[v]) plan->color[v] = c;
    }
    return tp_partition_compute(graph, plan->color, plan->num_colors, &plan->split);
}

tp_status tp_partition_plan_make(const tp_graph *graph, const char *backend_name,
                                 const char *fallback_name, tp_partition_plan_state *plan) {
    memset(plan, 0, sizeof *plan);
    TP_TRY(resolve_backends(backend_name, fallback_name, plan));
    tp_pass_options options;
    tp_pass_options_for_backend(plan->backends[0], &options);
    TP_TRY(tp_pass_pipeline_run(graph, &options, &plan->optimized));
    return color_nodes(plan);
}

/* Frees the claim tables (they need the graph's size); returns NULL so that
 * the caller can hand the optimized graph over in one statement. */
static tp_graph *release_claims(tp_partition_plan_state *plan) {
    for (int32_t c = 0; c < plan->num_colors && plan->optimized; c++) {
        for (int32_t v = 0; plan->claims[c].reasons && v < plan->optimized->num_values; v++)
            free(plan->claims[c].reasons[v]);
        free(plan->claims[c].reasons);
        free(plan->claims[c].claimed);
        plan->claims[c] = (tp_partition_claims){0};
    }
    return NULL;
}

void tp_partition_plan_clear(tp_partition_plan_state *plan) {
    release_claims(plan);
    tp_partition_clear(&plan->split);
    free(plan->color);
    tp_graph_destroy(plan->optimized);
    memset(plan, 0, sizeof *plan);
}

/* Per region: distinct tensors entering it and the tensors it hands on
 * (returned, or read by a later region). */
static tp_status count_region_edges(const tp_graph *graph, const tp_partition *split,
                                    tp_partition_region_info *regions) {
    int32_t *entered = malloc(((size_t)graph->num_values + 1) * sizeof *entered);
    bool *leaves = calloc((size_t)graph->num_values + 1, sizeof *leaves);
    /* the values grouped by region (a counting sort), so that one sweep
     * visits each region's values together: linear, not regions x values */
    int32_t *first = calloc((size_t)split->num_regions + 2, sizeof *first);
    int32_t *by_region = malloc(((size_t)graph->num_values + 1) * sizeof *by_region);
    if (!entered || !leaves || !first || !by_region) {
        free(entered);
        free(leaves);
        free(first);
        free(by_region);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    for (int32_t v = 0; v < graph->num_values; v++)
        if (split->region_of[v] >= 0) first[split->region_of[v] + 1]++;
    for (int32_t region = 0; region < split->num_regions; region++)
        first[region + 1] += first[region];
    for (int32_t v = 0; v < graph->num_values; v++)
        if (split->region_of[v] >= 0) by_region[first[split->region_of[v]]++] = v;
    for (int32_t v = 0; v < graph->num_values; v++) entered[v] = -1;
    for (int32_t i = 0; i < graph->num_outputs; i++) leaves[graph->outputs[i]] = true;
    int32_t grouped = 0;
    for (int32_t region = 0; region < split->num_regions; region++)
        for (; grouped < first[region]; grouped++) {
            int32_t v = by_region[grouped];
            for (int32_t k = 0; k < graph->values[v].num_operands; k++) {
                tp_value_id operand = graph->values[v].operands[k];
                if (split->region_of[operand] == region) continue;
                if (split->region_of[operand] >= 0) leaves[operand] = true;
                if (entered[operand] == region) continue; /* counted for this region */
                entered[operand] = region;
                regions[region].num_inputs++;
            }
        }
    for (int32_t v = 0; v < graph->num_values; v++)
        if (leaves[v] && split->region_of[v] >= 0) regions[split->region_of[v]].num_outputs++;
    free(entered);
    free(leaves);
    free(first);
    free(by_region);
    return TP_OK;
}

static tp_status plan_export(const tp_partition_plan_state *plan, int32_t **region_of_out,
                             tp_partition_region_info **regions_out, int *count_out) {
    const tp_graph *graph = plan->optimized;
    const tp_partition *split = &plan->split;
    int32_t *region_of = malloc(((size_t)graph->num_values + 1) * sizeof *region_of);
    tp_partition_region_info *regions = calloc((size_t)split->num_regions + 1, sizeof *regions);
    if (!region_of || !regions) {
        free(region_of);
        free(regions);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    memcpy(region_of, split->region_of, (size_t)graph->num_values * sizeof *region_of);
    for (int32_t r = 0; r < split->num_regions; r++) {
        int32_t color = split->region_color[r];
        /* with fallback_backend 'none' such a region is an error at compile time */
        regions[r].backend =
            color > 0 && plan->fallback_none ? "unclaimed" : tp_backend_name(plan->backends[color]);
        regions[r].num_nodes = split->region_size[r];
    }
    tp_status status = count_region_edges(graph, split, regions);
    if (status != TP_OK) {
        free(region_of);
        free(regions);
        return status;
    }
    *region_of_out = region_of;
    *regions_out = regions;
    *count_out = split->num_regions;
    return TP_OK;
}

tp_status tp_partition_plan(const tp_graph *graph, const char *backend, const char *fallback,
                            tp_graph **optimized_out, int32_t **region_of_out,
                            tp_partition_region_info **regions_out, int *count_out) {
    if (!graph || !optimized_out || !region_of_out || !regions_out || !count_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_partition_plan: NULL argument");
    *optimized_out = NULL;
    *region_of_out = NULL;
    *regions_out = NULL;
    *count_out = 0;
    tp_partition_plan_state plan;
    tp_status status = tp_partition_plan_make(graph, backend, fallback, &plan);
    if (status == TP_OK) status = plan_export(&plan, region_of_out, regions_out, count_out);
    if (status == TP_OK) {
        *optimized_out = plan.optimized;
        plan.optimized = release_claims(&plan);
    }
    tp_partition_plan_clear(&plan);
    return status;
}
