/* stax-llvm — f16/bf16 element conversions for the C side of the plugin
 * (the packed matmul's packing routines), the same conversions the IR
 * emitter's loads and stores use (stax_emit_core.c): widening is exact, a
 * NaN keeps its sign and payload. Internal; header-only so that the packing
 * loops inline them. */
#ifndef STAX_STORAGE_FLOAT_H
#define STAX_STORAGE_FLOAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define STAX_HAVE_F16C_PATH 1
#endif

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

static inline float stax_storage_float_to_f32(int32_t dtype, uint16_t bits) {
    return dtype == TP_PLUGIN_F16 ? stax_f16_to_f32(bits) : stax_bf16_to_f32(bits);
}

/* n elements of `in`, `stride` apart, widened into out[0..n): F16C's
 * vcvtph2ps on contiguous f16 where the CPU has it (the same exact
 * widening), else element by element. */
void stax_storage_floats_to_f32(int32_t dtype, const uint16_t *in, int64_t stride, float *out,
                                int64_t n);

#endif
