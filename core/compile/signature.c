/* The input signature of one call: per argument its kind, and for tensors
 * (dtype, device, rank, sizes or dynamic dimension codes), for scalars the
 * value (compile_internal.h). requires_grad is always false in TensorPlay, so
 * it is not stored. */
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "compile_internal.h"

const char *tp_compiled_param_name(const tp_compiled *compiled, int index, char *buf, size_t size) {
    if (compiled->param_names && index < compiled->num_params) return compiled->param_names[index];
    snprintf(buf, size, "arg%d", index);
    return buf;
}

static int64_t dynamic_code(const tp_arg *args, int param, int axis) {
    int64_t size = args[param].tensor->shape[axis];
    if (size <= 1) return size;
    for (int j = 0; j <= param; j++) {
        if (args[j].kind != TP_ARG_TENSOR) continue;
        int limit = j == param ? axis : args[j].tensor->ndim;
        for (int b = 0; b < limit; b++)
            if (args[j].tensor->shape[b] == size) return TP_DIM_CODE_FIRST + j * TP_MAX_DIMS + b;
    }
    return TP_DIM_CODE_FIRST + param * TP_MAX_DIMS + axis;
}

tp_status tp_signature_build(const tp_compiled *compiled, const tp_arg *args, int num_args,
                             tp_arg_signature *out) {
    memset(out, 0, (size_t)num_args * sizeof *out);
    char name[32];
    for (int i = 0; i < num_args; i++) {
        tp_arg_signature *signature = &out[i];
        signature->kind = args[i].kind;
        switch (args[i].kind) {
        case TP_ARG_TENSOR: {
            const tp_tensor *tensor = args[i].tensor;
            if (!tensor)
                return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                    "'%s': argument %d ('%s') is a NULL tensor", compiled->name, i,
                                    tp_compiled_param_name(compiled, i, name, sizeof name));
            signature->dtype = tensor->dtype;
            signature->device = tensor->device;
            signature->ndim = tensor->ndim;
            for (int axis = 0; axis < tensor->ndim; axis++)
                signature->dims[axis] =
                    compiled->dynamic ? dynamic_code(args, i, axis) : tensor->shape[axis];
            break;
        }
        case TP_ARG_INT:
            signature->scalar_bits = args[i].i;
            break;
        case TP_ARG_FLOAT:
            memcpy(&signature->scalar_bits, &args[i].f, sizeof(double));
            break;
        case TP_ARG_BOOL:
            signature->scalar_bits = args[i].b ? 1 : 0;
            break;
        default:
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "'%s': argument %d ('%s') has an unknown kind %d (use "
                                "tp_arg_tensor/int/float/bool)",
                                compiled->name, i,
                                tp_compiled_param_name(compiled, i, name, sizeof name),
                                (int)args[i].kind);
        }
    }
    return TP_OK;
}
