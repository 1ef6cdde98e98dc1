/* Splitting a graph's nodes into convex regions of one backend each (see
 * partition.h for the rule and why it is convex). Owns only the split:
 * which backend claims what is decided by the caller (claims), and
 * compiling regions is partitioned.c's. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ir/graph_internal.h"
#include "partition.h"

/* Smallest s >= floor with s % num_colors == color. */
static int64_t stage_at_or_after(int64_t floor, int32_t color, int32_t num_colors) {
    int64_t remainder = floor % num_colors;
    int64_t offset = (color - remainder + num_colors) % num_colors;
    return floor + offset;
}

tp_status tp_partition_compute(const tp_graph *graph, const int32_t *color, int32_t num_colors,
                               tp_partition *out) {
    memset(out, 0, sizeof *out);
    int32_t count = graph->num_values;
    int64_t *stage = malloc(((size_t)count + 1) * sizeof *stage);
    out->region_of = malloc(((size_t)count + 1) * sizeof *out->region_of);
    if (!stage || !out->region_of) {
        free(stage);
        tp_partition_clear(out);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    int64_t last_stage = -1;
    for (int32_t v = 0; v < count; v++) {
        const tp_value *value = &graph->values[v];
        stage[v] = -1;
        if (!value->op) continue;
        int64_t floor = 0;
        for (int32_t k = 0; k < value->num_operands; k++) {
            tp_value_id operand = value->operands[k];
            if (stage[operand] < 0) continue; /* a graph input */
            int64_t bound = stage[operand] + (color[operand] != color[v]);
            if (bound > floor) floor = bound;
        }
        stage[v] = stage_at_or_after(floor, color[v], num_colors);
        if (stage[v] > last_stage) last_stage = stage[v];
    }
    /* Number the non-empty stages in order: those are the regions. */
    int64_t stages = last_stage + 1;
    int32_t *region_of_stage = malloc(((size_t)stages + 1) * sizeof *region_of_stage);
    if (!region_of_stage) {
        free(stage);
        tp_partition_clear(out);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    for (int64_t s = 0; s < stages; s++) region_of_stage[s] = -1;
    for (int32_t v = 0; v < count; v++)
        if (stage[v] >= 0) region_of_stage[stage[v]] = 0;
    int32_t regions = 0;
    for (int64_t s = 0; s < stages; s++)
        if (region_of_stage[s] == 0) region_of_stage[s] = regions++ + 1;
    out->num_values = count;
    out->num_regions = regions;
    out->region_color = calloc((size_t)regions + 1, sizeof *out->region_color);
    out->region_size = calloc((size_t)regions + 1, sizeof *out->region_size);
    tp_status status = out->region_color && out->region_size
                           ? TP_OK
                           : tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t v = 0; status == TP_OK && v < count; v++) {
        out->region_of[v] = stage[v] < 0 ? -1 : region_of_stage[stage[v]] - 1;
        if (out->region_of[v] < 0) continue;
        out->region_color[out->region_of[v]] = color[v];
        out->region_size[out->region_of[v]]++;
    }
    free(region_of_stage);
    free(stage);
    if (status != TP_OK) tp_partition_clear(out);
    return status;
}

void tp_partition_clear(tp_partition *partition) {
    free(partition->region_of);
    free(partition->region_color);
    free(partition->region_size);
    memset(partition, 0, sizeof *partition);
}
