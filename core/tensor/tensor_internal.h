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
    /* Capture: metadata only, `data` is NULL until the capture computes the
     * values (a gate or a raw read needs them). Only ever set while `trace`
     * is, so code that never sees traced tensors never sees a deferred one. */
    bool deferred;
};

/* Capture's hooks. When `trace` is not NULL it points to a struct whose first
 * member is a tp_tensor_trace_hook:
 *   on_raw_access  the raw-data APIs (tp_tensor_data, tp_tensor_data_mut,
 *                  tp_tensor_copy_from, tp_tensor_fill, tp_tensor_get_f64,
 *                  tp_tensor_clone, tp_npy_save) and the public runners
 *                  (tp_graph_run, tp_executable_run) call it before handing
 *                  out, writing or reading the data, so capture can tell that
 *                  the function looked behind the ops' back; on return the
 *                  tensor's values are computed (no longer deferred);
 *   on_size_read   the public size reads (tp_tensor_dim, tp_tensor_shape,
 *                  tp_tensor_numel, tp_tensor_nbytes) call it, so a size used
 *                  as a number becomes a guard on that size;
 *   recorder       the ctx recorder of the capture that traces the tensor: an
 *                  op on a ctx with another recorder is a foreign-ctx error;
 *   on_foreign_ctx eager.c calls it when that happens (`op` is the op name);
 *   capture_ctx    the ctx the capture runs the function on (a compiled
 *                  wrapper called on traced tensors runs its function there,
 *                  so it is traced into the outer graph).
 * Core code that reads values or sizes on the capture's behalf uses the
 * fields (or tp_tensor_element_f64) and never the public APIs. */
typedef struct tp_tensor_trace_hook tp_tensor_trace_hook;
struct tp_tensor_trace_hook {
    void (*on_raw_access)(tp_tensor_trace_hook *hook, const tp_tensor *tensor, const char *api);
    void (*on_size_read)(tp_tensor_trace_hook *hook, const tp_tensor *tensor);
    const void *recorder;
    void (*on_foreign_ctx)(tp_tensor_trace_hook *hook, const tp_tensor *tensor, const char *op);
    struct tp_ctx *(*capture_ctx)(tp_tensor_trace_hook *hook);
};

static inline void tp_tensor_note_raw_access(const tp_tensor *tensor, const char *api) {
    if (tensor && tensor->trace) {
        tp_tensor_trace_hook *hook = (tp_tensor_trace_hook *)tensor->trace;
        hook->on_raw_access(hook, tensor, api);
    }
}

static inline void tp_tensor_note_size_read(const tp_tensor *tensor) {
    if (tensor && tensor->trace) {
        tp_tensor_trace_hook *hook = (tp_tensor_trace_hook *)tensor->trace;
        hook->on_size_read(hook, tensor);
    }
}

/* Element `index` as a double (NAN when out of range), without telling
 * capture: for core code reading a value it records itself (gates). */
double tp_tensor_element_f64(const tp_tensor *tensor, int64_t index);

/* Allocates an uninitialised tensor of `type` (the kernel writes every
 * element). Errors name the shape when the size overflows or memory runs out. */
tp_status tp_tensor_create_uninit(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out);

/* A deferred tensor: shape and dtype, no data (capture's metadata-only
 * results). tp_tensor_allocate_deferred gives it its uninitialised buffer
 * and clears `deferred` (the caller's kernel then fills it). */
tp_status tp_tensor_create_deferred(tp_dtype dtype, int ndim, const int64_t *shape,
                                    tp_tensor **out);
tp_status tp_tensor_allocate_deferred(tp_tensor *tensor);

#endif
