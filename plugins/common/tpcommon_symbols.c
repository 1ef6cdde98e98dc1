/* plugins/common — binding dimension symbols from inputs (tpcommon_symbols.h). */
#include "tpcommon_symbols.h"

#include "tpcommon_graph.h"
#include "tpcommon_text.h"

/* One given input as both metadata and buffers describe it. */
typedef struct given_input {
    int32_t dtype;
    int32_t ndim;
    const int64_t *dims;
} given_input;

static int32_t check_count(const tp_plugin_graph *graph, int32_t num_inputs, int64_t *symbols,
                           char *error, size_t error_size) {
    for (int32_t s = 0; s < graph->num_symbols; s++) symbols[s] = -1;
    if (num_inputs == graph->num_inputs) return TP_PLUGIN_OK;
    return tpcommon_error(error, error_size, "graph '%s' has %d inputs but %d were given",
                          graph->name ? graph->name : "?", (int)graph->num_inputs, (int)num_inputs);
}

/* Checks input `i` against its declared type and binds the symbols it names. */
static int32_t bind_input(const tp_plugin_graph *graph, int32_t i, given_input given,
                          int64_t *symbols, char *error, size_t error_size) {
    const tp_plugin_value *input = &graph->values[graph->inputs[i]];
    const tp_plugin_type *declared = &input->type;
    char text[160];
    if (given.dtype != declared->dtype || given.ndim != declared->ndim)
        return tpcommon_error(
            error, error_size, "input %d (%%%s) is declared %s but was given %s with %d dims",
            (int)i, input->name, tpcommon_type_text(graph, declared, text, sizeof text),
            tpcommon_dtype_name(given.dtype), (int)given.ndim);
    for (int32_t d = 0; d < declared->ndim; d++) {
        int64_t want = declared->dims[d], got = given.dims[d];
        if (got < 0)
            return tpcommon_error(error, error_size, "input %d (%%%s) was given dim %d = %lld",
                                  (int)i, input->name, (int)d, (long long)got);
        if (want >= 0) {
            if (want == got) continue;
            return tpcommon_error(
                error, error_size, "input %d (%%%s) is declared %s but was given dim %d = %lld",
                (int)i, input->name, tpcommon_type_text(graph, declared, text, sizeof text), (int)d,
                (long long)got);
        }
        int64_t s = -want - 1;
        if (s >= graph->num_symbols)
            return tpcommon_error(
                error, error_size, "input %d (%%%s) dim %d names symbol %lld, but the graph has %d",
                (int)i, input->name, (int)d, (long long)s, (int)graph->num_symbols);
        if (symbols[s] >= 0 && symbols[s] != got)
            return tpcommon_error(error, error_size,
                                  "symbol '%s' is %lld in an earlier input but %lld in input %d "
                                  "(%%%s) dim %d: sizes bound to one symbol must agree",
                                  graph->symbols ? graph->symbols[s] : "?", (long long)symbols[s],
                                  (long long)got, (int)i, input->name, (int)d);
        symbols[s] = got;
    }
    return TP_PLUGIN_OK;
}

int32_t tpcommon_bind_symbols_from_metas(const tp_plugin_graph *graph,
                                         const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                         int64_t *symbols, char *error, size_t error_size) {
    int32_t status = check_count(graph, num_inputs, symbols, error, error_size);
    for (int32_t i = 0; status == TP_PLUGIN_OK && i < num_inputs; i++) {
        given_input given = {inputs[i].dtype, inputs[i].ndim, inputs[i].dims};
        status = bind_input(graph, i, given, symbols, error, error_size);
    }
    return status;
}

int32_t tpcommon_bind_symbols_from_buffers(const tp_plugin_graph *graph,
                                           const tp_plugin_buffer *inputs, int32_t num_inputs,
                                           int64_t *symbols, char *error, size_t error_size) {
    int32_t status = check_count(graph, num_inputs, symbols, error, error_size);
    for (int32_t i = 0; status == TP_PLUGIN_OK && i < num_inputs; i++) {
        given_input given = {inputs[i].dtype, inputs[i].ndim, inputs[i].dims};
        status = bind_input(graph, i, given, symbols, error, error_size);
    }
    return status;
}
