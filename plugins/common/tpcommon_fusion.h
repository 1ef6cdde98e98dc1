/* plugins/common — fusion regions: which nodes of a graph view one kernel
 * computes. Backend-neutral: a backend emits one kernel (LLVM IR, OpenCL C,
 * CUDA C) per region.
 *
 * The view carries no fusion plan (plugin.h: fusion is the backend's own
 * business), so regions are computed here, in one backward pass over the
 * values (linear in the graph's size, no recursion):
 *   - a pointwise node is inlined into its consumer when it has exactly one
 *     use (and is not a graph output) and the consumer is pointwise with the
 *     same shape, or is a reduction / row op reading it as its first operand
 *     (a reduction fused with its pointwise producers);
 *   - a matmul whose one use is a pointwise node of the same shape that ends
 *     in a pointwise region joins that region as its matmul (matmul +
 *     pointwise epilogue: bias, activation, the following pointwise chain);
 *   - with window epilogues asked for (tpcommon_fusion_options; stax asks,
 *     opencl and cuda do not), a conv joins the same way: a conv whose one
 *     use is a pointwise node of the same shape that ends in a pointwise
 *     region joins that region as its window op (conv + pointwise epilogue:
 *     activation, residual add, the following pointwise chain); one anchor
 *     (matmul or conv) per region;
 *   - every other node is a region of its own;
 *   - a region holds at most TPCOMMON_FUSION_MAX_MEMBERS nodes: a longer
 *     chain is cut into several regions (kernels), so that no kernel is one
 *     expression thousands of operations deep (compile time in LLVM, PoCL
 *     and NVRTC grows faster than the expression, and every emitter's
 *     working set is bounded by the cap).
 * Regions are numbered in an order in which they can run (by their root). */
#ifndef TPCOMMON_FUSION_H
#define TPCOMMON_FUSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"
#include "tpcommon_graph.h"

/* The most nodes one region (one kernel) computes. */
#define TPCOMMON_FUSION_MAX_MEMBERS 1024

typedef enum tpcommon_region_kind {
    TPCOMMON_REGION_POINTWISE = 0, /* root is pointwise; members are pointwise */
    TPCOMMON_REGION_REDUCTION,     /* root is a reduction; other members its pointwise producers */
    TPCOMMON_REGION_ROW,           /* root is softmax/log_softmax/layer_norm, plus producers */
    TPCOMMON_REGION_MATMUL,        /* `matmul` plus (when root != matmul) a pointwise epilogue */
    TPCOMMON_REGION_SHAPE,         /* one shape op */
    TPCOMMON_REGION_CREATION,      /* one creation op */
    TPCOMMON_REGION_WINDOW,        /* one conv / conv_transpose / pool, plus (when root !=
                                    * window) a pointwise epilogue */
} tpcommon_region_kind;

typedef struct tpcommon_region {
    tpcommon_region_kind kind;
    int32_t root;        /* the value the region materializes */
    int32_t matmul;      /* MATMUL: the matmul/linear value; -1 otherwise */
    int32_t window;      /* WINDOW: the conv/pool value; -1 otherwise */
    int32_t num_members; /* values computed by the region, SSA order, root last */
    int32_t *members;
} tpcommon_region;

typedef struct tpcommon_fusion {
    int32_t num_regions;
    tpcommon_region *regions;
    int32_t *region_of; /* per value: its region, -1 for graph inputs */
} tpcommon_fusion;

/* What a backend's kernels can take beyond the default regions. */
typedef struct tpcommon_fusion_options {
    /* a conv's pointwise consumers join its region (the backend runs them as
     * an epilogue of its window step) */
    bool window_epilogues;
} tpcommon_fusion_options;

/* Computes the regions of `graph` (default options). On failure writes the
 * reason into error and returns TP_PLUGIN_ERROR. Free with
 * tpcommon_fusion_free. */
int32_t tpcommon_fusion_compute(const tp_plugin_graph *graph, tpcommon_fusion *out, char *error,
                                size_t error_size);
/* tpcommon_fusion_compute with `options` (NULL: the defaults). */
int32_t tpcommon_fusion_compute_with(const tp_plugin_graph *graph,
                                     const tpcommon_fusion_options *options, tpcommon_fusion *out,
                                     char *error, size_t error_size);
void tpcommon_fusion_free(tpcommon_fusion *fusion);
/* True when `value` is computed inside its region without being stored
 * (a member other than the root, the matmul and the window op). */
int tpcommon_fusion_is_inlined(const tpcommon_fusion *fusion, int32_t value);

#endif
