/* plugins/common — computing fusion regions on a graph view (tpcommon_fusion.h). */
#include "tpcommon_fusion.h"

#include <stdlib.h>
#include <string.h>

#include "tpcommon_text.h"

/* consumer[u] / operand_of[u]: the last node reading u and the operand slot
 * it reads u in (-1 when no node reads u). For a value with exactly one use
 * that is its only consumer. One pass over the operands. */
static void find_consumers(const tp_plugin_graph *graph, int32_t *consumer, int32_t *operand_of) {
    for (int32_t v = 0; v < graph->num_values; v++) consumer[v] = operand_of[v] = -1;
    for (int32_t v = 0; v < graph->num_values; v++)
        for (int32_t k = 0; k < graph->values[v].num_operands; k++) {
            int32_t u = graph->values[v].operands[k];
            consumer[u] = v;
            operand_of[u] = k;
        }
}

static tpcommon_region_kind kind_of_root(int32_t op) {
    switch (tpcommon_op_kind(op)) {
    case TPCOMMON_KIND_REDUCTION:
        return TPCOMMON_REGION_REDUCTION;
    case TPCOMMON_KIND_ROW:
        return TPCOMMON_REGION_ROW;
    case TPCOMMON_KIND_MATMUL:
        return TPCOMMON_REGION_MATMUL;
    case TPCOMMON_KIND_SHAPE:
    case TPCOMMON_KIND_INDEXING: /* data movement: never fused into a pointwise loop */
    case TPCOMMON_KIND_DEDICATED:
        return TPCOMMON_REGION_SHAPE;
    case TPCOMMON_KIND_WINDOW: /* its own kernel: never fused into a pointwise loop */
        return TPCOMMON_REGION_WINDOW;
    case TPCOMMON_KIND_CREATION:
        return TPCOMMON_REGION_CREATION;
    default:
        return TPCOMMON_REGION_POINTWISE;
    }
}

/* root_of[v] for every node: the value whose region v joins (v itself when v
 * is a root). Decided from the last value back, so a consumer is settled
 * before its producers; one pass, no recursion. */
/* Whether v may anchor a pointwise epilogue: a matmul always, a conv when
 * the backend asked for window epilogues. */
static bool anchors_epilogue(const tp_plugin_graph *graph, const tp_plugin_value *value,
                             const tpcommon_fusion_options *options) {
    int32_t op = tpcommon_op_of(graph, value);
    if (tpcommon_op_kind(op) == TPCOMMON_KIND_MATMUL) return true;
    return options->window_epilogues && op == TP_PLUGIN_OP_CONV;
}

static void assign_roots(const tp_plugin_graph *graph, const tpcommon_fusion_options *options,
                         const int32_t *uses, const int32_t *consumers, const int32_t *operand_of,
                         int32_t *root_of, int32_t *anchor_of_root, int32_t *members_of_root) {
    for (int32_t v = graph->num_values - 1; v >= 0; v--) {
        const tp_plugin_value *value = &graph->values[v];
        root_of[v] = v;
        anchor_of_root[v] = -1;
        members_of_root[v] = 1;
        if (!value->op) continue;
        tpcommon_kind kind = tpcommon_op_kind(tpcommon_op_of(graph, value));
        bool anchor = kind != TPCOMMON_KIND_POINTWISE && anchors_epilogue(graph, value, options);
        if ((kind != TPCOMMON_KIND_POINTWISE && !anchor) || uses[v] != 1) continue;
        /* one use that a node makes: v is read once and not returned (uses
         * counts returns too) */
        int32_t consumer = consumers[v], operand = operand_of[v];
        if (consumer < 0) continue;
        const tp_plugin_value *user = &graph->values[consumer];
        tpcommon_kind user_kind = tpcommon_op_kind(tpcommon_op_of(graph, user));
        int32_t user_root = root_of[consumer];
        if (members_of_root[user_root] >= TPCOMMON_FUSION_MAX_MEMBERS) continue;
        tpcommon_kind root_kind =
            tpcommon_op_kind(tpcommon_op_of(graph, &graph->values[user_root]));
        if (kind == TPCOMMON_KIND_POINTWISE) {
            bool into_pointwise = user_kind == TPCOMMON_KIND_POINTWISE &&
                                  tpcommon_same_shape(&value->type, &user->type);
            bool into_reduction =
                (user_kind == TPCOMMON_KIND_REDUCTION || user_kind == TPCOMMON_KIND_ROW) &&
                operand == 0;
            if (into_pointwise || into_reduction) {
                root_of[v] = user_root;
                members_of_root[user_root]++;
            }
            continue;
        }
        /* matmul or conv + pointwise epilogue: one anchor per region, epilogue
         * all pointwise */
        if (user_kind == TPCOMMON_KIND_POINTWISE && root_kind == TPCOMMON_KIND_POINTWISE &&
            tpcommon_same_shape(&value->type, &user->type) && anchor_of_root[user_root] < 0) {
            root_of[v] = user_root;
            anchor_of_root[user_root] = v;
            members_of_root[user_root]++;
        }
    }
}

static int32_t build_regions(const tp_plugin_graph *graph, const int32_t *root_of,
                             const int32_t *anchor_of_root, tpcommon_fusion *out) {
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
            int32_t anchor = anchor_of_root[v];
            int32_t anchor_op = anchor >= 0 ? tpcommon_op_of(graph, &graph->values[anchor]) : -1;
            int32_t op = tpcommon_op_of(graph, &graph->values[v]);
            region->kind = anchor >= 0 ? kind_of_root(anchor_op) : kind_of_root(op);
            region->matmul =
                region->kind == TPCOMMON_REGION_MATMUL ? (anchor >= 0 ? anchor : v) : -1;
            region->window =
                region->kind == TPCOMMON_REGION_WINDOW ? (anchor >= 0 ? anchor : v) : -1;
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

int32_t tpcommon_fusion_compute(const tp_plugin_graph *graph, tpcommon_fusion *out, char *error,
                                size_t error_size) {
    return tpcommon_fusion_compute_with(graph, NULL, out, error, error_size);
}

int32_t tpcommon_fusion_compute_with(const tp_plugin_graph *graph,
                                     const tpcommon_fusion_options *options, tpcommon_fusion *out,
                                     char *error, size_t error_size) {
    static const tpcommon_fusion_options defaults = {0};
    if (!options) options = &defaults;
    memset(out, 0, sizeof *out);
    int32_t n = graph->num_values;
    int32_t *uses = tpcommon_count_uses(graph);
    size_t count = (size_t)n + 1;
    int32_t *root_of = malloc(sizeof(int32_t) * count);
    int32_t *anchor_of_root = malloc(sizeof(int32_t) * count);
    int32_t *consumers = malloc(sizeof(int32_t) * count);
    int32_t *operand_of = malloc(sizeof(int32_t) * count);
    int32_t *members_of_root = malloc(sizeof(int32_t) * count);
    int32_t status = uses && root_of && anchor_of_root && consumers && operand_of && members_of_root
                         ? TP_PLUGIN_OK
                         : TP_PLUGIN_ERROR;
    if (status == TP_PLUGIN_OK) {
        find_consumers(graph, consumers, operand_of);
        assign_roots(graph, options, uses, consumers, operand_of, root_of, anchor_of_root,
                     members_of_root);
        status = build_regions(graph, root_of, anchor_of_root, out);
    }
    free(consumers);
    free(operand_of);
    free(members_of_root);
    free(uses);
    free(root_of);
    free(anchor_of_root);
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
    return value != region->root && value != region->matmul && value != region->window;
}
