/* tp_op_run_kernel and its call counter (kernel_dispatch.h). */
#include "kernel_dispatch.h"

#include <stdatomic.h>

#include "../base/error.h"

static atomic_uint_fast64_t kernel_calls;

tp_status tp_op_run_kernel(const tp_op_def *op, tp_tensor *const *inputs, int num_inputs,
                           const tp_attrs *attrs, tp_tensor *out) {
    if (!op->kernel)
        return tp_error_set(TP_ERR_INTERNAL, "%s: no reference kernel (a TensorPlay bug)",
                            op->name);
    atomic_fetch_add_explicit(&kernel_calls, 1, memory_order_relaxed);
    return op->kernel(inputs, num_inputs, attrs, out);
}

uint64_t tp_reference_kernel_calls(void) {
    return atomic_load_explicit(&kernel_calls, memory_order_relaxed);
}
