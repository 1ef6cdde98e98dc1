/* Axis normalisation and message wording shared by the shape rules
 * (op_args.h). */
#include "op_args.h"

#include <stdio.h>

#include "../base/error.h"

tp_status tp_axis_normalize(const char *op_name, const char *what, int64_t axis, int rank,
                            const tp_type *type, int *axis_out) {
    if (axis < -(int64_t)rank || axis >= rank) {
        char text[TP_DESCRIBE_MAX];
        if (rank == 0)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: %s %lld is out of range for %s (a 0-d value has no axes)",
                                op_name, what, (long long)axis, tp_type_text(type, text));
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "%s: %s %lld is out of range for %s (expected %d..%d)", op_name, what,
                            (long long)axis, tp_type_text(type, text), -rank, rank - 1);
    }
    *axis_out = (int)(axis < 0 ? axis + rank : axis);
    return TP_OK;
}

char *tp_type_text(const tp_type *type, char buf[TP_DESCRIBE_MAX]) {
    return tp_type_describe(NULL, type, buf, TP_DESCRIBE_MAX);
}

char *tp_ints_text(const int64_t *values, int count, char buf[TP_DESCRIBE_MAX]) {
    size_t used = 0;
    buf[used++] = '[';
    for (int i = 0; i < count && used < TP_DESCRIBE_MAX; i++) {
        int written = snprintf(buf + used, TP_DESCRIBE_MAX - used, "%s%lld", i ? ", " : "",
                               (long long)values[i]);
        if (written < 0) break;
        used += (size_t)written;
    }
    if (used < TP_DESCRIBE_MAX - 1) {
        buf[used] = ']';
        buf[used + 1] = '\0';
    } else {
        buf[TP_DESCRIBE_MAX - 1] = '\0';
    }
    return buf;
}

bool tp_sizes_product(const int64_t *sizes, int count, int64_t *product_out) {
    int64_t product = 1;
    for (int i = 0; i < count; i++)
        if (__builtin_mul_overflow(product, sizes[i], &product)) return false;
    *product_out = product;
    return true;
}
