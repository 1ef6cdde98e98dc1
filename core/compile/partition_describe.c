/* tp_partition_describe: the split tp_compile_graph would make, in words
 * (`tpc print --partition`); the split itself is partition_plan.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile_internal.h"
#include "ir/graph_internal.h"
#include "partition.h"

typedef struct text_buffer {
    char *data;
    size_t used, capacity;
    bool failed;
} text_buffer;

static void append(text_buffer *text, const char *format, ...) TP_PRINTF(2, 3);
static void append(text_buffer *text, const char *format, ...) {
    for (int attempt = 0; attempt < 2 && !text->failed; attempt++) {
        va_list args;
        va_start(args, format);
        int length = vsnprintf(text->data + text->used, text->capacity - text->used, format, args);
        va_end(args);
        if (length < 0) text->failed = true;
        if (text->failed || (size_t)length < text->capacity - text->used) {
            if (!text->failed) text->used += (size_t)length;
            return;
        }
        size_t capacity = (text->capacity + (size_t)length + 1) * 2;
        char *grown = realloc(text->data, capacity);
        if (!grown)
            text->failed = true;
        else
            text->data = grown, text->capacity = capacity;
    }
}

static void describe_regions(text_buffer *text, const tp_graph *graph, const tp_partition *split,
                             tp_backend *const *backends, const tp_partition_claims *claims,
                             bool fallback_none) {
    for (int32_t r = 0; r < split->num_regions; r++) {
        int32_t color = split->region_color[r];
        if (color > 0 && fallback_none)
            append(text,
                   "region %d: unclaimed, an error with fallback_backend 'none' (%d node%s)\n", r,
                   split->region_size[r], split->region_size[r] == 1 ? "" : "s");
        else
            append(text, "region %d: %s (%d node%s)\n", r, tp_backend_name(backends[color]),
                   split->region_size[r], split->region_size[r] == 1 ? "" : "s");
        for (int32_t v = 0; v < graph->num_values; v++) {
            if (split->region_of[v] != r) continue;
            append(text, "  %%%s = %s", graph->values[v].name, graph->values[v].op->name);
            for (int32_t c = 0; c < color; c++) {
                const char *why = claims[c].reasons[v];
                append(text, "%s refused by '%s'%s%s", c ? ";" : "  #",
                       tp_backend_name(backends[c]), why ? ": " : "", why ? why : "");
            }
            append(text, "\n");
        }
    }
}

/* Distinct node values read by a node of another region. */
static int32_t count_crossing(const tp_graph *graph, const tp_partition *split) {
    bool *seen = calloc((size_t)graph->num_values + 1, sizeof *seen);
    int32_t crossing = 0;
    for (int32_t v = 0; seen && v < graph->num_values; v++)
        for (int32_t k = 0; graph->values[v].op && k < graph->values[v].num_operands; k++) {
            tp_value_id operand = graph->values[v].operands[k];
            if (split->region_of[operand] < 0 || split->region_of[operand] == split->region_of[v] ||
                seen[operand])
                continue;
            seen[operand] = true;
            crossing++;
        }
    free(seen);
    return crossing;
}

static void describe(const tp_partition_plan_state *plan, text_buffer *text) {
    const tp_graph *graph = plan->optimized;
    const tp_partition *split = &plan->split;
    append(text, "# partition of graph '%s' after the pass pipeline: nodes:", graph->name);
    bool first = true;
    for (int32_t c = 0; c < plan->num_colors; c++) {
        int64_t nodes = 0;
        for (int32_t r = 0; r < split->num_regions; r++)
            if (split->region_color[r] == c) nodes += split->region_size[r];
        if (!nodes) continue;
        append(text, "%s %s %lld", first ? "" : ",", tp_backend_name(plan->backends[c]),
               (long long)nodes);
        first = false;
    }
    append(text, "; regions %d; tensors crossing %d\n", split->num_regions,
           count_crossing(graph, split));
    describe_regions(text, graph, split, plan->backends, plan->claims, plan->fallback_none);
}

tp_status tp_partition_describe(const tp_graph *graph, const char *backend_name,
                                const char *fallback_name, char **text_out) {
    if (!graph || !text_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_partition_describe: NULL argument");
    *text_out = NULL;
    tp_partition_plan_state plan;
    tp_status status = tp_partition_plan_make(graph, backend_name, fallback_name, &plan);
    text_buffer text = {0};
    if (status == TP_OK) describe(&plan, &text);
    if (status == TP_OK && text.failed)
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    tp_partition_plan_clear(&plan);
    if (status != TP_OK) {
        free(text.data);
        return status;
    }
    *text_out = text.data;
    return TP_OK;
}
