/* Gate programs: the condition subgraph of a capture's value reads, replayed
 * with the reference interpreter on each new call's inputs (capture.h). */
#include <stdlib.h>

#include "../base/error.h"
#include "capture.h"

tp_status tp_gate_program_evaluate(const tp_gate_program *program, const tp_arg *args, int num_args,
                                   int64_t *outcomes_out) {
    int num_inputs = tp_graph_num_inputs(program->graph);
    tp_tensor *inputs_small[16];
    tp_tensor *outputs_small[16];
    tp_tensor **inputs =
        num_inputs <= 16 ? inputs_small : malloc((size_t)num_inputs * sizeof *inputs);
    tp_tensor **outputs = program->num_gates <= 16
                              ? outputs_small
                              : calloc((size_t)program->num_gates, sizeof *outputs);
    tp_status status = TP_OK;
    if (!inputs || !outputs) {
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "gate replay: out of memory");
        goto done;
    }
    int count = 0;
    for (int i = 0; i < num_args && count < num_inputs; i++)
        if (args[i].kind == TP_ARG_TENSOR) inputs[count++] = args[i].tensor;
    if (count != num_inputs) {
        status =
            tp_error_set(TP_ERR_INTERNAL, "gate replay: %d tensor arguments for %d gate inputs",
                         count, num_inputs);
        goto done;
    }
    for (int i = 0; i < program->num_gates; i++) outputs[i] = NULL;
    status = tp_graph_run(program->graph, inputs, num_inputs, outputs);
    if (status == TP_OK)
        for (int i = 0; i < program->num_gates; i++)
            outcomes_out[i] = tp_gate_outcome(program->kinds[i], outputs[i]);
    if (status == TP_OK)
        for (int i = 0; i < program->num_gates; i++) tp_tensor_release(outputs[i]);
done:
    if (inputs != inputs_small) free(inputs);
    if (outputs != outputs_small) free(outputs);
    return status;
}

void tp_gate_program_free(tp_gate_program *program) {
    if (!program) return;
    tp_graph_destroy(program->graph);
    free(program->kinds);
    free(program->outcomes);
    free(program);
}
