/* What each attribute key is: its .tpir name and value type. Used by the
 * printer, the parser, the verifier and the plugin graph view, so that an
 * attribute is described once. Internal. */
#ifndef TP_CORE_OPS_ATTR_INFO_H
#define TP_CORE_OPS_ATTR_INFO_H

#include "tensorplay/attrs.h"

typedef enum tp_attr_type {
    TP_ATTR_TYPE_INTS,        /* list of int64 (axes, shape, perm): "[1, -1]" */
    TP_ATTR_TYPE_BOOL,        /* "true" / "false" */
    TP_ATTR_TYPE_INT,         /* int64; TP_SLICE_END prints as "end" */
    TP_ATTR_TYPE_FLOAT,       /* double, printed with %.17g (round-trips exactly) */
    TP_ATTR_TYPE_DTYPE,       /* "f32" ... */
    TP_ATTR_TYPE_APPROXIMATE, /* "none" / "tanh" */
    TP_ATTR_TYPE_TENSOR,      /* constant payload: "[1, 2, 3]" flat, C order */
} tp_attr_type;

typedef struct tp_attr_info {
    tp_attr_key key;
    const char *name;
    tp_attr_type type;
} tp_attr_info;

const tp_attr_info *tp_attr_info_get(tp_attr_key key);

/* Reads the list field of an INTS attribute: count and pointer to elements. */
const int64_t *tp_attrs_ints(const tp_attrs *attrs, tp_attr_key key, int32_t *count_out);
/* Writable access for the parser (NULL if `key` is not an INTS key). */
int64_t *tp_attrs_ints_mut(tp_attrs *attrs, tp_attr_key key, int32_t **count_out);
/* The field of a BOOL attribute (NULL / false if `key` is not a BOOL key). */
bool *tp_attrs_bool_field(tp_attrs *attrs, tp_attr_key key);
bool tp_attrs_bool(const tp_attrs *attrs, tp_attr_key key);

#endif
