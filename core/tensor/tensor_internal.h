/* The tp_tensor struct, shared inside libtensorplay (kernels read fields
 * directly on the hot path). Nothing outside core/ may include this. */
#ifndef TP_CORE_TENSOR_TENSOR_INTERNAL_H
#define TP_CORE_TENSOR_TENSOR_INTERNAL_H

#include <stdatomic.h>

#include "tensorplay/tensor.h"

struct tp_tensor {
    atomic_int refcount;
    tp_dtype dtype;
    int ndim;
    int64_t shape[TP_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    void *data; /* tp_aligned_alloc'd, owned */
    atomic_uint_fast64_t version;
    int device;  /* 0 = host; room for device-resident tensors (contract rev 2) */
    void *trace; /* capture: the tracing record this tensor stands for, or NULL */
};

/* Allocates an uninitialised tensor of `type` (the kernel writes every
 * element). Errors name the shape when the size overflows or memory runs out. */
tp_status tp_tensor_create_uninit(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out);

#endif
