/* The cse pass (common-subexpression elimination): a node equal to an
 * earlier one — same op, same operands, same attributes — is replaced by the
 * earlier one. Owns the node hashing and equality; nothing else.
 *
 * Equality is exact. Operands compare as new value ids (so merges cascade
 * down a chain in one sweep); for a commutative binary op, add(a, b) equals
 * add(b, a). Attributes compare only where the op table's mask says the op
 * reads them: integer lists by count and elements, doubles bit for bit (so
 * 0.0 and -0.0 differ and a NaN equals the same NaN), and a constant's
 * payload by dtype, shape and bytes — two constants with different data are
 * never merged (the hash samples a large payload; equality reads it all). Every op of the table is
 * pure, so none is excluded.
 */
#include "pass_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "ops/attr_info.h"

static const tp_attrs default_attrs = TP_ATTRS_INIT;

static const tp_attrs *attrs_of(const tp_graph *graph, tp_value_id value) {
    const tp_attrs *attrs = tp_graph_value_attrs(graph, value);
    return attrs ? attrs : &default_attrs;
}

/* The bytes that hold attribute `key` (not TP_ATTR_DATA). */
static void attr_bytes(const tp_attrs *attrs, tp_attr_key key, const void **bytes, size_t *size) {
    switch (key) {
#define FIELD(k, field)                                                                            \
    case k:                                                                                        \
        *bytes = &attrs->field;                                                                    \
        *size = sizeof attrs->field;                                                               \
        return;
        FIELD(TP_ATTR_KEEPDIM, keepdim)
        FIELD(TP_ATTR_AXIS, axis)
        FIELD(TP_ATTR_DIM0, dim0)
        FIELD(TP_ATTR_DIM1, dim1)
        FIELD(TP_ATTR_START, start)
        FIELD(TP_ATTR_STOP, stop)
        FIELD(TP_ATTR_STEP, step)
        FIELD(TP_ATTR_RANGE_START, range_start)
        FIELD(TP_ATTR_RANGE_STOP, range_stop)
        FIELD(TP_ATTR_RANGE_STEP, range_step)
        FIELD(TP_ATTR_DTYPE, dtype)
        FIELD(TP_ATTR_VALUE, value)
        FIELD(TP_ATTR_EPS, eps)
        FIELD(TP_ATTR_APPROXIMATE, approximate)
        FIELD(TP_ATTR_BETA, beta)
        FIELD(TP_ATTR_THRESHOLD, threshold)
        FIELD(TP_ATTR_GROUP, group)
        FIELD(TP_ATTR_CEIL_MODE, ceil_mode)
        FIELD(TP_ATTR_COUNT_INCLUDE_PAD, count_include_pad)
        FIELD(TP_ATTR_MODE, mode)
        FIELD(TP_ATTR_MIN, min)
        FIELD(TP_ATTR_MAX, max)
        FIELD(TP_ATTR_K, k)
        FIELD(TP_ATTR_LARGEST, largest)
        FIELD(TP_ATTR_EXCLUSIVE, exclusive)
        FIELD(TP_ATTR_REVERSE, reverse)
        FIELD(TP_ATTR_COORDINATES, coordinates)
        FIELD(TP_ATTR_ROUNDING, rounding)
        FIELD(TP_ATTR_SCALE_H, scale_h)
        FIELD(TP_ATTR_SCALE_W, scale_w)
#undef FIELD
    case TP_ATTR_AXES:
        *bytes = attrs->axes;
        *size = (size_t)attrs->naxes * sizeof attrs->axes[0];
        return;
    case TP_ATTR_SHAPE:
        *bytes = attrs->shape;
        *size = (size_t)attrs->shape_ndim * sizeof attrs->shape[0];
        return;
    case TP_ATTR_PERM:
        *bytes = attrs->perm;
        *size = (size_t)attrs->nperm * sizeof attrs->perm[0];
        return;
    case TP_ATTR_KERNEL_SHAPE:
    case TP_ATTR_STRIDES:
    case TP_ATTR_PADS:
    case TP_ATTR_DILATIONS:
    case TP_ATTR_OUTPUT_PADDING: {
        int32_t count;
        *bytes = tp_attrs_ints(attrs, key, &count);
        *size = (size_t)count * sizeof(int64_t);
        return;
    }
    case TP_ATTR_PAD_BEFORE:
        *bytes = attrs->pad_before;
        *size = (size_t)attrs->npad_before * sizeof attrs->pad_before[0];
        return;
    case TP_ATTR_PAD_AFTER:
        *bytes = attrs->pad_after;
        *size = (size_t)attrs->npad_after * sizeof attrs->pad_after[0];
        return;
    default:
        *bytes = NULL;
        *size = 0;
        return;
    }
}

static uint64_t hash_bytes(uint64_t hash, const void *bytes, size_t size) {
    const unsigned char *p = bytes;
    for (size_t i = 0; i < size; i++) hash = (hash ^ p[i]) * 1099511628211ull;
    return hash;
}

static uint64_t hash_u64(uint64_t hash, uint64_t value) {
    return hash_bytes(hash, &value, sizeof value);
}

/* A constant's payload is hashed by dtype, shape, size and a sample of its
 * bytes (all of them up to FULL_HASH_BYTES, else SAMPLED_WORDS words spread
 * evenly plus the last one): a model's weights are megabytes, and hashing
 * every byte made cse the slowest pass by far. The hash only picks the
 * candidates; equality (tensor_equal) still compares every byte, so two
 * constants that differ outside the sample are never merged. */
#define FULL_HASH_BYTES 1024
#define SAMPLED_WORDS   64

static uint64_t hash_tensor(uint64_t hash, const tp_tensor *tensor) {
    if (!tensor) return hash_u64(hash, 0);
    hash = hash_u64(hash, (uint64_t)tp_tensor_dtype(tensor));
    hash =
        hash_bytes(hash, tp_tensor_shape(tensor), (size_t)tp_tensor_ndim(tensor) * sizeof(int64_t));
    const unsigned char *data = tp_tensor_data(tensor);
    size_t size = tp_tensor_nbytes(tensor);
    hash = hash_u64(hash, size);
    if (size <= FULL_HASH_BYTES) return hash_bytes(hash, data, size);
    size_t stride = (size - sizeof(uint64_t)) / SAMPLED_WORDS;
    for (size_t i = 0; i < SAMPLED_WORDS; i++)
        hash = hash_bytes(hash, data + i * stride, sizeof(uint64_t));
    return hash_bytes(hash, data + size - sizeof(uint64_t), sizeof(uint64_t));
}

static bool tensor_equal(const tp_tensor *a, const tp_tensor *b) {
    if (a == b) return true;
    if (!a || !b) return false;
    if (tp_tensor_dtype(a) != tp_tensor_dtype(b) || tp_tensor_ndim(a) != tp_tensor_ndim(b))
        return false;
    if (memcmp(tp_tensor_shape(a), tp_tensor_shape(b),
               (size_t)tp_tensor_ndim(a) * sizeof(int64_t)) != 0)
        return false;
    const void *data_a = tp_tensor_data(a), *data_b = tp_tensor_data(b);
    return data_a == data_b || memcmp(data_a, data_b, tp_tensor_nbytes(a)) == 0;
}

static uint64_t hash_attrs(uint64_t hash, const tp_op_def *op, const tp_attrs *attrs) {
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key))) continue;
        if (key == TP_ATTR_DATA) {
            hash = hash_tensor(hash, attrs->data);
            continue;
        }
        const void *bytes;
        size_t size;
        attr_bytes(attrs, (tp_attr_key)key, &bytes, &size);
        hash = hash_u64(hash, size);
        hash = hash_bytes(hash, bytes, size);
    }
    return hash;
}

static bool attrs_equal(const tp_op_def *op, const tp_attrs *a, const tp_attrs *b) {
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key))) continue;
        if (key == TP_ATTR_DATA) {
            if (!tensor_equal(a->data, b->data)) return false;
            continue;
        }
        const void *bytes_a, *bytes_b;
        size_t size_a, size_b;
        attr_bytes(a, (tp_attr_key)key, &bytes_a, &size_a);
        attr_bytes(b, (tp_attr_key)key, &bytes_b, &size_b);
        if (size_a != size_b || memcmp(bytes_a, bytes_b, size_a) != 0) return false;
    }
    return true;
}

/* A node about to be added: op, operands (new ids) and attributes. */
typedef struct cse_key {
    const tp_op_def *op;
    const tp_value_id *operands;
    int count;
    const tp_attrs *attrs;
} cse_key;

static bool is_symmetric(const cse_key *key) {
    return (key->op->flags & TP_OPF_COMMUTATIVE) && key->count == 2;
}

static uint64_t hash_key(const cse_key *key) {
    uint64_t hash = hash_u64(1469598103934665603ull, (uint64_t)key->op->id);
    hash = hash_u64(hash, (uint64_t)key->count);
    if (is_symmetric(key)) {
        tp_value_id low = key->operands[0] < key->operands[1] ? key->operands[0] : key->operands[1];
        tp_value_id high = key->operands[0] ^ key->operands[1] ^ low;
        hash = hash_u64(hash_u64(hash, (uint64_t)low), (uint64_t)high);
    } else {
        for (int i = 0; i < key->count; i++) hash = hash_u64(hash, (uint64_t)key->operands[i]);
    }
    return hash_attrs(hash, key->op, key->attrs);
}

/* Whether the existing node `value` of `graph` computes the same as `key`. */
static bool node_matches(const tp_graph *graph, tp_value_id value, const cse_key *key) {
    if (tp_pass_value_op(graph, value) != key->op) return false;
    if (tp_graph_value_num_operands(graph, value) != key->count) return false;
    bool same = true;
    for (int i = 0; i < key->count && same; i++)
        same = tp_graph_value_operand(graph, value, i) == key->operands[i];
    if (!same && is_symmetric(key))
        same = tp_graph_value_operand(graph, value, 0) == key->operands[1] &&
               tp_graph_value_operand(graph, value, 1) == key->operands[0];
    return same && attrs_equal(key->op, attrs_of(graph, value), key->attrs);
}

/* Open-addressing set of new node ids, keyed by their cse_key hash. */
typedef struct cse_table {
    tp_value_id *slots;
    uint64_t *hashes;
    size_t mask;
} cse_table;

static tp_status table_init(cse_table *table, int num_values) {
    size_t size = 16;
    while (size < (size_t)num_values * 2) size *= 2;
    table->mask = size - 1;
    table->slots = tp_malloc(size * sizeof *table->slots);
    table->hashes = tp_malloc(size * sizeof *table->hashes);
    if (!table->slots || !table->hashes) {
        free(table->slots);
        free(table->hashes);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "cse: out of memory for a table of %zu", size);
    }
    for (size_t i = 0; i < size; i++) table->slots[i] = TP_NO_VALUE;
    return TP_OK;
}

/* The existing equal node, or TP_NO_VALUE with *slot_out the free slot. */
static tp_value_id table_find(const cse_table *table, const tp_graph *graph, const cse_key *key,
                              uint64_t hash, size_t *slot_out) {
    size_t slot = (size_t)hash & table->mask;
    for (; table->slots[slot] != TP_NO_VALUE; slot = (slot + 1) & table->mask)
        if (table->hashes[slot] == hash && node_matches(graph, table->slots[slot], key))
            return table->slots[slot];
    *slot_out = slot;
    return TP_NO_VALUE;
}

static tp_status cse_node(tp_rewrite *rewrite, cse_table *table, tp_value_id old, bool *changed) {
    tp_value_id operands[TP_PASS_MAX_OPERANDS];
    cse_key key = {.op = tp_pass_value_op(rewrite->in, old),
                   .operands = operands,
                   .count = tp_rewrite_mapped_operands(rewrite, old, operands),
                   .attrs = attrs_of(rewrite->in, old)};
    if (!key.op)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "value %%%s has unknown op '%s'",
                            tp_graph_value_name(rewrite->in, old),
                            tp_graph_value_op(rewrite->in, old));
    uint64_t hash = hash_key(&key);
    size_t slot = 0;
    tp_value_id existing = table_find(table, rewrite->out, &key, hash, &slot);
    if (existing != TP_NO_VALUE) {
        rewrite->map[old] = existing;
        *changed = true;
        return TP_OK;
    }
    TP_TRY(tp_rewrite_node(rewrite, old, operands));
    table->slots[slot] = rewrite->map[old];
    table->hashes[slot] = hash;
    return TP_OK;
}

tp_status tp_pass_cse(const tp_graph *in, const tp_pass_context *context, tp_graph **out,
                      bool *changed) {
    *out = NULL;
    *changed = false;
    tp_rewrite rewrite;
    TP_TRY(tp_rewrite_begin(in, &rewrite));
    cse_table table;
    tp_status status = table_init(&table, rewrite.num_values);
    if (status != TP_OK) {
        tp_rewrite_abort(&rewrite);
        return status;
    }
    for (tp_value_id v = 0; v < rewrite.num_values && status == TP_OK; v++)
        status = tp_graph_value_op(in, v) ? cse_node(&rewrite, &table, v, changed)
                                          : tp_rewrite_input(&rewrite, v);
    free(table.slots);
    free(table.hashes);
    if (status != TP_OK) {
        tp_rewrite_abort(&rewrite);
        return tp_error_prefix(status, "cse: ");
    }
    return tp_rewrite_finish(&rewrite, out);
}
