/* Small helpers shared by the IR files: name rules, type comparison and
 * checking, per-key attribute access, and "did you mean" over op names.
 * Owns no state. */
#include <string.h>

#include "base/error.h"
#include "graph_internal.h"
#include "ops/attr_info.h"

static bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool tp_ir_is_identifier(const char *name) {
    if (!name || !is_letter(name[0])) return false;
    size_t length = 1;
    for (; name[length]; length++)
        if (!is_letter(name[length]) && !is_digit(name[length])) return false;
    return length <= TP_IR_NAME_MAX;
}

/* Words of letters, digits and '_' joined by single dots ("x", "12",
 * "encoder.layer.0.weight"): PyTorch's state-dict names as they are. */
bool tp_ir_is_value_name(const char *name) {
    if (!name || !name[0]) return false;
    size_t length = 0;
    bool word_started = false;
    for (; name[length]; length++) {
        char c = name[length];
        if (c == '.') {
            if (!word_started) return false; /* leading or doubled dot */
            word_started = false;
        } else if (is_letter(c) || is_digit(c)) {
            word_started = true;
        } else {
            return false;
        }
    }
    return word_started && length <= TP_IR_NAME_MAX; /* no trailing dot */
}

bool tp_ir_type_equal(const tp_type *a, const tp_type *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

tp_status tp_ir_type_check(const tp_graph *graph, const tp_type *type) {
    if ((unsigned)type->dtype >= TP_DTYPE_COUNT)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "invalid dtype %d", (int)type->dtype);
    if (type->ndim < 0 || type->ndim > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "rank %d is outside 0..%d", (int)type->ndim,
                            TP_MAX_DIMS);
    for (int i = 0; i < type->ndim; i++) {
        int64_t dim = type->dims[i];
        if (TP_DIM_IS_SYMBOL(dim) && (dim < TP_DIM_SYMBOL(TP_IR_MAX_SYMBOLS) ||
                                      TP_DIM_SYMBOL_INDEX(dim) >= (graph ? graph->num_symbols : 0)))
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "dimension %d is %lld, which names no symbol of the graph "
                                "(create symbols with tp_graph_symbol)",
                                i, (long long)dim);
    }
    return TP_OK;
}

static bool ints_equal(const tp_attrs *a, const tp_attrs *b, tp_attr_key key) {
    int32_t count_a, count_b;
    const int64_t *values_a = tp_attrs_ints(a, key, &count_a);
    const int64_t *values_b = tp_attrs_ints(b, key, &count_b);
    if (count_a != count_b) return false;
    for (int32_t i = 0; i < count_a && i < TP_MAX_DIMS; i++)
        if (values_a[i] != values_b[i]) return false;
    return true;
}

/* Same bits: distinguishes -0.0 from 0.0 and lets NaN equal itself. */
static bool doubles_identical(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

bool tp_ir_attr_equal(const tp_attrs *a, const tp_attrs *b, tp_attr_key key) {
    tp_attrs *left = (tp_attrs *)a, *right = (tp_attrs *)b; /* read only */
    int32_t *count = NULL;
    if (tp_attrs_ints_mut(left, key, &count)) return ints_equal(a, b, key);
    const int64_t *int_a = tp_attrs_int_field(left, key);
    if (int_a) return *int_a == *tp_attrs_int_field(right, key);
    const double *float_a = tp_attrs_float_field(left, key);
    if (float_a) return doubles_identical(*float_a, *tp_attrs_float_field(right, key));
    const bool *bool_a = tp_attrs_bool_field(left, key);
    if (bool_a) return *bool_a == *tp_attrs_bool_field(right, key);
    if (tp_attrs_enum_get(a, key) >= 0)
        return tp_attrs_enum_get(a, key) == tp_attrs_enum_get(b, key);
    if (key == TP_ATTR_DTYPE) return a->dtype == b->dtype;
    if (key == TP_ATTR_DATA) return a->data == b->data;
    return false;
}

bool tp_ir_attr_is_default(const tp_attrs *attrs, tp_attr_key key) {
    static const tp_attrs defaults = TP_ATTRS_INIT;
    return tp_ir_attr_equal(attrs, &defaults, key);
}

void tp_ir_attr_copy(tp_attrs *dst, const tp_attrs *src, tp_attr_key key) {
    tp_attrs *from = (tp_attrs *)src; /* read only */
    int32_t *dst_count = NULL;
    int64_t *dst_values = tp_attrs_ints_mut(dst, key, &dst_count);
    if (dst_values) {
        int32_t count;
        const int64_t *values = tp_attrs_ints(src, key, &count);
        if (count < 0) count = 0;
        if (count > TP_MAX_DIMS) count = TP_MAX_DIMS;
        memcpy(dst_values, values, (size_t)count * sizeof *values);
        *dst_count = count;
        return;
    }
    int64_t *int_field = tp_attrs_int_field(dst, key);
    double *float_field = tp_attrs_float_field(dst, key);
    bool *bool_field = tp_attrs_bool_field(dst, key);
    if (int_field)
        *int_field = *tp_attrs_int_field(from, key);
    else if (float_field)
        *float_field = *tp_attrs_float_field(from, key);
    else if (bool_field)
        *bool_field = *tp_attrs_bool_field(from, key);
    else if (tp_attrs_enum_get(src, key) >= 0)
        tp_attrs_enum_set(dst, key, tp_attrs_enum_get(src, key));
    else if (key == TP_ATTR_DTYPE)
        dst->dtype = src->dtype;
    else if (key == TP_ATTR_DATA)
        dst->data = src->data;
}

/* Levenshtein distance, capped: names longer than 32 bytes are never close. */
static int edit_distance(const char *a, const char *b) {
    size_t length_a = strlen(a), length_b = strlen(b);
    if (length_a > 32 || length_b > 32) return 1000;
    int row[33];
    for (size_t j = 0; j <= length_b; j++) row[j] = (int)j;
    for (size_t i = 1; i <= length_a; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= length_b; j++) {
            int above = row[j];
            int best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[length_b];
}

const char *tp_ir_suggest_op(const char *name) {
    const char *best = NULL;
    int best_distance = 1000;
    for (int i = 0; i < TP_OP_COUNT; i++) {
        int distance = edit_distance(name, tp_op_table[i].name);
        if (distance < best_distance) {
            best_distance = distance;
            best = tp_op_table[i].name;
        }
    }
    /* A typo changes a few characters; more than a third of the name is not one. */
    size_t length = strlen(name);
    int limit = length <= 3 ? 1 : (int)(length + 2) / 3;
    return best_distance <= limit ? best : NULL;
}
