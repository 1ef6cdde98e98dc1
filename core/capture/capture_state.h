/* The tracer's state, shared by capture.c (recording) and
 * capture_evaluate.c (computing deferred values on demand). Internal to
 * core/capture. */
#ifndef TP_CORE_CAPTURE_CAPTURE_STATE_H
#define TP_CORE_CAPTURE_CAPTURE_STATE_H

#include "../tensor/tensor_internal.h"
#include "capture.h"

typedef struct capture_state capture_state;

/* What a traced tensor's `trace` field points to. */
typedef struct trace_record {
    tp_tensor_trace_hook hook; /* first: tensor.c calls through it */
    capture_state *state;
    tp_value_id value;
    tp_tensor *tensor; /* borrowed: state->values[value] holds the reference */
} trace_record;

typedef struct gate_read {
    tp_value_id value;
    tp_item_kind kind;
    int64_t outcome;
} gate_read;

struct capture_state {
    tp_ctx_recorder recorder; /* first: the ctx calls through it */
    const char *name;
    tp_ctx *ctx;             /* the ctx the function runs on */
    char *foreign_ctx_error; /* set: an op ran on another ctx (a capture error) */
    tp_graph *graph;
    /* values[id]: one reference to the tensor standing for graph value id
     * (an input's clone, a constant's snapshot, an op's result, deferred
     * until computed). */
    tp_tensor **values;
    /* visited[id] == visit_epoch: seen by the current evaluation's walk (a
     * walk costs what it visits, not the graph's size) */
    uint32_t *visited;
    uint32_t visit_epoch;
    int values_capacity;
    trace_record **records;
    int num_records, record_capacity;
    int num_args;
    int *param_of_input; /* graph input index -> argument index */
    bool *shape_touched; /* per argument */
    gate_read *gates;
    int num_gates, gate_capacity;
    char *raw_access_reason;
    /* The first value that could not be computed (a kernel's error). */
    char *evaluation_error;
    tp_status evaluation_status;
};

/* Makes `tensor` (a new reference is taken) the tensor of graph value `value`. */
tp_status tp_capture_keep_value(capture_state *state, tp_value_id value, tp_tensor *tensor);
/* Drops every reference of state->values. */
void tp_capture_release_values(capture_state *state);

/* Computes graph value `value` and the ancestors it needs that are still
 * deferred, with the reference kernels, in graph order; nothing else. */
tp_status tp_capture_evaluate(capture_state *state, tp_value_id value);
/* Computes every deferred value traced so far. */
tp_status tp_capture_evaluate_all(capture_state *state);
/* Gives a deferred tensor zeroed values (after an evaluation error, so no
 * API hands out a NULL buffer). */
void tp_capture_fill_zeros(tp_tensor *tensor);

#endif
