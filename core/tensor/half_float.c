/* The 16-bit storage formats f16 (IEEE 754 binary16: 1 sign, 5 exponent, 10
 * fraction bits) and bf16 (1 sign, 8 exponent, 7 fraction bits: the top half
 * of an f32): widening to f32 and narrowing from f32/f64. Owns only these
 * conversions; which ops use them is the ops' business (core/ops).
 *
 * Narrowing works on the value, not on bit tricks of one source format: the
 * magnitude is scaled by the quantum (the spacing of the target format at
 * that magnitude, a power of two), so the scaled value is exact in a double
 * and the rounding to an integer (ties to even) is the only rounding. One
 * routine thereby serves both formats and both sources; an f32 is widened to
 * f64 first, which is exact. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensorplay/tensor.h"

typedef struct small_float_format {
    int exponent_bits;
    int fraction_bits;
} small_float_format;

static const small_float_format f16_format = {5, 10};
static const small_float_format bf16_format = {8, 7};

static float float_from_bits(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static uint64_t double_bits(double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

/* A NaN keeps its sign and its top payload bits and is made quiet, as the
 * x86 conversion instructions (F16C, AVX512-BF16) and GPUs do. */
static uint16_t narrow_nan(const small_float_format *format, double value) {
    uint64_t bits = double_bits(value);
    uint16_t sign = (uint16_t)((bits >> 63) << 15);
    int shift = 52 - format->fraction_bits;
    uint16_t exponent_all_ones =
        (uint16_t)(((1u << format->exponent_bits) - 1) << format->fraction_bits);
    uint16_t quiet = (uint16_t)(1u << (format->fraction_bits - 1));
    uint16_t payload = (uint16_t)((bits & 0xFFFFFFFFFFFFFull) >> shift);
    return (uint16_t)(sign | exponent_all_ones | quiet | payload);
}

/* Rounds `value` to the nearest value of `format`, ties to even. */
static uint16_t narrow(const small_float_format *format, double value) {
    if (isnan(value)) return narrow_nan(format, value);
    int fraction_bits = format->fraction_bits;
    int bias = (1 << (format->exponent_bits - 1)) - 1;
    int min_exponent = 1 - bias; /* of the smallest normal */
    uint16_t sign = signbit(value) ? (uint16_t)(1u << 15) : 0;
    uint16_t infinity = (uint16_t)(((1u << format->exponent_bits) - 1) << fraction_bits);
    double magnitude = fabs(value);
    if (isinf(magnitude)) return sign | infinity;
    if (magnitude == 0.0) return sign;

    int binade; /* magnitude in [2^binade, 2^(binade+1)) */
    (void)frexp(magnitude, &binade);
    binade -= 1;
    if (binade < min_exponent) binade = min_exponent;         /* subnormal: the smallest quantum */
    if (binade > bias) return sign | infinity;                /* beyond the largest binade */
    double scaled = ldexp(magnitude, fraction_bits - binade); /* exact */
    double whole = floor(scaled), remainder = scaled - whole;
    uint64_t steps = (uint64_t)whole; /* < 2^(fraction_bits + 1) */
    if (remainder > 0.5 || (remainder == 0.5 && (steps & 1u))) steps++;

    uint64_t implicit_one = 1ull << fraction_bits;
    if (steps < implicit_one) return sign | (uint16_t)steps; /* subnormal (or zero) */
    if (steps == implicit_one << 1) {                        /* rounded up into the next binade */
        steps = implicit_one;
        binade++;
    }
    int biased = binade + bias;
    if (biased >= (1 << format->exponent_bits) - 1) return sign | infinity;
    return (uint16_t)(sign | (uint16_t)((unsigned)biased << fraction_bits) |
                      (uint16_t)(steps - implicit_one));
}

float tp_f16_to_f32(uint16_t bits) {
    uint32_t sign = (uint32_t)(bits >> 15) << 31;
    uint32_t exponent = (bits >> 10) & 0x1Fu, fraction = bits & 0x3FFu;
    if (exponent == 0) { /* zero or subnormal: fraction * 2^-24, exact in f32 */
        float magnitude = (float)fraction * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1F) /* infinity, or NaN with its payload */
        return float_from_bits(sign | 0x7F800000u | (fraction << 13));
    return float_from_bits(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

uint16_t tp_f16_from_f64(double value) {
    return narrow(&f16_format, value);
}

uint16_t tp_f16_from_f32(float value) {
    return narrow(&f16_format, (double)value);
}

float tp_bf16_to_f32(uint16_t bits) {
    return float_from_bits((uint32_t)bits << 16);
}

uint16_t tp_bf16_from_f64(double value) {
    return narrow(&bf16_format, value);
}

uint16_t tp_bf16_from_f32(float value) {
    return narrow(&bf16_format, (double)value);
}
