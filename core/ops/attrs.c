/* Attribute keys: names and value types (attr_info.h). */
#include "attr_info.h"

#include <stddef.h>

static const tp_attr_info attr_infos[TP_ATTR_KEY_COUNT] = {
    [TP_ATTR_AXES] = {TP_ATTR_AXES, "axes", TP_ATTR_TYPE_INTS},
    [TP_ATTR_KEEPDIM] = {TP_ATTR_KEEPDIM, "keepdim", TP_ATTR_TYPE_BOOL},
    [TP_ATTR_SHAPE] = {TP_ATTR_SHAPE, "shape", TP_ATTR_TYPE_INTS},
    [TP_ATTR_PERM] = {TP_ATTR_PERM, "perm", TP_ATTR_TYPE_INTS},
    [TP_ATTR_AXIS] = {TP_ATTR_AXIS, "axis", TP_ATTR_TYPE_INT},
    [TP_ATTR_DIM0] = {TP_ATTR_DIM0, "dim0", TP_ATTR_TYPE_INT},
    [TP_ATTR_DIM1] = {TP_ATTR_DIM1, "dim1", TP_ATTR_TYPE_INT},
    [TP_ATTR_START] = {TP_ATTR_START, "start", TP_ATTR_TYPE_INT},
    [TP_ATTR_STOP] = {TP_ATTR_STOP, "stop", TP_ATTR_TYPE_INT},
    [TP_ATTR_STEP] = {TP_ATTR_STEP, "step", TP_ATTR_TYPE_INT},
    [TP_ATTR_RANGE_START] = {TP_ATTR_RANGE_START, "start", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_RANGE_STOP] = {TP_ATTR_RANGE_STOP, "stop", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_RANGE_STEP] = {TP_ATTR_RANGE_STEP, "step", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_DTYPE] = {TP_ATTR_DTYPE, "dtype", TP_ATTR_TYPE_DTYPE},
    [TP_ATTR_VALUE] = {TP_ATTR_VALUE, "value", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_EPS] = {TP_ATTR_EPS, "eps", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_APPROXIMATE] = {TP_ATTR_APPROXIMATE, "approximate", TP_ATTR_TYPE_APPROXIMATE},
    [TP_ATTR_BETA] = {TP_ATTR_BETA, "beta", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_THRESHOLD] = {TP_ATTR_THRESHOLD, "threshold", TP_ATTR_TYPE_FLOAT},
    [TP_ATTR_DATA] = {TP_ATTR_DATA, "value", TP_ATTR_TYPE_TENSOR},
    [TP_ATTR_KERNEL_SHAPE] = {TP_ATTR_KERNEL_SHAPE, "kernel_shape", TP_ATTR_TYPE_INTS},
    [TP_ATTR_STRIDES] = {TP_ATTR_STRIDES, "strides", TP_ATTR_TYPE_INTS},
    [TP_ATTR_PADS] = {TP_ATTR_PADS, "pads", TP_ATTR_TYPE_INTS},
    [TP_ATTR_DILATIONS] = {TP_ATTR_DILATIONS, "dilations", TP_ATTR_TYPE_INTS},
    [TP_ATTR_GROUP] = {TP_ATTR_GROUP, "group", TP_ATTR_TYPE_INT},
    [TP_ATTR_OUTPUT_PADDING] = {TP_ATTR_OUTPUT_PADDING, "output_padding", TP_ATTR_TYPE_INTS},
    [TP_ATTR_CEIL_MODE] = {TP_ATTR_CEIL_MODE, "ceil_mode", TP_ATTR_TYPE_BOOL},
    [TP_ATTR_COUNT_INCLUDE_PAD] = {TP_ATTR_COUNT_INCLUDE_PAD, "count_include_pad",
                                   TP_ATTR_TYPE_BOOL},
};

const tp_attr_info *tp_attr_info_get(tp_attr_key key) {
    return (unsigned)key < TP_ATTR_KEY_COUNT ? &attr_infos[key] : NULL;
}

const char *tp_attr_key_name(tp_attr_key key) {
    return (unsigned)key < TP_ATTR_KEY_COUNT ? attr_infos[key].name : "?";
}

int64_t *tp_attrs_ints_mut(tp_attrs *attrs, tp_attr_key key, int32_t **count_out) {
    switch (key) {
    case TP_ATTR_AXES:
        *count_out = &attrs->naxes;
        return attrs->axes;
    case TP_ATTR_SHAPE:
        *count_out = &attrs->shape_ndim;
        return attrs->shape;
    case TP_ATTR_PERM:
        *count_out = &attrs->nperm;
        return attrs->perm;
    case TP_ATTR_KERNEL_SHAPE:
        *count_out = &attrs->nkernel_shape;
        return attrs->kernel_shape;
    case TP_ATTR_STRIDES:
        *count_out = &attrs->nstrides;
        return attrs->strides;
    case TP_ATTR_PADS:
        *count_out = &attrs->npads;
        return attrs->pads;
    case TP_ATTR_DILATIONS:
        *count_out = &attrs->ndilations;
        return attrs->dilations;
    case TP_ATTR_OUTPUT_PADDING:
        *count_out = &attrs->noutput_padding;
        return attrs->output_padding;
    default:
        *count_out = NULL;
        return NULL;
    }
}

const int64_t *tp_attrs_ints(const tp_attrs *attrs, tp_attr_key key, int32_t *count_out) {
    int32_t *count = NULL;
    const int64_t *values = tp_attrs_ints_mut((tp_attrs *)attrs, key, &count);
    *count_out = count ? *count : 0;
    return values;
}

bool *tp_attrs_bool_field(tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_KEEPDIM:
        return &attrs->keepdim;
    case TP_ATTR_CEIL_MODE:
        return &attrs->ceil_mode;
    case TP_ATTR_COUNT_INCLUDE_PAD:
        return &attrs->count_include_pad;
    default:
        return NULL;
    }
}

bool tp_attrs_bool(const tp_attrs *attrs, tp_attr_key key) {
    bool *field = tp_attrs_bool_field((tp_attrs *)attrs, key);
    return field && *field;
}
