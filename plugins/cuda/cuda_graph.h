/* The cuda plugin's own graph: the plugin graph view lowered to concrete
 * shapes (symbols bound from the input metadata), composites decomposed,
 * shape ops reduced to four (reshape, permute, expand, slice), arange folded
 * into a constant; then the plan: which nodes own a device buffer, how every
 * other node is read (a strided view of a buffer, or an expression inlined
 * into the kernel that reads it), and the kernel list.
 *
 * Owns: the structs shared by lowering (cuda_lower.c), planning
 * (cuda_plan.c) and code generation (cuda_emit.c). Nothing here touches the
 * driver.
 */
#ifndef TP_PLUGIN_CUDA_GRAPH_H
#define TP_PLUGIN_CUDA_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"
#include "tpcommon_graph.h"

#define CU_MAX_DIMS TP_PLUGIN_MAX_DIMS

/* op_id of the planner's own output copies (never a TP_PLUGIN_OP_* id). */
#define CU_OP_COPY (-2)

typedef enum cu_kind {
    CU_INPUT,     /* graph input: a device buffer uploaded per run */
    CU_CONSTANT,  /* payload uploaded once (constant, arange) */
    CU_FULL,      /* every element `value`: a literal in the kernels that read it */
    CU_POINTWISE, /* op applied elementwise with broadcasting; also "copy" */
    CU_REDUCE,    /* sum mean max min over `reduce_mask` */
    CU_ARGMAX,    /* argmax along `axis` */
    CU_MATMUL,    /* numpy.matmul */
    CU_VIEW,      /* reshape / permute / expand / slice of its operand */
    CU_CONCAT,    /* concat along `axis` */
} cu_kind;

typedef enum cu_view_op {
    CU_VIEW_RESHAPE,
    CU_VIEW_PERMUTE,
    CU_VIEW_EXPAND,
    CU_VIEW_SLICE
} cu_view_op;

/* How a node's elements are found in device memory: element (i0, i1, ...)
 * is at buffer + offset + sum(i_d * strides[d]) (in elements). */
typedef struct cu_strided {
    int buffer;
    int64_t offset;
    int ndim;
    int64_t dims[CU_MAX_DIMS];
    int64_t strides[CU_MAX_DIMS];
} cu_strided;

typedef struct cu_node {
    cu_kind kind;
    const char *op;   /* op name: the op table's, or "copy" / "scalar" for lowering's own */
    int32_t op_id;    /* CU_POINTWISE: TP_PLUGIN_OP_*, or CU_OP_COPY */
    const char *name; /* the graph value it came from (for kernel names and errors) */
    int32_t dtype;    /* result dtype */
    int32_t compute;  /* pointwise: the dtype the op computes in (tensor.h rules) */
    int ndim;
    int64_t dims[CU_MAX_DIMS];
    int num_operands;
    int *operands; /* node indices, all smaller */

    /* attributes, by kind */
    double value;          /* CU_FULL */
    uint32_t reduce_mask;  /* CU_REDUCE: bit d set = operand axis d reduced */
    int axis;              /* CU_ARGMAX, CU_CONCAT */
    bool keepdim;          /* CU_REDUCE, CU_ARGMAX */
    cu_view_op view_op;    /* CU_VIEW */
    int perm[CU_MAX_DIMS]; /* CU_VIEW_PERMUTE */
    int64_t slice_start, slice_step;
    const void *data; /* CU_CONSTANT: payload (borrowed from the view, or owned_data) */
    size_t nbytes;
    void *owned_data;

    /* the plan */
    bool materialized; /* owns a contiguous buffer, written by its own kernel */
    bool epilogue;     /* a matmul computed inside its consumer's kernel */
    int consumers;
    cu_strided where; /* valid when materialized, or for views, inputs, constants */
    bool has_where;
} cu_node;

typedef enum cu_kernel_kind {
    CU_KERNEL_POINTWISE,
    CU_KERNEL_RESHAPE_COPY,   /* a reshape of a non-contiguous view */
    CU_KERNEL_REDUCE_ROWS,    /* one block per output, warp shuffles + shared memory */
    CU_KERNEL_REDUCE_COLUMNS, /* one thread per output, coalesced over outputs */
    CU_KERNEL_MATMUL,         /* shared-memory tiles, epilogue fused */
    CU_KERNEL_CONCAT,
} cu_kernel_kind;

typedef struct cu_kernel {
    cu_kernel_kind kind;
    int root;         /* the node whose buffer the kernel writes */
    int matmul;       /* CU_KERNEL_MATMUL: the matmul node (root is its epilogue or itself) */
    char name[96];    /* extern "C" name in the module (tpcommon_kernel_name) */
    uint32_t grid[3]; /* launch shape */
    uint32_t block;
    int tile;     /* CU_KERNEL_MATMUL: output tile edge (64 or 128) */
    int64_t work; /* elements (or outputs) the kernel covers; 0 = skip the launch */
} cu_kernel;

typedef enum cu_buffer_role { CU_BUFFER_INPUT, CU_BUFFER_CONSTANT, CU_BUFFER_VALUE } cu_buffer_role;

typedef struct cu_buffer {
    cu_buffer_role role;
    int node;  /* the node it holds */
    int input; /* CU_BUFFER_INPUT: graph input index */
    size_t nbytes;
} cu_buffer;

typedef struct cu_graph {
    const char *name;
    int num_nodes, capacity;
    cu_node *nodes;
    int num_inputs;
    int *inputs; /* node per graph input */
    int num_outputs;
    int *outputs; /* node per graph output (materialized after planning) */
    /* the plan */
    int num_buffers;
    cu_buffer *buffers;
    int num_kernels;
    cu_kernel *kernels;
} cu_graph;

/* Elements of a lowered node (dims are concrete). Dtype sizes, names and
 * promotion come from plugins/common (tpcommon_graph.h). */
int64_t cu_numel(const cu_node *node);

/* Lowers the view for inputs of exactly `inputs`. On failure writes the
 * reason (naming the value and op) into `error` and returns false. */
bool cu_graph_lower(const tp_plugin_graph *view, const tp_plugin_tensor_meta *inputs,
                    int32_t num_inputs, cu_graph *out, char *error, size_t error_size);

/* Decides buffers, views and kernels. `multiprocessors` sizes grids. */
bool cu_graph_plan(cu_graph *graph, int multiprocessors, char *error, size_t error_size);

void cu_graph_free(cu_graph *graph);

#endif
