/* Compiling for the template backend: the graph view becomes a plan, a list
 * of steps over values held as doubles. The core gives compile only nodes
 * the template claimed; a caller that bypasses the partitioner may give it
 * others, so every node is classified again and anything else is refused
 * with TP_PLUGIN_UNSUPPORTED and the reason (host->set_error).
 *
 * Concrete shapes come from the input metadata: dimension symbols of a
 * dynamic graph are bound by the shapes compile receives, so the plan is
 * computed from the inputs forward and checked against the view's sizes
 * where they are known. The view is borrowed for this call only: the plan
 * copies what it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

#define TEMPLATE_STRINGIFY2(x) #x
#define TEMPLATE_STRINGIFY(x)  TEMPLATE_STRINGIFY2(x)

typedef struct compile_state {
    const tp_plugin_host *host;
    const tp_plugin_graph *graph;
    tp_plugin_executable *plan;
} compile_state;

/* NumPy broadcasting of the operands' shapes into `out`. */
static bool broadcast_shapes(compile_state *state, const tp_plugin_value *value,
                             template_shape *out) {
    out->ndim = 0;
    for (int32_t k = 0; k < value->num_operands; k++) {
        const template_shape *in = &state->plan->values[value->operands[k]].shape;
        if (in->ndim > out->ndim) {
            int32_t grow = in->ndim - out->ndim;
            memmove(out->dims + grow, out->dims, (size_t)out->ndim * sizeof out->dims[0]);
            for (int32_t d = 0; d < grow; d++) out->dims[d] = 1;
            out->ndim = in->ndim;
        }
        for (int32_t d = 0; d < in->ndim; d++) {
            int64_t *target = &out->dims[out->ndim - in->ndim + d];
            int64_t size = in->dims[d];
            if (*target == size || size == 1) continue;
            if (*target != 1) {
                template_fail(state->host, TP_PLUGIN_ERROR,
                              "op '%s' (%%%s): operand %d has size %lld in dimension %d, which "
                              "does not broadcast with %lld",
                              value->op, value->name, (int)k, (long long)size, (int)d,
                              (long long)*target);
                return false;
            }
            *target = size;
        }
    }
    return true;
}

static bool matmul_shape(compile_state *state, const tp_plugin_value *value, template_shape *out) {
    const template_shape *a = &state->plan->values[value->operands[0]].shape;
    const template_shape *b = &state->plan->values[value->operands[1]].shape;
    if (a->dims[1] != b->dims[0]) {
        template_fail(state->host, TP_PLUGIN_ERROR,
                      "op 'matmul' (%%%s): [%lld, %lld] x [%lld, %lld] (inner sizes differ)",
                      value->name, (long long)a->dims[0], (long long)a->dims[1],
                      (long long)b->dims[0], (long long)b->dims[1]);
        return false;
    }
    out->ndim = 2;
    out->dims[0] = a->dims[0];
    out->dims[1] = b->dims[1];
    return true;
}

/* Checks the computed shape against the sizes the view knows. */
static bool check_declared(compile_state *state, const tp_plugin_value *value,
                           const template_shape *shape) {
    bool same = value->type.ndim == shape->ndim;
    for (int32_t d = 0; same && d < shape->ndim; d++)
        same = value->type.dims[d] < 0 || value->type.dims[d] == shape->dims[d];
    if (!same)
        template_fail(state->host, TP_PLUGIN_ERROR,
                      "op '%s' (%%%s): computed a rank-%d result that does not match the "
                      "graph's type (rank %d)",
                      value->op, value->name, (int)shape->ndim, (int)value->type.ndim);
    return same;
}

/* One node; false after host->set_error, with *code UNSUPPORTED or ERROR. */
static bool plan_node(compile_state *state, int32_t index, int32_t *code) {
    const tp_plugin_value *value = &state->graph->values[index];
    char why[256];
    template_loop loop = template_classify(state->graph, index, why, sizeof why);
    if (loop == TEMPLATE_REFUSED) {
        *code = template_fail(state->host, TP_PLUGIN_UNSUPPORTED, "%s", why);
        return false;
    }
    *code = TP_PLUGIN_ERROR;
    template_step *step = &state->plan->steps[state->plan->num_steps++];
    memset(step, 0, sizeof *step);
    step->op_id = state->graph->nodes[index].op_id;
    step->loop = loop;
    step->result = index;
    for (int32_t k = 0; k < value->num_operands && k < 2; k++)
        step->operands[k] = value->operands[k];
#ifdef TEMPLATE_BREAK_OP
    step->broken =
        strcmp(template_op_name(step->op_id), TEMPLATE_STRINGIFY(TEMPLATE_BREAK_OP)) == 0;
#endif
    template_value *result = &state->plan->values[index];
    result->dtype = value->type.dtype;
    bool ok = loop == TEMPLATE_MATMUL ? matmul_shape(state, value, &result->shape)
                                      : broadcast_shapes(state, value, &result->shape);
    return ok && check_declared(state, value, &result->shape);
}

static bool allocate_values(compile_state *state) {
    tp_plugin_executable *plan = state->plan;
    for (int32_t i = 0; i < plan->num_values; i++) {
        template_value *value = &plan->values[i];
        value->numel = 1;
        for (int32_t d = 0; d < value->shape.ndim; d++) value->numel *= value->shape.dims[d];
        size_t bytes = (size_t)(value->numel > 0 ? value->numel : 1) * sizeof(double);
        value->data = state->host->aligned_alloc(bytes);
        if (!value->data) {
            template_fail(state->host, TP_PLUGIN_ERROR,
                          "out of memory: %zu bytes for %%%s of graph '%s'", bytes,
                          state->graph->values[i].name, state->graph->name);
            return false;
        }
    }
    return true;
}

static int32_t build_plan(compile_state *state, const tp_plugin_tensor_meta *inputs) {
    const tp_plugin_graph *graph = state->graph;
    tp_plugin_executable *plan = state->plan;
    plan->num_values = graph->num_values;
    plan->num_inputs = graph->num_inputs;
    plan->num_outputs = graph->num_outputs;
    plan->values = calloc((size_t)graph->num_values + 1, sizeof *plan->values);
    plan->steps = calloc((size_t)graph->num_values + 1, sizeof *plan->steps);
    plan->inputs = calloc((size_t)graph->num_inputs + 1, sizeof *plan->inputs);
    plan->outputs = calloc((size_t)graph->num_outputs + 1, sizeof *plan->outputs);
    if (!plan->values || !plan->steps || !plan->inputs || !plan->outputs)
        return template_fail(state->host, TP_PLUGIN_ERROR, "out of memory planning graph '%s'",
                             graph->name);
    for (int32_t i = 0; i < graph->num_inputs; i++) {
        template_value *value = &plan->values[graph->inputs[i]];
        plan->inputs[i] = graph->inputs[i];
        value->dtype = inputs[i].dtype;
        value->shape.ndim = inputs[i].ndim;
        memcpy(value->shape.dims, inputs[i].dims, sizeof value->shape.dims);
    }
    for (int32_t i = 0; i < graph->num_outputs; i++) plan->outputs[i] = graph->outputs[i];
    for (int32_t i = 0; i < graph->num_values; i++) {
        int32_t code;
        if (graph->values[i].op && !plan_node(state, i, &code)) return code;
    }
    /* Every claimed node checked its operands; what is left is an input that
     * no node reads, or one returned as is. */
    for (int32_t i = 0; i < graph->num_inputs; i++) {
        int32_t dtype = plan->values[graph->inputs[i]].dtype;
        if (dtype != TP_PLUGIN_F32 && dtype != TP_PLUGIN_F64)
            return template_fail(state->host, TP_PLUGIN_UNSUPPORTED,
                                 "input %%%s of graph '%s' is not f32 or f64 (the template "
                                 "computes f32 and f64 only)",
                                 graph->values[graph->inputs[i]].name, graph->name);
    }
    return allocate_values(state) ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
}

int32_t template_compile(void *context, const tp_plugin_graph *graph,
                         const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                         const tp_plugin_option *options, int32_t num_options,
                         tp_plugin_executable **executable) {
    const tp_plugin_host *host = ((const template_context *)context)->host;
    *executable = NULL;
    template_options parsed;
    if (!template_parse_options(host, options, num_options, &parsed)) return TP_PLUGIN_ERROR;
    if (num_inputs != graph->num_inputs)
        return template_fail(host, TP_PLUGIN_ERROR, "graph '%s' has %d inputs, compile got %d",
                             graph->name, (int)graph->num_inputs, (int)num_inputs);
    if (!TP_PLUGIN_HAS_FIELD(graph, tp_plugin_graph, nodes) || !graph->nodes)
        return template_fail(host, TP_PLUGIN_ERROR,
                             "graph '%s' has no node table (a revision-1 core?)", graph->name);
    tp_plugin_executable *plan = calloc(1, sizeof *plan);
    if (!plan)
        return template_fail(host, TP_PLUGIN_ERROR, "out of memory compiling graph '%s'",
                             graph->name);
    plan->host = host;
    plan->options = parsed;
    compile_state state = {host, graph, plan};
    int32_t code = build_plan(&state, inputs);
    if (code != TP_PLUGIN_OK) {
        template_release(context, plan);
        return code;
    }
    *executable = plan;
    return TP_PLUGIN_OK;
}

void template_release(void *context, tp_plugin_executable *executable) {
    (void)context;
    if (!executable) return;
    for (int32_t i = 0; executable->values && i < executable->num_values; i++)
        if (executable->values[i].data) executable->host->aligned_free(executable->values[i].data);
    free(executable->values);
    free(executable->steps);
    free(executable->inputs);
    free(executable->outputs);
    free(executable);
}
