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
    void *data; /* tp_aligned_alloc'd and owned, unless external */
    /* tp_tensor_wrap: the memory belongs to the caller; release_external (may
     * be NULL) is called once with release_data when the last reference goes. */
    bool external;
    tp_tensor_release_fn release_external;
    void *release_data;
    atomic_uint_fast64_t version;
    int device;  /* 0 = host; room for device-resident tensors (contract rev 2) */
    void *trace; /* capture: the tracing record this tensor stands for, or NULL */
};

/* Capture's hook on raw data access. When `trace` is not NULL it points to a
 * struct whose first member is a tp_tensor_trace_hook; the raw-data APIs
 * (tp_tensor_data, tp_tensor_data_mut, tp_tensor_copy_from, tp_tensor_fill)
 * call it before handing out or writing the data, so capture can tell that
 * the function it records looked behind the ops' back. */
typedef struct tp_tensor_trace_hook tp_tensor_trace_hook;
struct tp_tensor_trace_hook {
    void (*on_raw_access)(tp_tensor_trace_hook *hook, const tp_tensor *tensor, const char *api);
};

static inline void tp_tensor_note_raw_access(const tp_tensor *tensor, const char *api) {
    if (tensor && tensor->trace) {
        tp_tensor_trace_hook *hook = (tp_tensor_trace_hook *)tensor->trace;
        hook->on_raw_access(hook, tensor, api);
    }
}

/* Allocates an uninitialised tensor of `type` (the kernel writes every
 * element). Errors name the shape when the size overflows or memory runs out. */
tp_status tp_tensor_create_uninit(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out);

#endif
