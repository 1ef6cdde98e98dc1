/* Capture: run a user function once with tracing tensors and record what it
 * does (ops into a graph, metadata touches, value reads as gates), and the
 * gate programs that re-evaluate value reads on later calls. Internal.
 *
 * The function runs on private clones of the tensor arguments, so a capture
 * never marks a caller's tensor (another thread may be using it). Every
 * tensor of the capture carries a trace record in its `trace` field while
 * the capture runs, and an op's result is deferred (shape and dtype, no
 * data) until a read needs its values (capture_evaluate.c); raw data access to one of them
 * (tp_tensor_data, tp_tensor_get_f64 and the other raw-data APIs) is recorded as the reason the
 * function cannot be captured, a size read through the tensor API (tp_tensor_dim, ...) as a
 * metadata touch, and an op on another ctx as a capture error. Tensors the function reaches that
 * are not traced (globals, data behind user_data) become constants of the graph: a copy of their
 * values at capture time.
 */
#ifndef TP_CORE_CAPTURE_CAPTURE_H
#define TP_CORE_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/ctx_internal.h"
#include "tensorplay/compile.h"
#include "tensorplay/graph.h"

/* The value reads of one capture, replayable on new inputs. */
typedef struct tp_gate_program {
    tp_graph *graph; /* inputs: the tensor parameters in order; outputs: the read values */
    int num_gates;
    tp_item_kind *kinds;
    int64_t *outcomes; /* what the capture saw */
} tp_gate_program;

typedef struct tp_capture_result {
    tp_graph *graph;         /* inputs: the tensor parameters in order */
    bool *shape_touched;     /* per argument: its shape was read (directly or not) */
    tp_gate_program *gates;  /* NULL when nothing was read */
    char *raw_access_reason; /* set: the function cannot be captured */
} tp_capture_result;

/* Runs `fn` once on clones of `args`, recording it. `param_names` has one
 * identifier per argument (graph input names). Errors: the function's own
 * error (prefixed with the function's name), or a graph-building error.
 * A raw data access is not an error here: result->raw_access_reason says it. */
tp_status tp_capture_run(tp_fn fn, void *user_data, const char *name,
                         const char *const *param_names, const tp_arg *args, int num_args,
                         int num_outputs, tp_capture_result *result);
void tp_capture_result_clear(tp_capture_result *result);

/* The outcome a value read gives, as a key word: bool 0/1, the int64 value,
 * or the bits of the double. Same conversions as tp_item_*. */
int64_t tp_gate_outcome(tp_item_kind kind, const tp_tensor *tensor);
/* Replays the program on the call's tensor arguments; outcomes_out has
 * num_gates words. */
tp_status tp_gate_program_evaluate(const tp_gate_program *program, const tp_arg *args, int num_args,
                                   int64_t *outcomes_out);
void tp_gate_program_free(tp_gate_program *program);

/* Appends to `dst` a copy of the values of `src` where keep[id] (NULL: all):
 * inputs get input_types[i] when given (else their own type), nodes are
 * re-added (types re-derived, so symbols flow). map[id] receives the new id
 * (TP_NO_VALUE for dropped values). Inputs are always copied. */
tp_status tp_subgraph_append(tp_graph *dst, const tp_graph *src, const bool *keep,
                             const tp_type *input_types, tp_value_id *map);

#endif
