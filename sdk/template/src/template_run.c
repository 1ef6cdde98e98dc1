/* Running a template executable: inputs are converted to doubles, every step
 * runs one loop over its values, and outputs are converted to their dtypes.
 * After each step the result is rounded to its value's dtype (an f32 value
 * holds only what a float can), so results track TensorPlay's f32 semantics
 * closely while the code stays one loop per kind of op.
 *
 * Pointwise loops follow NumPy broadcasting: an operand's stride is 0 in a
 * dimension where it has size 1. Large loops are split over the core's
 * thread pool with host->parallel_for (a plugin must not start threads of
 * its own). matmul accumulates each dot product in a double. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "template.h"

static double round_to(int32_t dtype, double x) {
    return dtype == TP_PLUGIN_F32 ? (double)(float)x : x;
}

/* The scalar function of one pointwise step. relu keeps NaN, like NumPy's
 * maximum(x, 0). */
static double apply(int32_t op_id, double a, double b) {
    switch (op_id) {
    case TP_PLUGIN_OP_ADD:
        return a + b;
    case TP_PLUGIN_OP_SUB:
        return a - b;
    case TP_PLUGIN_OP_MUL:
        return a * b;
    case TP_PLUGIN_OP_RELU:
        return isnan(a) || a > 0 ? a : 0.0;
    case TP_PLUGIN_OP_EXP:
        return exp(a);
    default:
        return NAN; /* never planned: template_classify claims the ops above only */
    }
}

/* ---- pointwise ---------------------------------------------------------------- */

typedef struct pointwise_loop {
    const template_step *step;
    const template_value *result;
    int32_t num_operands;
    const double *operands[2];
    int64_t strides[2][TP_PLUGIN_MAX_DIMS]; /* per operand, in result dimensions */
} pointwise_loop;

static void pointwise_range(void *context, int64_t begin, int64_t end) {
    const pointwise_loop *loop = context;
    const template_shape *shape = &loop->result->shape;
    for (int64_t i = begin; i < end; i++) {
        double x[2] = {0, 0};
        int64_t offsets[2] = {0, 0}, rest = i;
        for (int32_t d = shape->ndim - 1; d >= 0; d--) {
            int64_t coordinate = rest % shape->dims[d];
            rest /= shape->dims[d];
            for (int32_t k = 0; k < loop->num_operands; k++)
                offsets[k] += coordinate * loop->strides[k][d];
        }
        for (int32_t k = 0; k < loop->num_operands; k++) x[k] = loop->operands[k][offsets[k]];
        double r = apply(loop->step->op_id, x[0], x[1]);
        if (loop->step->broken) r += 0.25;
        loop->result->data[i] = round_to(loop->result->dtype, r);
    }
}

static void run_pointwise(const tp_plugin_executable *plan, const template_step *step) {
    pointwise_loop loop = {.step = step,
                           .result = &plan->values[step->result],
                           .num_operands = step->loop == TEMPLATE_BINARY ? 2 : 1};
    const template_shape *out = &loop.result->shape;
    for (int32_t k = 0; k < loop.num_operands; k++) {
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
        plan->host->parallel_for(numel, plan->options.grain, pointwise_range, &loop);
    else
        pointwise_range(&loop, 0, numel);
}

/* ---- matmul --------------------------------------------------------------------- */

typedef struct matmul_loop {
    const template_step *step;
    const template_value *a, *b, *result;
} matmul_loop;

/* Rows [begin, end) of the result. */
static void matmul_rows(void *context, int64_t begin, int64_t end) {
    const matmul_loop *loop = context;
    int64_t k_size = loop->a->shape.dims[1], n = loop->b->shape.dims[1];
    for (int64_t i = begin; i < end; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0;
            for (int64_t k = 0; k < k_size; k++)
                sum += loop->a->data[i * k_size + k] * loop->b->data[k * n + j];
            if (loop->step->broken) sum += 0.25;
            loop->result->data[i * n + j] = round_to(loop->result->dtype, sum);
        }
}

static void run_matmul(const tp_plugin_executable *plan, const template_step *step) {
    matmul_loop loop = {step, &plan->values[step->operands[0]], &plan->values[step->operands[1]],
                        &plan->values[step->result]};
    int64_t rows = loop.result->shape.dims[0];
    int64_t work_per_row = loop.a->shape.dims[1] * loop.b->shape.dims[1] + 1;
    int64_t grain = plan->options.grain / work_per_row + 1;
    if (plan->options.parallel && rows >= 2 * grain)
        plan->host->parallel_for(rows, grain, matmul_rows, &loop);
    else
        matmul_rows(&loop, 0, rows);
}

/* ---- boundary conversion ---------------------------------------------------------- */

static void load(const tp_plugin_buffer *buffer, template_value *value) {
    for (int64_t i = 0; i < value->numel; i++)
        value->data[i] = buffer->dtype == TP_PLUGIN_F32 ? ((const float *)buffer->data)[i]
                                                        : ((const double *)buffer->data)[i];
}

static void store(const template_value *value, tp_plugin_buffer *buffer) {
    for (int64_t i = 0; i < value->numel; i++) {
        if (buffer->dtype == TP_PLUGIN_F32)
            ((float *)buffer->data)[i] = (float)value->data[i];
        else
            ((double *)buffer->data)[i] = value->data[i];
    }
}

static size_t dtype_bytes(int32_t dtype) {
    return dtype == TP_PLUGIN_F64 ? 8 : 4;
}

int32_t template_run(void *context, tp_plugin_executable *plan, const tp_plugin_buffer *inputs,
                     int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context;
    if (num_inputs != plan->num_inputs || num_outputs != plan->num_outputs)
        return template_fail(plan->host, TP_PLUGIN_ERROR,
                             "run: %d input and %d output buffers, the executable takes %d and %d",
                             (int)num_inputs, (int)num_outputs, (int)plan->num_inputs,
                             (int)plan->num_outputs);
    for (int32_t i = 0; i < num_inputs; i++) load(&inputs[i], &plan->values[plan->inputs[i]]);
    for (int32_t s = 0; s < plan->num_steps; s++) {
        const template_step *step = &plan->steps[s];
        if (step->loop == TEMPLATE_MATMUL)
            run_matmul(plan, step);
        else
            run_pointwise(plan, step);
    }
    for (int32_t i = 0; i < num_outputs; i++) {
        const template_value *value = &plan->values[plan->outputs[i]];
        if (outputs[i].dtype != value->dtype ||
            outputs[i].nbytes < (size_t)value->numel * dtype_bytes(value->dtype))
            return template_fail(plan->host, TP_PLUGIN_ERROR,
                                 "run: output %d does not match the compiled type", (int)i);
        store(value, &outputs[i]);
    }
    return TP_PLUGIN_OK;
}
