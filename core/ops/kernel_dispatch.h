/* The one door to the reference kernels: the ops API (eager.c), the graph
 * interpreter (core/ir/interpret.c) and capture's on-demand evaluation all
 * run a kernel through tp_op_run_kernel, which counts the calls. Internal to
 * libtensorplay; tests read the count to show what a path computes. */
#ifndef TP_CORE_OPS_KERNEL_DISPATCH_H
#define TP_CORE_OPS_KERNEL_DISPATCH_H

#include <stdint.h>

#include "op_table.h"

/* Runs op's reference kernel into `out` (allocated with the inferred type).
 * TP_ERR_INTERNAL when the op has none. */
tp_status tp_op_run_kernel(const tp_op_def *op, tp_tensor *const *inputs, int num_inputs,
                           const tp_attrs *attrs, tp_tensor *out);

/* Reference kernels run through tp_op_run_kernel since the process started,
 * by every thread. */
uint64_t tp_reference_kernel_calls(void);

#endif
