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
    switch (key) {
    case TP_ATTR_AXES:
    case TP_ATTR_SHAPE:
    case TP_ATTR_PERM:
    case TP_ATTR_KERNEL_SHAPE:
    case TP_ATTR_STRIDES:
    case TP_ATTR_PADS:
    case TP_ATTR_DILATIONS:
    case TP_ATTR_OUTPUT_PADDING:
        return ints_equal(a, b, key);
    case TP_ATTR_KEEPDIM:
    case TP_ATTR_CEIL_MODE:
    case TP_ATTR_COUNT_INCLUDE_PAD:
        return tp_attrs_bool(a, key) == tp_attrs_bool(b, key);
    case TP_ATTR_GROUP:
        return a->group == b->group;
    case TP_ATTR_AXIS:
        return a->axis == b->axis;
    case TP_ATTR_DIM0:
        return a->dim0 == b->dim0;
    case TP_ATTR_DIM1:
        return a->dim1 == b->dim1;
    case TP_ATTR_START:
        return a->start == b->start;
    case TP_ATTR_STOP:
        return a->stop == b->stop;
    case TP_ATTR_STEP:
        return a->step == b->step;
    case TP_ATTR_RANGE_START:
        return doubles_identical(a->range_start, b->range_start);
    case TP_ATTR_RANGE_STOP:
        return doubles_identical(a->range_stop, b->range_stop);
    case TP_ATTR_RANGE_STEP:
        return doubles_identical(a->range_step, b->range_step);
    case TP_ATTR_DTYPE:
        return a->dtype == b->dtype;
    case TP_ATTR_VALUE:
        return doubles_identical(a->value, b->value);
    case TP_ATTR_EPS:
        return doubles_identical(a->eps, b->eps);
    case TP_ATTR_APPROXIMATE:
        return a->approximate == b->approximate;
    case TP_ATTR_BETA:
        return doubles_identical(a->beta, b->beta);
    case TP_ATTR_THRESHOLD:
        return doubles_identical(a->threshold, b->threshold);
    case TP_ATTR_DATA:
        return a->data == b->data;
    case TP_ATTR_KEY_COUNT:
        break;
    }
    return false;
}

bool tp_ir_attr_is_default(const tp_attrs *attrs, tp_attr_key key) {
    static const tp_attrs defaults = TP_ATTRS_INIT;
    return tp_ir_attr_equal(attrs, &defaults, key);
}

void tp_ir_attr_copy(tp_attrs *dst, const tp_attrs *src, tp_attr_key key) {
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
    switch (key) {
    case TP_ATTR_KEEPDIM:
    case TP_ATTR_CEIL_MODE:
    case TP_ATTR_COUNT_INCLUDE_PAD:
        *tp_attrs_bool_field(dst, key) = tp_attrs_bool(src, key);
        break;
    case TP_ATTR_GROUP:
        dst->group = src->group;
        break;
    case TP_ATTR_AXIS:
        dst->axis = src->axis;
        break;
    case TP_ATTR_DIM0:
        dst->dim0 = src->dim0;
        break;
    case TP_ATTR_DIM1:
        dst->dim1 = src->dim1;
        break;
    case TP_ATTR_START:
        dst->start = src->start;
        break;
    case TP_ATTR_STOP:
        dst->stop = src->stop;
        break;
    case TP_ATTR_STEP:
        dst->step = src->step;
        break;
    case TP_ATTR_RANGE_START:
        dst->range_start = src->range_start;
        break;
    case TP_ATTR_RANGE_STOP:
        dst->range_stop = src->range_stop;
        break;
    case TP_ATTR_RANGE_STEP:
        dst->range_step = src->range_step;
        break;
    case TP_ATTR_DTYPE:
        dst->dtype = src->dtype;
        break;
    case TP_ATTR_VALUE:
        dst->value = src->value;
        break;
    case TP_ATTR_EPS:
        dst->eps = src->eps;
        break;
    case TP_ATTR_APPROXIMATE:
        dst->approximate = src->approximate;
        break;
    case TP_ATTR_BETA:
        dst->beta = src->beta;
        break;
    case TP_ATTR_THRESHOLD:
        dst->threshold = src->threshold;
        break;
    case TP_ATTR_DATA:
        dst->data = src->data;
        break;
    default:
        break;
    }
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
