/* Macros that generate one function per dtype from one piece of code, for
 * the reference kernels (pointwise.c, reduce.c, matmul.c). Internal.
 *
 * A type list calls M(TAG, C type, unsigned C type, extra...) per dtype; TAG
 * is the TP_ dtype suffix, the unsigned type serves wrap-around integer
 * arithmetic (for floats it is the float type itself). LOOP_ENTRY turns a
 * list into designated initialisers of a table indexed by tp_dtype. */
#ifndef TP_CORE_OPS_DTYPE_LOOPS_H
#define TP_CORE_OPS_DTYPE_LOOPS_H

#include <math.h>
#include <stdint.h>

#define FLOAT_TYPES(M, ...) M(F32, float, float, __VA_ARGS__) M(F64, double, double, __VA_ARGS__)
#define INT_TYPES(M, ...)                                                                          \
    M(I32, int32_t, uint32_t, __VA_ARGS__) M(I64, int64_t, uint64_t, __VA_ARGS__)
#define BOOL_TYPE(M, ...) M(BOOL, uint8_t, uint8_t, __VA_ARGS__)
#define ALL_TYPES(M, ...)                                                                          \
    FLOAT_TYPES(M, __VA_ARGS__) INT_TYPES(M, __VA_ARGS__) BOOL_TYPE(M, __VA_ARGS__)

/* Table entry [TP_F32] = NAME_F32, ... for the functions NAME_TAG. */
#define LOOP_ENTRY(TAG, T, U, name, ...) [TP_##TAG] = name##_##TAG,

/* The libm function of the argument's precision: FN1(exp, x) is expf(x) for
 * a float x and exp(x) for a double. */
#define FN1(fn, x)    _Generic((x), float : fn##f, default : fn)(x)
#define FN2(fn, x, y) _Generic((x), float : fn##f, default : fn)(x, y)

/* NaN tests by family, for code generated over both floats and integers. */
#define FLOAT_IS_NAN(x) isnan(x)
#define NEVER_NAN(x)    0

#endif
