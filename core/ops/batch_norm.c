/* The batch_norm composite, for inference: x of shape [N, C, ...] normalised
 * per channel (axis 1) with running statistics, as ONNX BatchNormalization
 * with training_mode=0:
 *   y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]
 * Operands: x, scale, bias, mean, var (the ONNX order), each parameter of
 * shape [C]. Floating result (integers compute in f32). Its decomposition
 * reshapes the parameters to [C, 1, ...] and is pointwise. Owns nothing else. */
#include <math.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

static const char *const parameter_names[] = {"x", "scale", "bias", "mean", "var"};

tp_status tp_op_BATCH_NORM_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                 tp_type *out) {
    const tp_type *x = &inputs[0];
    char x_text[TP_DESCRIBE_MAX], p_text[TP_DESCRIBE_MAX];
    if (x->ndim < 2)
        return tp_error_set(TP_ERR_SHAPE, "batch_norm: x %s needs at least 2 axes [N, C, ...]",
                            tp_type_text(x, x_text));
    tp_dtype dtype = x->dtype;
    for (int i = 1; i < 5; i++) {
        const tp_type *p = &inputs[i];
        if (p->ndim != 1 || p->dims[0] != x->dims[1])
            return tp_error_set(
                TP_ERR_SHAPE, "batch_norm: %s %s must have shape [C], C = axis 1 of x %s",
                parameter_names[i], tp_type_text(p, p_text), tp_type_text(x, x_text));
        dtype = tp_dtype_promote(dtype, p->dtype);
    }
    if (!(attrs->eps >= 0))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "batch_norm: eps %g must be >= 0", attrs->eps);
    *out = *x;
    out->dtype = tp_dtype_is_float(dtype) ? dtype : TP_F32;
    return TP_OK;
}

tp_status tp_op_BATCH_NORM_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                  tp_tensor *out) {
    const tp_tensor *x = inputs[0];
    int64_t channels = x->shape[1], inner = 1;
    for (int d = 2; d < x->ndim; d++) inner *= x->shape[d];
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t c = (i / inner) % channels;
        double value = tp_element_load_f64(x->data, x->dtype, i);
        double scale = tp_element_load_f64(inputs[1]->data, inputs[1]->dtype, c);
        double bias = tp_element_load_f64(inputs[2]->data, inputs[2]->dtype, c);
        double mean = tp_element_load_f64(inputs[3]->data, inputs[3]->dtype, c);
        double var = tp_element_load_f64(inputs[4]->data, inputs[4]->dtype, c);
        tp_element_store_f64(out->data, out->dtype, i,
                             (value - mean) / sqrt(var + attrs->eps) * scale + bias);
    }
    return TP_OK;
}

static tp_status node(tp_graph *graph, const char *op_name, tp_value_id a, tp_value_id b,
                      tp_value_id *out) {
    tp_value_id operands[2] = {a, b};
    return tp_graph_add_node(graph, op_name, operands, b < 0 ? 1 : 2, NULL, NULL, out);
}

/* parameter [C] -> [C, 1, ..., 1] broadcasting against x from axis 1. */
static tp_status per_channel(tp_graph *graph, tp_value_id parameter, int rank, tp_value_id *out) {
    tp_attrs shape = TP_ATTRS_INIT;
    shape.shape_ndim = rank - 1;
    shape.shape[0] = -1;
    for (int d = 1; d < rank - 1; d++) shape.shape[d] = 1;
    return tp_graph_add_node(graph, "reshape", &parameter, 1, &shape, NULL, out);
}

tp_status tp_op_BATCH_NORM_decompose(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                     const tp_attrs *attrs, tp_value_id *out) {
    const tp_type *x_type = tp_graph_value_type(graph, inputs[0]);
    int rank = x_type->ndim;
    tp_value_id params[5], x = inputs[0];
    if (!tp_dtype_is_float(x_type->dtype)) {
        tp_attrs cast = TP_ATTRS_INIT;
        cast.dtype = TP_F32;
        tp_value_id floating;
        TP_TRY(tp_graph_add_node(graph, "cast", &x, 1, &cast, NULL, &floating));
        x = floating;
    }
    for (int i = 1; i < 5; i++) TP_TRY(per_channel(graph, inputs[i], rank, &params[i]));
    tp_attrs eps = TP_ATTRS_INIT;
    eps.dtype = tp_graph_value_type(graph, params[4])->dtype;
    if (!tp_dtype_is_float(eps.dtype)) eps.dtype = TP_F32;
    eps.value = attrs->eps;
    tp_value_id eps_value, shifted, inverse, factor, centered, scaled;
    TP_TRY(tp_graph_add_node(graph, "full", NULL, 0, &eps, NULL, &eps_value));
    TP_TRY(node(graph, "add", params[4], eps_value, &shifted));
    TP_TRY(node(graph, "rsqrt", shifted, -1, &inverse));
    TP_TRY(node(graph, "mul", params[1], inverse, &factor));
    TP_TRY(node(graph, "sub", x, params[3], &centered));
    TP_TRY(node(graph, "mul", centered, factor, &scaled));
    return node(graph, "add", scaled, params[2], out);
}
