/* The tp_graph struct, shared inside libtensorplay by the IR files (builder,
 * verifier, printer, parser, interpreter) and later by passes, capture and
 * the registry's graph view. Nothing outside core/ may include this.
 *
 * Layout: one array of values indexed by tp_value_id. A value is either a
 * graph input (placeholder) or a node (one op, one result). Ids only grow;
 * a node's operands are ids of values created before it (the verifier checks
 * this, the builder guarantees it). The input list and the output list hold
 * ids into the value array. Dimension symbols are interned names; a type dim
 * < 0 is TP_DIM_SYMBOL(index) into `symbols`.
 *
 * Ownership: the graph owns every string and array here and one reference of
 * each constant payload (attrs.data of `constant` nodes). Attributes an op
 * does not declare (its attr_mask) hold their TP_ATTRS_INIT defaults; a
 * value whose op declares none stores no tp_attrs at all (a few hundred
 * bytes per node that a million-node graph would otherwise spend on
 * defaults).
 */
#ifndef TP_CORE_IR_GRAPH_INTERNAL_H
#define TP_CORE_IR_GRAPH_INTERNAL_H

#include <stdbool.h>

#include "ops/op_table.h"
#include "tensorplay/graph.h"

/* Limits that keep hostile input (the .tpir parser is fuzzed) bounded. */
#define TP_IR_NAME_MAX     128       /* bytes in a graph, value or symbol name */
#define TP_IR_MAX_VALUES   (1 << 20) /* inputs + nodes */
#define TP_IR_MAX_SYMBOLS  256       /* distinct dimension symbols */
#define TP_IR_MAX_OPERANDS 64        /* the largest max_arity in the op table */
#define TP_IR_MAX_OUTPUTS  (1 << 16) /* values in `return` */
#define TP_IR_MAX_CONSTANT (1 << 24) /* elements in one constant payload */

typedef enum tp_value_kind {
    TP_VALUE_INPUT = 0, /* a graph input (placeholder) */
    TP_VALUE_NODE = 1,  /* the result of one op */
} tp_value_kind;

typedef struct tp_value {
    tp_value_kind kind;
    const tp_op_def *op;   /* NULL for inputs */
    int32_t num_operands;  /* 0 for inputs */
    tp_value_id *operands; /* owned; num_operands ids, each < this value's id */
    tp_attrs *attrs;       /* owned (and its data); NULL when the op takes no attributes
                            * (inputs, add, exp, ...): read it with tp_ir_value_attrs */
    tp_type type;          /* dtype and dims (sizes or symbols) */
    char *name;            /* owned; identifier or decimal number, without '%' */
} tp_value;

struct tp_graph {
    char *name; /* owned identifier */

    tp_value *values; /* num_values entries, capacity value_capacity */
    int32_t num_values, value_capacity;

    tp_value_id *inputs; /* ids of the inputs in declaration order */
    int32_t num_inputs, input_capacity;

    tp_value_id *outputs; /* the `return` list; may repeat a value */
    int32_t num_outputs;

    char **symbols; /* owned symbol names; index = TP_DIM_SYMBOL_INDEX(dim) */
    int32_t num_symbols, symbol_capacity;

    /* Open-addressing table from value name to id (-1 = empty slot);
     * name_slots is a power of two, at least twice num_values. name_hashes
     * holds each slot's name hash, so a probe compares a name only when
     * the hashes agree (a lookup then touches the value array once, or not
     * at all for a new name: what keeps building a million-node graph from
     * being a million cache misses per probe). */
    tp_value_id *name_table;
    uint32_t *name_hashes;
    int32_t name_slots;
};

/* TP_ATTRS_INIT, shared by every value that stores no attributes. */
extern const tp_attrs tp_ir_default_attrs;

/* The value's attributes (the defaults when it stores none). */
static inline const tp_attrs *tp_ir_value_attrs(const tp_value *value) {
    return value->attrs ? value->attrs : &tp_ir_default_attrs;
}

/* The value with this name (without '%'), or TP_NO_VALUE. */
tp_value_id tp_ir_find_value(const tp_graph *graph, const char *name);
/* The symbol with this name as a dim encoding, or 0 (0 is never a symbol). */
int64_t tp_ir_find_symbol(const tp_graph *graph, const char *name);

/* True for [A-Za-z_][A-Za-z0-9_]* of at most TP_IR_NAME_MAX bytes. */
bool tp_ir_is_identifier(const char *name);
/* True for an identifier or a decimal number (automatic names "%7"). */
bool tp_ir_is_value_name(const char *name);

/* True when two types have the same dtype, rank and dims. */
bool tp_ir_type_equal(const tp_type *a, const tp_type *b);
/* Checks dtype, rank, and that dims are sizes >= 0 or symbols of `graph`. */
tp_status tp_ir_type_check(const tp_graph *graph, const tp_type *type);

/* Attribute helpers keyed by tp_attr_key (core/ops/attr_info.h). */
bool tp_ir_attr_is_default(const tp_attrs *attrs, tp_attr_key key);
bool tp_ir_attr_equal(const tp_attrs *a, const tp_attrs *b, tp_attr_key key);
/* Copies field `key` from src to dst (data is not retained here). */
void tp_ir_attr_copy(tp_attrs *dst, const tp_attrs *src, tp_attr_key key);

/* The op name closest to `name` by edit distance, or NULL when nothing is
 * close enough to be a plausible typo. */
const char *tp_ir_suggest_op(const char *name);

#endif
