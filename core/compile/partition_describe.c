/* tp_partition_describe: the split tp_compile_graph would make, in words
 * (`tpc print --partition`). Runs the same pass pipeline and the same
 * coloring rule as partitioned.c, but compiles nothing. */
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

typedef struct claim_table {
    bool *claimed;
    char **reasons;
} claim_table;

static void claim_table_clear(claim_table *table, int32_t count) {
    for (int32_t v = 0; table->reasons && v < count; v++) free(table->reasons[v]);
    free(table->reasons);
    free(table->claimed);
}

static tp_status claim_table_fill(tp_backend *backend, const tp_graph *graph, claim_table *table) {
    table->claimed = malloc(((size_t)graph->num_values + 1) * sizeof *table->claimed);
    table->reasons = calloc((size_t)graph->num_values + 1, sizeof *table->reasons);
    if (!table->claimed || !table->reasons)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    return tp_backend_claims(backend, graph, table->claimed, table->reasons);
}

static void describe_regions(text_buffer *text, const tp_graph *graph, const tp_partition *split,
                             tp_backend *const *backends, const claim_table *claims,
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

static tp_status describe(const tp_graph *graph, tp_backend *const *backends, int32_t num_colors,
                          bool fallback_none, text_buffer *text) {
    claim_table claims[3] = {{0}};
    int32_t *color = malloc(((size_t)graph->num_values + 1) * sizeof *color);
    tp_status status =
        color ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t c = 0; status == TP_OK && c < num_colors; c++)
        status = claim_table_fill(backends[c], graph, &claims[c]);
    for (int32_t v = 0; status == TP_OK && v < graph->num_values; v++) {
        color[v] = num_colors - 1;
        for (int32_t c = num_colors - 1; c >= 0; c--)
            if (claims[c].claimed[v]) color[v] = c;
    }
    tp_partition split = {0};
    if (status == TP_OK) status = tp_partition_compute(graph, color, num_colors, &split);
    if (status == TP_OK) {
        append(text, "# partition of graph '%s' after the pass pipeline: nodes:", graph->name);
        bool first = true;
        for (int32_t c = 0; c < num_colors; c++) {
            int64_t nodes = 0;
            for (int32_t r = 0; r < split.num_regions; r++)
                if (split.region_color[r] == c) nodes += split.region_size[r];
            if (!nodes) continue;
            append(text, "%s %s %lld", first ? "" : ",", tp_backend_name(backends[c]),
                   (long long)nodes);
            first = false;
        }
        append(text, "; regions %d; tensors crossing %d\n", split.num_regions,
               count_crossing(graph, &split));
        describe_regions(text, graph, &split, backends, claims, fallback_none);
        if (text->failed) status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    tp_partition_clear(&split);
    for (int32_t c = 0; c < num_colors; c++) claim_table_clear(&claims[c], graph->num_values);
    free(color);
    return status;
}

tp_status tp_partition_describe(const tp_graph *graph, const char *backend_name,
                                const char *fallback_name, char **text_out) {
    if (!graph || !text_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_partition_describe: NULL argument");
    *text_out = NULL;
    tp_backend *backends[3] = {NULL, NULL, NULL};
    TP_TRY(tp_backend_lookup(backend_name, &backends[0]));
    tp_compile_policy policy;
    TP_TRY(tp_config_snapshot(&policy));
    TP_TRY(tp_partition_resolve_fallback(fallback_name ? fallback_name : policy.fallback_backend,
                                         &backends[1]));
    bool fallback_none = !backends[1];
    int32_t num_colors = 1;
    if (backends[1] && backends[1] != backends[0]) num_colors = 2;
    TP_TRY(tp_backend_lookup("eager", &backends[num_colors]));
    bool eager_listed = backends[num_colors] == backends[0] ||
                        (num_colors == 2 && backends[num_colors] == backends[1]);
    if (!eager_listed) num_colors++;
    tp_pass_options options;
    tp_pipeline_pass_options(backends[0], &options);
    tp_graph *optimized = NULL;
    TP_TRY(tp_pass_pipeline_run(graph, &options, &optimized));
    text_buffer text = {0};
    tp_status status = describe(optimized, backends, num_colors, fallback_none, &text);
    tp_graph_destroy(optimized);
    if (status != TP_OK) {
        free(text.data);
        return status;
    }
    *text_out = text.data;
    return TP_OK;
}
