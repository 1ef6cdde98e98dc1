/* tp_tensor: creation, reference counts, accessors, versions and in-place
 * writes on host storage. Owns the tensor's lifecycle only: .npy files are in
 * npy.c, dtype rules in dtype.c, kernels in core/ops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "tensor/shape_text.h"
#include "tensor/tensor_internal.h"

char *tp_shape_format(char *buf, size_t size, int ndim, const int64_t *shape) {
    if (!buf || size == 0) return buf;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i <= ndim; i++) {
        char piece[32];
        const char *separator = i == 0 ? "[" : ", ";
        if (i < ndim)
            snprintf(piece, sizeof piece, "%s%lld", separator, (long long)shape[i]);
        else
            snprintf(piece, sizeof piece, "%s]", ndim == 0 ? "[" : "");
        size_t length = strlen(piece);
        if (used + length >= size) {
            if (size >= 4) memcpy(buf + size - 4, "...", 4);
            return buf;
        }
        memcpy(buf + used, piece, length + 1);
        used += length;
    }
    return buf;
}

tp_status tp_shape_check(tp_dtype dtype, int ndim, const int64_t *shape, int64_t *numel,
                         size_t *nbytes) {
    size_t element_size = tp_dtype_size(dtype);
    if (element_size == 0)
        return tp_error_set(TP_ERR_DTYPE,
                            "tensor: invalid dtype %d (expected f32, f64, i32, i64 or bool)",
                            (int)dtype);
    if (ndim < 0 || ndim > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tensor: ndim %d is out of range (a tensor has 0 to %d dimensions)",
                            ndim, TP_MAX_DIMS);
    if (ndim > 0 && !shape)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tensor: shape is NULL for ndim %d", ndim);
    char text[256];
    /* Product of the non-zero dimensions, so that the check does not depend on
     * where a size-0 dimension sits. */
    uint64_t limit = (uint64_t)INT64_MAX / element_size, product = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return tp_error_set(TP_ERR_SHAPE, "tensor %s%s: dimension %d is negative",
                                tp_dtype_name(dtype),
                                tp_shape_format(text, sizeof text, ndim, shape), i);
        if (shape[i] == 0) {
            empty = true;
            continue;
        }
        if ((uint64_t)shape[i] > limit / product)
            return tp_error_set(TP_ERR_SHAPE,
                                "tensor %s%s is too large: its size in bytes overflows a 64-bit "
                                "integer",
                                tp_dtype_name(dtype),
                                tp_shape_format(text, sizeof text, ndim, shape));
        product *= (uint64_t)shape[i];
    }
    if (product * element_size > SIZE_MAX)
        return tp_error_set(TP_ERR_SHAPE, "tensor %s%s is too large for this platform's size_t",
                            tp_dtype_name(dtype), tp_shape_format(text, sizeof text, ndim, shape));
    *numel = empty ? 0 : (int64_t)product;
    *nbytes = (size_t)*numel * element_size;
    return TP_OK;
}

static tp_status out_of_memory_for(const tp_tensor *tensor) {
    char text[256];
    return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tensor %s%s: out of memory allocating %zu bytes",
                        tp_dtype_name(tensor->dtype),
                        tp_shape_format(text, sizeof text, tensor->ndim, tensor->shape),
                        tensor->nbytes);
}

/* A tensor of this type without data (deferred). */
static tp_status create_header(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tensor: out is NULL");
    *out = NULL;
    int64_t numel;
    size_t nbytes;
    TP_TRY(tp_shape_check(dtype, ndim, shape, &numel, &nbytes));
    tp_tensor *tensor = tp_calloc(1, sizeof *tensor);
    if (!tensor) {
        char text[256];
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tensor %s%s: out of memory",
                            tp_dtype_name(dtype), tp_shape_format(text, sizeof text, ndim, shape));
    }
    atomic_init(&tensor->refcount, 1);
    tensor->dtype = dtype;
    tensor->ndim = ndim;
    if (ndim > 0) memcpy(tensor->shape, shape, (size_t)ndim * sizeof *shape);
    tensor->numel = numel;
    tensor->nbytes = nbytes;
    tensor->data = NULL;
    atomic_init(&tensor->version, 0);
    tensor->device = 0;
    tensor->trace = NULL;
    tensor->deferred = true;
    *out = tensor;
    return TP_OK;
}

tp_status tp_tensor_create_deferred(tp_dtype dtype, int ndim, const int64_t *shape,
                                    tp_tensor **out) {
    return create_header(dtype, ndim, shape, out);
}

tp_status tp_tensor_allocate_deferred(tp_tensor *tensor) {
    if (!tensor->deferred) return TP_OK;
    void *data = tp_aligned_alloc(tensor->nbytes);
    if (!data) return out_of_memory_for(tensor);
    tensor->data = data;
    tensor->deferred = false;
    return TP_OK;
}

tp_status tp_tensor_create_uninit(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out) {
    TP_TRY(create_header(dtype, ndim, shape, out));
    tp_status status = tp_tensor_allocate_deferred(*out);
    if (status != TP_OK) {
        free(*out);
        *out = NULL;
    }
    return status;
}

tp_status tp_tensor_create(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out) {
    TP_TRY(tp_tensor_create_uninit(dtype, ndim, shape, out));
    memset((*out)->data, 0, (*out)->nbytes);
    return TP_OK;
}

tp_status tp_tensor_wrap(tp_dtype dtype, int ndim, const int64_t *shape, void *data,
                         tp_tensor_release_fn release, void *release_data, tp_tensor **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_wrap: out is NULL");
    *out = NULL;
    int64_t numel;
    size_t nbytes;
    TP_TRY(tp_shape_check(dtype, ndim, shape, &numel, &nbytes));
    size_t element_size = tp_dtype_size(dtype);
    if (nbytes > 0 && !data)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_wrap: data is NULL for %zu bytes",
                            nbytes);
    if ((uintptr_t)data % element_size != 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_tensor_wrap: data %p is not aligned to the %s element size (%zu "
                            "bytes); copy it into an aligned buffer first",
                            data, tp_dtype_name(dtype), element_size);
    tp_tensor *tensor = tp_calloc(1, sizeof *tensor);
    if (!tensor) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_tensor_wrap: out of memory");
    atomic_init(&tensor->refcount, 1);
    tensor->dtype = dtype;
    tensor->ndim = ndim;
    if (ndim > 0) memcpy(tensor->shape, shape, (size_t)ndim * sizeof *shape);
    tensor->numel = numel;
    tensor->nbytes = nbytes;
    tensor->data = data;
    tensor->external = true;
    tensor->release_external = release;
    tensor->release_data = release_data;
    atomic_init(&tensor->version, 0);
    *out = tensor;
    return TP_OK;
}

tp_status tp_tensor_from_data(tp_dtype dtype, int ndim, const int64_t *shape, const void *data,
                              tp_tensor **out) {
    TP_TRY(tp_tensor_create_uninit(dtype, ndim, shape, out));
    if ((*out)->nbytes > 0) {
        if (!data) {
            tp_tensor_release(*out);
            *out = NULL;
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_from_data: data is NULL");
        }
        memcpy((*out)->data, data, (*out)->nbytes);
    }
    return TP_OK;
}

tp_status tp_tensor_clone(const tp_tensor *tensor, tp_tensor **out) {
    if (!tensor) {
        if (out) *out = NULL;
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_clone: tensor is NULL");
    }
    tp_tensor_note_raw_access(tensor, "tp_tensor_clone");
    TP_TRY(tp_tensor_from_data(tensor->dtype, tensor->ndim, tensor->shape, tensor->data, out));
    (*out)->device = tensor->device;
    return TP_OK;
}

tp_tensor *tp_tensor_retain(tp_tensor *tensor) {
    if (tensor) atomic_fetch_add_explicit(&tensor->refcount, 1, memory_order_relaxed);
    return tensor;
}

void tp_tensor_release(tp_tensor *tensor) {
    if (!tensor) return;
    /* acq_rel: the last owner sees every write made through other references. */
    if (atomic_fetch_sub_explicit(&tensor->refcount, 1, memory_order_acq_rel) != 1) return;
    if (!tensor->external)
        tp_aligned_free(tensor->data);
    else if (tensor->release_external)
        tensor->release_external(tensor->release_data);
    free(tensor);
}

tp_dtype tp_tensor_dtype(const tp_tensor *tensor) {
    return tensor ? tensor->dtype : TP_DTYPE_COUNT;
}

int tp_tensor_ndim(const tp_tensor *tensor) {
    return tensor ? tensor->ndim : 0;
}

int64_t tp_tensor_dim(const tp_tensor *tensor, int axis) {
    if (!tensor) return -1;
    tp_tensor_note_size_read(tensor);
    if (axis < 0) axis += tensor->ndim;
    if (axis < 0 || axis >= tensor->ndim) return -1;
    return tensor->shape[axis];
}

const int64_t *tp_tensor_shape(const tp_tensor *tensor) {
    tp_tensor_note_size_read(tensor);
    return tensor ? tensor->shape : NULL;
}

int64_t tp_tensor_numel(const tp_tensor *tensor) {
    tp_tensor_note_size_read(tensor);
    return tensor ? tensor->numel : 0;
}

size_t tp_tensor_nbytes(const tp_tensor *tensor) {
    tp_tensor_note_size_read(tensor);
    return tensor ? tensor->nbytes : 0;
}

const char *tp_tensor_device(const tp_tensor *tensor) {
    return tensor && tensor->device != 0 ? "device" : "cpu";
}

const void *tp_tensor_data(const tp_tensor *tensor) {
    tp_tensor_note_raw_access(tensor, "tp_tensor_data");
    return tensor ? tensor->data : NULL;
}

void *tp_tensor_data_mut(tp_tensor *tensor) {
    if (!tensor) return NULL;
    tp_tensor_note_raw_access(tensor, "tp_tensor_data_mut");
    tp_tensor_bump_version(tensor);
    return tensor->data;
}

uint64_t tp_tensor_version(const tp_tensor *tensor) {
    /* The counter is only read, but C11 wants a non-const object for atomics. */
    return tensor ? atomic_load(&((tp_tensor *)tensor)->version) : 0;
}

void tp_tensor_bump_version(tp_tensor *tensor) {
    if (tensor) atomic_fetch_add(&tensor->version, 1);
}

tp_status tp_tensor_copy_from(tp_tensor *tensor, const void *data, size_t nbytes) {
    if (!tensor)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_copy_from: tensor is NULL");
    tp_tensor_note_raw_access(tensor, "tp_tensor_copy_from");
    if (nbytes != tensor->nbytes) {
        char text[256];
        return tp_error_set(TP_ERR_SHAPE,
                            "tp_tensor_copy_from: tensor %s holds %zu bytes but %zu were given",
                            tp_tensor_describe(tensor, text, sizeof text), tensor->nbytes, nbytes);
    }
    if (nbytes > 0 && !data)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_copy_from: data is NULL");
    if (nbytes > 0) memmove(tensor->data, data, nbytes);
    tp_tensor_bump_version(tensor);
    return TP_OK;
}

/* Integer fills convert like a C cast (toward zero); a value the dtype cannot
 * hold (NaN, infinity, out of range) is an error rather than undefined. */
static tp_status check_integer_fill(const tp_tensor *tensor, double value, double low,
                                    double high) {
    if (value > low && value < high) return TP_OK;
    char text[256];
    return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_fill: %g does not fit tensor %s", value,
                        tp_tensor_describe(tensor, text, sizeof text));
}

tp_status tp_tensor_fill(tp_tensor *tensor, double value) {
    if (!tensor) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_tensor_fill: tensor is NULL");
    tp_tensor_note_raw_access(tensor, "tp_tensor_fill");
    int64_t n = tensor->numel;
    switch (tensor->dtype) {
    case TP_F32: {
        float *p = tensor->data, v = (float)value;
        for (int64_t i = 0; i < n; i++) p[i] = v;
        break;
    }
    case TP_F64: {
        double *p = tensor->data;
        for (int64_t i = 0; i < n; i++) p[i] = value;
        break;
    }
    case TP_I32: {
        TP_TRY(check_integer_fill(tensor, value, -2147483649.0, 2147483648.0));
        int32_t *p = tensor->data, v = (int32_t)value;
        for (int64_t i = 0; i < n; i++) p[i] = v;
        break;
    }
    case TP_I64: {
        TP_TRY(check_integer_fill(tensor, value, -9223372036854777856.0, 9223372036854775808.0));
        int64_t *p = tensor->data, v = (int64_t)value;
        for (int64_t i = 0; i < n; i++) p[i] = v;
        break;
    }
    case TP_BOOL:
        memset(tensor->data, value != 0, (size_t)n); /* NaN is true, as in C and NumPy */
        break;
    default:
        return tp_error_set(TP_ERR_INTERNAL, "tp_tensor_fill: tensor has invalid dtype %d",
                            (int)tensor->dtype);
    }
    tp_tensor_bump_version(tensor);
    return TP_OK;
}

double tp_tensor_get_f64(const tp_tensor *tensor, int64_t index) {
    tp_tensor_note_raw_access(tensor, "tp_tensor_get_f64");
    return tp_tensor_element_f64(tensor, index);
}

double tp_tensor_element_f64(const tp_tensor *tensor, int64_t index) {
    if (!tensor || index < 0 || index >= tensor->numel) return NAN;
    switch (tensor->dtype) {
    case TP_F32:
        return ((const float *)tensor->data)[index];
    case TP_F64:
        return ((const double *)tensor->data)[index];
    case TP_I32:
        return ((const int32_t *)tensor->data)[index];
    case TP_I64:
        return (double)((const int64_t *)tensor->data)[index];
    case TP_BOOL:
        return ((const uint8_t *)tensor->data)[index];
    default:
        return NAN;
    }
}

char *tp_tensor_describe(const tp_tensor *tensor, char *buf, size_t size) {
    if (!buf || size == 0) return buf;
    if (!tensor) {
        snprintf(buf, size, "(null)");
        return buf;
    }
    int used = snprintf(buf, size, "%s", tp_dtype_name(tensor->dtype));
    if (used >= 0 && (size_t)used < size)
        tp_shape_format(buf + used, size - (size_t)used, tensor->ndim, tensor->shape);
    return buf;
}
