/* Compiling a tp_graph with a backend and running the result on tp_tensors:
 * input metadata from example tensors, concrete output types (the op table's
 * rules applied to the concrete input types), "key=value" options, the graph
 * view, and tp_tensor <-> host buffer conversion around the plugin's run.
 * Errors name the backend, the graph and the step. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ir/graph_internal.h"
#include "ops/op_table.h"
#include "registry_internal.h"
#include "tensor/tensor_internal.h"

struct tp_executable {
    tp_backend *backend;
    tp_plugin_executable *handle;
    char *graph_name;
    int num_inputs;
    tp_plugin_tensor_meta *inputs;
    int num_outputs;
    tp_type *output_types;
};

static char *describe(const tp_type *type, char *buf, size_t size) {
    return tp_type_describe(NULL, type, buf, size);
}

/* Checks one example tensor against the graph input type, binding symbols. */
static tp_status bind_input(const tp_graph *graph, int index, const tp_type *declared,
                            const tp_tensor *tensor, int64_t *symbol_sizes, tp_type *concrete) {
    char want[128], got[128];
    tp_type actual = {.dtype = tensor->dtype, .ndim = tensor->ndim};
    for (int d = 0; d < tensor->ndim; d++) actual.dims[d] = tensor->shape[d];
    bool ok = actual.dtype == declared->dtype && actual.ndim == declared->ndim;
    for (int d = 0; ok && d < declared->ndim; d++) {
        int64_t dim = declared->dims[d];
        if (!TP_DIM_IS_SYMBOL(dim)) {
            ok = dim == actual.dims[d];
            continue;
        }
        int64_t *bound = &symbol_sizes[TP_DIM_SYMBOL_INDEX(dim)];
        if (*bound < 0) *bound = actual.dims[d];
        ok = *bound == actual.dims[d];
    }
    if (!ok)
        return tp_error_set(TP_ERR_SHAPE, "input %d (%%%s) of graph '%s' is %s, got %s", index,
                            tp_graph_value_name(graph, graph->inputs[index]), graph->name,
                            tp_type_describe(graph, declared, want, sizeof want),
                            describe(&actual, got, sizeof got));
    *concrete = actual;
    return TP_OK;
}

/* Concrete type of every value from the concrete input types. */
static tp_status propagate_types(const tp_graph *graph, tp_type *types) {
    for (int32_t i = 0; i < graph->num_values; i++) {
        const tp_value *value = &graph->values[i];
        if (!value->op) continue;
        tp_type operands[TP_IR_MAX_OPERANDS];
        for (int32_t k = 0; k < value->num_operands; k++) operands[k] = types[value->operands[k]];
        tp_status status = tp_op_infer(value->op, operands, value->num_operands,
                                       tp_ir_value_attrs(value), &types[i]);
        if (status != TP_OK)
            return tp_error_prefix(status, "graph '%s', %%%s: ", graph->name, value->name);
    }
    return TP_OK;
}

static tp_status concrete_types(const tp_graph *graph, tp_tensor *const *examples, int count,
                                tp_type *types) {
    if (examples && count != graph->num_inputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "graph '%s' has %d inputs, got %d example inputs", graph->name,
                            graph->num_inputs, count);
    for (int32_t i = 0; i < graph->num_values; i++) types[i] = graph->values[i].type;
    int64_t symbol_sizes[TP_IR_MAX_SYMBOLS];
    for (int i = 0; i < TP_IR_MAX_SYMBOLS; i++) symbol_sizes[i] = -1;
    for (int i = 0; i < graph->num_inputs; i++) {
        tp_value_id id = graph->inputs[i];
        if (examples) {
            if (!examples[i])
                return tp_error_set(TP_ERR_INVALID_ARGUMENT, "example input %d is NULL", i);
            TP_TRY(bind_input(graph, i, &graph->values[id].type, examples[i], symbol_sizes,
                              &types[id]));
            continue;
        }
        for (int d = 0; d < types[id].ndim; d++)
            if (TP_DIM_IS_SYMBOL(types[id].dims[d]))
                return tp_error_set(
                    TP_ERR_INVALID_ARGUMENT,
                    "graph '%s' has symbolic input dims (%%%s): pass example inputs", graph->name,
                    graph->values[id].name);
    }
    return graph->num_symbols ? propagate_types(graph, types) : TP_OK;
}

static tp_status parse_options(const char *const *options, int count, tp_plugin_option *out,
                               char **storage) {
    for (int i = 0; i < count; i++) {
        const char *equals = options[i] ? strchr(options[i], '=') : NULL;
        if (!equals || equals == options[i])
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "option '%s' must be written key=value",
                                options[i] ? options[i] : "(null)");
        storage[i] = strdup(options[i]);
        if (!storage[i]) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "compile: out of memory");
        storage[i][equals - options[i]] = '\0';
        out[i].key = storage[i];
        out[i].value = storage[i] + (equals - options[i]) + 1;
    }
    return TP_OK;
}

static void destroy_partial(tp_executable *executable) {
    if (!executable) return;
    free(executable->graph_name);
    free(executable->inputs);
    free(executable->output_types);
    free(executable);
}

static tp_status call_compile(tp_executable *executable, const tp_graph *graph,
                              const char *const *options, int num_options) {
    tp_plugin_option *parsed = calloc((size_t)num_options + 1, sizeof *parsed);
    char **storage = calloc((size_t)num_options + 1, sizeof *storage);
    tp_graph_view *view = NULL;
    tp_status status =
        parsed && storage ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "compile: out of memory");
    if (status == TP_OK) status = parse_options(options, num_options, parsed, storage);
    if (status == TP_OK) status = tp_graph_view_create(graph, &view);
    if (status == TP_OK) {
        int32_t result = tp_backend_call_compile(executable->backend, tp_graph_view_get(view),
                                                 executable->inputs, executable->num_inputs, parsed,
                                                 num_options, &executable->handle);
        if (result != TP_PLUGIN_OK) {
            const char *reason = tp_host_take_error();
            /* A refusal is TP_ERR_UNSUPPORTED, so callers (the partitioner, the
             * conformance kit) tell it from a failure without reading text. */
            status = tp_error_set(
                result == TP_PLUGIN_UNSUPPORTED ? TP_ERR_UNSUPPORTED : TP_ERR_BACKEND,
                "backend '%s' failed to compile graph '%s': %s%s", executable->backend->name,
                graph->name, result == TP_PLUGIN_UNSUPPORTED ? "unsupported: " : "",
                *reason ? reason : "(no reason given)");
        }
    }
    tp_graph_view_destroy(view);
    for (int i = 0; storage && i < num_options; i++) free(storage[i]);
    free(storage);
    free(parsed);
    return status;
}

tp_status tp_backend_compile(tp_backend *backend, const tp_graph *graph,
                             tp_tensor *const *example_inputs, int num_inputs,
                             const char *const *options, int num_options, tp_executable **out) {
    if (!backend || !graph || !out || num_options < 0 || (num_options && !options))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_compile: NULL argument");
    *out = NULL;
    TP_TRY(tp_loader_ensure_loaded(backend));
    if (atomic_load(&backend->shut_down))
        return tp_error_set(TP_ERR_STATE, "backend '%s' was unregistered and shut down",
                            backend->name);
    tp_type *types = calloc((size_t)graph->num_values + 1, sizeof *types);
    tp_executable *executable = calloc(1, sizeof *executable);
    if (executable) {
        executable->backend = backend;
        executable->graph_name = strdup(graph->name);
        executable->num_inputs = graph->num_inputs;
        executable->num_outputs = graph->num_outputs;
        executable->inputs = calloc((size_t)graph->num_inputs + 1, sizeof *executable->inputs);
        executable->output_types = calloc((size_t)graph->num_outputs + 1, sizeof(tp_type));
    }
    tp_status status = types && executable && executable->graph_name && executable->inputs &&
                               executable->output_types
                           ? TP_OK
                           : tp_error_set(TP_ERR_OUT_OF_MEMORY, "compile: out of memory");
    if (status == TP_OK) status = concrete_types(graph, example_inputs, num_inputs, types);
    if (status == TP_OK) {
        for (int i = 0; i < graph->num_inputs; i++) {
            const tp_type *type = &types[graph->inputs[i]];
            tp_plugin_tensor_meta *meta = &executable->inputs[i];
            meta->dtype = type->dtype;
            meta->ndim = type->ndim;
            for (int d = 0; d < type->ndim; d++) meta->dims[d] = type->dims[d];
            meta->device = TP_PLUGIN_DEVICE_HOST;
        }
        for (int i = 0; i < graph->num_outputs; i++)
            executable->output_types[i] = types[graph->outputs[i]];
        status = call_compile(executable, graph, options, num_options);
    }
    free(types);
    if (status != TP_OK) {
        destroy_partial(executable);
        return status;
    }
    atomic_fetch_add(&backend->live_executables, 1);
    *out = executable;
    return TP_OK;
}

/* ---- running ------------------------------------------------------------------------- */

static void to_buffer(tp_tensor *tensor, void *data, tp_plugin_buffer *buffer) {
    /* field by field, not memset: `rep stos` on these 96 bytes was a third
     * of a small graph's call overhead */
    buffer->data = data;
    buffer->nbytes = tensor->nbytes;
    buffer->dtype = tensor->dtype;
    buffer->ndim = tensor->ndim;
    for (int d = 0; d < TP_PLUGIN_MAX_DIMS; d++)
        buffer->dims[d] = d < tensor->ndim ? tensor->shape[d] : 0;
    buffer->device = TP_PLUGIN_DEVICE_HOST;
}

static bool matches_meta(const tp_tensor *tensor, const tp_plugin_tensor_meta *meta) {
    if ((int)tensor->dtype != meta->dtype || tensor->ndim != meta->ndim) return false;
    for (int d = 0; d < meta->ndim; d++)
        if (tensor->shape[d] != meta->dims[d]) return false;
    return true;
}

static bool matches_type(const tp_tensor *tensor, const tp_type *type) {
    if (tensor->dtype != type->dtype || tensor->ndim != type->ndim) return false;
    for (int d = 0; d < type->ndim; d++)
        if (tensor->shape[d] != type->dims[d]) return false;
    return true;
}

static tp_status check_inputs(const tp_executable *executable, tp_tensor *const *inputs,
                              int count) {
    if (count != executable->num_inputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "graph '%s' takes %d inputs, got %d",
                            executable->graph_name, executable->num_inputs, count);
    for (int i = 0; i < count; i++) {
        if (!inputs[i])
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "input %d of graph '%s' is NULL", i,
                                executable->graph_name);
        if (matches_meta(inputs[i], &executable->inputs[i])) continue;
        tp_type want = {.dtype = executable->inputs[i].dtype, .ndim = executable->inputs[i].ndim};
        memcpy(want.dims, executable->inputs[i].dims, sizeof want.dims);
        char want_text[128], got_text[128];
        return tp_error_set(TP_ERR_SHAPE,
                            "input %d of graph '%s': the executable was compiled for %s, got %s; "
                            "compile again for these inputs",
                            i, executable->graph_name, describe(&want, want_text, sizeof want_text),
                            tp_tensor_describe(inputs[i], got_text, sizeof got_text));
    }
    return TP_OK;
}

static tp_status prepare_outputs(const tp_executable *executable, tp_tensor *const *inputs,
                                 tp_tensor **outputs, bool *created) {
    for (int i = 0; i < executable->num_outputs; i++) {
        const tp_type *type = &executable->output_types[i];
        created[i] = false;
        if (outputs[i]) {
            char want[128], got[128];
            if (!matches_type(outputs[i], type))
                return tp_error_set(TP_ERR_SHAPE,
                                    "output %d of graph '%s' is %s, the given tensor is %s", i,
                                    executable->graph_name, describe(type, want, sizeof want),
                                    tp_tensor_describe(outputs[i], got, sizeof got));
            for (int k = 0; k < executable->num_inputs; k++)
                if (inputs[k] == outputs[i])
                    return tp_error_set(
                        TP_ERR_INVALID_ARGUMENT,
                        "output %d of graph '%s' is also input %d; outputs must not "
                        "alias inputs",
                        i, executable->graph_name, k);
            for (int k = 0; k < i; k++)
                if (outputs[k] == outputs[i])
                    return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                        "outputs %d and %d of graph '%s' are the same tensor", k, i,
                                        executable->graph_name);
            continue;
        }
        TP_TRY(tp_tensor_create_uninit(type->dtype, type->ndim, type->dims, &outputs[i]));
        created[i] = true;
    }
    return TP_OK;
}

tp_status tp_executable_run(tp_executable *executable, tp_tensor *const *inputs, int num_inputs,
                            tp_tensor **outputs) {
    if (!executable || (num_inputs && !inputs) || !outputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_executable_run: NULL argument");
    TP_TRY(check_inputs(executable, inputs, num_inputs));
    for (int i = 0; i < num_inputs; i++) tp_tensor_note_raw_access(inputs[i], "tp_executable_run");
    int n_in = executable->num_inputs, n_out = executable->num_outputs;
    /* the common few buffers live on the stack: two heap blocks per call
     * were half of a small graph's call overhead */
    enum { ON_STACK = 8 };
    tp_plugin_buffer stack_buffers[ON_STACK];
    bool stack_created[ON_STACK];
    bool on_stack = n_in + n_out <= ON_STACK;
    tp_plugin_buffer *buffers =
        on_stack ? stack_buffers : calloc((size_t)(n_in + n_out) + 1, sizeof *buffers);
    bool *created = on_stack ? stack_created : calloc((size_t)n_out + 1, sizeof *created);
    tp_status status =
        buffers && created ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "run: out of memory");
    if (status == TP_OK) status = prepare_outputs(executable, inputs, outputs, created);
    if (status == TP_OK) {
        for (int i = 0; i < n_in; i++) to_buffer(inputs[i], inputs[i]->data, &buffers[i]);
        for (int i = 0; i < n_out; i++)
            to_buffer(outputs[i], tp_tensor_data_mut(outputs[i]), &buffers[n_in + i]);
        if (tp_backend_call_run(executable->backend, executable->handle, buffers, n_in,
                                buffers + n_in, n_out) != TP_PLUGIN_OK) {
            const char *reason = tp_host_take_error();
            status = tp_error_set(TP_ERR_BACKEND, "backend '%s' failed to run graph '%s': %s",
                                  executable->backend->name, executable->graph_name,
                                  *reason ? reason : "(no reason given)");
        }
    }
    for (int i = 0; status != TP_OK && created && i < n_out; i++) {
        if (!created[i]) continue;
        tp_tensor_release(outputs[i]);
        outputs[i] = NULL;
    }
    if (!on_stack) {
        free(buffers);
        free(created);
    }
    return status;
}

int tp_executable_num_outputs(const tp_executable *executable) {
    return executable ? executable->num_outputs : 0;
}

tp_backend *tp_executable_backend(const tp_executable *executable) {
    return executable ? executable->backend : NULL;
}

void tp_executable_destroy(tp_executable *executable) {
    if (!executable) return;
    tp_backend *backend = executable->backend;
    tp_backend_call_release(backend, executable->handle);
    destroy_partial(executable);
    atomic_fetch_sub(&backend->live_executables, 1);
    tp_registry_executable_released(backend);
}
