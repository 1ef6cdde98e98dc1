/* Reading and writing one element of any dtype as a double or an int64, for
 * reference kernels that compute in a wider type than they store (creation
 * ops, composites). Internal. Conversions to integers truncate toward zero;
 * callers keep values in range (a shape rule checks what a user can reach).
 * f16 and bf16 round once, to nearest even, from the double. */
#ifndef TP_CORE_OPS_ELEMENT_H
#define TP_CORE_OPS_ELEMENT_H

#include <stdint.h>

#include "tensorplay/tensor.h"

static inline double tp_element_load_f64(const void *data, tp_dtype dtype, int64_t index) {
    switch (dtype) {
    case TP_F32:
        return ((const float *)data)[index];
    case TP_F64:
        return ((const double *)data)[index];
    case TP_I32:
        return ((const int32_t *)data)[index];
    case TP_I64:
        return (double)((const int64_t *)data)[index];
    case TP_BOOL:
        return ((const uint8_t *)data)[index] != 0;
    case TP_F16:
        return tp_f16_to_f32(((const uint16_t *)data)[index]);
    case TP_BF16:
        return tp_bf16_to_f32(((const uint16_t *)data)[index]);
    default:
        return 0.0;
    }
}

static inline int64_t tp_element_load_i64(const void *data, tp_dtype dtype, int64_t index) {
    switch (dtype) {
    case TP_I32:
        return ((const int32_t *)data)[index];
    case TP_I64:
        return ((const int64_t *)data)[index];
    case TP_BOOL:
        return ((const uint8_t *)data)[index] != 0;
    default:
        return (int64_t)tp_element_load_f64(data, dtype, index);
    }
}

static inline void tp_element_store_f64(void *data, tp_dtype dtype, int64_t index, double value) {
    switch (dtype) {
    case TP_F32:
        ((float *)data)[index] = (float)value;
        break;
    case TP_F64:
        ((double *)data)[index] = value;
        break;
    case TP_I32:
        ((int32_t *)data)[index] = (int32_t)value;
        break;
    case TP_I64:
        ((int64_t *)data)[index] = (int64_t)value;
        break;
    case TP_BOOL:
        ((uint8_t *)data)[index] = value != 0;
        break;
    case TP_F16: /* one rounding, from the double */
        ((uint16_t *)data)[index] = tp_f16_from_f64(value);
        break;
    case TP_BF16:
        ((uint16_t *)data)[index] = tp_bf16_from_f64(value);
        break;
    default:
        break;
    }
}

/* Stores an integer; narrower integer dtypes wrap (two's complement). */
static inline void tp_element_store_i64(void *data, tp_dtype dtype, int64_t index, int64_t value) {
    switch (dtype) {
    case TP_I32:
        ((int32_t *)data)[index] = (int32_t)(uint32_t)(uint64_t)value;
        break;
    case TP_I64:
        ((int64_t *)data)[index] = value;
        break;
    case TP_BOOL:
        ((uint8_t *)data)[index] = value != 0;
        break;
    default:
        tp_element_store_f64(data, dtype, index, (double)value);
        break;
    }
}

#endif
