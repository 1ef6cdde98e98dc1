/* The pointwise ops of the op table (unary, binary with NumPy broadcasting,
 * where, cast): their shape and dtype rules and their reference kernels.
 *
 * Structure: one strided loop driver (run_pointwise) walks the output in C
 * order and calls an inner loop over its last (collapsed) dimension; the inner
 * loops are generated per op and per compute dtype from one scalar expression
 * (DEFINE_UNARY / DEFINE_BINARY). Inputs whose dtype differs from the dtype
 * the op computes in are converted first into a temporary buffer, so every
 * inner loop reads one C type.
 *
 * Dtype rules are those of tensor.h's header comment. Numerics follow NumPy:
 * maximum/minimum propagate NaN, sign(NaN) = NaN, relu(NaN) = NaN, sigmoid is
 * evaluated in the form that never overflows, f32 ops use the float functions
 * (expf, ...). Integer arithmetic wraps around (two's complement), as in
 * NumPy. Documented choices where NumPy would raise or is undefined:
 *   - integer pow with a negative exponent gives 0, except bases 1 (-> 1) and
 *     -1 (-> 1 or -1 by the exponent's parity);
 *   - cast from floating to integer truncates toward zero and saturates: NaN
 *     gives 0, values beyond the range give the integer's min/max.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "broadcast.h"
#include "dtype_loops.h"
#include "element.h"
#include "op_args.h"
#include "op_table.h"

/* Inner loop: n elements; the output is contiguous, input k is read with
 * element stride stride[k] (0 for a broadcast operand). */
typedef void (*loop_fn)(int64_t n, void *out, const void *const *in, const int64_t *stride);

/* ---- generating inner loops ------------------------------------------- */

/* Wrap-around integer arithmetic through the unsigned type (no UB). */
#define WRAP(op) (elem)((uelem)x op(uelem) y)

/* Defines static loop `OP_TAG` (a loop_fn) whose work is BODY. BODY sees
 * n, the output `o` (OUT *), in[], stride[], and the types `elem` (the
 * input element) and `uelem` (its unsigned twin). */
#define DEFINE_LOOP(TAG, T, U, op, OUT, BODY)                                                      \
    static void op##_##TAG(int64_t n, void *out_data, const void *const *in,                       \
                           const int64_t *stride) {                                                \
        typedef T elem;                                                                            \
        typedef U uelem;                                                                           \
        (void)sizeof(uelem);                                                                       \
        OUT *o = out_data;                                                                         \
        BODY                                                                                       \
    }

#define UNARY_BODY(INDEX_A, OUT, ...)                                                              \
    for (int64_t i = 0; i < n; i++) {                                                              \
        elem x = a[INDEX_A];                                                                       \
        o[i] = (OUT)(__VA_ARGS__);                                                                 \
    }

/* clang-format off */
/* Unary loop: out[i] = (OUT)(expression of x). */
#define DEFINE_UNARY(TAG, T, U, op, OUT, ...)                                                      \
    DEFINE_LOOP(TAG, T, U, op, OUT,                                                                \
        const elem *a = in[0];                                                                     \
        const int64_t sa = stride[0];                                                              \
        if (sa == 1) UNARY_BODY(i, OUT, __VA_ARGS__)                                               \
        else UNARY_BODY(i * sa, OUT, __VA_ARGS__))

#define BINARY_BODY(INDEX_A, INDEX_B, OUT, ...)                                                    \
    for (int64_t i = 0; i < n; i++) {                                                              \
        elem x = a[INDEX_A], y = b[INDEX_B];                                                       \
        o[i] = (OUT)(__VA_ARGS__);                                                                 \
    }

/* Binary loop: out[i] = (OUT)(expression of x, y), with separate loops for
 * the common stride patterns so they vectorize. */
#define DEFINE_BINARY(TAG, T, U, op, OUT, ...)                                                     \
    DEFINE_LOOP(TAG, T, U, op, OUT,                                                                \
        const elem *a = in[0];                                                                     \
        const elem *b = in[1];                                                                     \
        const int64_t sa = stride[0];                                                              \
        const int64_t sb = stride[1];                                                              \
        if (sa == 1 && sb == 1) BINARY_BODY(i, i, OUT, __VA_ARGS__)                                \
        else if (sa == 1 && sb == 0) BINARY_BODY(i, 0, OUT, __VA_ARGS__)                           \
        else if (sa == 0 && sb == 1) BINARY_BODY(0, i, OUT, __VA_ARGS__)                           \
        else BINARY_BODY(i * sa, i * sb, OUT, __VA_ARGS__))

/* where(cond, a, b): the condition arrives converted to bool. */
#define DEFINE_WHERE(TAG, T, U, op, ...)                                                           \
    DEFINE_LOOP(TAG, T, U, op, elem,                                                               \
        const uint8_t *c = in[0];                                                                  \
        const elem *a = in[1];                                                                     \
        const elem *b = in[2];                                                                     \
        const int64_t sc = stride[0];                                                              \
        const int64_t sa = stride[1];                                                              \
        const int64_t sb = stride[2];                                                              \
        if (sc == 1 && sa == 1 && sb == 1)                                                         \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];                             \
        else                                                                                       \
            for (int64_t i = 0; i < n; i++) o[i] = c[i * sc] ? a[i * sa] : b[i * sb];)
/* clang-format on */

/* ---- scalar helpers ------------------------------------------------------ */

/* See the file comment: wraps; negative exponents give 0 except for +-1. */
static inline int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
    uint64_t result = 1, factor = (uint64_t)base;
    for (uint64_t rest = (uint64_t)exponent; rest; rest >>= 1) {
        if (rest & 1) result *= factor;
        factor *= factor;
    }
    return (int64_t)result;
}

/* Float -> integer: truncate, NaN -> 0, saturate out-of-range values. */
static inline int32_t saturate_i32(double x) {
    if (isnan(x)) return 0;
    if (x >= 2147483648.0) return INT32_MAX;
    if (x <= -2147483648.0) return INT32_MIN;
    return (int32_t)x;
}

static inline int64_t saturate_i64(double x) {
    if (isnan(x)) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

#define TO_F32(x) ((float)(x))
#define TO_F64(x) ((double)(x))
#define TO_I32(x)                                                                                  \
    _Generic((x), float : saturate_i32(x), double : saturate_i32(x), default : (int32_t)(x))
#define TO_I64(x)                                                                                  \
    _Generic((x), float : saturate_i64(x), double : saturate_i64(x), default : (int64_t)(x))
#define TO_BOOL(x) ((x) != 0)

/* ---- the loops ------------------------------------------------------------- */

FLOAT_TYPES(DEFINE_UNARY, neg, elem, -x)
INT_TYPES(DEFINE_UNARY, neg, elem, (uelem)0 - (uelem)x)
FLOAT_TYPES(DEFINE_UNARY, abs, elem, FN1(fabs, x))
INT_TYPES(DEFINE_UNARY, abs, elem, x < 0 ? (elem)((uelem)0 - (uelem)x) : x)
FLOAT_TYPES(DEFINE_UNARY, exp, elem, FN1(exp, x))
FLOAT_TYPES(DEFINE_UNARY, log, elem, FN1(log, x))
FLOAT_TYPES(DEFINE_UNARY, sqrt, elem, FN1(sqrt, x))
FLOAT_TYPES(DEFINE_UNARY, rsqrt, elem, (elem)1 / FN1(sqrt, x))
FLOAT_TYPES(DEFINE_UNARY, sin, elem, FN1(sin, x))
FLOAT_TYPES(DEFINE_UNARY, cos, elem, FN1(cos, x))
FLOAT_TYPES(DEFINE_UNARY, tanh, elem, FN1(tanh, x))
/* exp of a non-positive number only: never overflows. */
FLOAT_TYPES(DEFINE_UNARY, sigmoid, elem,
            x >= 0 ? (elem)1 / ((elem)1 + FN1(exp, -x)) : FN1(exp, x) / ((elem)1 + FN1(exp, x)))
FLOAT_TYPES(DEFINE_UNARY, relu, elem, x < 0 ? (elem)0 : x) /* NaN < 0 is false: NaN stays */
INT_TYPES(DEFINE_UNARY, relu, elem, x < 0 ? (elem)0 : x)
BOOL_TYPE(DEFINE_UNARY, relu, elem, x)
FLOAT_TYPES(DEFINE_UNARY, erf, elem, FN1(erf, x))
FLOAT_TYPES(DEFINE_UNARY, floor, elem, FN1(floor, x))
INT_TYPES(DEFINE_UNARY, floor, elem, x)
BOOL_TYPE(DEFINE_UNARY, floor, elem, x)
FLOAT_TYPES(DEFINE_UNARY, ceil, elem, FN1(ceil, x))
INT_TYPES(DEFINE_UNARY, ceil, elem, x)
BOOL_TYPE(DEFINE_UNARY, ceil, elem, x)
/* sign(+-0) = +0 and sign(NaN) = NaN, as NumPy. */
FLOAT_TYPES(DEFINE_UNARY, sign, elem, x > 0 ? (elem)1 : x < 0 ? (elem)-1 : x == 0 ? (elem)0 : x)
INT_TYPES(DEFINE_UNARY, sign, elem, (x > 0) - (x < 0))
ALL_TYPES(DEFINE_UNARY, logical_not, uint8_t, x == 0)

/* cast_to_TO_FROM */
ALL_TYPES(DEFINE_UNARY, cast_to_F32, float, TO_F32(x))
ALL_TYPES(DEFINE_UNARY, cast_to_F64, double, TO_F64(x))
ALL_TYPES(DEFINE_UNARY, cast_to_I32, int32_t, TO_I32(x))
ALL_TYPES(DEFINE_UNARY, cast_to_I64, int64_t, TO_I64(x))
ALL_TYPES(DEFINE_UNARY, cast_to_BOOL, uint8_t, TO_BOOL(x))

FLOAT_TYPES(DEFINE_BINARY, add, elem, WRAP(+))
INT_TYPES(DEFINE_BINARY, add, elem, WRAP(+))
FLOAT_TYPES(DEFINE_BINARY, sub, elem, WRAP(-))
INT_TYPES(DEFINE_BINARY, sub, elem, WRAP(-))
FLOAT_TYPES(DEFINE_BINARY, mul, elem, WRAP(*))
INT_TYPES(DEFINE_BINARY, mul, elem, WRAP(*))
FLOAT_TYPES(DEFINE_BINARY, div, elem, x / y)
FLOAT_TYPES(DEFINE_BINARY, pow, elem, FN2(pow, x, y))
INT_TYPES(DEFINE_BINARY, pow, elem, int_pow(x, y))
/* NaN in either operand gives NaN (np.maximum); bools: or / and. */
FLOAT_TYPES(DEFINE_BINARY, maximum, elem, (x >= y || isnan(x)) ? x : y)
INT_TYPES(DEFINE_BINARY, maximum, elem, x >= y ? x : y)
BOOL_TYPE(DEFINE_BINARY, maximum, elem, x | y)
FLOAT_TYPES(DEFINE_BINARY, minimum, elem, (x <= y || isnan(x)) ? x : y)
INT_TYPES(DEFINE_BINARY, minimum, elem, x <= y ? x : y)
BOOL_TYPE(DEFINE_BINARY, minimum, elem, x &y)
ALL_TYPES(DEFINE_BINARY, lt, uint8_t, x < y)
ALL_TYPES(DEFINE_BINARY, le, uint8_t, x <= y)
ALL_TYPES(DEFINE_BINARY, gt, uint8_t, x > y)
ALL_TYPES(DEFINE_BINARY, ge, uint8_t, x >= y)
ALL_TYPES(DEFINE_BINARY, eq, uint8_t, x == y)
ALL_TYPES(DEFINE_BINARY, ne, uint8_t, x != y)
ALL_TYPES(DEFINE_BINARY, logical_and, uint8_t, x != 0 && y != 0)
ALL_TYPES(DEFINE_BINARY, logical_or, uint8_t, x != 0 || y != 0)

ALL_TYPES(DEFINE_WHERE, where, _)

/* [to][from] */
static const loop_fn cast_loops[TP_DTYPE_COUNT][TP_DTYPE_COUNT] = {
    [TP_F32] = {ALL_TYPES(LOOP_ENTRY, cast_to_F32, _)},
    [TP_F64] = {ALL_TYPES(LOOP_ENTRY, cast_to_F64, _)},
    [TP_I32] = {ALL_TYPES(LOOP_ENTRY, cast_to_I32, _)},
    [TP_I64] = {ALL_TYPES(LOOP_ENTRY, cast_to_I64, _)},
    [TP_BOOL] = {ALL_TYPES(LOOP_ENTRY, cast_to_BOOL, _)},
};

/* ---- dtype rules ------------------------------------------------------------ */

typedef enum pointwise_rule {
    RULE_KEEP,        /* unary, computes in and gives the input dtype */
    RULE_FLOAT,       /* unary, integers/bool compute in f32 */
    RULE_PREDICATE1,  /* unary, computes in the input dtype, gives bool */
    RULE_CAST,        /* unary, gives attrs->dtype */
    RULE_ARITHMETIC,  /* binary, computes in and gives promote(a, b) */
    RULE_TRUE_DIVIDE, /* binary, like arithmetic but integers/bool compute in f32 */
    RULE_PREDICATE2,  /* binary, computes in promote(a, b), gives bool */
    RULE_WHERE,       /* where(cond -> bool, a, b) computes in promote(a, b) */
} pointwise_rule;

typedef struct pointwise_op {
    const char *name;
    pointwise_rule rule;
    loop_fn loops[TP_DTYPE_COUNT]; /* by compute dtype; NULL: rejected */
} pointwise_op;

/* The dtype the op computes in and the dtype of its result. */
static void choose_dtypes(const pointwise_op *op, const tp_type *in, const tp_attrs *attrs,
                          tp_dtype *compute, tp_dtype *result) {
    switch (op->rule) {
    case RULE_KEEP:
    case RULE_PREDICATE1:
    case RULE_CAST:
        *compute = in[0].dtype;
        break;
    case RULE_FLOAT:
        *compute = tp_dtype_is_float(in[0].dtype) ? in[0].dtype : TP_F32;
        break;
    case RULE_ARITHMETIC:
    case RULE_PREDICATE2:
        *compute = tp_dtype_promote(in[0].dtype, in[1].dtype);
        break;
    case RULE_TRUE_DIVIDE: {
        tp_dtype promoted = tp_dtype_promote(in[0].dtype, in[1].dtype);
        *compute = tp_dtype_is_float(promoted) ? promoted : TP_F32;
        break;
    }
    case RULE_WHERE:
        *compute = tp_dtype_promote(in[1].dtype, in[2].dtype);
        break;
    }
    *result = op->rule == RULE_PREDICATE1 || op->rule == RULE_PREDICATE2 ? TP_BOOL
              : op->rule == RULE_CAST                                    ? attrs->dtype
                                                                         : *compute;
}

/* The dtype input `index` is converted to before the loop runs. */
static tp_dtype operand_dtype(const pointwise_op *op, int index, tp_dtype compute) {
    return op->rule == RULE_WHERE && index == 0 ? TP_BOOL : compute;
}

static tp_status dtype_error(const pointwise_op *op, const tp_type *in, int num_inputs,
                             tp_dtype compute) {
    char inputs_text[3 * TP_DESCRIBE_MAX + 8] = "", type_text[TP_DESCRIBE_MAX];
    char accepted[64] = "";
    for (int i = 0; i < num_inputs; i++) {
        if (i) strcat(inputs_text, i == num_inputs - 1 ? " and " : ", ");
        strcat(inputs_text, tp_type_text(&in[i], type_text));
    }
    for (int dtype = 0; dtype < TP_DTYPE_COUNT; dtype++) {
        if (!op->loops[dtype]) continue;
        if (accepted[0]) strcat(accepted, " ");
        strcat(accepted, tp_dtype_name((tp_dtype)dtype));
    }
    return tp_error_set(TP_ERR_DTYPE,
                        "%s: not defined for dtype %s (inputs: %s); it accepts %s: cast the "
                        "input%s first",
                        op->name, tp_dtype_name(compute), inputs_text, accepted,
                        num_inputs > 1 ? "s" : "");
}

static tp_status pointwise_infer(const pointwise_op *op, const tp_type *in, int num_inputs,
                                 const tp_attrs *attrs, tp_type *out) {
    if (op->rule == RULE_CAST && (unsigned)attrs->dtype >= TP_DTYPE_COUNT)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "cast: dtype attribute %d is not a dtype",
                            (int)attrs->dtype);
    tp_dtype compute, result;
    choose_dtypes(op, in, attrs, &compute, &result);
    if (op->rule != RULE_CAST && !op->loops[tp_dtype_compute(compute)])
        return dtype_error(op, in, num_inputs, compute);
    tp_type shape = in[num_inputs - 1];
    for (int i = num_inputs - 2; i >= 0; i--)
        TP_TRY(tp_broadcast_shapes(op->name, &in[i], &shape, &shape.ndim, shape.dims));
    *out = shape;
    out->dtype = result;
    return TP_OK;
}

/* ---- the strided loop driver ----------------------------------------------- */

/* Runs `loop` over every element of `out`. Operand k has data[k], element
 * size sizes[k] and the shape of inputs[k] (broadcast to out's shape).
 * Dimensions of size 1 are dropped and neighbours that every operand walks
 * contiguously are merged, so operands without broadcasting take one call. */
static void run_pointwise(loop_fn loop, tp_tensor *out, int num_inputs, tp_tensor *const *inputs,
                          const void *const *data, const size_t *sizes) {
    if (out->numel == 0) return;
    int64_t full_strides[3][TP_MAX_DIMS];
    for (int k = 0; k < num_inputs; k++)
        tp_broadcast_strides(inputs[k]->ndim, inputs[k]->shape, out->ndim, out->shape,
                             full_strides[k]);
    int64_t shape[TP_MAX_DIMS], strides[3][TP_MAX_DIMS];
    int ndim = 0;
    for (int axis = 0; axis < out->ndim; axis++) {
        int64_t size = out->shape[axis];
        if (size == 1) continue;
        bool mergeable = ndim > 0;
        for (int k = 0; k < num_inputs && mergeable; k++)
            mergeable = strides[k][ndim - 1] == full_strides[k][axis] * size;
        if (mergeable) {
            shape[ndim - 1] *= size;
        } else {
            shape[ndim] = size;
            ndim++;
        }
        for (int k = 0; k < num_inputs; k++) strides[k][ndim - 1] = full_strides[k][axis];
    }
    int64_t inner = ndim > 0 ? shape[ndim - 1] : 1;
    int64_t inner_strides[3] = {0, 0, 0}, offsets[3] = {0, 0, 0}, index[TP_MAX_DIMS] = {0};
    for (int k = 0; k < num_inputs && ndim > 0; k++) inner_strides[k] = strides[k][ndim - 1];
    size_t out_size = tp_dtype_size(out->dtype);
    int64_t outer_count = out->numel / inner;
    for (int64_t outer = 0; outer < outer_count; outer++) {
        const void *pointers[3];
        for (int k = 0; k < num_inputs; k++)
            pointers[k] = (const char *)data[k] + offsets[k] * (int64_t)sizes[k];
        loop(inner, (char *)out->data + outer * inner * (int64_t)out_size, pointers, inner_strides);
        for (int axis = ndim - 2; axis >= 0; axis--) { /* advance the odometer */
            for (int k = 0; k < num_inputs; k++) offsets[k] += strides[k][axis];
            if (++index[axis] < shape[axis]) break;
            for (int k = 0; k < num_inputs; k++) offsets[k] -= strides[k][axis] * shape[axis];
            index[axis] = 0;
        }
    }
}

/* A value of any dtype as a double that rounds to the same f16/bf16 as the
 * value itself: exact for every dtype but an i64 beyond 2^53, which keeps its
 * top 53 bits and ORs the rest into the last one (round to odd), so that the
 * one rounding to 16 bits that follows is the correct one. */
static double load_for_narrowing(const tp_tensor *input, int64_t index) {
    if (input->dtype != TP_I64) return tp_element_load_f64(input->data, input->dtype, index);
    int64_t value = ((const int64_t *)input->data)[index];
    uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    int shift = 0;
    while ((magnitude >> shift) >= (1ull << 53)) shift++;
    if (shift > 0) {
        bool sticky = (magnitude & ((1ull << shift) - 1)) != 0;
        magnitude = (magnitude >> shift) | (sticky ? 1u : 0u);
    }
    double rounded = ldexp((double)magnitude, shift);
    return value < 0 ? -rounded : rounded;
}

/* cast to f16/bf16: one rounding from the source value (never through f32,
 * which would round twice). */
static void cast_to_storage_dtype(const tp_tensor *input, tp_tensor *out) {
    for (int64_t i = 0; i < out->numel; i++)
        tp_element_store_f64(out->data, out->dtype, i, load_for_narrowing(input, i));
}

static tp_status pointwise_kernel(const pointwise_op *op, tp_tensor *const *inputs, int num_inputs,
                                  const tp_attrs *attrs, tp_tensor *out) {
    if (op->rule == RULE_CAST && tp_dtype_compute(out->dtype) != out->dtype) {
        cast_to_storage_dtype(inputs[0], out);
        return TP_OK;
    }
    tp_type types[3] = {{.dtype = TP_F32}, {.dtype = TP_F32}, {.dtype = TP_F32}};
    for (int k = 0; k < num_inputs; k++) types[k].dtype = inputs[k]->dtype;
    tp_dtype compute, result;
    choose_dtypes(op, types, attrs, &compute, &result);
    const void *data[3];
    size_t sizes[3];
    void *converted[3] = {NULL, NULL, NULL};
    tp_status status = TP_OK;
    for (int k = 0; k < num_inputs; k++) {
        tp_dtype target = operand_dtype(op, k, compute);
        sizes[k] = tp_dtype_size(target);
        data[k] = inputs[k]->data;
        if (inputs[k]->dtype == target) continue;
        converted[k] = malloc(inputs[k]->numel ? (size_t)inputs[k]->numel * sizes[k] : 1);
        if (!converted[k]) {
            status = tp_error_set(TP_ERR_OUT_OF_MEMORY,
                                  "%s: out of memory converting input %d to %s (%lld elements)",
                                  op->name, k, tp_dtype_name(target), (long long)inputs[k]->numel);
            break;
        }
        const int64_t unit_stride = 1;
        cast_loops[target][inputs[k]->dtype](inputs[k]->numel, converted[k], &data[k],
                                             &unit_stride);
        data[k] = converted[k];
    }
    if (status == TP_OK) {
        loop_fn loop = op->rule == RULE_CAST ? cast_loops[out->dtype][compute] : op->loops[compute];
        run_pointwise(loop, out, num_inputs, inputs, data, sizes);
    }
    for (int k = 0; k < num_inputs; k++) free(converted[k]);
    return status;
}

/* ---- the ops ------------------------------------------------------------------ */

#define POINTWISE_OP(ID, op_name, op_rule, ...)                                                    \
    static const pointwise_op pointwise_##ID = {op_name, op_rule, {__VA_ARGS__}};                  \
    tp_status tp_op_##ID##_infer(const tp_type *in, int num_inputs, const tp_attrs *attrs,         \
                                 tp_type *out) {                                                   \
        return pointwise_infer(&pointwise_##ID, in, num_inputs, attrs, out);                       \
    }                                                                                              \
    tp_status tp_op_##ID##_kernel(tp_tensor *const *in, int num_inputs, const tp_attrs *attrs,     \
                                  tp_tensor *out) {                                                \
        return pointwise_kernel(&pointwise_##ID, in, num_inputs, attrs, out);                      \
    }

#define FLOAT_LOOPS(op)  FLOAT_TYPES(LOOP_ENTRY, op, _)
#define SIGNED_LOOPS(op) FLOAT_TYPES(LOOP_ENTRY, op, _) INT_TYPES(LOOP_ENTRY, op, _)
#define ALL_LOOPS(op)    ALL_TYPES(LOOP_ENTRY, op, _)

POINTWISE_OP(NEG, "neg", RULE_KEEP, SIGNED_LOOPS(neg))
POINTWISE_OP(ABS, "abs", RULE_KEEP, SIGNED_LOOPS(abs))
POINTWISE_OP(EXP, "exp", RULE_FLOAT, FLOAT_LOOPS(exp))
POINTWISE_OP(LOG, "log", RULE_FLOAT, FLOAT_LOOPS(log))
POINTWISE_OP(SQRT, "sqrt", RULE_FLOAT, FLOAT_LOOPS(sqrt))
POINTWISE_OP(RSQRT, "rsqrt", RULE_FLOAT, FLOAT_LOOPS(rsqrt))
POINTWISE_OP(SIN, "sin", RULE_FLOAT, FLOAT_LOOPS(sin))
POINTWISE_OP(COS, "cos", RULE_FLOAT, FLOAT_LOOPS(cos))
POINTWISE_OP(TANH, "tanh", RULE_FLOAT, FLOAT_LOOPS(tanh))
POINTWISE_OP(SIGMOID, "sigmoid", RULE_FLOAT, FLOAT_LOOPS(sigmoid))
POINTWISE_OP(RELU, "relu", RULE_KEEP, ALL_LOOPS(relu))
POINTWISE_OP(ERF, "erf", RULE_FLOAT, FLOAT_LOOPS(erf))
POINTWISE_OP(FLOOR, "floor", RULE_KEEP, ALL_LOOPS(floor))
POINTWISE_OP(CEIL, "ceil", RULE_KEEP, ALL_LOOPS(ceil))
POINTWISE_OP(SIGN, "sign", RULE_KEEP, SIGNED_LOOPS(sign))
POINTWISE_OP(LOGICAL_NOT, "logical_not", RULE_PREDICATE1, ALL_LOOPS(logical_not))
POINTWISE_OP(CAST, "cast", RULE_CAST, 0)

POINTWISE_OP(ADD, "add", RULE_ARITHMETIC, SIGNED_LOOPS(add))
POINTWISE_OP(SUB, "sub", RULE_ARITHMETIC, SIGNED_LOOPS(sub))
POINTWISE_OP(MUL, "mul", RULE_ARITHMETIC, SIGNED_LOOPS(mul))
POINTWISE_OP(DIV, "div", RULE_TRUE_DIVIDE, FLOAT_LOOPS(div))
POINTWISE_OP(POW, "pow", RULE_ARITHMETIC, SIGNED_LOOPS(pow))
POINTWISE_OP(MAXIMUM, "maximum", RULE_ARITHMETIC, ALL_LOOPS(maximum))
POINTWISE_OP(MINIMUM, "minimum", RULE_ARITHMETIC, ALL_LOOPS(minimum))
POINTWISE_OP(LT, "lt", RULE_PREDICATE2, ALL_LOOPS(lt))
POINTWISE_OP(LE, "le", RULE_PREDICATE2, ALL_LOOPS(le))
POINTWISE_OP(GT, "gt", RULE_PREDICATE2, ALL_LOOPS(gt))
POINTWISE_OP(GE, "ge", RULE_PREDICATE2, ALL_LOOPS(ge))
POINTWISE_OP(EQ, "eq", RULE_PREDICATE2, ALL_LOOPS(eq))
POINTWISE_OP(NE, "ne", RULE_PREDICATE2, ALL_LOOPS(ne))
POINTWISE_OP(LOGICAL_AND, "logical_and", RULE_PREDICATE2, ALL_LOOPS(logical_and))
POINTWISE_OP(LOGICAL_OR, "logical_or", RULE_PREDICATE2, ALL_LOOPS(logical_or))
POINTWISE_OP(WHERE, "where", RULE_WHERE, ALL_LOOPS(where))
