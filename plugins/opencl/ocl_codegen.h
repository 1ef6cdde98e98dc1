/* From a graph view and concrete input types to one OpenCL C program: one
 * kernel per fusion region (plugins/common decides the regions) and how to
 * launch it. Pointwise/shape/creation regions run one work-item per element;
 * reductions use one work-group per output (a local-memory tree) or one
 * work-item per output when outputs are many and rows short; softmax,
 * log_softmax and layer_norm are row kernels (work-group reductions for the
 * row statistics, then the map); matmul and linear are tiled through local
 * memory with the region's pointwise epilogue applied before the store.
 * A region whose result nobody reads (and which is no graph output) gets no
 * kernel, so values are only stored where another kernel or the caller
 * needs them; everything else stays in registers. */
#ifndef TP_OPENCL_CODEGEN_H
#define TP_OPENCL_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "ocl_device.h"
#include "ocl_emit.h"

typedef struct ocl_launch {
    char name[96];
    int32_t root; /* the value the kernel stores */
    int32_t num_args;
    int32_t *args; /* buffer values in argument order; the last is `root` */
    cl_uint work_dim;
    size_t global[3], local[3];
} ocl_launch;

typedef struct ocl_codegen {
    ocl_graph graph;
    int32_t num_launches;
    ocl_launch *launches;
    bool *needs_buffer; /* per value: a device buffer exists */
    char *source;       /* the program */
} ocl_codegen;

/* Fills `out`; on failure writes the reason (naming the op, value and dtype)
 * into error. Free with ocl_codegen_free either way. */
int ocl_codegen_run(const tp_plugin_graph *view, const tp_plugin_tensor_meta *inputs,
                    int32_t num_inputs, const ocl_device *device, ocl_codegen *out, char *error,
                    size_t error_size);
void ocl_codegen_free(ocl_codegen *codegen);

#endif
