/* conv and conv_transpose over NCW / NCHW data: their shape and dtype rules
 * and reference kernels (docs/ops/semantics.txt).
 *
 * conv(x [N, C, *in], weight [C_out, C / group, *k], bias [C_out]?):
 *   out[n, co, p] = bias[co] + sum over ci of the group of co and the
 *   window taps t of x[n, ci, p * stride + t * dilation - pad_begin] *
 *   weight[co, ci, t], taps in the padding reading zero.
 * conv_transpose(x [N, C, *in], weight [C, C_out / group, *k], bias?):
 *   the adjoint of conv: every input element scatters x * weight onto the
 *   outputs at in * stride + t * dilation - pad_begin.
 * Dtypes: f32, f64, f16 or bf16 (computed in f32: storage_kernel.c), all
 * operands the same; the kernels accumulate in f64.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "op_args.h"
#include "op_table.h"
#include "window.h"

/* ---- shape and dtype rules ----------------------------------------------------- */

static tp_status check_float_operands(const char *op, const tp_type *inputs, int count) {
    static const char *const roles[3] = {"input", "weight", "bias"};
    char text[TP_DESCRIBE_MAX], first[TP_DESCRIBE_MAX];
    if (!tp_dtype_is_float(inputs[0].dtype)) /* f16/bf16 compute in f32 */
        return tp_error_set(TP_ERR_DTYPE, "%s: the input must be f32, f64, f16 or bf16, got %s", op,
                            tp_type_text(&inputs[0], text));
    for (int i = 1; i < count; i++)
        if (inputs[i].dtype != inputs[0].dtype)
            return tp_error_set(TP_ERR_DTYPE, "%s: the %s %s must have the input's dtype (%s)", op,
                                roles[i], tp_type_text(&inputs[i], text),
                                tp_type_text(&inputs[0], first));
    return TP_OK;
}

static bool dim_known(int64_t dim) {
    return !TP_DIM_IS_SYMBOL(dim);
}

/* Weight rank and kernel sizes; the channel checks are the caller's. */
static tp_status check_weight(const char *op, const tp_type *x, const tp_type *weight,
                              int64_t *kernel) {
    char x_text[TP_DESCRIBE_MAX], w_text[TP_DESCRIBE_MAX];
    if (weight->ndim != x->ndim)
        return tp_error_set(TP_ERR_SHAPE,
                            "%s: the weight %s must have the input's rank %d (input %s)", op,
                            tp_type_text(weight, w_text), x->ndim, tp_type_text(x, x_text));
    for (int d = 0; d < weight->ndim; d++)
        if (!dim_known(weight->dims[d]))
            return tp_error_set(TP_ERR_SHAPE, "%s: the weight %s must have known sizes", op,
                                tp_type_text(weight, w_text));
    for (int d = 2; d < weight->ndim; d++) {
        kernel[d - 2] = weight->dims[d];
        if (kernel[d - 2] < 1)
            return tp_error_set(TP_ERR_SHAPE, "%s: the weight %s has an empty kernel axis %d", op,
                                tp_type_text(weight, w_text), d);
    }
    if (!dim_known(x->dims[1]))
        return tp_error_set(TP_ERR_SHAPE, "%s: the channel axis of the input %s must be known", op,
                            tp_type_text(x, x_text));
    return TP_OK;
}

static tp_status check_bias(const char *op, const tp_type *inputs, int count, int64_t channels) {
    if (count < 3) return TP_OK;
    const tp_type *bias = &inputs[2];
    char text[TP_DESCRIBE_MAX];
    if (bias->ndim != 1 || bias->dims[0] != channels)
        return tp_error_set(TP_ERR_SHAPE, "%s: the bias %s must be [%" PRId64 "] (output channels)",
                            op, tp_type_text(bias, text), channels);
    return TP_OK;
}

static tp_status check_group(const char *op, int64_t group) {
    if (group < 1)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: group %" PRId64 " must be at least 1", op,
                            group);
    return TP_OK;
}

/* The geometry of conv on these operand types (also used by the kernel). */
static tp_status conv_window(const tp_type *inputs, int count, const tp_attrs *attrs,
                             tp_window *w) {
    const char *op = "conv";
    const tp_type *x = &inputs[0], *weight = &inputs[1];
    char x_text[TP_DESCRIBE_MAX], w_text[TP_DESCRIBE_MAX];
    int64_t kernel[TP_WINDOW_AXES];
    TP_TRY(check_float_operands(op, inputs, count));
    TP_TRY(tp_window_read(op, x, attrs, (int64_t[TP_WINDOW_AXES]){1, 1}, false, w));
    TP_TRY(check_weight(op, x, weight, kernel));
    TP_TRY(check_group(op, attrs->group));
    int64_t group = attrs->group, out_channels = weight->dims[0];
    if (out_channels % group != 0)
        return tp_error_set(TP_ERR_SHAPE,
                            "conv: the weight %s has %" PRId64 " output channels, not a multiple "
                            "of group %" PRId64,
                            tp_type_text(weight, w_text), out_channels, group);
    if (x->dims[1] != weight->dims[1] * group)
        return tp_error_set(TP_ERR_SHAPE,
                            "conv: the input %s has %" PRId64 " channels; the weight %s with "
                            "group %" PRId64 " expects %" PRId64 " (weight[1] * group)",
                            tp_type_text(x, x_text), x->dims[1], tp_type_text(weight, w_text),
                            group, weight->dims[1] * group);
    TP_TRY(check_bias(op, inputs, count, out_channels));
    int skip = TP_WINDOW_AXES - w->spatial;
    for (int i = 0; i < w->spatial; i++) w->kernel[skip + i] = kernel[i];
    return tp_window_forward_sizes(op, x, false, w);
}

tp_status tp_op_CONV_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                           tp_type *out) {
    tp_window w;
    TP_TRY(conv_window(inputs, num_inputs, attrs, &w));
    tp_window_result_type(&w, &inputs[0], inputs[1].dims[0], inputs[0].dtype, out);
    return TP_OK;
}

static tp_status conv_transpose_window(const tp_type *inputs, int count, const tp_attrs *attrs,
                                       tp_window *w) {
    const char *op = "conv_transpose";
    const tp_type *x = &inputs[0], *weight = &inputs[1];
    char x_text[TP_DESCRIBE_MAX], w_text[TP_DESCRIBE_MAX];
    int64_t kernel[TP_WINDOW_AXES];
    TP_TRY(check_float_operands(op, inputs, count));
    TP_TRY(tp_window_read(op, x, attrs, (int64_t[TP_WINDOW_AXES]){1, 1}, true, w));
    TP_TRY(check_weight(op, x, weight, kernel));
    TP_TRY(check_group(op, attrs->group));
    int64_t group = attrs->group;
    if (x->dims[1] != weight->dims[0] || x->dims[1] % group != 0)
        return tp_error_set(TP_ERR_SHAPE,
                            "conv_transpose: the input %s has %" PRId64 " channels; the weight "
                            "%s expects %" PRId64 " (weight[0]), a multiple of group %" PRId64,
                            tp_type_text(x, x_text), x->dims[1], tp_type_text(weight, w_text),
                            weight->dims[0], group);
    TP_TRY(check_bias(op, inputs, count, weight->dims[1] * group));
    int skip = TP_WINDOW_AXES - w->spatial;
    for (int i = 0; i < w->spatial; i++) w->kernel[skip + i] = kernel[i];
    return tp_window_transpose_sizes(op, x, w);
}

tp_status tp_op_CONV_TRANSPOSE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                     tp_type *out) {
    tp_window w;
    TP_TRY(conv_transpose_window(inputs, num_inputs, attrs, &w));
    tp_window_result_type(&w, &inputs[0], inputs[1].dims[1] * attrs->group, inputs[0].dtype, out);
    return TP_OK;
}

/* ---- reference kernels ----------------------------------------------------------- */

static tp_type type_of_tensor(const tp_tensor *t) {
    tp_type type = {.dtype = t->dtype, .ndim = t->ndim};
    for (int d = 0; d < t->ndim; d++) type.dims[d] = t->shape[d];
    return type;
}

static double element(const tp_tensor *t, int64_t index) {
    return t->dtype == TP_F64 ? ((const double *)t->data)[index]
                              : (double)((const float *)t->data)[index];
}

/* Values of a tensor as f64 (the kernels read every element many times). */
static tp_status as_doubles(const tp_tensor *t, double **out) {
    *out = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(double));
    if (!*out) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "conv: out of memory");
    for (int64_t i = 0; i < t->numel; i++) (*out)[i] = element(t, i);
    return TP_OK;
}

static void store(tp_tensor *out, const double *values) {
    if (out->dtype == TP_F64) {
        memcpy(out->data, values, (size_t)out->numel * sizeof(double));
        return;
    }
    float *dst = out->data;
    for (int64_t i = 0; i < out->numel; i++) dst[i] = (float)values[i];
}

typedef struct conv_operands {
    const double *x, *weight, *bias; /* bias NULL when absent */
    double *out;
    int64_t batch, in_channels, out_channels, group;
} conv_operands;

/* out[n, co] += weight[co, ci, kh, kw] * x[n, ci] over the taps inside the
 * input, one output plane at a time. */
static void conv_forward(const conv_operands *o, const tp_window *w) {
    int64_t ih_n = w->in[0], iw_n = w->in[1], oh_n = w->out[0], ow_n = w->out[1];
    int64_t kh_n = w->kernel[0], kw_n = w->kernel[1];
    int64_t cin_g = o->in_channels / o->group, cout_g = o->out_channels / o->group;
    for (int64_t n = 0; n < o->batch; n++)
        for (int64_t co = 0; co < o->out_channels; co++) {
            double *plane = o->out + (n * o->out_channels + co) * oh_n * ow_n;
            double bias = o->bias ? o->bias[co] : 0.0;
            for (int64_t p = 0; p < oh_n * ow_n; p++) plane[p] = bias;
            int64_t first_ci = co / cout_g * cin_g;
            for (int64_t c = 0; c < cin_g; c++) {
                const double *image = o->x + (n * o->in_channels + first_ci + c) * ih_n * iw_n;
                const double *taps = o->weight + (co * cin_g + c) * kh_n * kw_n;
                for (int64_t kh = 0; kh < kh_n; kh++)
                    for (int64_t kw = 0; kw < kw_n; kw++) {
                        double tap = taps[kh * kw_n + kw];
                        for (int64_t oh = 0; oh < oh_n; oh++) {
                            int64_t ih = oh * w->stride[0] + kh * w->dilation[0] - w->pad_begin[0];
                            if (ih < 0 || ih >= ih_n) continue;
                            for (int64_t ow = 0; ow < ow_n; ow++) {
                                int64_t iw =
                                    ow * w->stride[1] + kw * w->dilation[1] - w->pad_begin[1];
                                if (iw >= 0 && iw < iw_n)
                                    plane[oh * ow_n + ow] += tap * image[ih * iw_n + iw];
                            }
                        }
                    }
            }
        }
}

/* Every input element scatters onto the outputs its taps reach. */
static void conv_transpose_forward(const conv_operands *o, const tp_window *w) {
    int64_t ih_n = w->in[0], iw_n = w->in[1], oh_n = w->out[0], ow_n = w->out[1];
    int64_t kh_n = w->kernel[0], kw_n = w->kernel[1];
    int64_t cin_g = o->in_channels / o->group, cout_g = o->out_channels / o->group;
    for (int64_t n = 0; n < o->batch; n++)
        for (int64_t co = 0; co < o->out_channels; co++) {
            double *plane = o->out + (n * o->out_channels + co) * oh_n * ow_n;
            for (int64_t p = 0; p < oh_n * ow_n; p++) plane[p] = o->bias ? o->bias[co] : 0.0;
        }
    for (int64_t n = 0; n < o->batch; n++)
        for (int64_t ci = 0; ci < o->in_channels; ci++) {
            const double *image = o->x + (n * o->in_channels + ci) * ih_n * iw_n;
            int64_t g = ci / cin_g;
            for (int64_t c = 0; c < cout_g; c++) {
                int64_t co = g * cout_g + c;
                double *plane = o->out + (n * o->out_channels + co) * oh_n * ow_n;
                const double *taps = o->weight + (ci * cout_g + c) * kh_n * kw_n;
                for (int64_t ih = 0; ih < ih_n; ih++)
                    for (int64_t kh = 0; kh < kh_n; kh++) {
                        int64_t oh = ih * w->stride[0] + kh * w->dilation[0] - w->pad_begin[0];
                        if (oh < 0 || oh >= oh_n) continue;
                        for (int64_t iw = 0; iw < iw_n; iw++)
                            for (int64_t kw = 0; kw < kw_n; kw++) {
                                int64_t ow =
                                    iw * w->stride[1] + kw * w->dilation[1] - w->pad_begin[1];
                                if (ow >= 0 && ow < ow_n)
                                    plane[oh * ow_n + ow] +=
                                        image[ih * iw_n + iw] * taps[kh * kw_n + kw];
                            }
                    }
            }
        }
}

static tp_status run_conv(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                          tp_tensor *out, bool transpose) {
    tp_type types[3];
    for (int i = 0; i < num_inputs; i++) types[i] = type_of_tensor(inputs[i]);
    tp_window w;
    TP_TRY(transpose ? conv_transpose_window(types, num_inputs, attrs, &w)
                     : conv_window(types, num_inputs, attrs, &w));
    double *x = NULL, *weight = NULL, *bias = NULL, *result = NULL;
    tp_status status = as_doubles(inputs[0], &x);
    if (status == TP_OK) status = as_doubles(inputs[1], &weight);
    if (status == TP_OK && num_inputs > 2) status = as_doubles(inputs[2], &bias);
    if (status == TP_OK) status = as_doubles(out, &result);
    if (status == TP_OK) {
        conv_operands o = {.x = x,
                           .weight = weight,
                           .bias = bias,
                           .out = result,
                           .batch = inputs[0]->shape[0],
                           .in_channels = inputs[0]->shape[1],
                           .out_channels = out->shape[1],
                           .group = attrs->group};
        if (transpose)
            conv_transpose_forward(&o, &w);
        else
            conv_forward(&o, &w);
        store(out, result);
    }
    free(x);
    free(weight);
    free(bias);
    free(result);
    return status;
}

tp_status tp_op_CONV_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_tensor *out) {
    return run_conv(inputs, num_inputs, attrs, out, false);
}

tp_status tp_op_CONV_TRANSPOSE_kernel(tp_tensor *const *inputs, int num_inputs,
                                      const tp_attrs *attrs, tp_tensor *out) {
    return run_conv(inputs, num_inputs, attrs, out, true);
}
