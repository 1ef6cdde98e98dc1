/* The tracer: a tp_ctx recorder that turns one run of a user function into a
 * graph, with its metadata touches, its value reads (gates) and any raw data
 * access (capture.h). Owns the trace records of the tensors it follows and
 * removes every one of them before it returns.
 *
 * Ops are not computed while tracing: each result is a deferred tensor
 * (shape and dtype only) standing for its graph value. A value is computed
 * when something needs it (capture_evaluate.c): a gate computes the
 * ancestors of the read value that are still deferred; the first raw read
 * computes everything traced so far and every later op at once, since the
 * function then runs uncompiled and what it sees must be what eager gives;
 * a deferred tensor still referenced from outside when the function returns
 * is computed before its trace is removed. */
#include "capture_state.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/error.h"

static capture_state *state_of(tp_ctx_recorder *recorder) {
    return (capture_state *)recorder;
}

static tp_status out_of_memory(const char *what) {
    return tp_error_set(TP_ERR_OUT_OF_MEMORY, "capture: out of memory (%s)", what);
}

/* Keeps the first evaluation error (the thread's message) as the capture's. */
static void note_evaluation_error(capture_state *state, tp_status status) {
    if (state->evaluation_error) return;
    state->evaluation_status = status;
    state->evaluation_error = strdup(tp_last_error());
}

/* The first raw read explains why the function cannot be captured. */
static void record_raw_access(trace_record *record, const tp_tensor *tensor, const char *api) {
    capture_state *state = record->state;
    if (state->raw_access_reason) return; /* the first one explains it */
    char text[512];
    char type[64];
    snprintf(text, sizeof text,
             "'%s' called %s on the traced tensor %%%s (%s) during capture; raw data cannot "
             "be recorded into a graph (use ops and tp_item_* instead)",
             state->name, api, tp_graph_value_name(state->graph, record->value),
             tp_tensor_describe(tensor, type, sizeof type));
    state->raw_access_reason = strdup(text);
    /* From here on the function runs as it would eagerly (its result is
     * thrown away and it runs again uncompiled): compute what is pending
     * and every later op at once. */
    tp_status status = tp_capture_evaluate_all(state);
    if (status != TP_OK) note_evaluation_error(state, status);
}

/* Every raw read: also when the reason is known already, the tensor must
 * hold its values before the API hands them out. */
static void on_raw_access(tp_tensor_trace_hook *hook, const tp_tensor *tensor, const char *api) {
    trace_record *record = (trace_record *)hook;
    record_raw_access(record, tensor, api);
    tp_status status = tensor->deferred ? tp_capture_evaluate(record->state, record->value) : TP_OK;
    if (status != TP_OK) note_evaluation_error(record->state, status);
    if (tensor->deferred) tp_capture_fill_zeros((tp_tensor *)tensor); /* after an error */
}

static void on_size_read(tp_tensor_trace_hook *hook, const tp_tensor *tensor);

static void on_foreign_ctx(tp_tensor_trace_hook *hook, const tp_tensor *tensor, const char *op) {
    trace_record *record = (trace_record *)hook;
    capture_state *state = record->state;
    if (state->foreign_ctx_error) return; /* the first one explains it */
    char text[512];
    char type[64];
    snprintf(text, sizeof text,
             "'%s' ran op '%s' on the traced tensor %%%s (%s) with a tp_ctx other than the one "
             "it was given; run every op of a compiled function on its own ctx",
             state->name, op, tp_graph_value_name(state->graph, record->value),
             tp_tensor_describe(tensor, type, sizeof type));
    state->foreign_ctx_error = strdup(text);
}

static tp_ctx *capture_ctx(tp_tensor_trace_hook *hook) {
    return ((trace_record *)hook)->state->ctx;
}

/* Starts following `tensor` as graph value `value`. */
static tp_status trace_tensor(capture_state *state, tp_tensor *tensor, tp_value_id value) {
    TP_TRY(tp_capture_keep_value(state, value, tensor));
    if (state->num_records == state->record_capacity) {
        int capacity = state->record_capacity ? state->record_capacity * 2 : 64;
        trace_record **records = realloc(state->records, (size_t)capacity * sizeof *records);
        if (!records) return out_of_memory("trace records");
        state->records = records;
        state->record_capacity = capacity;
    }
    trace_record *record = malloc(sizeof *record);
    if (!record) return out_of_memory("trace record");
    record->hook = (tp_tensor_trace_hook){.on_raw_access = on_raw_access,
                                          .on_size_read = on_size_read,
                                          .recorder = &state->recorder,
                                          .on_foreign_ctx = on_foreign_ctx,
                                          .capture_ctx = capture_ctx};
    record->state = state;
    record->value = value;
    record->tensor = tensor; /* state->values holds the reference */
    tensor->trace = record;
    state->records[state->num_records++] = record;
    return TP_OK;
}

/* A deferred tensor the function kept beyond its ctx (a global, user_data)
 * must not lose its values with its trace: compute those. */
static void compute_escaped(capture_state *state) {
    for (int i = 0; i < state->num_records; i++) {
        tp_tensor *tensor = state->records[i]->tensor;
        if (!tensor->deferred || atomic_load(&tensor->refcount) <= 1) continue;
        tp_status status = tp_capture_evaluate(state, state->records[i]->value);
        if (status != TP_OK) {
            note_evaluation_error(state, status);
            tp_capture_fill_zeros(tensor);
        }
    }
}

static void untrace_all(capture_state *state) {
    for (int i = 0; i < state->num_records; i++) {
        trace_record *record = state->records[i];
        record->tensor->trace = NULL;
        free(record);
    }
    free(state->records);
    state->records = NULL;
    state->num_records = state->record_capacity = 0;
    tp_capture_release_values(state);
}

/* The graph value standing for `tensor`: its trace, or a new constant node
 * holding its current values (a tensor the function reached from outside). */
static tp_status value_of(capture_state *state, tp_tensor *tensor, tp_value_id *out) {
    trace_record *record = tensor->trace;
    if (record && record->hook.on_raw_access == on_raw_access && record->state == state) {
        *out = record->value;
        return TP_OK;
    }
    /* A snapshot, so every backend sees the values of capture time, also
     * when the function's global changes later. */
    tp_tensor *snapshot;
    TP_TRY(tp_tensor_clone(tensor, &snapshot));
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = tensor->dtype;
    attrs.data = snapshot;
    tp_status status = tp_graph_add_node(state->graph, "constant", NULL, 0, &attrs, NULL, out);
    if (status == TP_OK) status = tp_capture_keep_value(state, *out, snapshot);
    tp_tensor_release(snapshot); /* the graph and state->values hold their own */
    return status;
}

/* The recorder's trace_op: a graph node and its deferred result. */
static tp_status trace_op(tp_ctx_recorder *recorder, const tp_op_def *op, tp_tensor *const *inputs,
                          int num_inputs, const tp_attrs *attrs, const tp_type *result_type,
                          tp_tensor **result) {
    capture_state *state = state_of(recorder);
    tp_value_id operands[64];
    if (num_inputs > 64)
        return tp_error_set(TP_ERR_UNSUPPORTED, "capture: %s with %d inputs (at most 64)", op->name,
                            num_inputs);
    for (int i = 0; i < num_inputs; i++) TP_TRY(value_of(state, inputs[i], &operands[i]));
    tp_value_id value;
    tp_status status =
        tp_graph_add_node(state->graph, op->name, operands, num_inputs, attrs, NULL, &value);
    if (status != TP_OK) return tp_error_prefix(status, "capture of '%s': ", state->name);
    tp_tensor *tensor;
    TP_TRY(tp_tensor_create_deferred(result_type->dtype, result_type->ndim, result_type->dims,
                                     &tensor));
    status = trace_tensor(state, tensor, value);
    if (status == TP_OK && state->raw_access_reason) status = tp_capture_evaluate(state, value);
    if (status != TP_OK) {
        tp_tensor_release(tensor);
        return status;
    }
    *result = tensor; /* the creation's reference; state->values keeps its own */
    return TP_OK;
}

/* Marks every argument whose input `value` depends on as shape-touched. */
static void touch_inputs_below(capture_state *state, tp_value_id value) {
    int count = tp_graph_num_values(state->graph);
    bool *seen = calloc((size_t)count, 1);
    tp_value_id *stack = malloc((size_t)count * sizeof *stack);
    if (!seen || !stack) {
        /* Without memory to find the inputs, guard them all (always safe). */
        for (int i = 0; i < state->num_args; i++) state->shape_touched[i] = true;
        free(seen);
        free(stack);
        return;
    }
    int top = 0;
    stack[top++] = value;
    seen[value] = true;
    while (top > 0) {
        tp_value_id current = stack[--top];
        int operands = tp_graph_value_num_operands(state->graph, current);
        for (int i = 0; i < operands; i++) {
            tp_value_id operand = tp_graph_value_operand(state->graph, current, i);
            if (operand >= 0 && !seen[operand]) {
                seen[operand] = true;
                stack[top++] = operand;
            }
        }
    }
    for (int i = 0; i < tp_graph_num_inputs(state->graph); i++)
        if (seen[tp_graph_input(state->graph, i)])
            state->shape_touched[state->param_of_input[i]] = true;
    free(seen);
    free(stack);
}

static void on_metadata(tp_ctx_recorder *recorder, tp_tensor *tensor, int axis) {
    capture_state *state = state_of(recorder);
    trace_record *record = tensor->trace;
    if (!record || record->hook.on_raw_access != on_raw_access || record->state != state)
        return; /* a tensor from outside: its shape is not an input's */
    touch_inputs_below(state, record->value);
}

/* A size read through the public tensor API (tp_tensor_dim, ...): the same
 * guard as tp_dim. */
static void on_size_read(tp_tensor_trace_hook *hook, const tp_tensor *tensor) {
    (void)tensor;
    trace_record *record = (trace_record *)hook;
    touch_inputs_below(record->state, record->value);
}

int64_t tp_gate_outcome(tp_item_kind kind, const tp_tensor *tensor) {
    double value;
    switch (kind) {
    case TP_ITEM_BOOL:
        return tp_tensor_element_f64(tensor, 0) != 0.0;
    case TP_ITEM_I64:
        switch (tensor->dtype) {
        case TP_I64:
            return *(const int64_t *)tensor->data;
        case TP_I32:
            return *(const int32_t *)tensor->data;
        case TP_BOOL:
            return *(const uint8_t *)tensor->data;
        default:
            break;
        }
        value = tp_tensor_element_f64(tensor, 0);
        if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0)) return INT64_MIN;
        return (int64_t)value;
    case TP_ITEM_F64: {
        value = tp_tensor_element_f64(tensor, 0);
        int64_t bits;
        memcpy(&bits, &value, sizeof bits);
        return bits;
    }
    }
    return 0;
}

static tp_status on_item(tp_ctx_recorder *recorder, tp_tensor *tensor, tp_item_kind kind) {
    capture_state *state = state_of(recorder);
    trace_record *record = tensor->trace;
    if (!record || record->hook.on_raw_access != on_raw_access || record->state != state)
        return TP_OK; /* a value from outside the capture is the same on every call */
    tp_status status = tp_capture_evaluate(state, record->value);
    if (status != TP_OK) {
        note_evaluation_error(state, status);
        return status;
    }
    if (state->num_gates == state->gate_capacity) {
        int capacity = state->gate_capacity ? state->gate_capacity * 2 : 8;
        gate_read *gates = realloc(state->gates, (size_t)capacity * sizeof *gates);
        if (!gates) {
            /* Without the gate the entry could serve a wrong branch: refuse. */
            if (!state->raw_access_reason)
                state->raw_access_reason = strdup("capture ran out of memory recording a gate");
            return TP_OK; /* the value is computed: the function goes on */
        }
        state->gates = gates;
        state->gate_capacity = capacity;
    }
    state->gates[state->num_gates++] =
        (gate_read){record->value, kind, tp_gate_outcome(kind, tensor)};
    return TP_OK;
}

/* Inputs, one per tensor argument, on private clones that carry traces. */
static tp_status add_inputs(capture_state *state, const char *const *param_names,
                            const tp_arg *args, tp_arg *traced_args) {
    int input_index = 0;
    for (int i = 0; i < state->num_args; i++) {
        traced_args[i] = args[i];
        if (args[i].kind != TP_ARG_TENSOR) continue;
        const tp_tensor *tensor = args[i].tensor;
        tp_type type = {.dtype = tensor->dtype, .ndim = tensor->ndim};
        memcpy(type.dims, tensor->shape, (size_t)tensor->ndim * sizeof(int64_t));
        tp_value_id value;
        TP_TRY(tp_graph_add_input(state->graph, param_names[i], &type, &value));
        tp_tensor *clone;
        TP_TRY(tp_tensor_clone(tensor, &clone));
        tp_status status = trace_tensor(state, clone, value);
        tp_tensor_release(clone); /* the record holds it now (or it is gone) */
        TP_TRY(status);
        traced_args[i].tensor = clone;
        state->param_of_input[input_index++] = i;
    }
    return TP_OK;
}

static tp_status build_gate_program(capture_state *state, tp_gate_program **out) {
    *out = NULL;
    if (state->num_gates == 0) return TP_OK;
    int count = tp_graph_num_values(state->graph);
    bool *keep = calloc((size_t)count, 1);
    tp_value_id *map = malloc((size_t)count * sizeof *map);
    tp_value_id *outputs = malloc((size_t)state->num_gates * sizeof *outputs);
    tp_gate_program *program = calloc(1, sizeof *program);
    tp_status status = TP_OK;
    if (!keep || !map || !outputs || !program) {
        status = out_of_memory("gate program");
        goto done;
    }
    program->kinds = malloc((size_t)state->num_gates * sizeof *program->kinds);
    program->outcomes = malloc((size_t)state->num_gates * sizeof *program->outcomes);
    if (!program->kinds || !program->outcomes) {
        status = out_of_memory("gate program");
        goto done;
    }
    /* Ancestors of the read values; ids only grow, so one backward sweep. */
    for (int i = 0; i < state->num_gates; i++) keep[state->gates[i].value] = true;
    for (tp_value_id value = count - 1; value >= 0; value--) {
        if (!keep[value]) continue;
        for (int i = 0; i < tp_graph_value_num_operands(state->graph, value); i++)
            keep[tp_graph_value_operand(state->graph, value, i)] = true;
    }
    char name[160];
    snprintf(name, sizeof name, "%s_gates", tp_graph_name(state->graph));
    status = tp_graph_create(name, &program->graph);
    if (status == TP_OK) status = tp_subgraph_append(program->graph, state->graph, keep, NULL, map);
    for (int i = 0; status == TP_OK && i < state->num_gates; i++) {
        outputs[i] = map[state->gates[i].value];
        program->kinds[i] = state->gates[i].kind;
        program->outcomes[i] = state->gates[i].outcome;
    }
    if (status == TP_OK) status = tp_graph_set_outputs(program->graph, outputs, state->num_gates);
    program->num_gates = state->num_gates;
done:
    if (status != TP_OK) {
        tp_gate_program_free(program);
        program = NULL;
    }
    *out = program;
    free(keep);
    free(map);
    free(outputs);
    return status;
}

static tp_status finish_outputs(capture_state *state, tp_tensor **outputs, int num_outputs) {
    tp_value_id *ids = malloc((size_t)num_outputs * sizeof *ids);
    if (!ids) return out_of_memory("outputs");
    tp_status status = TP_OK;
    for (int i = 0; status == TP_OK && i < num_outputs; i++) {
        if (!outputs[i])
            status = tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                  "'%s' did not set output %d of %d during capture (store a "
                                  "tensor in outputs[%d])",
                                  state->name, i, num_outputs, i);
        else
            status = value_of(state, outputs[i], &ids[i]);
    }
    if (status == TP_OK) status = tp_graph_set_outputs(state->graph, ids, num_outputs);
    free(ids);
    return status;
}

static tp_status run_function(capture_state *state, tp_fn fn, void *user_data,
                              const char *const *param_names, const tp_arg *args, int num_outputs,
                              tp_capture_result *result) {
    tp_arg *traced_args =
        malloc((size_t)(state->num_args ? state->num_args : 1) * sizeof *traced_args);
    tp_tensor **outputs = calloc((size_t)num_outputs, sizeof *outputs);
    tp_ctx *ctx = tp_ctx_create();
    tp_status status = (!traced_args || !outputs || !ctx) ? out_of_memory("call") : TP_OK;
    if (status == TP_OK) status = add_inputs(state, param_names, args, traced_args);
    state->ctx = ctx;
    if (status == TP_OK) {
        tp_ctx_set_recorder(ctx, &state->recorder);
        fn(ctx, traced_args, state->num_args, outputs, num_outputs, user_data);
        tp_ctx_set_recorder(ctx, NULL);
        if (state->foreign_ctx_error)
            status = tp_error_set(TP_ERR_STATE, "%s", state->foreign_ctx_error);
        else if (!state->raw_access_reason && tp_ctx_status(ctx) != TP_OK)
            status = tp_error_set(tp_ctx_status(ctx), "'%s' failed during capture: %s", state->name,
                                  tp_ctx_error(ctx));
    }
    if (status == TP_OK && !state->raw_access_reason)
        status = finish_outputs(state, outputs, num_outputs);
    if (status == TP_OK && !state->raw_access_reason)
        status = build_gate_program(state, &result->gates);
    tp_ctx_destroy(ctx); /* its references go; traces stay until escaped values are computed */
    compute_escaped(state);
    untrace_all(state);
    /* A value the function needed could not be computed: the op's error,
     * as an eager run would have reported it. */
    if (state->evaluation_error && !state->foreign_ctx_error)
        status = tp_error_set(state->evaluation_status, "'%s' failed during capture: %s",
                              state->name, state->evaluation_error);
    free(outputs);
    free(traced_args);
    return status;
}

tp_status tp_capture_run(tp_fn fn, void *user_data, const char *name,
                         const char *const *param_names, const tp_arg *args, int num_args,
                         int num_outputs, tp_capture_result *result) {
    memset(result, 0, sizeof *result);
    capture_state state = {
        .recorder = {.on_metadata = on_metadata, .on_item = on_item, .trace_op = trace_op},
        .name = name,
        .num_args = num_args,
    };
    size_t slots = (size_t)(num_args ? num_args : 1);
    state.param_of_input = malloc(slots * sizeof *state.param_of_input);
    state.shape_touched = calloc(slots, sizeof *state.shape_touched);
    tp_status status =
        (!state.param_of_input || !state.shape_touched) ? out_of_memory("arguments") : TP_OK;
    if (status == TP_OK) status = tp_graph_create(name, &state.graph);
    if (status == TP_OK)
        status = run_function(&state, fn, user_data, param_names, args, num_outputs, result);
    free(state.param_of_input);
    free(state.gates);
    free(state.foreign_ctx_error);
    free(state.evaluation_error);
    if (status == TP_OK && state.raw_access_reason) {
        result->raw_access_reason = state.raw_access_reason;
        tp_gate_program_free(result->gates);
        result->gates = NULL;
        tp_graph_destroy(state.graph);
        free(state.shape_touched);
        return TP_OK;
    }
    free(state.raw_access_reason);
    if (status != TP_OK) {
        tp_graph_destroy(state.graph);
        free(state.shape_touched);
        tp_capture_result_clear(result);
        return status;
    }
    result->graph = state.graph;
    result->shape_touched = state.shape_touched;
    return TP_OK;
}

void tp_capture_result_clear(tp_capture_result *result) {
    tp_graph_destroy(result->graph);
    free(result->shape_touched);
    tp_gate_program_free(result->gates);
    free(result->raw_access_reason);
    memset(result, 0, sizeof *result);
}
