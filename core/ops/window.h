/* The geometry the sliding-window ops share (conv, conv_transpose,
 * max_pool, avg_pool): reading and checking their window attributes
 * (strides, pads, dilations, kernel_shape) against an NCW / NCHW operand,
 * and the output size of each spatial axis. Internal to core/ops; owns no
 * op. A 1-D operand is held as 2-D with a leading axis of size 1, so the
 * kernels have one code path. */
#ifndef TP_CORE_OPS_WINDOW_H
#define TP_CORE_OPS_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorplay/attrs.h"
#include "tensorplay/graph.h"

#define TP_WINDOW_AXES 2 /* spatial axes held (1-D as 2-D with height 1) */

typedef struct tp_window {
    int spatial; /* spatial axes of the operand: 1 or 2 */
    int64_t in[TP_WINDOW_AXES], out[TP_WINDOW_AXES];
    int64_t kernel[TP_WINDOW_AXES], stride[TP_WINDOW_AXES], dilation[TP_WINDOW_AXES];
    int64_t pad_begin[TP_WINDOW_AXES], pad_end[TP_WINDOW_AXES];
    int64_t output_padding[TP_WINDOW_AXES]; /* conv_transpose */
} tp_window;

/* Checks that `x` is NCW or NCHW (rank 3 or 4) and reads strides, pads,
 * dilations (and output_padding when `transpose`) from `attrs` into `w`,
 * with the spatial sizes of `x` (symbols stay negative) and `kernel` (one
 * per spatial axis, in operand order). Errors name `op`, the attribute and
 * the operand's type. Does not compute `out`. */
tp_status tp_window_read(const char *op, const tp_type *x, const tp_attrs *attrs,
                         const int64_t *kernel, bool transpose, tp_window *w);

/* Output sizes of a forward window (conv, pools): floor (or, with
 * `ceil_mode`, ceil, dropping a last window that would start in the end
 * padding) of (in + pads - dilation * (kernel - 1) - 1) / stride + 1. An
 * axis whose result would be < 1 is an error naming `op` and `x`. A
 * symbolic input size is kept when the window maps it onto itself (kernel
 * extent covered by the pads, stride 1) and refused otherwise. */
tp_status tp_window_forward_sizes(const char *op, const tp_type *x, bool ceil_mode, tp_window *w);

/* Output sizes of conv_transpose: stride * (in - 1) + output_padding +
 * dilation * (kernel - 1) + 1 - pads; < 1 is an error. */
tp_status tp_window_transpose_sizes(const char *op, const tp_type *x, tp_window *w);

/* The spatial sizes of `w->out` written into `out` (dims 2..) after N, C. */
void tp_window_result_type(const tp_window *w, const tp_type *x, int64_t channels, tp_dtype dtype,
                           tp_type *out);

#endif
