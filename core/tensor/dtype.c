/* dtypes: names, element sizes, categories and the promotion rule of
 * tensor.h (bool < integer < floating; inside a category, the wider). This
 * file owns nothing else: per-op dtype rules live with the ops. */
#include <string.h>

#include "base/error.h"
#include "tensorplay/tensor.h"

typedef enum dtype_category {
    CATEGORY_BOOL = 0,
    CATEGORY_INTEGER = 1,
    CATEGORY_FLOAT = 2
} dtype_category;

typedef struct dtype_info {
    const char *name;
    size_t size;
    dtype_category category;
} dtype_info;

static const dtype_info dtype_table[TP_DTYPE_COUNT] = {
    [TP_F32] = {"f32", 4, CATEGORY_FLOAT},   [TP_F64] = {"f64", 8, CATEGORY_FLOAT},
    [TP_I32] = {"i32", 4, CATEGORY_INTEGER}, [TP_I64] = {"i64", 8, CATEGORY_INTEGER},
    [TP_BOOL] = {"bool", 1, CATEGORY_BOOL},  [TP_F16] = {"f16", 2, CATEGORY_FLOAT},
    [TP_BF16] = {"bf16", 2, CATEGORY_FLOAT},
};

static int dtype_valid(tp_dtype dtype) {
    return (unsigned)dtype < TP_DTYPE_COUNT;
}

const char *tp_dtype_name(tp_dtype dtype) {
    return dtype_valid(dtype) ? dtype_table[dtype].name : "?";
}

size_t tp_dtype_size(tp_dtype dtype) {
    return dtype_valid(dtype) ? dtype_table[dtype].size : 0;
}

tp_status tp_dtype_from_name(const char *name, tp_dtype *out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_dtype_from_name: out is NULL");
    for (int i = 0; name && i < TP_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (tp_dtype)i;
            return TP_OK;
        }
    }
    return tp_error_set(TP_ERR_NOT_FOUND,
                        "unknown dtype '%s'; expected one of f32, f64, i32, i64, bool, f16, bf16",
                        name ? name : "(null)");
}

bool tp_dtype_is_float(tp_dtype dtype) {
    return dtype_valid(dtype) && dtype_table[dtype].category == CATEGORY_FLOAT;
}

bool tp_dtype_is_integer(tp_dtype dtype) {
    return dtype_valid(dtype) && dtype_table[dtype].category == CATEGORY_INTEGER;
}

/* The higher category wins; inside one category the wider dtype, and two
 * different floats of one width (f16, bf16) meet in f32, which holds both
 * exactly. An invalid dtype gives TP_DTYPE_COUNT, which every caller's dtype
 * check rejects. */
tp_dtype tp_dtype_promote(tp_dtype a, tp_dtype b) {
    if (!dtype_valid(a) || !dtype_valid(b)) return TP_DTYPE_COUNT;
    const dtype_info *info_a = &dtype_table[a], *info_b = &dtype_table[b];
    if (info_a->category != info_b->category) return info_a->category > info_b->category ? a : b;
    if (a != b && info_a->size == info_b->size) return TP_F32;
    return info_a->size >= info_b->size ? a : b;
}

tp_dtype tp_dtype_compute(tp_dtype dtype) {
    return dtype == TP_F16 || dtype == TP_BF16 ? TP_F32 : dtype;
}
