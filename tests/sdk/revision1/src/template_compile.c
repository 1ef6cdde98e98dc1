/* Compiling for the template backend: the graph view becomes a plan, a list
 * of steps over values held as doubles. Here every op and dtype is checked,
 * so anything the loops cannot do is refused now, with an error that starts
 * with "unsupported:" and names the op, the value and the dtype (the
 * conformance kit counts such a refusal as "unsupported", not as a failure).
 * Concrete shapes come from the input metadata: dimension symbols of a
 * dynamic graph are bound by the shapes compile receives, so the plan is
 * computed from the inputs forward (broadcasting, reductions), and checked
 * against the view's sizes where they are known.
 *
 * The graph view and everything in it are borrowed for this call only: the
 * plan copies what it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

typedef struct template_op_info {
    const char *name;
    template_opcode code;
    template_kind kind;
} template_op_info;

/* The ops of TensorPlay's op table this backend lowers. */
static const template_op_info template_ops[] = {
    {"neg", TPL_NEG, TPL_KIND_POINTWISE},
    {"abs", TPL_ABS, TPL_KIND_POINTWISE},
    {"exp", TPL_EXP, TPL_KIND_POINTWISE},
    {"log", TPL_LOG, TPL_KIND_POINTWISE},
    {"sqrt", TPL_SQRT, TPL_KIND_POINTWISE},
    {"rsqrt", TPL_RSQRT, TPL_KIND_POINTWISE},
    {"sin", TPL_SIN, TPL_KIND_POINTWISE},
    {"cos", TPL_COS, TPL_KIND_POINTWISE},
    {"tanh", TPL_TANH, TPL_KIND_POINTWISE},
    {"sigmoid", TPL_SIGMOID, TPL_KIND_POINTWISE},
    {"relu", TPL_RELU, TPL_KIND_POINTWISE},
    {"erf", TPL_ERF, TPL_KIND_POINTWISE},
    {"floor", TPL_FLOOR, TPL_KIND_POINTWISE},
    {"ceil", TPL_CEIL, TPL_KIND_POINTWISE},
    {"sign", TPL_SIGN, TPL_KIND_POINTWISE},
    {"logical_not", TPL_LOGICAL_NOT, TPL_KIND_POINTWISE},
    {"cast", TPL_CAST, TPL_KIND_POINTWISE},
    {"add", TPL_ADD, TPL_KIND_POINTWISE},
    {"sub", TPL_SUB, TPL_KIND_POINTWISE},
    {"mul", TPL_MUL, TPL_KIND_POINTWISE},
    {"div", TPL_DIV, TPL_KIND_POINTWISE},
    {"pow", TPL_POW, TPL_KIND_POINTWISE},
    {"maximum", TPL_MAXIMUM, TPL_KIND_POINTWISE},
    {"minimum", TPL_MINIMUM, TPL_KIND_POINTWISE},
    {"lt", TPL_LT, TPL_KIND_POINTWISE},
    {"le", TPL_LE, TPL_KIND_POINTWISE},
    {"gt", TPL_GT, TPL_KIND_POINTWISE},
    {"ge", TPL_GE, TPL_KIND_POINTWISE},
    {"eq", TPL_EQ, TPL_KIND_POINTWISE},
    {"ne", TPL_NE, TPL_KIND_POINTWISE},
    {"logical_and", TPL_LOGICAL_AND, TPL_KIND_POINTWISE},
    {"logical_or", TPL_LOGICAL_OR, TPL_KIND_POINTWISE},
    {"where", TPL_WHERE, TPL_KIND_POINTWISE},
    {"sum", TPL_SUM, TPL_KIND_REDUCTION},
    {"mean", TPL_MEAN, TPL_KIND_REDUCTION},
    {"max", TPL_MAX, TPL_KIND_REDUCTION},
    {"min", TPL_MIN, TPL_KIND_REDUCTION},
    {"argmax", TPL_ARGMAX, TPL_KIND_REDUCTION},
    {"constant", TPL_CONSTANT, TPL_KIND_CREATION},
    {"full", TPL_FULL, TPL_KIND_CREATION},
};

#define TPL_STRINGIFY2(x) #x
#define TPL_STRINGIFY(x)  TPL_STRINGIFY2(x)

static const char *dtype_name(int32_t dtype) {
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? names[dtype] : "?";
}

/* Dtypes the loops compute with. Integer values are exact in a double only
 * up to 2^53, so the template refuses them as operands rather than give
 * wrong answers for large i64. */
static bool computable_dtype(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64 || dtype == TP_PLUGIN_BOOL;
}

static const template_op_info *find_op(const char *name) {
    for (size_t i = 0; i < sizeof template_ops / sizeof template_ops[0]; i++)
        if (strcmp(template_ops[i].name, name) == 0) return &template_ops[i];
    return NULL;
}

static const tp_plugin_attr *find_attr(const tp_plugin_value *value, const char *name) {
    for (int32_t i = 0; i < value->num_attrs; i++)
        if (strcmp(value->attrs[i].name, name) == 0) return &value->attrs[i];
    return NULL;
}

static int64_t shape_numel(const template_shape *shape) {
    int64_t numel = 1;
    for (int32_t d = 0; d < shape->ndim; d++) numel *= shape->dims[d];
    return numel;
}

/* Everything compile needs while it walks the graph. */
typedef struct compile_state {
    const tp_plugin_graph *graph;
    tp_plugin_executable *plan;
    char *error;
    size_t error_size;
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
                snprintf(state->error, state->error_size,
                         "op '%s' (%%%s): operand %d has size %lld in dimension %d, which does "
                         "not broadcast with %lld",
                         value->op, value->name, (int)k, (long long)size, (int)d,
                         (long long)*target);
                return false;
            }
            *target = size;
        }
    }
    return true;
}

/* Reduced axes and keepdim of a reduction; the result shape into `out`. */
static bool reduction_shape(compile_state *state, const tp_plugin_value *value, template_step *step,
                            template_shape *out) {
    const template_shape *in = &state->plan->values[value->operands[0]].shape;
    const tp_plugin_attr *keepdim = find_attr(value, "keepdim");
    step->keepdim = keepdim && keepdim->i != 0;
    if (step->code == TPL_ARGMAX) {
        const tp_plugin_attr *axis = find_attr(value, "axis");
        int64_t a = axis ? axis->i : 0;
        if (a < 0) a += in->ndim;
        if (a < 0 || a >= in->ndim) {
            snprintf(state->error, state->error_size, "op 'argmax' (%%%s): axis out of range",
                     value->name);
            return false;
        }
        step->axis = (int32_t)a;
        step->reduced[a] = true;
    } else {
        const tp_plugin_attr *axes = find_attr(value, "axes");
        int32_t count = axes ? axes->count : 0;
        for (int32_t d = 0; d < in->ndim; d++) step->reduced[d] = count == 0;
        for (int32_t i = 0; i < count; i++) {
            int64_t a = axes->ints[i] < 0 ? axes->ints[i] + in->ndim : axes->ints[i];
            if (a < 0 || a >= in->ndim) {
                snprintf(state->error, state->error_size, "op '%s' (%%%s): axis %lld out of range",
                         value->op, value->name, (long long)axes->ints[i]);
                return false;
            }
            step->reduced[a] = true;
        }
    }
    out->ndim = 0;
    for (int32_t d = 0; d < in->ndim; d++) {
        if (!step->reduced[d])
            out->dims[out->ndim++] = in->dims[d];
        else if (step->keepdim)
            out->dims[out->ndim++] = 1;
    }
    return true;
}

/* Shape of a creation op; `constant` also gets its payload (converted to
 * doubles into the value's buffer once it exists: see fill_constant). */
static bool creation_shape(compile_state *state, const tp_plugin_value *value, template_step *step,
                           template_shape *out) {
    const tp_plugin_attr *attr = find_attr(value, step->code == TPL_CONSTANT ? "value" : "shape");
    if (!attr || (step->code == TPL_CONSTANT && attr->type != TP_PLUGIN_ATTR_TENSOR)) {
        snprintf(state->error, state->error_size, "op '%s' (%%%s): attribute missing", value->op,
                 value->name);
        return false;
    }
    out->ndim = attr->count;
    for (int32_t d = 0; d < attr->count; d++) out->dims[d] = attr->ints[d];
    if (step->code == TPL_FULL) {
        const tp_plugin_attr *fill = find_attr(value, "value");
        step->fill = fill ? fill->f : 0.0;
    }
    return true;
}

/* Checks the computed shape against the sizes the view knows. */
static bool check_declared(compile_state *state, const tp_plugin_value *value,
                           const template_shape *shape) {
    bool same = value->type.ndim == shape->ndim;
    for (int32_t d = 0; same && d < shape->ndim; d++)
        same = value->type.dims[d] < 0 || value->type.dims[d] == shape->dims[d];
    if (!same)
        snprintf(state->error, state->error_size,
                 "op '%s' (%%%s): computed a rank-%d result that does not match the graph's "
                 "type (rank %d)",
                 value->op, value->name, (int)shape->ndim, (int)value->type.ndim);
    return same;
}

static bool check_operands(compile_state *state, const tp_plugin_value *value) {
    for (int32_t k = 0; k < value->num_operands; k++) {
        int32_t dtype = state->plan->values[value->operands[k]].dtype;
        if (computable_dtype(dtype)) continue;
        snprintf(state->error, state->error_size,
                 "unsupported: op '%s' (%%%s) on %s operands (the template backend computes "
                 "f32, f64 and bool values)",
                 value->op, value->name, dtype_name(dtype));
        return false;
    }
    return true;
}

static bool plan_node(compile_state *state, int32_t index) {
    const tp_plugin_value *value = &state->graph->values[index];
    const template_op_info *info = find_op(value->op);
    if (!info) {
        snprintf(state->error, state->error_size,
                 "unsupported: op '%s' (%%%s, %s) (the template backend lowers pointwise, "
                 "reduction, constant and full ops only)",
                 value->op, value->name, dtype_name(value->type.dtype));
        return false;
    }
    if (value->num_operands > 3) {
        snprintf(state->error, state->error_size, "op '%s' (%%%s): %d operands", value->op,
                 value->name, (int)value->num_operands);
        return false;
    }
    if (!check_operands(state, value)) return false;
    template_step *step = &state->plan->steps[state->plan->num_steps++];
    memset(step, 0, sizeof *step);
    step->code = info->code;
    step->op_name = info->name;
    step->result = index;
    step->num_operands = value->num_operands;
    for (int32_t k = 0; k < value->num_operands; k++) step->operands[k] = value->operands[k];
#ifdef TEMPLATE_BREAK_OP
    step->broken = strcmp(info->name, TPL_STRINGIFY(TEMPLATE_BREAK_OP)) == 0;
#endif
    template_value *result = &state->plan->values[index];
    result->dtype = value->type.dtype;
    bool ok = info->kind == TPL_KIND_POINTWISE ? broadcast_shapes(state, value, &result->shape)
              : info->kind == TPL_KIND_REDUCTION
                  ? reduction_shape(state, value, step, &result->shape)
                  : creation_shape(state, value, step, &result->shape);
    return ok && check_declared(state, value, &result->shape);
}

/* Converts the constant's payload into its value's buffer. */
static void fill_constant(const tp_plugin_value *value, template_value *result) {
    const tp_plugin_attr *attr = find_attr(value, "value");
    for (int64_t i = 0; i < result->numel; i++) {
        const char *bytes = attr->data;
        switch (attr->dtype) {
        case TP_PLUGIN_F32:
            result->data[i] = ((const float *)(const void *)bytes)[i];
            break;
        case TP_PLUGIN_F64:
            result->data[i] = ((const double *)(const void *)bytes)[i];
            break;
        case TP_PLUGIN_I32:
            result->data[i] = ((const int32_t *)(const void *)bytes)[i];
            break;
        case TP_PLUGIN_I64:
            result->data[i] = (double)((const int64_t *)(const void *)bytes)[i];
            break;
        default:
            result->data[i] = bytes[i] != 0;
            break;
        }
    }
}

static bool allocate_values(compile_state *state) {
    tp_plugin_executable *plan = state->plan;
    for (int32_t i = 0; i < plan->num_values; i++) {
        template_value *value = &plan->values[i];
        value->numel = shape_numel(&value->shape);
        size_t bytes = (size_t)(value->numel > 0 ? value->numel : 1) * sizeof(double);
        value->data = template_host->aligned_alloc(bytes);
        if (!value->data) {
            snprintf(state->error, state->error_size,
                     "out of memory: %zu bytes for %%%s of graph '%s'", bytes,
                     state->graph->values[i].name, state->graph->name);
            return false;
        }
    }
    for (int32_t s = 0; s < plan->num_steps; s++) {
        template_step *step = &plan->steps[s];
        if (step->code == TPL_CONSTANT)
            fill_constant(&state->graph->values[step->result], &plan->values[step->result]);
        if (step->code != TPL_ARGMAX) continue;
        size_t bytes = (size_t)(plan->values[step->result].numel + 1) * sizeof(double);
        step->scratch = template_host->aligned_alloc(bytes);
        if (!step->scratch) {
            snprintf(state->error, state->error_size, "out of memory: %zu bytes for argmax", bytes);
            return false;
        }
    }
    return true;
}

/* Integer values can pass through untouched only as graph outputs of ops
 * that produce them; a graph input of an integer dtype returned as is would
 * be copied through a double, so it is refused like any integer operand. */
static bool check_outputs(compile_state *state) {
    for (int32_t i = 0; i < state->graph->num_outputs; i++) {
        const tp_plugin_value *value = &state->graph->values[state->graph->outputs[i]];
        if (value->op || computable_dtype(state->plan->values[state->graph->outputs[i]].dtype))
            continue;
        snprintf(state->error, state->error_size,
                 "unsupported: returning the %s input %%%s unchanged (the template backend "
                 "computes f32, f64 and bool values)",
                 dtype_name(state->plan->values[state->graph->outputs[i]].dtype), value->name);
        return false;
    }
    return true;
}

static bool build_plan(compile_state *state, const tp_plugin_tensor_meta *inputs) {
    const tp_plugin_graph *graph = state->graph;
    tp_plugin_executable *plan = state->plan;
    plan->num_values = graph->num_values;
    plan->num_inputs = graph->num_inputs;
    plan->num_outputs = graph->num_outputs;
    plan->values = calloc((size_t)graph->num_values + 1, sizeof *plan->values);
    plan->steps = calloc((size_t)graph->num_values + 1, sizeof *plan->steps);
    plan->inputs = calloc((size_t)graph->num_inputs + 1, sizeof *plan->inputs);
    plan->outputs = calloc((size_t)graph->num_outputs + 1, sizeof *plan->outputs);
    if (!plan->values || !plan->steps || !plan->inputs || !plan->outputs) {
        snprintf(state->error, state->error_size, "out of memory planning graph '%s'", graph->name);
        return false;
    }
    for (int32_t i = 0; i < graph->num_inputs; i++) {
        template_value *value = &plan->values[graph->inputs[i]];
        plan->inputs[i] = graph->inputs[i];
        value->dtype = inputs[i].dtype;
        value->shape.ndim = inputs[i].ndim;
        memcpy(value->shape.dims, inputs[i].dims, sizeof value->shape.dims);
    }
    for (int32_t i = 0; i < graph->num_outputs; i++) plan->outputs[i] = graph->outputs[i];
    for (int32_t i = 0; i < graph->num_values; i++)
        if (graph->values[i].op && !plan_node(state, i)) return false;
    return check_outputs(state) && allocate_values(state);
}

int32_t template_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                         int32_t num_inputs, const tp_plugin_option *options, int32_t num_options,
                         tp_plugin_executable **executable, char *error, size_t error_size) {
    *executable = NULL;
    template_options parsed;
    if (!template_parse_options(options, num_options, &parsed, error, error_size))
        return TP_PLUGIN_ERROR;
    if (num_inputs != graph->num_inputs) {
        snprintf(error, error_size, "graph '%s' has %d inputs, compile got %d", graph->name,
                 (int)graph->num_inputs, (int)num_inputs);
        return TP_PLUGIN_ERROR;
    }
    tp_plugin_executable *plan = calloc(1, sizeof *plan);
    if (!plan) {
        snprintf(error, error_size, "out of memory compiling graph '%s'", graph->name);
        return TP_PLUGIN_ERROR;
    }
    plan->options = parsed;
    compile_state state = {graph, plan, error, error_size};
    if (!build_plan(&state, inputs)) {
        template_release(plan);
        return TP_PLUGIN_ERROR;
    }
    *executable = plan;
    return TP_PLUGIN_OK;
}

void template_release(tp_plugin_executable *executable) {
    if (!executable) return;
    for (int32_t i = 0; executable->values && i < executable->num_values; i++)
        if (executable->values[i].data) template_host->aligned_free(executable->values[i].data);
    for (int32_t s = 0; executable->steps && s < executable->num_steps; s++)
        if (executable->steps[s].scratch) template_host->aligned_free(executable->steps[s].scratch);
    free(executable->values);
    free(executable->steps);
    free(executable->inputs);
    free(executable->outputs);
    free(executable);
}
