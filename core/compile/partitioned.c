/* A graph compiled in parts: claims → convex regions (partition.c) → one
 * tp_graph and one executable per region → one run that passes the tensors
 * crossing between regions. What the frontend's cache holds as one compiled
 * function. When the chosen backend claims every node nothing here is built:
 * the caller gets tp_backend_compile's executable unchanged.
 *
 * Colors: 0 the chosen backend, 1 the fallback, 2 eager (for nodes the
 * fallback does not claim). A region the fallback refuses at compile time
 * ("unsupported", e.g. a revision-1 plugin that claims everything but cannot
 * do one op) is compiled on eager instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/profile.h"
#include "base/error.h"
#include "base/log.h"
#include "ir/graph_internal.h"
#include "partition.h"

enum { COLOR_BACKEND = 0, COLOR_FALLBACK = 1, COLOR_EAGER = 2, NUM_COLORS = 3 };

typedef struct region_executable {
    tp_executable *executable;
    int32_t num_inputs;
    tp_value_id *inputs; /* source-graph ids, in the region graph's input order */
    int32_t num_outputs;
    tp_value_id *outputs; /* source-graph ids, in the region graph's output order */
} region_executable;

struct tp_partitioned {
    int32_t num_values;
    int32_t num_graph_inputs;
    tp_value_id *graph_inputs;
    int32_t num_graph_outputs;
    tp_value_id *graph_outputs;
    int32_t num_regions;
    region_executable *regions;
    /* Scratch for one run (the caller serialises runs). */
    tp_tensor **slots;
    bool *owned;
    int32_t *direct_output; /* per value: the caller's output index it is written into, or -1 */
};

/* ---- claims → colors -------------------------------------------------------- */

static tp_status claims_of(tp_backend *backend, const tp_graph *graph, bool *claimed,
                           char **reasons) {
    return tp_backend_claims(backend, graph, claimed, reasons);
}

static void free_reasons(char **reasons, int32_t count) {
    for (int32_t v = 0; reasons && v < count; v++) free(reasons[v]);
}

/* "matmul %h (no f64 kernels), softmax %p" — each unclaimed node. */
static char *unclaimed_list(const tp_graph *graph, const bool *claimed, char *const *reasons) {
    size_t length = 1;
    for (int32_t v = 0; v < graph->num_values; v++)
        if (graph->values[v].op && !claimed[v])
            length += strlen(graph->values[v].op->name) + strlen(graph->values[v].name) + 8 +
                      (reasons[v] ? strlen(reasons[v]) + 3 : 0);
    char *text = calloc(1, length);
    if (!text) return NULL;
    size_t used = 0;
    for (int32_t v = 0; v < graph->num_values; v++) {
        if (!graph->values[v].op || claimed[v]) continue;
        used += (size_t)snprintf(text + used, length - used, "%s%s %%%s", used ? ", " : "",
                                 graph->values[v].op->name, graph->values[v].name);
        if (reasons[v]) used += (size_t)snprintf(text + used, length - used, " (%s)", reasons[v]);
    }
    return text;
}

static tp_status refuse_split(const tp_partition_request *request, const bool *claimed,
                              char *const *reasons) {
    char *list = unclaimed_list(request->graph, claimed, reasons);
    const char *backend = tp_backend_name(request->backend);
    tp_status status =
        request->fullgraph
            ? tp_error_set(TP_ERR_UNSUPPORTED,
                           "'%s': fullgraph: backend '%s' does not claim %s; the graph would be "
                           "split (drop fullgraph, or pick a backend that takes these ops)",
                           request->function_name, backend, list ? list : "some nodes")
            : tp_error_set(TP_ERR_UNSUPPORTED,
                           "'%s': backend '%s' does not claim %s and fallback_backend is 'none' "
                           "(set fallback_backend, e.g. to 'eager', to run them elsewhere)",
                           request->function_name, backend, list ? list : "some nodes");
    free(list);
    return status;
}

tp_status tp_partition_resolve_fallback(const char *name, tp_backend **out) {
    *out = NULL;
    if (name && strcmp(name, "none") == 0) return TP_OK;
    if (name && *name)
        return tp_error_prefix(tp_backend_lookup(name, out), "fallback_backend '%s': ", name);
    if (tp_backend_lookup("stax", out) == TP_OK) return TP_OK;
    return tp_backend_lookup("eager", out);
}

/* color[v] for every node; *all_primary when the backend claims them all. */
static tp_status color_nodes(const tp_partition_request *request, int32_t *color, bool *all_primary,
                             tp_backend **fallback) {
    const tp_graph *graph = request->graph;
    int32_t count = graph->num_values;
    bool *claimed = malloc(((size_t)count + 1) * sizeof *claimed);
    char **reasons = calloc((size_t)count + 1, sizeof *reasons);
    if (!claimed || !reasons) {
        free(claimed);
        free(reasons);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    tp_status status = claims_of(request->backend, graph, claimed, reasons);
    *all_primary = true;
    for (int32_t v = 0; status == TP_OK && v < count; v++) {
        color[v] = claimed[v] ? COLOR_BACKEND : COLOR_FALLBACK;
        if (graph->values[v].op && !claimed[v]) *all_primary = false;
    }
    if (status == TP_OK && !*all_primary && !request->fullgraph)
        status = tp_partition_resolve_fallback(request->fallback_name, fallback);
    if (status == TP_OK && !*all_primary && (request->fullgraph || !*fallback))
        status = refuse_split(request, claimed, reasons);
    if (status == TP_OK && !*all_primary) {
        status = claims_of(*fallback, graph, claimed, NULL);
        for (int32_t v = 0; status == TP_OK && v < count; v++)
            if (color[v] == COLOR_FALLBACK && !claimed[v]) color[v] = COLOR_EAGER;
    }
    free_reasons(reasons, count);
    free(reasons);
    free(claimed);
    return status;
}

/* ---- one region → one graph ------------------------------------------------- */

static tp_status copy_type(tp_graph *region_graph, const tp_graph *graph, const tp_type *type,
                           tp_type *out) {
    *out = *type;
    for (int d = 0; d < type->ndim; d++)
        if (TP_DIM_IS_SYMBOL(type->dims[d]))
            TP_TRY(tp_graph_symbol(region_graph, tp_graph_symbol_name(graph, type->dims[d]),
                                   &out->dims[d]));
    return TP_OK;
}

/* A name a region graph can keep: written by a person (not the builder's
 * decimal %N, which could collide with the region graph's own). */
static bool is_chosen_name(const char *name) {
    if (!tp_ir_is_value_name(name)) return false;
    for (const char *c = name; *c; c++)
        if (*c < '0' || *c > '9') return true;
    return false;
}

/* Adds `operand` as an input of the region graph (once). */
static tp_status add_region_input(tp_graph *region_graph, const tp_graph *graph,
                                  tp_value_id operand, tp_value_id *map,
                                  region_executable *region) {
    char generated[32];
    const char *name = graph->values[operand].name;
    if (!is_chosen_name(name)) {
        snprintf(generated, sizeof generated, "crossing_%d", operand);
        name = generated;
    }
    tp_type type;
    TP_TRY(copy_type(region_graph, graph, &graph->values[operand].type, &type));
    TP_TRY(tp_graph_add_input(region_graph, name, &type, &map[operand]));
    region->inputs[region->num_inputs++] = operand;
    return TP_OK;
}

static tp_status build_region_graph(const tp_graph *graph, const tp_partition *partition,
                                    int32_t index, const bool *leaves, tp_value_id *map,
                                    region_executable *region, tp_graph **out) {
    char name[160];
    snprintf(name, sizeof name, "%s_part%d", graph->name, index);
    tp_graph *region_graph = NULL;
    TP_TRY(tp_graph_create(name, &region_graph));
    tp_status status = TP_OK;
    tp_value_id operands[TP_IR_MAX_OPERANDS];
    tp_value_id *results = malloc(((size_t)partition->region_size[index] + 1) * sizeof *results);
    if (!results) status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t v = 0; status == TP_OK && v < graph->num_values; v++) {
        if (partition->region_of[v] != index) continue;
        const tp_value *value = &graph->values[v];
        for (int32_t k = 0; status == TP_OK && k < value->num_operands; k++) {
            tp_value_id operand = value->operands[k];
            if (map[operand] < 0)
                status = add_region_input(region_graph, graph, operand, map, region);
            operands[k] = map[operand];
        }
        if (status != TP_OK) break;
        status = tp_graph_add_node(region_graph, value->op->name, operands, value->num_operands,
                                   &value->attrs, is_chosen_name(value->name) ? value->name : NULL,
                                   &map[v]);
        if (status == TP_OK && leaves[v]) {
            results[region->num_outputs] = map[v];
            region->outputs[region->num_outputs++] = v;
        }
    }
    if (status == TP_OK) status = tp_graph_set_outputs(region_graph, results, region->num_outputs);
    free(results);
    /* Reset the map for the next region (only what this one touched). */
    for (int32_t i = 0; i < region->num_inputs; i++) map[region->inputs[i]] = TP_NO_VALUE;
    for (int32_t v = 0; v < graph->num_values; v++)
        if (partition->region_of[v] == index) map[v] = TP_NO_VALUE;
    if (status != TP_OK) {
        tp_graph_destroy(region_graph);
        return status;
    }
    *out = region_graph;
    return TP_OK;
}

/* leaves[v]: node v is returned or read by a node of another region. */
static void mark_leaving(const tp_graph *graph, const tp_partition *partition, bool *leaves) {
    memset(leaves, 0, (size_t)graph->num_values * sizeof *leaves);
    for (int32_t i = 0; i < graph->num_outputs; i++) leaves[graph->outputs[i]] = true;
    for (int32_t v = 0; v < graph->num_values; v++) {
        const tp_value *value = &graph->values[v];
        for (int32_t k = 0; value->op && k < value->num_operands; k++) {
            tp_value_id operand = value->operands[k];
            if (partition->region_of[operand] >= 0 &&
                partition->region_of[operand] != partition->region_of[v])
                leaves[operand] = true;
        }
    }
    for (int32_t v = 0; v < graph->num_values; v++)
        if (!graph->values[v].op) leaves[v] = false;
}

/* ---- compiling the regions ---------------------------------------------------- */

/* Concrete types of every value for these inputs (symbols bound). */
static tp_status concrete_types(const tp_graph *graph, tp_tensor *const *inputs, tp_type *types) {
    for (int32_t v = 0; v < graph->num_values; v++) types[v] = graph->values[v].type;
    for (int32_t i = 0; i < graph->num_inputs; i++) {
        tp_type *type = &types[graph->inputs[i]];
        type->ndim = tp_tensor_ndim(inputs[i]);
        memcpy(type->dims, tp_tensor_shape(inputs[i]), (size_t)type->ndim * sizeof(int64_t));
    }
    for (int32_t v = 0; v < graph->num_values; v++) {
        const tp_value *value = &graph->values[v];
        if (!value->op) continue;
        tp_type operands[TP_IR_MAX_OPERANDS];
        for (int32_t k = 0; k < value->num_operands; k++) operands[k] = types[value->operands[k]];
        TP_TRY(tp_op_infer(value->op, operands, value->num_operands, &value->attrs, &types[v]));
    }
    return TP_OK;
}

/* Example tensors for a region's inputs: the caller's for graph inputs,
 * placeholders of the concrete type for crossing tensors (only needed when
 * the graph has symbols: otherwise the region graph's types are concrete). */
static tp_status region_examples(const tp_partition_request *request, const tp_type *types,
                                 const int32_t *input_index, const region_executable *region,
                                 tp_tensor **examples, bool *made) {
    for (int32_t i = 0; i < region->num_inputs; i++) {
        tp_value_id value = region->inputs[i];
        made[i] = false;
        if (input_index[value] >= 0) {
            examples[i] = request->inputs[input_index[value]];
            continue;
        }
        const tp_type *type = &types[value];
        TP_TRY(tp_tensor_create(type->dtype, type->ndim, type->dims, &examples[i]));
        made[i] = true;
    }
    return TP_OK;
}

static tp_status compile_region(const tp_partition_request *request, tp_backend *const *backends,
                                int32_t color, int32_t region, const tp_graph *region_graph,
                                tp_tensor *const *examples, int32_t num_examples,
                                tp_executable **out, tp_backend **used) {
    bool primary = color == COLOR_BACKEND;
    uint64_t start = tp_profile_start();
    tp_status status = tp_backend_compile(backends[color], region_graph, examples, num_examples,
                                          primary ? request->options : NULL,
                                          primary ? request->num_options : 0, out);
    *used = backends[color];
    if (status == TP_ERR_UNSUPPORTED && color == COLOR_FALLBACK &&
        backends[COLOR_EAGER] != backends[color]) {
        tp_log_message(TP_LOG_INFO, "'%s': fallback '%s' refused region %s (%s); eager runs it",
                       request->function_name, tp_backend_name(backends[color]),
                       tp_graph_name(region_graph), tp_last_error());
        *used = backends[COLOR_EAGER];
        status = tp_backend_compile(*used, region_graph, examples, num_examples, NULL, 0, out);
    }
    tp_profile_end(start, "backend_compile", tp_backend_name(*used), region);
    return status;
}

static tp_status partitioned_alloc(const tp_graph *graph, const tp_partition *partition,
                                   tp_partitioned **out) {
    tp_partitioned *p = calloc(1, sizeof *p);
    if (!p) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    size_t values = (size_t)graph->num_values + 1;
    p->num_values = graph->num_values;
    p->num_graph_inputs = graph->num_inputs;
    p->num_graph_outputs = graph->num_outputs;
    p->graph_inputs = malloc(((size_t)graph->num_inputs + 1) * sizeof *p->graph_inputs);
    p->graph_outputs = malloc(((size_t)graph->num_outputs + 1) * sizeof *p->graph_outputs);
    p->regions = calloc((size_t)partition->num_regions + 1, sizeof *p->regions);
    p->slots = calloc(values, sizeof *p->slots);
    p->owned = calloc(values, sizeof *p->owned);
    p->direct_output = malloc(values * sizeof *p->direct_output);
    p->num_regions = p->regions ? partition->num_regions : 0;
    for (int32_t r = 0; r < p->num_regions; r++) {
        /* A region's inputs and outputs are bounded by the values. */
        p->regions[r].inputs = malloc(values * sizeof(tp_value_id));
        p->regions[r].outputs = malloc(values * sizeof(tp_value_id));
    }
    bool ok = p->graph_inputs && p->graph_outputs && p->regions && p->slots && p->owned &&
              p->direct_output;
    for (int32_t r = 0; ok && r < p->num_regions; r++)
        ok = p->regions[r].inputs && p->regions[r].outputs;
    *out = p;
    if (!ok) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    /* A graph may have no inputs (its arrays are then NULL). */
    if (graph->num_inputs > 0)
        memcpy(p->graph_inputs, graph->inputs, (size_t)graph->num_inputs * sizeof(tp_value_id));
    if (graph->num_outputs > 0)
        memcpy(p->graph_outputs, graph->outputs, (size_t)graph->num_outputs * sizeof(tp_value_id));
    for (int32_t v = 0; v < graph->num_values; v++) p->direct_output[v] = -1;
    return TP_OK;
}

static tp_status summarize(const tp_partitioned *p, tp_backend *const *used,
                           const tp_partition *partition, tp_partition_region_info **summary,
                           int *num_summary) {
    if (!summary) return TP_OK;
    *summary = calloc((size_t)p->num_regions + 1, sizeof **summary);
    if (!*summary) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t r = 0; r < p->num_regions; r++) {
        (*summary)[r].backend = tp_backend_name(used[r]);
        (*summary)[r].num_nodes = partition->region_size[r];
        (*summary)[r].num_inputs = p->regions[r].num_inputs;
        (*summary)[r].num_outputs = p->regions[r].num_outputs;
    }
    *num_summary = p->num_regions;
    return TP_OK;
}

static tp_status compile_regions(const tp_partition_request *request, tp_backend *const *backends,
                                 const tp_partition *partition, tp_partitioned *p,
                                 tp_backend **used) {
    const tp_graph *graph = request->graph;
    size_t values = (size_t)graph->num_values + 1;
    bool *leaves = malloc(values * sizeof *leaves);
    tp_value_id *map = malloc(values * sizeof *map);
    int32_t *input_index = malloc(values * sizeof *input_index);
    tp_type *types = graph->num_symbols ? malloc(values * sizeof *types) : NULL;
    tp_tensor **examples = malloc(values * sizeof *examples);
    bool *made = calloc(values, sizeof *made);
    tp_status status =
        leaves && map && input_index && examples && made && (types || !graph->num_symbols)
            ? TP_OK
            : tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    if (status == TP_OK) {
        mark_leaving(graph, partition, leaves);
        for (int32_t v = 0; v < graph->num_values; v++) map[v] = TP_NO_VALUE, input_index[v] = -1;
        for (int32_t i = 0; i < graph->num_inputs; i++) input_index[graph->inputs[i]] = i;
        if (types) status = concrete_types(graph, request->inputs, types);
    }
    for (int32_t r = 0; status == TP_OK && r < partition->num_regions; r++) {
        region_executable *region = &p->regions[r];
        tp_graph *region_graph = NULL;
        status = build_region_graph(graph, partition, r, leaves, map, region, &region_graph);
        if (status == TP_OK && types)
            status = region_examples(request, types, input_index, region, examples, made);
        else if (status == TP_OK)
            for (int32_t i = 0; i < region->num_inputs; i++) examples[i] = NULL;
        if (status == TP_OK)
            status = compile_region(request, backends, partition->region_color[r], r, region_graph,
                                    types ? examples : NULL, types ? region->num_inputs : 0,
                                    &region->executable, &used[r]);
        for (int32_t i = 0; types && i < region->num_inputs; i++)
            if (made[i]) tp_tensor_release(examples[i]), made[i] = false;
        tp_graph_destroy(region_graph);
    }
    free(leaves);
    free(map);
    free(input_index);
    free(types);
    free(examples);
    free(made);
    return status;
}

/* Distinct tensors that enter a region from another one. */
static int64_t count_crossing(const tp_partitioned *p) {
    bool *seen = calloc((size_t)p->num_values + 1, sizeof *seen);
    if (!seen) return -1;
    for (int32_t i = 0; i < p->num_graph_inputs; i++) seen[p->graph_inputs[i]] = true;
    int64_t crossing = 0;
    for (int32_t r = 0; r < p->num_regions; r++)
        for (int32_t i = 0; i < p->regions[r].num_inputs; i++) {
            tp_value_id value = p->regions[r].inputs[i];
            crossing += !seen[value];
            seen[value] = true;
        }
    free(seen);
    return crossing;
}

static void log_partition(const tp_partition_request *request,
                          const tp_partition_region_info *regions, int count, int64_t crossing) {
    char *text = tp_partition_summary_text(regions, count, crossing);
    tp_log_message(TP_LOG_INFO, "'%s': partition %s", request->function_name,
                   text ? text : "(out of memory)");
    free(text);
}

tp_status tp_partitioned_compile(const tp_partition_request *request, tp_executable **single,
                                 tp_partitioned **partitioned, tp_partition_region_info **summary,
                                 int *num_summary) {
    *single = NULL;
    *partitioned = NULL;
    if (summary) *summary = NULL, *num_summary = 0;
    const tp_graph *graph = request->graph;
    int32_t *color = malloc(((size_t)graph->num_values + 1) * sizeof *color);
    if (!color) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    bool all_primary = true;
    tp_backend *fallback = NULL;
    uint64_t start = tp_profile_start();
    tp_status status = color_nodes(request, color, &all_primary, &fallback);
    if (status != TP_OK) free(color);
    TP_TRY(status);
    if (all_primary) {
        free(color);
        tp_profile_end(start, "partition", "", -1);
        start = tp_profile_start();
        status = tp_backend_compile(request->backend, graph, request->inputs, request->num_inputs,
                                    request->options, request->num_options, single);
        tp_profile_end(start, "backend_compile", tp_backend_name(request->backend), 0);
        TP_TRY(status);
        tp_partition_region_info whole = {.backend = tp_backend_name(request->backend),
                                          .num_inputs = graph->num_inputs,
                                          .num_outputs = graph->num_outputs};
        for (int32_t v = 0; v < graph->num_values; v++) whole.num_nodes += !!graph->values[v].op;
        log_partition(request, &whole, 1, 0);
        if (summary && (*summary = malloc(sizeof whole))) **summary = whole, *num_summary = 1;
        return TP_OK;
    }
    tp_backend *backends[NUM_COLORS] = {request->backend, fallback, NULL};
    tp_partition partition = {0};
    tp_partitioned *p = NULL;
    tp_backend **used = NULL;
    status = tp_backend_lookup("eager", &backends[COLOR_EAGER]);
    if (status == TP_OK) status = tp_partition_compute(graph, color, NUM_COLORS, &partition);
    free(color);
    tp_profile_end(start, "partition", "", -1);
    if (status == TP_OK) status = partitioned_alloc(graph, &partition, &p);
    if (status == TP_OK && !(used = calloc((size_t)partition.num_regions + 1, sizeof *used)))
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    if (status == TP_OK) status = compile_regions(request, backends, &partition, p, used);
    tp_partition_region_info *regions = NULL;
    int count = 0;
    if (status == TP_OK) status = summarize(p, used, &partition, &regions, &count);
    if (status == TP_OK) log_partition(request, regions, count, count_crossing(p));
    if (status == TP_OK && summary)
        *summary = regions, *num_summary = count;
    else
        free(regions);
    free(used);
    tp_partition_clear(&partition);
    if (status != TP_OK) {
        tp_partitioned_destroy(p);
        return status;
    }
    *partitioned = p;
    return TP_OK;
}

/* ---- running ------------------------------------------------------------------ */

static void release_slots(tp_partitioned *p) {
    for (int32_t v = 0; v < p->num_values; v++) {
        if (p->owned[v]) tp_tensor_release(p->slots[v]);
        p->owned[v] = false;
        p->slots[v] = NULL;
        p->direct_output[v] = -1;
    }
}

static tp_status run_region(tp_partitioned *p, region_executable *region, tp_tensor **outputs) {
    tp_tensor *small_in[16], *small_out[16];
    tp_tensor **in = region->num_inputs <= 16 ? small_in : malloc(region->num_inputs * sizeof *in);
    tp_tensor **out =
        region->num_outputs <= 16 ? small_out : malloc(region->num_outputs * sizeof *out);
    tp_status status =
        in && out ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t i = 0; status == TP_OK && i < region->num_inputs; i++)
        in[i] = p->slots[region->inputs[i]];
    for (int32_t i = 0; status == TP_OK && i < region->num_outputs; i++) {
        int32_t direct = p->direct_output[region->outputs[i]];
        out[i] = direct >= 0 ? outputs[direct] : NULL;
    }
    if (status == TP_OK)
        status = tp_executable_run(region->executable, in, region->num_inputs, out);
    for (int32_t i = 0; status == TP_OK && i < region->num_outputs; i++) {
        tp_value_id value = region->outputs[i];
        p->slots[value] = out[i];
        p->owned[value] = p->direct_output[value] < 0;
    }
    if (in != small_in) free(in);
    if (out != small_out) free(out);
    return status;
}

/* Graph output i from its slot: written in place already, copied into the
 * caller's tensor, handed over (the first time) or cloned. */
static tp_status deliver_output(tp_partitioned *p, int32_t index, tp_tensor **outputs) {
    tp_value_id value = p->graph_outputs[index];
    tp_tensor *source = p->slots[value];
    if (p->direct_output[value] == index) return TP_OK;
    if (outputs[index])
        return tp_tensor_copy_from(outputs[index], tp_tensor_data(source),
                                   tp_tensor_nbytes(source));
    if (p->owned[value]) {
        outputs[index] = source;
        p->owned[value] = false;
        return TP_OK;
    }
    return tp_tensor_clone(source, &outputs[index]);
}

tp_status tp_partitioned_run(tp_partitioned *p, tp_tensor *const *inputs, int num_inputs,
                             tp_tensor **outputs) {
    if (num_inputs != p->num_graph_inputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "partitioned graph takes %d inputs, got %d",
                            p->num_graph_inputs, num_inputs);
    for (int32_t i = 0; i < num_inputs; i++) p->slots[p->graph_inputs[i]] = inputs[i];
    bool *created = calloc((size_t)p->num_graph_outputs + 1, sizeof *created);
    if (!created) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "partition: out of memory");
    for (int32_t i = 0; i < p->num_graph_outputs; i++) {
        tp_value_id value = p->graph_outputs[i];
        created[i] = !outputs[i];
        bool is_node = p->direct_output[value] == -1 && p->slots[value] == NULL;
        if (outputs[i] && is_node) p->direct_output[value] = i;
    }
    tp_status status = TP_OK;
    for (int32_t r = 0; status == TP_OK && r < p->num_regions; r++)
        status = run_region(p, &p->regions[r], outputs);
    for (int32_t i = 0; status == TP_OK && i < p->num_graph_outputs; i++)
        status = deliver_output(p, i, outputs);
    for (int32_t i = 0; status != TP_OK && i < p->num_graph_outputs; i++)
        if (created[i] && outputs[i]) tp_tensor_release(outputs[i]), outputs[i] = NULL;
    free(created);
    release_slots(p);
    return status;
}

void tp_partitioned_destroy(tp_partitioned *p) {
    if (!p) return;
    for (int32_t r = 0; p->regions && r < p->num_regions; r++) {
        tp_executable_destroy(p->regions[r].executable);
        free(p->regions[r].inputs);
        free(p->regions[r].outputs);
    }
    free(p->regions);
    free(p->graph_inputs);
    free(p->graph_outputs);
    free(p->slots);
    free(p->owned);
    free(p->direct_output);
    free(p);
}

char *tp_partition_summary_text(const tp_partition_region_info *regions, int count,
                                int64_t crossing) {
    /* Nodes per backend in first-seen order. */
    const char *names[64];
    int64_t nodes[64];
    int distinct = 0;
    for (int r = 0; r < count; r++) {
        int k = 0;
        while (k < distinct && strcmp(names[k], regions[r].backend) != 0) k++;
        if (k == distinct && distinct < 64)
            names[distinct] = regions[r].backend, nodes[distinct++] = 0;
        if (k < 64) nodes[k] += regions[r].num_nodes;
    }
    size_t length = 64 + (size_t)distinct * 96;
    char *text = malloc(length);
    if (!text) return NULL;
    size_t used = (size_t)snprintf(text, length, "nodes:");
    for (int k = 0; k < distinct; k++)
        used += (size_t)snprintf(text + used, length - used, "%s %s %lld", k ? "," : "", names[k],
                                 (long long)nodes[k]);
    snprintf(text + used, length - used, "; regions %d; tensors crossing %lld", count,
             (long long)crossing);
    return text;
}
