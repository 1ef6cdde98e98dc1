/* NumPy broadcasting: the result shape of two operands and the strides that
 * read an operand as the broadcast shape. Shared by the pointwise ops,
 * expand, where and matmul's batch dimensions. Internal. */
#ifndef TP_CORE_OPS_BROADCAST_H
#define TP_CORE_OPS_BROADCAST_H

#include "tensorplay/graph.h"

/* Broadcasts a and b (right-aligned; equal sizes, or one of them 1; equal
 * symbols; a symbol against 1). Writes ndim/dims. On mismatch: TP_ERR_SHAPE
 * with "OP: cannot broadcast f32[2, 3] with f32[4] (dimension -1: 3 vs 4)". */
tp_status tp_broadcast_shapes(const char *op_name, const tp_type *a, const tp_type *b,
                              int32_t *ndim_out, int64_t *dims_out);

/* Element strides that read a C-contiguous operand of shape in_shape
 * (right-aligned) as out_shape: broadcast dimensions get stride 0. */
void tp_broadcast_strides(int in_ndim, const int64_t *in_shape, int out_ndim,
                          const int64_t *out_shape, int64_t *strides_out);

#endif
