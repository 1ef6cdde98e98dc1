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
 *   - every other node is a region of its own.
 * Regions are numbered in an order in which they can run (by their root). */
#ifndef TPCOMMON_FUSION_H
#define TPCOMMON_FUSION_H

#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"
#include "tpcommon_graph.h"

typedef enum tpcommon_region_kind {
    TPCOMMON_REGION_POINTWISE = 0, /* root is pointwise; members are pointwise */
    TPCOMMON_REGION_REDUCTION,     /* root is a reduction; other members its pointwise producers */
    TPCOMMON_REGION_ROW,           /* root is softmax/log_softmax/layer_norm, plus producers */
    TPCOMMON_REGION_MATMUL,        /* `matmul` plus (when root != matmul) a pointwise epilogue */
    TPCOMMON_REGION_SHAPE,         /* one shape op */
    TPCOMMON_REGION_CREATION,      /* one creation op */
    TPCOMMON_REGION_WINDOW,        /* one conv / conv_transpose / pool */
} tpcommon_region_kind;

typedef struct tpcommon_region {
    tpcommon_region_kind kind;
    int32_t root;        /* the value the region materializes */
    int32_t matmul;      /* MATMUL: the matmul/linear value; -1 otherwise */
    int32_t num_members; /* values computed by the region, SSA order, root last */
    int32_t *members;
} tpcommon_region;

typedef struct tpcommon_fusion {
    int32_t num_regions;
    tpcommon_region *regions;
    int32_t *region_of; /* per value: its region, -1 for graph inputs */
} tpcommon_fusion;

/* Computes the regions of `graph`. On failure writes the reason
 * into error and returns TP_PLUGIN_ERROR. Free with tpcommon_fusion_free. */
int32_t tpcommon_fusion_compute(const tp_plugin_graph *graph, tpcommon_fusion *out, char *error,
                                size_t error_size);
void tpcommon_fusion_free(tpcommon_fusion *fusion);
/* True when `value` is computed inside its region without being stored
 * (a member other than the root and the matmul). */
int tpcommon_fusion_is_inlined(const tpcommon_fusion *fusion, int32_t value);

#endif
