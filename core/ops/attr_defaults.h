/* Attribute defaults: the value an op's attribute takes when .tpir leaves it
 * out, also shown by the op reference and used by the Python bindings
 * (through tp_op_attribute_default in ops.h). Internal. */
#ifndef TP_CORE_OPS_ATTR_DEFAULTS_H
#define TP_CORE_OPS_ATTR_DEFAULTS_H

#include "op_table.h"

/* The default is taken from the node's written result type: its dtype, or its
 * dims as `shape` when they are all static sizes. */
#define TP_ATTR_DEFAULT_FROM_RESULT "(from the result type)"

/* The default of attribute `key` of `op`, as the text of a .tpir attribute
 * value ("false", "-1", "end", "[]", ...), TP_ATTR_DEFAULT_FROM_RESULT, or
 * NULL when the attribute is required (or `op` does not read `key`). */
const char *tp_op_def_attr_default(const tp_op_def *op, tp_attr_key key);

#endif
