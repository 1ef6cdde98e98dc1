/* NumPy broadcasting over static sizes and dimension symbols (broadcast.h).
 * Owns only the shape arithmetic; the ops that broadcast live in their own
 * files. Symbols (dims < 0) are unknown sizes: two equal symbols are the same
 * size, a symbol against 1 stays the symbol, and anything else involving a
 * symbol cannot be decided statically, so it is refused. */
#include "broadcast.h"

#include "../base/error.h"
#include "op_args.h"

static tp_status broadcast_error(const char *op_name, const tp_type *a, const tp_type *b,
                                 int from_right, int64_t size_a, int64_t size_b) {
    char text_a[TP_DESCRIBE_MAX], text_b[TP_DESCRIBE_MAX];
    tp_type_text(a, text_a);
    tp_type_text(b, text_b);
    if (TP_DIM_IS_SYMBOL(size_a) || TP_DIM_IS_SYMBOL(size_b))
        return tp_error_set(TP_ERR_SHAPE,
                            "%s: cannot broadcast %s with %s (dimension -%d: a symbolic size "
                            "against %s cannot be decided statically; mark it static or reshape)",
                            op_name, text_a, text_b, from_right,
                            TP_DIM_IS_SYMBOL(size_a) && TP_DIM_IS_SYMBOL(size_b)
                                ? "another symbol"
                                : "a size other than 1");
    return tp_error_set(TP_ERR_SHAPE,
                        "%s: cannot broadcast %s with %s (dimension -%d: %lld vs %lld)", op_name,
                        text_a, text_b, from_right, (long long)size_a, (long long)size_b);
}

tp_status tp_broadcast_shapes(const char *op_name, const tp_type *a, const tp_type *b,
                              int32_t *ndim_out, int64_t *dims_out) {
    int ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t dims[TP_MAX_DIMS];
    for (int from_right = 1; from_right <= ndim; from_right++) {
        int64_t size_a = from_right <= a->ndim ? a->dims[a->ndim - from_right] : 1;
        int64_t size_b = from_right <= b->ndim ? b->dims[b->ndim - from_right] : 1;
        int64_t size;
        if (size_a == size_b || size_b == 1)
            size = size_a;
        else if (size_a == 1)
            size = size_b;
        else
            return broadcast_error(op_name, a, b, from_right, size_a, size_b);
        dims[ndim - from_right] = size;
    }
    /* dims_out may alias a->dims or b->dims: write only after reading. */
    for (int i = 0; i < ndim; i++) dims_out[i] = dims[i];
    *ndim_out = ndim;
    return TP_OK;
}

void tp_broadcast_strides(int in_ndim, const int64_t *in_shape, int out_ndim,
                          const int64_t *out_shape, int64_t *strides_out) {
    int64_t stride = 1;
    for (int out_axis = out_ndim - 1; out_axis >= 0; out_axis--) {
        int in_axis = in_ndim - (out_ndim - out_axis);
        if (in_axis < 0) {
            strides_out[out_axis] = 0;
            continue;
        }
        int64_t size = in_shape[in_axis];
        strides_out[out_axis] = size == 1 && out_shape[out_axis] != 1 ? 0 : stride;
        stride *= size;
    }
}
