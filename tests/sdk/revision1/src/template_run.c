/* Running a template executable: inputs are converted to doubles, every step
 * runs one loop over its values, and outputs are converted to their dtypes.
 * After each step the result is rounded to its value's dtype (an f32 value
 * holds only what a float can), so results track TensorPlay's f32 semantics
 * closely while the code stays one loop per kind of op.
 *
 * Pointwise loops follow NumPy broadcasting: an operand's stride is 0 in a
 * dimension where it has size 1. Large loops are split over the core's
 * thread pool with host->parallel_for (a plugin must not start threads of
 * its own); reductions run on the calling thread.
 *
 * Numerics (same choices as TensorPlay's reference kernels): maximum,
 * minimum, max and min propagate NaN; argmax gives the first maximum (or the
 * first NaN); casts to integers truncate toward zero, NaN gives 0, and
 * out-of-range values saturate; mean of nothing is NaN. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "template.h"

double template_round_to(int32_t dtype, double x) {
    switch (dtype) {
    case TP_PLUGIN_F32:
        return (double)(float)x;
    case TP_PLUGIN_BOOL:
        return x != 0 ? 1.0 : 0.0;
    case TP_PLUGIN_I32:
        if (isnan(x)) return 0;
        if (x >= 2147483647.0) return 2147483647.0;
        if (x <= -2147483648.0) return -2147483648.0;
        return trunc(x);
    case TP_PLUGIN_I64:
        if (isnan(x)) return 0;
        if (x >= 9223372036854775807.0) return 9223372036854775807.0;
        if (x <= -9223372036854775808.0) return -9223372036854775808.0;
        return trunc(x);
    default:
        return x;
    }
}

static double sigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double sign(double x) {
    if (isnan(x)) return x;
    return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

/* NaN in either operand gives NaN (a > NaN is false, so b is taken). */
static double maximum(double a, double b) {
    return isnan(a) || a > b ? a : b;
}
static double minimum(double a, double b) {
    return isnan(a) || a < b ? a : b;
}

/* The scalar function of one pointwise step. */
static double apply(template_opcode code, double a, double b, double c) {
    switch (code) {
    case TPL_NEG:
        return -a;
    case TPL_ABS:
        return fabs(a);
    case TPL_EXP:
        return exp(a);
    case TPL_LOG:
        return log(a);
    case TPL_SQRT:
        return sqrt(a);
    case TPL_RSQRT:
        return 1.0 / sqrt(a);
    case TPL_SIN:
        return sin(a);
    case TPL_COS:
        return cos(a);
    case TPL_TANH:
        return tanh(a);
    case TPL_SIGMOID:
        return sigmoid(a);
    case TPL_RELU:
        return isnan(a) || a > 0 ? a : 0.0;
    case TPL_ERF:
        return erf(a);
    case TPL_FLOOR:
        return floor(a);
    case TPL_CEIL:
        return ceil(a);
    case TPL_SIGN:
        return sign(a);
    case TPL_LOGICAL_NOT:
        return a == 0;
    case TPL_CAST:
        return a; /* the rounding to the result dtype is the cast */
    case TPL_ADD:
        return a + b;
    case TPL_SUB:
        return a - b;
    case TPL_MUL:
        return a * b;
    case TPL_DIV:
        return a / b;
    case TPL_POW:
        return pow(a, b);
    case TPL_MAXIMUM:
        return maximum(a, b);
    case TPL_MINIMUM:
        return minimum(a, b);
    case TPL_LT:
        return a < b;
    case TPL_LE:
        return a <= b;
    case TPL_GT:
        return a > b;
    case TPL_GE:
        return a >= b;
    case TPL_EQ:
        return a == b;
    case TPL_NE:
        return a != b;
    case TPL_LOGICAL_AND:
        return a != 0 && b != 0;
    case TPL_LOGICAL_OR:
        return a != 0 || b != 0;
    case TPL_WHERE:
        return a != 0 ? b : c;
    default:
        return NAN;
    }
}

/* ---- pointwise ---------------------------------------------------------------- */

typedef struct pointwise_loop {
    const template_step *step;
    const template_value *result;
    const double *operands[3];
    int64_t strides[3][TP_PLUGIN_MAX_DIMS]; /* per operand, in result dimensions */
} pointwise_loop;

static void pointwise_range(void *context, int64_t begin, int64_t end) {
    const pointwise_loop *loop = context;
    const template_shape *shape = &loop->result->shape;
    int32_t n = loop->step->num_operands;
    for (int64_t i = begin; i < end; i++) {
        double x[3] = {0, 0, 0};
        int64_t offsets[3] = {0, 0, 0}, rest = i;
        for (int32_t d = shape->ndim - 1; d >= 0; d--) {
            int64_t coordinate = rest % shape->dims[d];
            rest /= shape->dims[d];
            for (int32_t k = 0; k < n; k++) offsets[k] += coordinate * loop->strides[k][d];
        }
        for (int32_t k = 0; k < n; k++) x[k] = loop->operands[k][offsets[k]];
        double r = apply(loop->step->code, x[0], x[1], x[2]);
        if (loop->step->broken) r += 0.25;
        loop->result->data[i] = template_round_to(loop->result->dtype, r);
    }
}

static void run_pointwise(const tp_plugin_executable *plan, const template_step *step) {
    pointwise_loop loop = {.step = step, .result = &plan->values[step->result]};
    const template_shape *out = &loop.result->shape;
    for (int32_t k = 0; k < step->num_operands; k++) {
        const template_value *operand = &plan->values[step->operands[k]];
        loop.operands[k] = operand->data;
        int64_t stride = 1;
        int32_t offset = out->ndim - operand->shape.ndim;
        for (int32_t d = out->ndim - 1; d >= 0; d--) {
            int32_t od = d - offset;
            bool present = od >= 0 && operand->shape.dims[od] != 1;
            loop.strides[k][d] = present ? stride : 0;
            if (od >= 0) stride *= operand->shape.dims[od];
        }
    }
    int64_t numel = loop.result->numel;
    if (plan->options.parallel && numel >= 2 * plan->options.grain)
        template_host->parallel_for(numel, plan->options.grain, pointwise_range, &loop);
    else
        pointwise_range(&loop, 0, numel);
}

/* ---- reductions ----------------------------------------------------------------- */

static void run_reduction(const tp_plugin_executable *plan, const template_step *step) {
    const template_value *in = &plan->values[step->operands[0]];
    const template_value *out = &plan->values[step->result];
    /* Where each input dimension moves the output: 0 when it is reduced. */
    int64_t out_strides[TP_PLUGIN_MAX_DIMS], stride = 1, count = 1;
    for (int32_t d = in->shape.ndim - 1; d >= 0; d--) {
        out_strides[d] = step->reduced[d] ? 0 : stride;
        if (!step->reduced[d]) stride *= in->shape.dims[d];
        if (step->reduced[d]) count *= in->shape.dims[d];
    }
    double start = step->code == TPL_MAX ? -INFINITY : step->code == TPL_MIN ? INFINITY : 0.0;
    for (int64_t k = 0; k < out->numel; k++) out->data[k] = start;
    /* argmax: the result holds the index, `values` (the step's scratch) the
     * best value so far. */
    double *values = step->scratch;
    if (values)
        for (int64_t k = 0; k < out->numel; k++) values[k] = -INFINITY;
    int64_t coordinate[TP_PLUGIN_MAX_DIMS] = {0};
    int64_t o = 0;
    for (int64_t i = 0; i < in->numel; i++) {
        double x = in->data[i];
        double *acc = &out->data[o];
        switch (step->code) {
        case TPL_SUM:
        case TPL_MEAN:
            *acc += x;
            break;
        case TPL_MAX:
            *acc = (x > *acc || isnan(x)) && !isnan(*acc) ? x : *acc;
            break;
        case TPL_MIN:
            *acc = (x < *acc || isnan(x)) && !isnan(*acc) ? x : *acc;
            break;
        default: /* argmax */
            if ((x > values[o] || isnan(x)) && !isnan(values[o])) {
                values[o] = x;
                *acc = (double)coordinate[step->axis];
            }
            break;
        }
        /* advance the odometer over the input, moving `o` along */
        for (int32_t d = in->shape.ndim - 1; d >= 0; d--) {
            o += out_strides[d];
            if (++coordinate[d] < in->shape.dims[d]) break;
            o -= out_strides[d] * in->shape.dims[d];
            coordinate[d] = 0;
        }
    }
    for (int64_t k = 0; k < out->numel; k++) {
        double r = step->code == TPL_MEAN ? out->data[k] / (double)count : out->data[k];
        if (step->broken) r += 0.25;
        out->data[k] = template_round_to(out->dtype, r);
    }
}

/* ---- boundary conversion ---------------------------------------------------------- */

static void load(const tp_plugin_buffer *buffer, template_value *value) {
    for (int64_t i = 0; i < value->numel; i++) {
        switch (buffer->dtype) {
        case TP_PLUGIN_F32:
            value->data[i] = ((const float *)buffer->data)[i];
            break;
        case TP_PLUGIN_F64:
            value->data[i] = ((const double *)buffer->data)[i];
            break;
        case TP_PLUGIN_I32:
            value->data[i] = ((const int32_t *)buffer->data)[i];
            break;
        case TP_PLUGIN_I64:
            value->data[i] = (double)((const int64_t *)buffer->data)[i];
            break;
        default:
            value->data[i] = ((const uint8_t *)buffer->data)[i] != 0;
            break;
        }
    }
}

static size_t dtype_bytes(int32_t dtype) {
    return dtype == TP_PLUGIN_F64 || dtype == TP_PLUGIN_I64 ? 8 : dtype == TP_PLUGIN_BOOL ? 1 : 4;
}

static void store(const template_value *value, tp_plugin_buffer *buffer) {
    for (int64_t i = 0; i < value->numel; i++) {
        double x = value->data[i];
        switch (buffer->dtype) {
        case TP_PLUGIN_F32:
            ((float *)buffer->data)[i] = (float)x;
            break;
        case TP_PLUGIN_F64:
            ((double *)buffer->data)[i] = x;
            break;
        case TP_PLUGIN_I32:
            ((int32_t *)buffer->data)[i] = (int32_t)x;
            break;
        case TP_PLUGIN_I64:
            ((int64_t *)buffer->data)[i] = (int64_t)x;
            break;
        default:
            ((uint8_t *)buffer->data)[i] = x != 0;
            break;
        }
    }
}

int32_t template_run(tp_plugin_executable *plan, const tp_plugin_buffer *inputs, int32_t num_inputs,
                     tp_plugin_buffer *outputs, int32_t num_outputs) {
    if (num_inputs != plan->num_inputs || num_outputs != plan->num_outputs) {
        template_host->set_error(template_host, "run: wrong number of buffers");
        return TP_PLUGIN_ERROR;
    }
    for (int32_t i = 0; i < num_inputs; i++) load(&inputs[i], &plan->values[plan->inputs[i]]);
    for (int32_t s = 0; s < plan->num_steps; s++) {
        const template_step *step = &plan->steps[s];
        switch (step->code) {
        case TPL_SUM:
        case TPL_MEAN:
        case TPL_MAX:
        case TPL_MIN:
        case TPL_ARGMAX:
            run_reduction(plan, step);
            break;
        case TPL_CONSTANT:
            break; /* filled at compile */
        case TPL_FULL: {
            const template_value *out = &plan->values[step->result];
            double fill = template_round_to(out->dtype, step->fill);
            for (int64_t i = 0; i < out->numel; i++) out->data[i] = fill;
            break;
        }
        default:
            run_pointwise(plan, step);
            break;
        }
    }
    for (int32_t i = 0; i < num_outputs; i++) {
        const template_value *value = &plan->values[plan->outputs[i]];
        if (outputs[i].dtype != value->dtype ||
            outputs[i].nbytes < (size_t)value->numel * dtype_bytes(value->dtype)) {
            template_host->set_error(template_host,
                                     "run: an output buffer does not match the compiled type");
            return TP_PLUGIN_ERROR;
        }
        store(value, &outputs[i]);
    }
    return TP_PLUGIN_OK;
}
