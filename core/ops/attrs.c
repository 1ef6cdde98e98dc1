/* Attribute keys: names and value types (attr_info.h). */
#include "attr_info.h"

#include <stddef.h>
#include <string.h>

static const char *const mode_names[] = {"constant", "reflect", "edge", "nearest",
                                         "linear",   "wrap",    NULL};
static const char *const coordinate_names[] = {"half_pixel",
                                               "asymmetric",
                                               "align_corners",
                                               "pytorch_half_pixel",
                                               "half_pixel_symmetric",
                                               "tf_half_pixel_for_nn",
                                               NULL};
static const char *const rounding_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                             "ceil", NULL};

static const tp_attr_info attr_infos[TP_ATTR_KEY_COUNT] = {
    [TP_ATTR_AXES] = {TP_ATTR_AXES, "axes", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_KEEPDIM] = {TP_ATTR_KEEPDIM, "keepdim", TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_SHAPE] = {TP_ATTR_SHAPE, "shape", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_PERM] = {TP_ATTR_PERM, "perm", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_AXIS] = {TP_ATTR_AXIS, "axis", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_DIM0] = {TP_ATTR_DIM0, "dim0", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_DIM1] = {TP_ATTR_DIM1, "dim1", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_START] = {TP_ATTR_START, "start", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_STOP] = {TP_ATTR_STOP, "stop", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_STEP] = {TP_ATTR_STEP, "step", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_RANGE_START] = {TP_ATTR_RANGE_START, "start", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_RANGE_STOP] = {TP_ATTR_RANGE_STOP, "stop", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_RANGE_STEP] = {TP_ATTR_RANGE_STEP, "step", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_DTYPE] = {TP_ATTR_DTYPE, "dtype", TP_ATTR_TYPE_DTYPE, NULL},
    [TP_ATTR_VALUE] = {TP_ATTR_VALUE, "value", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_EPS] = {TP_ATTR_EPS, "eps", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_APPROXIMATE] = {TP_ATTR_APPROXIMATE, "approximate", TP_ATTR_TYPE_APPROXIMATE, NULL},
    [TP_ATTR_BETA] = {TP_ATTR_BETA, "beta", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_THRESHOLD] = {TP_ATTR_THRESHOLD, "threshold", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_DATA] = {TP_ATTR_DATA, "value", TP_ATTR_TYPE_TENSOR, NULL},
    [TP_ATTR_KERNEL_SHAPE] = {TP_ATTR_KERNEL_SHAPE, "kernel_shape", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_STRIDES] = {TP_ATTR_STRIDES, "strides", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_PADS] = {TP_ATTR_PADS, "pads", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_DILATIONS] = {TP_ATTR_DILATIONS, "dilations", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_GROUP] = {TP_ATTR_GROUP, "group", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_OUTPUT_PADDING] = {TP_ATTR_OUTPUT_PADDING, "output_padding", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_CEIL_MODE] = {TP_ATTR_CEIL_MODE, "ceil_mode", TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_COUNT_INCLUDE_PAD] = {TP_ATTR_COUNT_INCLUDE_PAD, "count_include_pad",
                                   TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_PAD_BEFORE] = {TP_ATTR_PAD_BEFORE, "before", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_PAD_AFTER] = {TP_ATTR_PAD_AFTER, "after", TP_ATTR_TYPE_INTS, NULL},
    [TP_ATTR_MODE] = {TP_ATTR_MODE, "mode", TP_ATTR_TYPE_ENUM, mode_names},
    [TP_ATTR_MIN] = {TP_ATTR_MIN, "min", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_MAX] = {TP_ATTR_MAX, "max", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_K] = {TP_ATTR_K, "k", TP_ATTR_TYPE_INT, NULL},
    [TP_ATTR_LARGEST] = {TP_ATTR_LARGEST, "largest", TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_EXCLUSIVE] = {TP_ATTR_EXCLUSIVE, "exclusive", TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_REVERSE] = {TP_ATTR_REVERSE, "reverse", TP_ATTR_TYPE_BOOL, NULL},
    [TP_ATTR_COORDINATES] = {TP_ATTR_COORDINATES, "coordinates", TP_ATTR_TYPE_ENUM,
                             coordinate_names},
    [TP_ATTR_ROUNDING] = {TP_ATTR_ROUNDING, "rounding", TP_ATTR_TYPE_ENUM, rounding_names},
    [TP_ATTR_SCALE_H] = {TP_ATTR_SCALE_H, "scale_h", TP_ATTR_TYPE_FLOAT, NULL},
    [TP_ATTR_SCALE_W] = {TP_ATTR_SCALE_W, "scale_w", TP_ATTR_TYPE_FLOAT, NULL},
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
    case TP_ATTR_PAD_BEFORE:
        *count_out = &attrs->npad_before;
        return attrs->pad_before;
    case TP_ATTR_PAD_AFTER:
        *count_out = &attrs->npad_after;
        return attrs->pad_after;
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

int64_t *tp_attrs_int_field(tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_AXIS:
        return &attrs->axis;
    case TP_ATTR_DIM0:
        return &attrs->dim0;
    case TP_ATTR_DIM1:
        return &attrs->dim1;
    case TP_ATTR_START:
        return &attrs->start;
    case TP_ATTR_STOP:
        return &attrs->stop;
    case TP_ATTR_STEP:
        return &attrs->step;
    case TP_ATTR_GROUP:
        return &attrs->group;
    case TP_ATTR_K:
        return &attrs->k;
    default:
        return NULL;
    }
}

double *tp_attrs_float_field(tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_RANGE_START:
        return &attrs->range_start;
    case TP_ATTR_RANGE_STOP:
        return &attrs->range_stop;
    case TP_ATTR_RANGE_STEP:
        return &attrs->range_step;
    case TP_ATTR_VALUE:
        return &attrs->value;
    case TP_ATTR_EPS:
        return &attrs->eps;
    case TP_ATTR_BETA:
        return &attrs->beta;
    case TP_ATTR_THRESHOLD:
        return &attrs->threshold;
    case TP_ATTR_MIN:
        return &attrs->min;
    case TP_ATTR_MAX:
        return &attrs->max;
    case TP_ATTR_SCALE_H:
        return &attrs->scale_h;
    case TP_ATTR_SCALE_W:
        return &attrs->scale_w;
    default:
        return NULL;
    }
}

bool *tp_attrs_bool_field(tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_KEEPDIM:
        return &attrs->keepdim;
    case TP_ATTR_CEIL_MODE:
        return &attrs->ceil_mode;
    case TP_ATTR_COUNT_INCLUDE_PAD:
        return &attrs->count_include_pad;
    case TP_ATTR_LARGEST:
        return &attrs->largest;
    case TP_ATTR_EXCLUSIVE:
        return &attrs->exclusive;
    case TP_ATTR_REVERSE:
        return &attrs->reverse;
    default:
        return NULL;
    }
}

bool tp_attrs_bool(const tp_attrs *attrs, tp_attr_key key) {
    bool *field = tp_attrs_bool_field((tp_attrs *)attrs, key);
    return field && *field;
}

int tp_attrs_enum_get(const tp_attrs *attrs, tp_attr_key key) {
    switch (key) {
    case TP_ATTR_APPROXIMATE:
        return (int)attrs->approximate;
    case TP_ATTR_MODE:
        return (int)attrs->mode;
    case TP_ATTR_COORDINATES:
        return (int)attrs->coordinates;
    case TP_ATTR_ROUNDING:
        return (int)attrs->rounding;
    default:
        return -1;
    }
}

void tp_attrs_enum_set(tp_attrs *attrs, tp_attr_key key, int code) {
    switch (key) {
    case TP_ATTR_APPROXIMATE:
        attrs->approximate = (tp_gelu_approximate)code;
        break;
    case TP_ATTR_MODE:
        attrs->mode = (tp_mode)code;
        break;
    case TP_ATTR_COORDINATES:
        attrs->coordinates = (tp_coordinates)code;
        break;
    case TP_ATTR_ROUNDING:
        attrs->rounding = (tp_rounding)code;
        break;
    default:
        break;
    }
}

const char *tp_attr_enum_name(tp_attr_key key, int code) {
    const tp_attr_info *info = tp_attr_info_get(key);
    if (!info || !info->names || code < 0) return "?";
    for (int i = 0; info->names[i]; i++)
        if (i == code) return info->names[i];
    return "?";
}

int tp_attr_enum_code(tp_attr_key key, const char *name, size_t length) {
    const tp_attr_info *info = tp_attr_info_get(key);
    if (!info || !info->names) return -1;
    for (int i = 0; info->names[i]; i++)
        if (strlen(info->names[i]) == length && strncmp(info->names[i], name, length) == 0)
            return i;
    return -1;
}
