/* Builds THE op table from op_list.def. Owns nothing but the table and name
 * lookup; the rules and kernels live in the files of their kind
 * (pointwise.c, reduce.c, matmul.c, shape_ops.c, creation.c, composite.c).
 *
 * Functions are referenced weakly so that an op whose kernel or rule has not
 * been written links as NULL; tests/ops asserts that every op has its infer
 * and kernel, and every composite its decomposition, so a missing one fails
 * the suite rather than a user's program.
 */
#include "op_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

#define TP_OP(id, name, kind, min_arity, max_arity, attrs, flags)                                  \
    __attribute__((weak))                                                                          \
    tp_status tp_op_##id##_infer(const tp_type *, int, const tp_attrs *, tp_type *);               \
    __attribute__((weak))                                                                          \
    tp_status tp_op_##id##_kernel(tp_tensor *const *, int, const tp_attrs *, tp_tensor *);         \
    __attribute__((weak)) tp_status tp_op_##id##_decompose(tp_graph *, const tp_value_id *, int,   \
                                                           const tp_attrs *, tp_value_id *);
#include "op_list.def"
#undef TP_OP

const tp_op_def tp_op_table[TP_OP_COUNT] = {
#define TP_OP(ID, op_name, op_kind, min_a, max_a, attrs, op_flags)                                 \
    [TP_OP_##ID] = {.id = TP_OP_##ID,                                                              \
                    .name = op_name,                                                               \
                    .kind = TP_KIND_##op_kind,                                                     \
                    .min_arity = min_a,                                                            \
                    .max_arity = max_a,                                                            \
                    .attr_mask = attrs,                                                            \
                    .flags = op_flags,                                                             \
                    .infer = tp_op_##ID##_infer,                                                   \
                    .kernel = tp_op_##ID##_kernel,                                                 \
                    .decompose = tp_op_##ID##_decompose},
#include "op_list.def"
#undef TP_OP
};

/* Ops sorted by name, built once, so a lookup is a binary search: the
 * eager API, capture, the builder, the parser and the passes all find ops by
 * name, many times per graph. */
static const tp_op_def *ops_by_name[TP_OP_COUNT];
static pthread_once_t ops_by_name_once = PTHREAD_ONCE_INIT;

static int compare_op_names(const void *a, const void *b) {
    return strcmp((*(const tp_op_def *const *)a)->name, (*(const tp_op_def *const *)b)->name);
}

static void sort_ops_by_name(void) {
    for (int i = 0; i < TP_OP_COUNT; i++) ops_by_name[i] = &tp_op_table[i];
    qsort(ops_by_name, TP_OP_COUNT, sizeof ops_by_name[0], compare_op_names);
}

const tp_op_def *tp_op_find(const char *name) {
    if (!name) return NULL;
    pthread_once(&ops_by_name_once, sort_ops_by_name);
    size_t low = 0, high = TP_OP_COUNT;
    while (low < high) {
        size_t middle = (low + high) / 2;
        int order = strcmp(name, ops_by_name[middle]->name);
        if (order == 0) return ops_by_name[middle];
        if (order < 0)
            high = middle;
        else
            low = middle + 1;
    }
    return NULL;
}

const char *tp_op_kind_name(tp_op_kind kind) {
    static const char *const names[TP_KIND_COUNT] = {"pointwise", "reduction", "matmul",
                                                     "shape",     "creation",  "composite"};
    return (unsigned)kind < TP_KIND_COUNT ? names[kind] : "?";
}

tp_status tp_op_infer(const tp_op_def *op, const tp_type *inputs, int num_inputs,
                      const tp_attrs *attrs, tp_type *out) {
    if (num_inputs < op->min_arity || num_inputs > op->max_arity) {
        if (op->min_arity == op->max_arity)
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: expects %d input%s, got %d", op->name,
                                op->min_arity, op->min_arity == 1 ? "" : "s", num_inputs);
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "%s: expects %d to %d inputs, got %d",
                            op->name, op->min_arity, op->max_arity, num_inputs);
    }
    if (!op->infer)
        return tp_error_set(TP_ERR_INTERNAL, "%s: no shape rule is defined (a TensorPlay bug)",
                            op->name);
    static const tp_attrs defaults = TP_ATTRS_INIT;
    return op->infer(inputs, num_inputs, attrs ? attrs : &defaults, out);
}

tp_dtype tp_op_compute_dtype(const tp_op_def *op, const tp_dtype *operands, int count,
                             tp_dtype result) {
    if (count == 0) return tp_dtype_compute(result);
    tp_dtype dtype = operands[0];
    if (op->flags & TP_OPF_COMPUTE_WHERE) {
        dtype = count > 1 ? operands[1] : operands[0];
        for (int k = 2; k < count; k++) dtype = tp_dtype_promote(dtype, operands[k]);
    } else if (op->flags & TP_OPF_COMPUTE_PROMOTE) {
        for (int k = 1; k < count; k++) dtype = tp_dtype_promote(dtype, operands[k]);
    }
    if ((op->flags & TP_OPF_COMPUTE_FLOAT) && !tp_dtype_is_float(dtype)) dtype = TP_F32;
    if ((op->flags & TP_OPF_COMPUTE_WIDE) && !tp_dtype_is_float(dtype)) dtype = TP_I64;
    return tp_dtype_compute(dtype); /* f16/bf16 are stored, never computed in */
}
