/* Attribute defaults (attr_defaults.h): one default per key, overridden per
 * op where ops disagree (softmax's axis is the last one, concat's the first).
 * Each text is parsed by the .tpir attribute parser (tests/ir checks that
 * the defaults parse). Each key default equals its TP_ATTRS_INIT field; the
 * per-op overrides do not (TP_ATTRS_INIT's axis is 0): tp_op() reads a
 * tp_attrs as given, and the named C functions take every attribute. */
#include "attr_defaults.h"

#include <stddef.h>

static const char *const key_defaults[TP_ATTR_KEY_COUNT] = {
    [TP_ATTR_AXES] = "[]",
    [TP_ATTR_KEEPDIM] = "false",
    [TP_ATTR_SHAPE] = TP_ATTR_DEFAULT_FROM_RESULT,
    [TP_ATTR_START] = "0",
    [TP_ATTR_STOP] = "end",
    [TP_ATTR_STEP] = "1",
    [TP_ATTR_RANGE_START] = "0",
    [TP_ATTR_RANGE_STEP] = "1",
    [TP_ATTR_DTYPE] = TP_ATTR_DEFAULT_FROM_RESULT,
    [TP_ATTR_EPS] = "1e-05",
    [TP_ATTR_APPROXIMATE] = "none",
    [TP_ATTR_BETA] = "1",
    [TP_ATTR_THRESHOLD] = "20",
    [TP_ATTR_STRIDES] = "[]",
    [TP_ATTR_PADS] = "[]",
    [TP_ATTR_DILATIONS] = "[]",
    [TP_ATTR_GROUP] = "1",
    [TP_ATTR_OUTPUT_PADDING] = "[]",
    [TP_ATTR_CEIL_MODE] = "false",
    [TP_ATTR_COUNT_INCLUDE_PAD] = "false",
};

typedef struct op_default {
    tp_op_id op;
    tp_attr_key key;
    const char *text; /* NULL: required for this op although the key has a default */
} op_default;

static const op_default op_defaults[] = {
    {TP_OP_SOFTMAX, TP_ATTR_AXIS, "-1"},    {TP_OP_LOG_SOFTMAX, TP_ATTR_AXIS, "-1"},
    {TP_OP_LAYER_NORM, TP_ATTR_AXIS, "-1"}, {TP_OP_CONCAT, TP_ATTR_AXIS, "0"},
    {TP_OP_GATHER, TP_ATTR_AXIS, "0"},      {TP_OP_GATHER_ELEMENTS, TP_ATTR_AXIS, "0"},
};

const char *tp_op_def_attr_default(const tp_op_def *op, tp_attr_key key) {
    if (!op || (unsigned)key >= TP_ATTR_KEY_COUNT || !(op->attr_mask & TP_ATTR_BIT(key)))
        return NULL;
    for (size_t i = 0; i < sizeof op_defaults / sizeof op_defaults[0]; i++)
        if (op_defaults[i].op == op->id && op_defaults[i].key == key) return op_defaults[i].text;
    return key_defaults[key];
}
