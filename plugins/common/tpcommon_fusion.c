/* plugins/common — computing fusion regions on a graph view (tpcommon_fusion.h). */
#include "tpcommon_fusion.h"

#include <stdlib.h>
#include <string.h>

#include "tpcommon_text.h"

/* The consumer of a value with exactly one use (-1 if none is a node). */
static int32_t only_consumer(const tp_plugin_graph *graph, int32_t value, int32_t *operand) {
    for (int32_t v = value + 1; v < graph->num_values; v++)
        for (int32_t k = 0; k < graph->values[v].num_operands; k++)
            if (graph->values[v].operands[k] == value) {
                *operand = k;
                return v;
            }
    return -1;
}

static tpcommon_region_kind kind_of_root(tpcommon_op op) {
    switch (tpcommon_op_kind(op)) {
    case TPCOMMON_KIND_REDUCTION:
        return TPCOMMON_REGION_REDUCTION;
    case TPCOMMON_KIND_ROW:
        return TPCOMMON_REGION_ROW;
    case TPCOMMON_KIND_MATMUL:
        return TPCOMMON_REGION_MATMUL;
    case TPCOMMON_KIND_SHAPE:
        return TPCOMMON_REGION_SHAPE;
    case TPCOMMON_KIND_CREATION:
        return TPCOMMON_REGION_CREATION;
    default:
        return TPCOMMON_REGION_POINTWISE;
    }
}

/* root_of[v] for every node: the value whose region v joins (v itself when v
 * is a root). Decided from the last value back, so a consumer is settled
 * before its producers. */
static void assign_roots(const tp_plugin_graph *graph, const int32_t *uses, int32_t *root_of,
                         int32_t *matmul_of_root) {
    for (int32_t v = graph->num_values - 1; v >= 0; v--) {
        const tp_plugin_value *value = &graph->values[v];
        root_of[v] = v;
        matmul_of_root[v] = -1;
        if (!value->op) continue;
        tpcommon_op op = tpcommon_op_of(value);
        tpcommon_kind kind = tpcommon_op_kind(op);
        if ((kind != TPCOMMON_KIND_POINTWISE && kind != TPCOMMON_KIND_MATMUL) || uses[v] != 1 ||
            tpcommon_is_output(graph, v))
            continue;
        int32_t operand = -1;
        int32_t consumer = only_consumer(graph, v, &operand);
        if (consumer < 0) continue;
        const tp_plugin_value *user = &graph->values[consumer];
        tpcommon_kind user_kind = tpcommon_op_kind(tpcommon_op_of(user));
        int32_t user_root = root_of[consumer];
        tpcommon_kind root_kind = tpcommon_op_kind(tpcommon_op_of(&graph->values[user_root]));
        if (kind == TPCOMMON_KIND_POINTWISE) {
            bool into_pointwise = user_kind == TPCOMMON_KIND_POINTWISE &&
                                  tpcommon_same_shape(&value->type, &user->type);
            bool into_reduction =
                (user_kind == TPCOMMON_KIND_REDUCTION || user_kind == TPCOMMON_KIND_ROW) &&
                operand == 0;
            if (into_pointwise || into_reduction) root_of[v] = user_root;
            continue;
        }
        /* matmul + pointwise epilogue: one matmul per region, epilogue all pointwise */
        if (user_kind == TPCOMMON_KIND_POINTWISE && root_kind == TPCOMMON_KIND_POINTWISE &&
            tpcommon_same_shape(&value->type, &user->type) && matmul_of_root[user_root] < 0) {
            root_of[v] = user_root;
            matmul_of_root[user_root] = v;
        }
    }
}

static int32_t build_regions(const tp_plugin_graph *graph, const int32_t *root_of,
                             const int32_t *matmul_of_root, tpcommon_fusion *out) {
    int32_t n = graph->num_values;
    int32_t *region_of_root = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int32_t *counts = calloc((size_t)n + 1, sizeof(int32_t));
    out->region_of = malloc(sizeof(int32_t) * ((size_t)n + 1));
    out->regions = calloc((size_t)n + 1, sizeof(tpcommon_region));
    if (!region_of_root || !counts || !out->region_of || !out->regions) {
        free(region_of_root);
        free(counts);
        return TP_PLUGIN_ERROR;
    }
    out->num_regions = 0;
    for (int32_t v = 0; v < n; v++) {
        region_of_root[v] = -1;
        if (graph->values[v].op && root_of[v] == v) {
            tpcommon_region *region = &out->regions[out->num_regions];
            region->root = v;
            region->matmul = matmul_of_root[v];
            tpcommon_op op = tpcommon_op_of(&graph->values[v]);
            region->kind = region->matmul >= 0 ? TPCOMMON_REGION_MATMUL : kind_of_root(op);
            if (region->kind == TPCOMMON_REGION_MATMUL && region->matmul < 0) region->matmul = v;
            region_of_root[v] = out->num_regions++;
        }
    }
    for (int32_t v = 0; v < n; v++) {
        out->region_of[v] = graph->values[v].op ? region_of_root[root_of[v]] : -1;
        if (out->region_of[v] >= 0) counts[out->region_of[v]]++;
    }
    int32_t status = TP_PLUGIN_OK;
    for (int32_t r = 0; r < out->num_regions; r++) {
        out->regions[r].members = malloc(sizeof(int32_t) * ((size_t)counts[r] + 1));
        if (!out->regions[r].members) status = TP_PLUGIN_ERROR;
    }
    for (int32_t v = 0; v < n && status == TP_PLUGIN_OK; v++) {
        int32_t r = out->region_of[v];
        if (r >= 0) out->regions[r].members[out->regions[r].num_members++] = v;
    }
    free(region_of_root);
    free(counts);
    return status;
}

/* Regions given by the view: grouped by id, root = last member. */
static int32_t regions_from_view(const tp_plugin_graph *graph, int32_t *root_of,
                                 int32_t *matmul_of_root) {
    int32_t n = graph->num_values;
    for (int32_t v = 0; v < n; v++) {
        root_of[v] = v;
        matmul_of_root[v] = -1;
    }
    for (int32_t v = n - 1; v >= 0; v--) {
        const tp_plugin_value *value = &graph->values[v];
        if (!value->op || root_of[v] != v) continue;
        for (int32_t u = v - 1; u >= 0; u--) {
            if (!graph->values[u].op || graph->values[u].fusion_region != value->fusion_region)
                continue;
            root_of[u] = v;
            if (tpcommon_op_kind(tpcommon_op_of(&graph->values[u])) == TPCOMMON_KIND_MATMUL &&
                matmul_of_root[v] < 0)
                matmul_of_root[v] = u;
        }
    }
    return TP_PLUGIN_OK;
}

/* The backends inline every member of a region into its root (the last
 * member), so a region is usable only when no other member is read outside
 * the region or returned. The core's regions may have several outputs; a
 * view whose regions break this is grouped by assign_roots instead. */
static bool regions_have_single_outputs(const tp_plugin_graph *graph, const int32_t *root_of) {
    for (int32_t v = 0; v < graph->num_values; v++) {
        const tp_plugin_value *value = &graph->values[v];
        for (int32_t k = 0; k < value->num_operands; k++) {
            int32_t u = value->operands[k];
            if (root_of[u] != u && root_of[u] != root_of[v]) return false;
        }
    }
    for (int32_t i = 0; i < graph->num_outputs; i++) {
        int32_t u = graph->outputs[i];
        if (root_of[u] != u) return false;
    }
    return true;
}

int32_t tpcommon_fusion_compute(const tp_plugin_graph *graph, tpcommon_fusion *out, char *error,
                                size_t error_size) {
    memset(out, 0, sizeof *out);
    int32_t n = graph->num_values;
    int32_t *uses = tpcommon_count_uses(graph);
    int32_t *root_of = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int32_t *matmul_of_root = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int32_t status = uses && root_of && matmul_of_root ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
    if (status == TP_PLUGIN_OK) {
        bool from_view = n > 0;
        for (int32_t v = 0; v < n; v++)
            if (graph->values[v].op && graph->values[v].fusion_region < 0) from_view = false;
        if (from_view) {
            regions_from_view(graph, root_of, matmul_of_root);
            from_view = regions_have_single_outputs(graph, root_of);
        }
        if (!from_view) assign_roots(graph, uses, root_of, matmul_of_root);
        status = build_regions(graph, root_of, matmul_of_root, out);
    }
    free(uses);
    free(root_of);
    free(matmul_of_root);
    if (status != TP_PLUGIN_OK) {
        tpcommon_fusion_free(out);
        return tpcommon_error(error, error_size, "fusion: out of memory for %d values", (int)n);
    }
    return TP_PLUGIN_OK;
}

void tpcommon_fusion_free(tpcommon_fusion *fusion) {
    if (fusion->regions)
        for (int32_t r = 0; r < fusion->num_regions; r++) free(fusion->regions[r].members);
    free(fusion->regions);
    free(fusion->region_of);
    memset(fusion, 0, sizeof *fusion);
}

int tpcommon_fusion_is_inlined(const tpcommon_fusion *fusion, int32_t value) {
    int32_t r = fusion->region_of[value];
    if (r < 0) return 0;
    const tpcommon_region *region = &fusion->regions[r];
    return value != region->root && value != region->matmul;
}
