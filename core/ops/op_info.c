/* The public view of the op table (tp_op_count, tp_op_describe): what a
 * binding needs to generate one function per op without a list of its own.
 * Reads op_table.c's table only; owns nothing.
 */
#include <stddef.h>
#include <string.h>

#include "../base/error.h"
#include "attr_defaults.h"
#include "op_table.h"
#include "tensorplay/ops.h"

int tp_op_count(void) {
    return TP_OP_COUNT;
}

tp_status tp_op_describe(int op_id, tp_op_info *out) {
    if (!out || out->struct_size < offsetof(tp_op_info, name) + sizeof out->name)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_op_describe: out is NULL or its struct_size is too small "
                            "(initialise it with TP_OP_INFO_INIT)");
    if (op_id < 0 || op_id >= TP_OP_COUNT)
        return tp_error_set(TP_ERR_NOT_FOUND, "tp_op_describe: no op %d (ids are 0 to %d)", op_id,
                            TP_OP_COUNT - 1);
    const tp_op_def *op = tp_op_get((tp_op_id)op_id);
    tp_op_info info = {
        .struct_size = out->struct_size,
        .name = op->name,
        .kind = tp_op_kind_name(op->kind),
        .min_arity = op->min_arity,
        .max_arity = op->max_arity,
        .attr_mask = op->attr_mask,
    };
    size_t size = out->struct_size < sizeof info ? out->struct_size : sizeof info;
    memcpy(out, &info, size);
    return TP_OK;
}

const char *tp_op_attribute_default(int op_id, tp_attr_key key) {
    if (op_id < 0 || op_id >= TP_OP_COUNT) return NULL;
    return tp_op_def_attr_default(tp_op_get((tp_op_id)op_id), key);
}
