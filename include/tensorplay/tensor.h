/* TensorPlay — tensors: dtypes, contiguous storage, reference counts, versions,
 * and .npy files.
 *
 * A tp_tensor is a reference-counted, dense, C-order (row-major) array of up
 * to TP_MAX_DIMS dimensions, with 64-byte-aligned storage (buffers of 2 MiB
 * and more are 2 MiB aligned and advised for transparent huge pages).
 *
 * Ownership: every function that returns a new tp_tensor ** hands the caller
 * one reference; release it with tp_tensor_release(). tp_tensor_retain() adds
 * a reference. Tensors returned by ops inside a tp_ctx belong to the ctx's
 * scope instead (see ops.h).
 *
 * Versions: every API that writes into an existing tensor (tp_tensor_data_mut,
 * tp_tensor_copy_from, tp_tensor_fill, tp_tensor_bump_version) increments its
 * version counter, so caches keyed on (tensor, version) never serve stale data.
 *
 * Type promotion (used by every op that combines dtypes; tested in
 * tests/ops): dtypes are ordered by category bool < integer < floating, and
 * inside a category by width (i32 < i64, f32 < f64).
 *   - promote(a, b) is the higher category; inside one category the wider.
 *     An integer meets a float: the float's own dtype (i64 + f32 -> f32, as
 *     in PyTorch; NumPy would give f64; i32 + f16 -> f16).
 *   - f16 and bf16 are floats of width 2 (f16 < f32 < f64, bf16 < f32):
 *     f16 + f16 -> f16, bf16 + bf16 -> bf16, f16/bf16 + f32 -> f32,
 *     f16/bf16 + f64 -> f64, and f16 + bf16 -> f32 (neither holds the
 *     other). They are storage dtypes: every op on them computes in f32
 *     (tp_dtype_compute) and rounds the result once when it stores it.
 *   - arithmetic (add sub mul pow maximum minimum matmul) computes in
 *     promote(a, b); add/sub/mul/pow/matmul reject bool x bool (cast first);
 *     maximum/minimum of bools is logical or/and.
 *   - div is true division: integers (and bools) promote to f32; floats keep
 *     promote(a, b).
 *   - comparisons (lt le gt ge eq ne) compare in promote(a, b) and give bool.
 *   - logical_and/or/not treat nonzero as true and give bool.
 *   - where(cond, a, b): cond any dtype (nonzero is true); result promote(a, b).
 *   - float-only unary functions (exp log sqrt rsqrt sin cos tanh sigmoid erf)
 *     and the composites that use them: integer/bool inputs give f32.
 *   - neg abs sign relu floor ceil keep the dtype (neg/abs/sign reject bool;
 *     floor/ceil of integers are the identity).
 *   - sum of bool/i32/i64 gives i64; mean of integers/bool gives f32; max/min
 *     keep the dtype; argmax gives i64.
 */
#ifndef TENSORPLAY_TENSOR_H
#define TENSORPLAY_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TP_MAX_DIMS         8
#define TP_TENSOR_ALIGNMENT 64

typedef enum tp_dtype {
    TP_F32 = 0,
    TP_F64 = 1,
    TP_I32 = 2,
    TP_I64 = 3,
    TP_BOOL = 4, /* one byte per element, 0 or 1 */
    TP_F16 = 5,  /* IEEE 754 binary16, storage only: ops compute in f32 */
    TP_BF16 = 6, /* bfloat16 (the top half of an f32), storage only: ops compute in f32 */
    TP_DTYPE_COUNT
} tp_dtype;

/* "f32", "f64", "i32", "i64", "bool", "f16", "bf16"; "?" for an invalid value. */
TP_API const char *tp_dtype_name(tp_dtype dtype);
/* Bytes per element; 0 for an invalid value. */
TP_API size_t tp_dtype_size(tp_dtype dtype);
/* Parses a dtype name; TP_ERR_NOT_FOUND with the accepted names otherwise. */
TP_API tp_status tp_dtype_from_name(const char *name, tp_dtype *out);
TP_API bool tp_dtype_is_float(tp_dtype dtype);   /* f16, bf16, f32, f64 */
TP_API bool tp_dtype_is_integer(tp_dtype dtype); /* i32, i64 (not bool) */
/* promote(a, b) as described above. */
TP_API tp_dtype tp_dtype_promote(tp_dtype a, tp_dtype b);
/* The dtype arithmetic on `dtype` is done in: f32 for the storage-only f16
 * and bf16, the dtype itself otherwise. */
TP_API tp_dtype tp_dtype_compute(tp_dtype dtype);

/* Conversions between f32/f64 and the 16-bit storage formats, as every
 * backend performs them: widening is exact; narrowing rounds to nearest, ties
 * to even, overflows to infinity, keeps subnormals and keeps NaN a NaN (its
 * sign and top payload bits, with the quiet bit set). Narrowing from an f64
 * rounds once (not through f32). */
TP_API float tp_f16_to_f32(uint16_t bits);
TP_API uint16_t tp_f16_from_f32(float value);
TP_API uint16_t tp_f16_from_f64(double value);
TP_API float tp_bf16_to_f32(uint16_t bits);
TP_API uint16_t tp_bf16_from_f32(float value);
TP_API uint16_t tp_bf16_from_f64(double value);

typedef struct tp_tensor tp_tensor;

/* New zero-filled tensor. ndim 0 is a scalar (one element). Every dimension
 * must be >= 0; size-0 dimensions are allowed. */
TP_API tp_status tp_tensor_create(tp_dtype dtype, int ndim, const int64_t *shape, tp_tensor **out);
/* New tensor holding a copy of `data` (numel * dtype size bytes, C order). */
TP_API tp_status tp_tensor_from_data(tp_dtype dtype, int ndim, const int64_t *shape,
                                     const void *data, tp_tensor **out);
/* Called once when the last reference to a tensor made by tp_tensor_wrap goes
 * (on whichever thread drops it), so the owner of the memory can free it. */
typedef void (*tp_tensor_release_fn)(void *release_data);
/* New tensor over caller-owned memory, without a copy: `data` holds numel *
 * dtype size bytes in C order, aligned to the element size (not necessarily
 * TP_TENSOR_ALIGNMENT: kernels make no alignment assumption). The memory must
 * stay valid until `release(release_data)` is called (release may be NULL when
 * the memory outlives every reference). `data` may be NULL only when numel is
 * 0. Used by language bindings to share NumPy arrays. */
TP_API tp_status tp_tensor_wrap(tp_dtype dtype, int ndim, const int64_t *shape, void *data,
                                tp_tensor_release_fn release, void *release_data, tp_tensor **out);
/* New tensor with the same dtype, shape and contents (version starts at 0). */
TP_API tp_status tp_tensor_clone(const tp_tensor *tensor, tp_tensor **out);

/* Adds one reference; returns `tensor` (NULL stays NULL). */
TP_API tp_tensor *tp_tensor_retain(tp_tensor *tensor);
/* Drops one reference; frees the tensor at zero. NULL is a no-op.
 * Storage of 2 MiB and more that the library allocated is kept for the next
 * tensor of about its size (a loop of tp_call with large outputs then reuses
 * memory the kernel has already mapped), up to TP_ALLOC_CACHE_MIB MiB in all
 * (default 256; 0 keeps none and returns it to the C library at once). */
TP_API void tp_tensor_release(tp_tensor *tensor);

TP_API tp_dtype tp_tensor_dtype(const tp_tensor *tensor);
TP_API int tp_tensor_ndim(const tp_tensor *tensor);
/* Size of dimension `axis` (negative counts from the end); -1 if out of range. */
TP_API int64_t tp_tensor_dim(const tp_tensor *tensor, int axis);
/* Pointer to ndim sizes, valid while the tensor lives. */
TP_API const int64_t *tp_tensor_shape(const tp_tensor *tensor);
TP_API int64_t tp_tensor_numel(const tp_tensor *tensor);
TP_API size_t tp_tensor_nbytes(const tp_tensor *tensor);
/* Device the storage lives on; revision 1 has only host tensors ("cpu"). */
TP_API const char *tp_tensor_device(const tp_tensor *tensor);

/* Read-only view of the elements. */
TP_API const void *tp_tensor_data(const tp_tensor *tensor);
/* Writable view; counts as an in-place write and bumps the version. */
TP_API void *tp_tensor_data_mut(tp_tensor *tensor);
TP_API uint64_t tp_tensor_version(const tp_tensor *tensor);
TP_API void tp_tensor_bump_version(tp_tensor *tensor);
/* Overwrites all elements from `data` (`nbytes` must equal the tensor's). */
TP_API tp_status tp_tensor_copy_from(tp_tensor *tensor, const void *data, size_t nbytes);
/* Sets every element to `value` converted to the dtype. */
TP_API tp_status tp_tensor_fill(tp_tensor *tensor, double value);
/* Element `index` (flat, C order) converted to double. */
TP_API double tp_tensor_get_f64(const tp_tensor *tensor, int64_t index);

/* Writes "f32[2, 3]" into buf (always NUL-terminated); returns buf. */
TP_API char *tp_tensor_describe(const tp_tensor *tensor, char *buf, size_t size);

/* .npy files: format 1.0, 2.0 and 3.0 headers; little-endian or
 * byte-order-free descr ('<f4' '<f8' '<i4' '<i8' '|b1'); fortran_order False.
 * Anything else is TP_ERR_PARSE/TP_ERR_UNSUPPORTED naming the file and field. */
TP_API tp_status tp_npy_load(const char *path, tp_tensor **out);
/* Parses an in-memory .npy image; `name` is used in error messages. */
TP_API tp_status tp_npy_load_buffer(const void *bytes, size_t size, const char *name,
                                    tp_tensor **out);
/* Writes format 1.0 (2.0 when the header needs it). Atomic: temp + rename. */
TP_API tp_status tp_npy_save(const char *path, const tp_tensor *tensor);

#ifdef __cplusplus
}
#endif
#endif
