/* The reductions of the op table: sum, mean, max, min over a set of axes
 * (empty = all, negative axes count from the end, duplicates are an error,
 * keepdim keeps reduced axes as size 1) and argmax along one axis. Shape and
 * dtype rules and reference kernels.
 *
 * Dtypes (tensor.h): sum of bool/i32/i64 gives i64 (wraps around), floats
 * keep their dtype; mean of integers/bool gives f32; max/min keep the dtype;
 * argmax gives i64.
 * Accumulation: sum and mean of floating inputs (f32 included) and mean of
 * integers accumulate in double, then round once to the result dtype; so an
 * f32 sum is the correctly rounded double sum in most cases, which can differ
 * in the last bits from NumPy's pairwise f32 sum.
 * Empty reductions (NumPy): sum gives 0, mean NaN; max, min and argmax over
 * a zero-size axis are an error ("zero-size reduction"). NaN: max/min give
 * NaN when any element is NaN; argmax gives the index of the first NaN.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "dtype_loops.h"
#include "op_args.h"
#include "op_table.h"

typedef enum reduce_kind { REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN } reduce_kind;

static const char *const reduce_names[] = {"sum", "mean", "max", "min"};

/* ---- shape and dtype rules ------------------------------------------------ */

/* Marks the axes the `axes` attribute names (all when empty). */
static tp_status reduced_axes(const char *op_name, const tp_type *in, const tp_attrs *attrs,
                              bool reduced[TP_MAX_DIMS]) {
    char type_text[TP_DESCRIBE_MAX], axes_text[TP_DESCRIBE_MAX];
    if (attrs->naxes < 0 || attrs->naxes > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: %d axes given for %s; expected 0 to %d",
                            op_name, (int)attrs->naxes, tp_type_text(in, type_text), TP_MAX_DIMS);
    for (int axis = 0; axis < TP_MAX_DIMS; axis++) reduced[axis] = attrs->naxes == 0;
    for (int i = 0; i < attrs->naxes; i++) {
        int axis;
        TP_TRY(tp_axis_normalize(op_name, "axis", attrs->axes[i], in->ndim, in, &axis));
        if (reduced[axis])
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "%s: axis %d appears twice in axes %s for %s (list each axis once)",
                                op_name, axis, tp_ints_text(attrs->axes, attrs->naxes, axes_text),
                                tp_type_text(in, type_text));
        reduced[axis] = true;
    }
    return TP_OK;
}

/* The result shape: reduced axes dropped, or kept as size 1. */
static void reduced_shape(const tp_type *in, const bool *reduced, bool keepdim, tp_type *out) {
    out->ndim = 0;
    for (int axis = 0; axis < in->ndim; axis++) {
        if (!reduced[axis])
            out->dims[out->ndim++] = in->dims[axis];
        else if (keepdim)
            out->dims[out->ndim++] = 1;
    }
}

static tp_status zero_size_error(const char *op_name, const tp_type *in) {
    char type_text[TP_DESCRIBE_MAX];
    return tp_error_set(TP_ERR_SHAPE,
                        "%s: zero-size reduction over a size-0 axis of %s (%s has no identity; "
                        "check the input is not empty)",
                        op_name, tp_type_text(in, type_text), op_name);
}

static tp_dtype reduce_dtype(reduce_kind kind, tp_dtype in) {
    switch (kind) {
    case REDUCE_SUM:
        return tp_dtype_is_float(in) ? in : TP_I64;
    case REDUCE_MEAN:
        return tp_dtype_is_float(in) ? in : TP_F32;
    default:
        return in;
    }
}

static tp_status reduce_infer(reduce_kind kind, const tp_type *in, const tp_attrs *attrs,
                              tp_type *out) {
    const char *name = reduce_names[kind];
    bool reduced[TP_MAX_DIMS];
    TP_TRY(reduced_axes(name, in, attrs, reduced));
    if (kind == REDUCE_MAX || kind == REDUCE_MIN)
        for (int axis = 0; axis < in->ndim; axis++)
            if (reduced[axis] && in->dims[axis] == 0) return zero_size_error(name, in);
    reduced_shape(in, reduced, attrs->keepdim, out);
    out->dtype = reduce_dtype(kind, in->dtype);
    return TP_OK;
}

/* ---- accumulation loops ------------------------------------------------------ */

/* Folds n contiguous inputs into the accumulators (of type ACC, which may
 * name the input's type as `elem`): all into acc[0] when
 * acc_stride is 0, element i into acc[i] when it is 1. */
typedef void (*accumulate_fn)(int64_t n, void *acc, int64_t acc_stride, const void *in);

#define DEFINE_ACCUMULATE(TAG, T, U, name, ACC, ...)                                               \
    static void name##_##TAG(int64_t n, void *acc_data, int64_t acc_stride, const void *in_data) { \
        typedef T elem;                                                                            \
        ACC *acc = acc_data;                                                                       \
        const elem *in = in_data;                                                                  \
        if (acc_stride == 0) {                                                                     \
            ACC a = *acc;                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = in[i];                                                                       \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
            *acc = a;                                                                              \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                ACC a = acc[i];                                                                    \
                T x = in[i];                                                                       \
                __VA_ARGS__;                                                                       \
                acc[i] = a;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }

ALL_TYPES(DEFINE_ACCUMULATE, sum_double, double, a += (double)x)
INT_TYPES(DEFINE_ACCUMULATE, sum_wrap, uint64_t, a += (uint64_t)x)
BOOL_TYPE(DEFINE_ACCUMULATE, sum_wrap, uint64_t, a += x)
/* Once a is NaN, x > a and isnan(x) never replace it by a number. */
FLOAT_TYPES(DEFINE_ACCUMULATE, max, elem, a = (x > a || isnan(x)) ? x : a)
INT_TYPES(DEFINE_ACCUMULATE, max, elem, a = x > a ? x : a)
BOOL_TYPE(DEFINE_ACCUMULATE, max, elem, a |= x)
FLOAT_TYPES(DEFINE_ACCUMULATE, min, elem, a = (x < a || isnan(x)) ? x : a)
INT_TYPES(DEFINE_ACCUMULATE, min, elem, a = x < a ? x : a)
BOOL_TYPE(DEFINE_ACCUMULATE, min, elem, a &= x)

static const accumulate_fn sum_double_loops[TP_DTYPE_COUNT] = {
    ALL_TYPES(LOOP_ENTRY, sum_double, _)};
static const accumulate_fn sum_wrap_loops[TP_DTYPE_COUNT] = {
    INT_TYPES(LOOP_ENTRY, sum_wrap, _) BOOL_TYPE(LOOP_ENTRY, sum_wrap, _)};
static const accumulate_fn max_loops[TP_DTYPE_COUNT] = {ALL_TYPES(LOOP_ENTRY, max, _)};
static const accumulate_fn min_loops[TP_DTYPE_COUNT] = {ALL_TYPES(LOOP_ENTRY, min, _)};

/* Walks `in` in C order, folding each element into the accumulator of its
 * output position (reduced axes have accumulator stride 0). Size-1 axes are
 * dropped and neighbouring axes that are both reduced or both kept merged, so
 * the inner call covers as much as possible. */
static void run_reduction(accumulate_fn accumulate, const tp_tensor *in, const bool *reduced,
                          void *acc, size_t acc_size) {
    if (in->numel == 0) return;
    int64_t shape[TP_MAX_DIMS], acc_strides[TP_MAX_DIMS];
    bool is_reduced[TP_MAX_DIMS];
    int ndim = 0;
    int64_t kept_size = 1;
    for (int axis = in->ndim - 1; axis >= 0; axis--) { /* right to left */
        int64_t size = in->shape[axis];
        if (size == 1) continue;
        int64_t acc_stride = reduced[axis] ? 0 : kept_size;
        if (!reduced[axis]) kept_size *= size;
        if (ndim > 0 && is_reduced[ndim - 1] == reduced[axis]) {
            shape[ndim - 1] *= size; /* merge: keeps the inner (right) stride */
            continue;
        }
        shape[ndim] = size;
        acc_strides[ndim] = acc_stride;
        is_reduced[ndim] = reduced[axis];
        ndim++;
    }
    /* Collapsed axes are stored innermost first. */
    int64_t inner = ndim > 0 ? shape[0] : 1;
    int64_t inner_acc_stride = ndim > 0 ? acc_strides[0] : 0;
    int64_t index[TP_MAX_DIMS] = {0}, acc_offset = 0;
    const char *input = in->data;
    size_t in_size = tp_dtype_size(in->dtype);
    for (int64_t done = 0; done < in->numel; done += inner) {
        accumulate(inner, (char *)acc + acc_offset * (int64_t)acc_size, inner_acc_stride,
                   input + done * (int64_t)in_size);
        for (int axis = 1; axis < ndim; axis++) { /* advance the odometer */
            acc_offset += acc_strides[axis];
            if (++index[axis] < shape[axis]) break;
            acc_offset -= acc_strides[axis] * shape[axis];
            index[axis] = 0;
        }
    }
}

/* Sets every max/min accumulator to the identity (-inf / lowest, ...). */
static void fill_identity(tp_tensor *out, bool for_max) {
    int64_t n = out->numel;
#define FILL(T, value)                                                                             \
    for (int64_t i = 0; i < n; i++) ((T *)out->data)[i] = (value);                                 \
    break
    switch (out->dtype) {
    case TP_F32:
        FILL(float, for_max ? -INFINITY : INFINITY);
    case TP_F64:
        FILL(double, for_max ? -INFINITY : INFINITY);
    case TP_I32:
        FILL(int32_t, for_max ? INT32_MIN : INT32_MAX);
    case TP_I64:
        FILL(int64_t, for_max ? INT64_MIN : INT64_MAX);
    default:
        FILL(uint8_t, for_max ? 0 : 1);
    }
#undef FILL
}

/* Writes acc[i] / divisor (double accumulators; NaN when divisor is 0, the
 * mean of nothing, as in NumPy) or acc[i] (uint64) to out. */
static void finish_sums(const void *acc, bool wrapped, int64_t divisor, tp_tensor *out) {
    for (int64_t i = 0; i < out->numel; i++) {
        if (wrapped) {
            ((int64_t *)out->data)[i] = (int64_t)((const uint64_t *)acc)[i];
            continue;
        }
        double value = divisor > 0 ? ((const double *)acc)[i] / (double)divisor : NAN;
        if (out->dtype == TP_F32)
            ((float *)out->data)[i] = (float)value;
        else
            ((double *)out->data)[i] = value;
    }
}

static tp_status reduce_kernel(reduce_kind kind, tp_tensor *in, const tp_attrs *attrs,
                               tp_tensor *out) {
    const char *name = reduce_names[kind];
    tp_type in_type = {.dtype = in->dtype, .ndim = in->ndim};
    memcpy(in_type.dims, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    bool reduced[TP_MAX_DIMS];
    TP_TRY(reduced_axes(name, &in_type, attrs, reduced));
    int64_t count = 1;
    for (int axis = 0; axis < in->ndim; axis++)
        if (reduced[axis]) count *= in->shape[axis];
    if (kind == REDUCE_MAX || kind == REDUCE_MIN) {
        if (count == 0) return zero_size_error(name, &in_type);
        fill_identity(out, kind == REDUCE_MAX);
        run_reduction((kind == REDUCE_MAX ? max_loops : min_loops)[in->dtype], in, reduced,
                      out->data, tp_dtype_size(in->dtype));
        return TP_OK;
    }
    bool wrapped = kind == REDUCE_SUM && !tp_dtype_is_float(in->dtype);
    void *acc = calloc(out->numel ? (size_t)out->numel : 1, 8);
    if (!acc)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld accumulators", name,
                            (long long)out->numel);
    run_reduction((wrapped ? sum_wrap_loops : sum_double_loops)[in->dtype], in, reduced, acc, 8);
    finish_sums(acc, wrapped, kind == REDUCE_MEAN ? count : 1, out);
    free(acc);
    return TP_OK;
}

#define REDUCE_OP(ID, kind)                                                                        \
    tp_status tp_op_##ID##_infer(const tp_type *in, int num_inputs, const tp_attrs *attrs,         \
                                 tp_type *out) {                                                   \
        return reduce_infer(kind, &in[0], attrs, out);                                             \
    }                                                                                              \
    tp_status tp_op_##ID##_kernel(tp_tensor *const *in, int num_inputs, const tp_attrs *attrs,     \
                                  tp_tensor *out) {                                                \
        return reduce_kernel(kind, in[0], attrs, out);                                             \
    }

REDUCE_OP(SUM, REDUCE_SUM)
REDUCE_OP(MEAN, REDUCE_MEAN)
REDUCE_OP(MAX, REDUCE_MAX)
REDUCE_OP(MIN, REDUCE_MIN)

/* ---- argmax ------------------------------------------------------------------- */

tp_status tp_op_ARGMAX_infer(const tp_type *in, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    int axis;
    TP_TRY(tp_axis_normalize("argmax", "axis", attrs->axis, in->ndim, in, &axis));
    if (in->dims[axis] == 0) return zero_size_error("argmax", in);
    bool reduced[TP_MAX_DIMS] = {false};
    reduced[axis] = true;
    reduced_shape(in, reduced, attrs->keepdim, out);
    out->dtype = TP_I64;
    return TP_OK;
}

/* Input viewed as [outer, length, inner]; out is [outer, inner]. The first
 * maximum wins; a NaN is the maximum (its first occurrence). */
typedef void (*argmax_fn)(const void *in, int64_t outer, int64_t length, int64_t inner,
                          int64_t *out);

#define DEFINE_ARGMAX(TAG, T, U, IS_NAN, ...)                                                      \
    static void argmax_##TAG(const void *in_data, int64_t outer, int64_t length, int64_t inner,    \
                             int64_t *out) {                                                       \
        for (int64_t o = 0; o < outer; o++)                                                        \
            for (int64_t j = 0; j < inner; j++) {                                                  \
                const T *line = (const T *)in_data + o * length * inner + j;                       \
                T best = line[0];                                                                  \
                int64_t best_index = 0;                                                            \
                for (int64_t k = 1; k < length && !IS_NAN(best); k++) {                            \
                    T x = line[k * inner];                                                         \
                    if (x > best || IS_NAN(x)) {                                                   \
                        best = x;                                                                  \
                        best_index = k;                                                            \
                    }                                                                              \
                }                                                                                  \
                out[o * inner + j] = best_index;                                                   \
            }                                                                                      \
    }

FLOAT_TYPES(DEFINE_ARGMAX, FLOAT_IS_NAN)
INT_TYPES(DEFINE_ARGMAX, NEVER_NAN)
BOOL_TYPE(DEFINE_ARGMAX, NEVER_NAN)

static const argmax_fn argmax_loops[TP_DTYPE_COUNT] = {ALL_TYPES(LOOP_ENTRY, argmax, _)};

tp_status tp_op_ARGMAX_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *in = inputs[0];
    int64_t axis = attrs->axis < 0 ? attrs->axis + in->ndim : attrs->axis;
    int64_t outer = 1, inner = 1, length = in->shape[axis];
    for (int i = 0; i < axis; i++) outer *= in->shape[i];
    for (int i = (int)axis + 1; i < in->ndim; i++) inner *= in->shape[i];
    if (length == 0) {
        tp_type in_type = {.dtype = in->dtype, .ndim = in->ndim};
        memcpy(in_type.dims, in->shape, sizeof(int64_t) * (size_t)in->ndim);
        return zero_size_error("argmax", &in_type);
    }
    argmax_loops[in->dtype](in->data, outer, length, inner, out->data);
    return TP_OK;
}
