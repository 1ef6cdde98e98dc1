/* The shape ops: reshape, permute, transpose, expand, slice, concat, squeeze
 * and unsqueeze — their shape/dtype rules and reference kernels. Every rule
 * keeps the input dtype (concat promotes across its inputs) and accepts
 * symbolic dimensions where the result is decidable, refusing with the reason
 * otherwise. The kernels that move elements (permute, transpose, expand,
 * slice) all go through one strided copy. Owns nothing else.
 */
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/tensor_internal.h"
#include "broadcast.h"
#include "op_args.h"
#include "op_table.h"

/* ---- shared helpers ---------------------------------------------------------- */

static void contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= shape[i];
    }
}

/* Copies `count` elements of `elem` bytes read every `stride` elements. */
static void copy_run(char *dst, const char *src, size_t elem, int64_t count, int64_t stride) {
    if (stride == 1) {
        memcpy(dst, src, (size_t)count * elem);
        return;
    }
    for (int64_t i = 0; i < count; i++) memcpy(dst + i * elem, src + i * stride * elem, elem);
}

/* Writes the view of `src` with shape `shape`, element strides `strides` and
 * first element `offset` into the contiguous buffer `dst`. The one mover
 * behind permute, transpose, expand and slice. */
static void strided_copy(void *dst, const void *src, size_t elem, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset) {
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) numel *= shape[i];
    if (numel == 0) return;
    int64_t inner = ndim ? shape[ndim - 1] : 1;
    int64_t inner_stride = ndim ? strides[ndim - 1] : 1;
    int64_t index[TP_MAX_DIMS] = {0};
    int64_t position = offset;
    char *out = dst;
    for (int64_t run = 0; run < numel / inner; run++) {
        copy_run(out, (const char *)src + position * (int64_t)elem, elem, inner, inner_stride);
        out += inner * (int64_t)elem;
        for (int k = ndim - 2; k >= 0; k--) { /* odometer over the outer dimensions */
            position += strides[k];
            if (++index[k] < shape[k]) break;
            position -= strides[k] * shape[k];
            index[k] = 0;
        }
    }
}

static tp_type type_of(const tp_tensor *tensor) {
    tp_type type = {.dtype = tensor->dtype, .ndim = tensor->ndim};
    memcpy(type.dims, tensor->shape, sizeof(int64_t) * (size_t)tensor->ndim);
    return type;
}

/* Kernels whose output is the input's elements in the same order. */
static tp_status copy_all(tp_tensor *const *inputs, tp_tensor *out) {
    memcpy(out->data, inputs[0]->data, out->nbytes);
    return TP_OK;
}

static int symbol_count(const tp_type *type, int *first_symbol_axis) {
    int count = 0;
    for (int i = 0; i < type->ndim; i++)
        if (TP_DIM_IS_SYMBOL(type->dims[i]) && count++ == 0) *first_symbol_axis = i;
    return count;
}

/* ---- reshape ------------------------------------------------------------------ */

/* Sizes of the target other than -1: checks them, finds the -1. */
static tp_status reshape_target(const tp_type *in, const tp_attrs *attrs, int *infer_at,
                                int64_t *known) {
    char in_text[TP_DESCRIBE_MAX], shape_text[TP_DESCRIBE_MAX];
    if (attrs->shape_ndim < 0 || attrs->shape_ndim > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "reshape: %d target dimensions (at most %d)",
                            attrs->shape_ndim, TP_MAX_DIMS);
    *infer_at = -1;
    *known = 1;
    for (int i = 0; i < attrs->shape_ndim; i++) {
        int64_t size = attrs->shape[i];
        bool bad = size < -1 || (size == -1 && *infer_at >= 0);
        if (bad)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "reshape: cannot reshape %s to %s: %s at position %d",
                                tp_type_text(in, in_text),
                                tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text),
                                size == -1 ? "a second -1" : "a negative size", i);
        if (size == -1)
            *infer_at = i;
        else if (__builtin_mul_overflow(*known, size, known))
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "reshape: target %s overflows int64",
                                tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text));
    }
    return TP_OK;
}

static tp_status reshape_mismatch(const tp_type *in, const tp_attrs *attrs, const char *why) {
    char in_text[TP_DESCRIBE_MAX], shape_text[TP_DESCRIBE_MAX];
    return tp_error_set(TP_ERR_SHAPE, "reshape: cannot reshape %s to %s: %s",
                        tp_type_text(in, in_text),
                        tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text), why);
}

tp_status tp_op_RESHAPE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_type *out) {
    const tp_type *in = &inputs[0];
    int infer_at = -1;
    int64_t known = 1;
    TP_TRY(reshape_target(in, attrs, &infer_at, &known));
    *out = (tp_type){.dtype = in->dtype, .ndim = attrs->shape_ndim};
    memcpy(out->dims, attrs->shape, sizeof(int64_t) * (size_t)attrs->shape_ndim);

    int symbol_axis = -1;
    int symbols = symbol_count(in, &symbol_axis);
    int64_t in_known = 1;
    for (int i = 0; i < in->ndim; i++)
        if (!TP_DIM_IS_SYMBOL(in->dims[i]) &&
            __builtin_mul_overflow(in_known, in->dims[i], &in_known))
            return reshape_mismatch(in, attrs, "the input's size overflows int64");
    if (symbols > 0) {
        /* Decidable only when the -1 stands for exactly the one symbol. */
        if (symbols == 1 && infer_at >= 0 && known == in_known && known != 0) {
            out->dims[infer_at] = in->dims[symbol_axis];
            return TP_OK;
        }
        char why[TP_DESCRIBE_MAX];
        snprintf(why, sizeof why,
                 "dimension %d is symbolic; use -1 for it, with the other sizes multiplying "
                 "to the input's fixed sizes",
                 symbol_axis);
        return reshape_mismatch(in, attrs, why);
    }
    if (infer_at >= 0) {
        if (known == 0) return reshape_mismatch(in, attrs, "-1 is ambiguous next to a size 0");
        if (in_known % known != 0)
            return reshape_mismatch(in, attrs, "the element count is not divisible");
        out->dims[infer_at] = in_known / known;
    } else if (known != in_known) {
        return reshape_mismatch(in, attrs, "the element counts differ");
    }
    return TP_OK;
}

tp_status tp_op_RESHAPE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_tensor *out) {
    return copy_all(inputs, out);
}

/* ---- permute and transpose ------------------------------------------------------ */

/* Normalises a permutation of the input's axes into perm_out. */
static tp_status permutation(const tp_type *in, const tp_attrs *attrs, int *perm_out) {
    char in_text[TP_DESCRIBE_MAX], perm_text[TP_DESCRIBE_MAX];
    if (attrs->nperm != in->ndim)
        return tp_error_set(
            TP_ERR_INVALID_ARGUMENT, "permute: perm %s has %d entries but %s has %d dimensions",
            tp_ints_text(attrs->perm, attrs->nperm < 0 ? 0 : attrs->nperm, perm_text), attrs->nperm,
            tp_type_text(in, in_text), in->ndim);
    bool seen[TP_MAX_DIMS] = {false};
    for (int i = 0; i < in->ndim; i++) {
        TP_TRY(
            tp_axis_normalize("permute", "perm entry", attrs->perm[i], in->ndim, in, &perm_out[i]));
        if (seen[perm_out[i]])
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "permute: perm %s for %s repeats axis %d (expected a "
                                "permutation of 0..%d)",
                                tp_ints_text(attrs->perm, attrs->nperm, perm_text),
                                tp_type_text(in, in_text), perm_out[i], in->ndim - 1);
        seen[perm_out[i]] = true;
    }
    return TP_OK;
}

static tp_status transposition(const tp_type *in, const tp_attrs *attrs, int *perm_out) {
    int dim0, dim1;
    TP_TRY(tp_axis_normalize("transpose", "dim0", attrs->dim0, in->ndim, in, &dim0));
    TP_TRY(tp_axis_normalize("transpose", "dim1", attrs->dim1, in->ndim, in, &dim1));
    for (int i = 0; i < in->ndim; i++) perm_out[i] = i;
    perm_out[dim0] = dim1;
    perm_out[dim1] = dim0;
    return TP_OK;
}

/* Permute and transpose differ only in how their attributes name the
 * permutation; the rule and the kernel are shared. */
typedef tp_status (*permutation_fn)(const tp_type *in, const tp_attrs *attrs, int *perm_out);

static tp_status permuted_infer(permutation_fn permutation_of, const tp_type *in,
                                const tp_attrs *attrs, tp_type *out) {
    int perm[TP_MAX_DIMS];
    TP_TRY(permutation_of(in, attrs, perm));
    *out = (tp_type){.dtype = in->dtype, .ndim = in->ndim};
    for (int i = 0; i < in->ndim; i++) out->dims[i] = in->dims[perm[i]];
    return TP_OK;
}

static tp_status permuted_copy(permutation_fn permutation_of, const tp_tensor *in,
                               const tp_attrs *attrs, tp_tensor *out) {
    int perm[TP_MAX_DIMS];
    tp_type in_type = type_of(in);
    TP_TRY(permutation_of(&in_type, attrs, perm));
    int64_t in_strides[TP_MAX_DIMS], strides[TP_MAX_DIMS];
    contiguous_strides(in->ndim, in->shape, in_strides);
    for (int i = 0; i < in->ndim; i++) strides[i] = in_strides[perm[i]];
    strided_copy(out->data, in->data, tp_dtype_size(in->dtype), out->ndim, out->shape, strides, 0);
    return TP_OK;
}

tp_status tp_op_PERMUTE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_type *out) {
    return permuted_infer(permutation, &inputs[0], attrs, out);
}

tp_status tp_op_PERMUTE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_tensor *out) {
    return permuted_copy(permutation, inputs[0], attrs, out);
}

tp_status tp_op_TRANSPOSE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_type *out) {
    return permuted_infer(transposition, &inputs[0], attrs, out);
}

tp_status tp_op_TRANSPOSE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                 tp_tensor *out) {
    return permuted_copy(transposition, inputs[0], attrs, out);
}

/* ---- expand --------------------------------------------------------------------- */

static tp_status expand_error(const tp_type *in, const tp_attrs *attrs, tp_status status,
                              const char *why, int position) {
    char in_text[TP_DESCRIBE_MAX], shape_text[TP_DESCRIBE_MAX];
    return tp_error_set(status, "expand: cannot expand %s to %s: %s (target position %d)",
                        tp_type_text(in, in_text),
                        tp_ints_text(attrs->shape, attrs->shape_ndim, shape_text), why, position);
}

tp_status tp_op_EXPAND_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    const tp_type *in = &inputs[0];
    int ndim = attrs->shape_ndim;
    if (ndim < in->ndim || ndim > TP_MAX_DIMS) {
        char in_text[TP_DESCRIBE_MAX];
        return tp_error_set(TP_ERR_SHAPE, "expand: target has %d dimensions; %s needs %d to %d",
                            ndim, tp_type_text(in, in_text), in->ndim, TP_MAX_DIMS);
    }
    *out = (tp_type){.dtype = in->dtype, .ndim = ndim};
    int lead = ndim - in->ndim;
    for (int i = 0; i < ndim; i++) {
        int64_t target = attrs->shape[i];
        if (target < -1 || (target == -1 && i < lead))
            return expand_error(in, attrs, TP_ERR_INVALID_ARGUMENT,
                                target == -1 ? "-1 cannot stand for a new leading dimension"
                                             : "a negative size",
                                i);
        if (i < lead) {
            out->dims[i] = target;
            continue;
        }
        int64_t size = in->dims[i - lead];
        if (target == -1 || target == size) {
            out->dims[i] = size;
        } else if (TP_DIM_IS_SYMBOL(size)) {
            return expand_error(in, attrs, TP_ERR_SHAPE,
                                "the input dimension is symbolic; use -1 to keep it", i);
        } else if (size == 1) {
            out->dims[i] = target;
        } else {
            return expand_error(in, attrs, TP_ERR_SHAPE, "sizes differ and the input's is not 1",
                                i);
        }
    }
    return TP_OK;
}

tp_status tp_op_EXPAND_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    const tp_tensor *in = inputs[0];
    int64_t strides[TP_MAX_DIMS];
    tp_broadcast_strides(in->ndim, in->shape, out->ndim, out->shape, strides);
    strided_copy(out->data, in->data, tp_dtype_size(in->dtype), out->ndim, out->shape, strides, 0);
    return TP_OK;
}

/* ---- slice -------------------------------------------------------------------------- */

/* Python's slice.indices for step > 0: clamps start/stop into [0, length]. */
static int64_t clamp_bound(int64_t bound, int64_t length) {
    if (bound < 0) bound = bound < -length ? 0 : bound + length;
    return bound > length ? length : bound;
}

typedef struct slice_range {
    int axis;
    int64_t first, count;
} slice_range;

static tp_status slice_resolve(const tp_type *in, const tp_attrs *attrs, slice_range *range) {
    char in_text[TP_DESCRIBE_MAX];
    TP_TRY(tp_axis_normalize("slice", "axis", attrs->axis, in->ndim, in, &range->axis));
    if (attrs->step <= 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "slice: step %lld on %s must be positive",
                            (long long)attrs->step, tp_type_text(in, in_text));
    int64_t length = in->dims[range->axis];
    if (TP_DIM_IS_SYMBOL(length)) {
        if (attrs->start == 0 && attrs->stop == TP_SLICE_END && attrs->step == 1) {
            range->first = 0;
            range->count = length; /* the whole symbolic axis */
            return TP_OK;
        }
        return tp_error_set(TP_ERR_SHAPE,
                            "slice: axis %d of %s is symbolic; only the whole axis (0:end:1) "
                            "can be sliced",
                            range->axis, tp_type_text(in, in_text));
    }
    int64_t start = clamp_bound(attrs->start, length);
    int64_t stop = clamp_bound(attrs->stop, length);
    range->first = start;
    range->count = stop > start ? (stop - start - 1) / attrs->step + 1 : 0;
    return TP_OK;
}

tp_status tp_op_SLICE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                            tp_type *out) {
    slice_range range;
    TP_TRY(slice_resolve(&inputs[0], attrs, &range));
    *out = inputs[0];
    out->dims[range.axis] = range.count;
    return TP_OK;
}

tp_status tp_op_SLICE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_tensor *out) {
    const tp_tensor *in = inputs[0];
    tp_type in_type = type_of(in);
    slice_range range;
    TP_TRY(slice_resolve(&in_type, attrs, &range));
    int64_t strides[TP_MAX_DIMS];
    contiguous_strides(in->ndim, in->shape, strides);
    int64_t offset = range.first * strides[range.axis];
    strides[range.axis] *= attrs->step;
    strided_copy(out->data, in->data, tp_dtype_size(in->dtype), out->ndim, out->shape, strides,
                 offset);
    return TP_OK;
}

/* ---- concat --------------------------------------------------------------------------- */

static tp_status concat_mismatch(const tp_type *inputs, int index, const char *why) {
    char first_text[TP_DESCRIBE_MAX], other_text[TP_DESCRIBE_MAX];
    return tp_error_set(TP_ERR_SHAPE, "concat: input %d %s does not fit input 0 %s: %s", index,
                        tp_type_text(&inputs[index], other_text),
                        tp_type_text(&inputs[0], first_text), why);
}

tp_status tp_op_CONCAT_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                             tp_type *out) {
    int axis;
    TP_TRY(tp_axis_normalize("concat", "axis", attrs->axis, inputs[0].ndim, &inputs[0], &axis));
    *out = inputs[0];
    out->dims[axis] = 0;
    for (int i = 0; i < num_inputs; i++) {
        const tp_type *in = &inputs[i];
        if (in->ndim != out->ndim) return concat_mismatch(inputs, i, "the ranks differ");
        for (int d = 0; d < in->ndim; d++)
            if (d != axis && in->dims[d] != inputs[0].dims[d]) {
                char why[64];
                snprintf(why, sizeof why, "dimension %d differs", d);
                return concat_mismatch(inputs, i, why);
            }
        if (TP_DIM_IS_SYMBOL(in->dims[axis])) {
            char text[TP_DESCRIBE_MAX];
            return tp_error_set(TP_ERR_SHAPE,
                                "concat: axis %d of input %d %s is symbolic; concatenate along "
                                "a dimension with a fixed size",
                                axis, i, tp_type_text(in, text));
        }
        if (__builtin_add_overflow(out->dims[axis], in->dims[axis], &out->dims[axis]))
            return concat_mismatch(inputs, i, "the total size overflows int64");
        if (i > 0) out->dtype = tp_dtype_promote(out->dtype, in->dtype);
    }
    return TP_OK;
}

/* Copies `in` (already of the output dtype) into its columns of `out`. */
static void concat_place(const tp_tensor *in, tp_tensor *out, int axis, int64_t axis_offset) {
    size_t elem = tp_dtype_size(out->dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= out->shape[d];
    for (int d = axis + 1; d < out->ndim; d++) inner *= out->shape[d];
    size_t block = (size_t)(in->shape[axis] * inner) * elem;
    size_t out_row = (size_t)(out->shape[axis] * inner) * elem;
    char *dst = (char *)out->data + (size_t)(axis_offset * inner) * elem;
    for (int64_t o = 0; o < outer; o++)
        memcpy(dst + (size_t)o * out_row, (const char *)in->data + (size_t)o * block, block);
}

tp_status tp_op_CONCAT_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_tensor *out) {
    int axis = (int)(attrs->axis < 0 ? attrs->axis + out->ndim : attrs->axis);
    int64_t axis_offset = 0;
    for (int i = 0; i < num_inputs; i++) {
        tp_tensor *in = inputs[i];
        tp_tensor *converted = NULL;
        if (in->dtype != out->dtype) { /* promote through the cast kernel */
            tp_attrs cast = TP_ATTRS_INIT;
            cast.dtype = out->dtype;
            TP_TRY(tp_tensor_create_uninit(out->dtype, in->ndim, in->shape, &converted));
            tp_kernel_fn cast_kernel = tp_op_get(TP_OP_CAST)->kernel;
            tp_status status =
                cast_kernel ? cast_kernel(&in, 1, &cast, converted)
                            : tp_error_set(TP_ERR_INTERNAL, "concat: the cast kernel is missing");
            if (status != TP_OK) {
                tp_tensor_release(converted);
                return status;
            }
            in = converted;
        }
        concat_place(in, out, axis, axis_offset);
        axis_offset += in->shape[axis];
        tp_tensor_release(converted);
    }
    return TP_OK;
}

/* ---- squeeze and unsqueeze ----------------------------------------------------------------- */

static tp_status squeeze_refuse(const tp_type *in, int axis, const char *why) {
    char in_text[TP_DESCRIBE_MAX];
    return tp_error_set(TP_ERR_SHAPE, "squeeze: dimension %d of %s %s", axis,
                        tp_type_text(in, in_text), why);
}

tp_status tp_op_SQUEEZE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                              tp_type *out) {
    const tp_type *in = &inputs[0];
    bool drop[TP_MAX_DIMS] = {false};
    if (attrs->naxes < 0 || attrs->naxes > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "squeeze: %d axes (at most %d)", attrs->naxes,
                            TP_MAX_DIMS);
    if (attrs->naxes == 0) {
        for (int d = 0; d < in->ndim; d++) {
            if (TP_DIM_IS_SYMBOL(in->dims[d]))
                return squeeze_refuse(in, d,
                                      "is symbolic (it may or may not be 1); name the axes "
                                      "to squeeze");
            drop[d] = in->dims[d] == 1;
        }
    }
    for (int i = 0; i < attrs->naxes; i++) {
        int axis;
        TP_TRY(tp_axis_normalize("squeeze", "axis", attrs->axes[i], in->ndim, in, &axis));
        if (drop[axis]) return squeeze_refuse(in, axis, "is named twice");
        if (TP_DIM_IS_SYMBOL(in->dims[axis]))
            return squeeze_refuse(in, axis, "is symbolic; only a size-1 axis can be squeezed");
        if (in->dims[axis] != 1) return squeeze_refuse(in, axis, "is not of size 1");
        drop[axis] = true;
    }
    *out = (tp_type){.dtype = in->dtype, .ndim = 0};
    for (int d = 0; d < in->ndim; d++)
        if (!drop[d]) out->dims[out->ndim++] = in->dims[d];
    return TP_OK;
}

tp_status tp_op_SQUEEZE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                               tp_tensor *out) {
    return copy_all(inputs, out);
}

tp_status tp_op_UNSQUEEZE_infer(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                tp_type *out) {
    const tp_type *in = &inputs[0];
    if (in->ndim >= TP_MAX_DIMS) {
        char in_text[TP_DESCRIBE_MAX];
        return tp_error_set(TP_ERR_SHAPE, "unsqueeze: %s already has the most dimensions (%d)",
                            tp_type_text(in, in_text), TP_MAX_DIMS);
    }
    int axis;
    TP_TRY(tp_axis_normalize("unsqueeze", "axis", attrs->axis, in->ndim + 1, in, &axis));
    *out = (tp_type){.dtype = in->dtype, .ndim = in->ndim + 1};
    for (int d = 0, from = 0; d < out->ndim; d++) out->dims[d] = d == axis ? 1 : in->dims[from++];
    return TP_OK;
}

tp_status tp_op_UNSQUEEZE_kernel(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                 tp_tensor *out) {
    return copy_all(inputs, out);
}
