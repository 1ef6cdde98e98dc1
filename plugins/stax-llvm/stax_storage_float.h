/* stax-llvm — f16/bf16 to f32 on the C side of the plugin (the packed
 * matmul's packing routines), the same widening the IR emitter's loads do
 * (stax_emit_core.c): exact, a NaN keeping its sign and payload. Internal;
 * the element conversions are inline, the run loop is stax_storage_float.c. */
#ifndef STAX_STORAGE_FLOAT_H
#define STAX_STORAGE_FLOAT_H

#include <stdint.h>
#include <string.h>

#include "tensorplay/plugin.h"

static inline float stax_bits_to_float(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* An IEEE binary16 to the f32 of the same value. */
static inline float stax_f16_to_f32(uint16_t half) {
    uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
    uint32_t exponent = (half >> 10) & 0x1Fu, mantissa = half & 0x3FFu;
    if (exponent == 0x1Fu) return stax_bits_to_float(sign | 0x7F800000u | mantissa << 13);
    if (exponent != 0) return stax_bits_to_float(sign | (exponent + 112u) << 23 | mantissa << 13);
    /* zero or subnormal: mantissa * 2^-24, exact in f32 */
    float magnitude = (float)mantissa * 0x1p-24f;
    return sign ? -magnitude : magnitude;
}

/* A bfloat16's bits are the top half of the f32's. */
static inline float stax_bf16_to_f32(uint16_t bf16) {
    return stax_bits_to_float((uint32_t)bf16 << 16);
}

/* n elements of `in`, `stride` apart, widened into out[0..n): F16C's
 * vcvtph2ps on contiguous f16 where the CPU has it (the same exact
 * widening), else element by element. */
void stax_storage_floats_to_f32(int32_t dtype, const uint16_t *in, int64_t stride, float *out,
                                int64_t n);

#endif
