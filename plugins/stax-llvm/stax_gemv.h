/* stax-llvm — products of a few rows that stream B row by row (stax_gemv.c,
 * kernels in stax_gemv_kernels.c). */
#ifndef STAX_GEMV_H
#define STAX_GEMV_H

#include "stax_internal.h"

/* The gemv kernels' names and IR for `family` (after its tile kernels, in
 * the same module: they use the intrinsics those declare). */
void stax_gemv_kernel_name(const stax_gemm_family *family, int32_t rows, char *name, size_t size);
void stax_gemv_dot_kernel_name(const stax_gemm_family *family, int32_t rows, char *name,
                               size_t size);
void stax_emit_gemv_kernels(tpcommon_buf *module, const stax_gemm_family *family);

/* Whether `gemm`'s shape suits the row-streaming kernels whatever B's
 * layout: few rows and an f32 A (the planner keeps a constant f32 B
 * row-major for them, see stax_gemv_row_major_b). */
bool stax_gemv_suits_shape(const stax_gemm *gemm);

/* Whether the shape suits and B is f32 with unit column stride, read from
 * its slot (nor packed at compile, nor supplied by the source). */
bool stax_gemv_suits_operands(const stax_gemm *gemm, const stax_gemm_source *source);

/* Whether stax_gemv_run computes `gemm` from `source` with `kernels`: the
 * operands suit and the kernels are loaded. */
bool stax_gemv_takes(const stax_gemm *gemm, const stax_gemm_source *source,
                     const stax_gemm_kernels *kernels);

/* Writes the f32 B of `gemm` (shared by its batches, any strides; b_data
 * its slot's data) as k rows of n floats to `out`: the layout the gemv
 * kernels stream; on `threads` of host's pool (host NULL or threads 1: the
 * caller's thread). */
void stax_gemv_row_major_b(const tp_plugin_host *host, const stax_gemm *gemm, int64_t threads,
                           const float *b_data, float *out);

/* The product (then the source's row bias and `epilogue`, per finished
 * block of columns) on at most `threads` threads of the host's pool, split
 * by columns. */
void stax_gemv_run(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                   const stax_gemm_kernels *kernels, stax_kernel_fn epilogue, int64_t threads,
                   const stax_gemm_source *source);

#endif
