/* The op table: what every op is (name, kind, arity, attributes, flags) and
 * the functions that define it (shape/dtype rule, reference kernel,
 * decomposition). Built from op_list.def in op_table.c; this is the only
 * place an op is defined. Internal to libtensorplay: plugins see ops through
 * the plugin graph view, by name.
 */
#ifndef TP_CORE_OPS_OP_TABLE_H
#define TP_CORE_OPS_OP_TABLE_H

#include "tensorplay/attrs.h"
#include "tensorplay/graph.h"
#include "tensorplay/tensor.h"

typedef enum tp_op_kind {
    TP_KIND_POINTWISE,
    TP_KIND_REDUCTION,
    TP_KIND_MATMUL,
    TP_KIND_SHAPE,
    TP_KIND_CREATION,
    TP_KIND_COMPOSITE,
    TP_KIND_COUNT
} tp_op_kind;

enum {
    TP_OPF_COMMUTATIVE = 1u << 0, /* op(a, b) == op(b, a): normalize may reorder */
    /* The compute-dtype rule (tp_op_compute_dtype). */
    TP_OPF_COMPUTE_PROMOTE = 1u << 1, /* promote every operand's dtype (NumPy style) */
    TP_OPF_COMPUTE_FLOAT = 1u << 2,   /* then integers and bool compute in f32 */
    TP_OPF_COMPUTE_WHERE = 1u << 3,   /* promote operands 1.. (where's values, not its cond) */
    TP_OPF_COMPUTE_WIDE = 1u << 4,    /* integers and bool compute in i64 (sum) */
};

typedef enum tp_op_id {
#define TP_OP(id, name, kind, min_arity, max_arity, attrs, flags) TP_OP_##id,
#include "op_list.def"
#undef TP_OP
    TP_OP_COUNT,
    TP_OP_INVALID = -1
} tp_op_id;

/* Shape and dtype rule. Reads the input types (dims may be symbols: rules
 * must treat equal symbols as equal sizes and refuse what they cannot decide
 * statically), validates attributes, writes the result type. On error calls
 * tp_error_set with a message naming the op and the input types, e.g.
 * "add: cannot broadcast f32[2, 3] with f32[4]". Callers add location. */
typedef tp_status (*tp_infer_fn)(const tp_type *inputs, int num_inputs, const tp_attrs *attrs,
                                 tp_type *out);

/* Reference kernel: `out` is allocated with the inferred type; the kernel
 * fills it. Inputs are contiguous and match the types given to infer. */
typedef tp_status (*tp_kernel_fn)(tp_tensor *const *inputs, int num_inputs, const tp_attrs *attrs,
                                  tp_tensor *out);

/* Decomposition of a composite into non-composite ops: appends nodes to
 * `graph` reading `inputs` and stores the value equal to the composite's
 * result in *out. Result dtype and shape must equal the composite's. */
typedef tp_status (*tp_decompose_fn)(tp_graph *graph, const tp_value_id *inputs, int num_inputs,
                                     const tp_attrs *attrs, tp_value_id *out);

typedef struct tp_op_def {
    tp_op_id id;
    const char *name;
    tp_op_kind kind;
    int min_arity, max_arity;
    uint64_t attr_mask; /* TP_ATTR_BIT(key) of each attribute the op reads */
    uint32_t flags;     /* TP_OPF_* */
    tp_infer_fn infer;
    tp_kernel_fn kernel;
    tp_decompose_fn decompose; /* composites only */
} tp_op_def;

extern const tp_op_def tp_op_table[TP_OP_COUNT];

/* NULL when unknown. */
const tp_op_def *tp_op_find(const char *name);
static inline const tp_op_def *tp_op_get(tp_op_id id) {
    return &tp_op_table[id];
}
const char *tp_op_kind_name(tp_op_kind kind);

/* The dtype `op` computes in, given its operands' dtypes (`count` of them)
 * and its result dtype (used by ops without operands): the TP_OPF_COMPUTE_*
 * rule of the op's flags, with f16/bf16 computing in f32. What the plugin
 * view's compute_dtype says. */
tp_dtype tp_op_compute_dtype(const tp_op_def *op, const tp_dtype *operands, int count,
                             tp_dtype result);

/* Checks arity against the table, runs infer; error messages name the op. */
tp_status tp_op_infer(const tp_op_def *op, const tp_type *inputs, int num_inputs,
                      const tp_attrs *attrs, tp_type *out);

/* Every infer/kernel/decompose function, declared by naming convention. */
#define TP_OP(id, name, kind, min_arity, max_arity, attrs, flags)                                  \
    tp_status tp_op_##id##_infer(const tp_type *, int, const tp_attrs *, tp_type *);               \
    tp_status tp_op_##id##_kernel(tp_tensor *const *, int, const tp_attrs *, tp_tensor *);         \
    tp_status tp_op_##id##_decompose(tp_graph *, const tp_value_id *, int, const tp_attrs *,       \
                                     tp_value_id *);
#include "op_list.def"
#undef TP_OP

#endif
