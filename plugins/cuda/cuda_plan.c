/* Planning a lowered graph (cuda_graph.h): which nodes own a device buffer
 * and get a kernel, how every other node is read, and the launch shapes.
 *
 * Fusion: a pointwise node is inlined (recomputed) into every kernel that
 * reads it, unless it is a graph output or read by something that needs
 * memory (a view, a matmul operand, a concat operand); so a chain of
 * pointwise ops is one kernel, and the pointwise chain feeding a reduction
 * is computed inside the reduction's kernel. A matmul whose only reader is a
 * chain of single-reader pointwise ops of the matmul's shape is computed
 * inside the kernel of that chain's last node (the epilogue). Shape ops cost
 * nothing: they are strided views of their operand's buffer, except a
 * reshape of a view that no strides can express, which is copied. A kernel
 * inlines at most TPCOMMON_FUSION_MAX_MEMBERS nodes (the cap the other
 * backends' fusion uses): a longer chain is cut into several kernels.
 *
 * Why not plugins/common's tpcommon_fusion: it groups the nodes of the plugin
 * graph view, and this plugin fuses after its own lowering. Here softmax,
 * log_softmax and layer_norm are already decomposed into reductions and
 * pointwise nodes (so each becomes reduction kernels with their producers
 * fused in, plus one pointwise kernel), shape ops are gone into strided
 * views, and a pointwise node read several times is recomputed in each
 * reader's kernel rather than stored. tpcommon_fusion sees one ROW region per
 * composite, makes every shape op a region of its own and inlines only
 * single-use values, so its regions do not describe these kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_graph.h"
#include "tpcommon_fusion.h"
#include "tpcommon_text.h"

static void contiguous_strides(int ndim, const int64_t *dims, int64_t *strides) {
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = stride;
        stride *= dims[d];
    }
}

static void set_contiguous(cu_node *node, int buffer) {
    node->where.buffer = buffer;
    node->where.offset = 0;
    node->where.ndim = node->ndim;
    memcpy(node->where.dims, node->dims, sizeof node->dims);
    contiguous_strides(node->ndim, node->dims, node->where.strides);
    node->has_where = true;
}

/* The node's layout from its operand's; false when a reshape needs a copy. */
static bool derive_view(cu_node *node, const cu_strided *in) {
    cu_strided out = {.buffer = in->buffer, .offset = in->offset, .ndim = node->ndim};
    memcpy(out.dims, node->dims, sizeof out.dims);
    switch (node->view_op) {
    case CU_VIEW_PERMUTE:
        for (int d = 0; d < node->ndim; d++) out.strides[d] = in->strides[node->perm[d]];
        break;
    case CU_VIEW_EXPAND:
        for (int d = 0; d < node->ndim; d++) {
            int source = d - (node->ndim - in->ndim);
            out.strides[d] = source < 0 || (in->dims[source] == 1 && node->dims[d] != 1)
                                 ? 0
                                 : in->strides[source];
        }
        break;
    case CU_VIEW_SLICE:
        memcpy(out.strides, in->strides, sizeof out.strides);
        out.offset += node->slice_start * in->strides[node->axis];
        out.strides[node->axis] *= node->slice_step;
        break;
    case CU_VIEW_RESHAPE:
        if (tpcommon_strides_contiguous(in->ndim, in->dims, in->strides)) {
            contiguous_strides(node->ndim, node->dims, out.strides);
            break;
        }
        /* squeeze / unsqueeze: the sizes other than 1 are the same, in order */
        int source = 0;
        for (int d = 0; d < node->ndim; d++) {
            if (node->dims[d] == 1) {
                out.strides[d] = 0;
                continue;
            }
            while (source < in->ndim && in->dims[source] == 1) source++;
            if (source >= in->ndim || in->dims[source] != node->dims[d]) return false;
            out.strides[d] = in->strides[source++];
        }
        while (source < in->ndim && in->dims[source] == 1) source++;
        if (source != in->ndim) return false;
        break;
    }
    node->where = out;
    node->has_where = true;
    return true;
}

static bool needs_memory(const cu_node *consumer) {
    return consumer->kind == CU_VIEW || consumer->kind == CU_MATMUL || consumer->kind == CU_CONCAT;
}

/* Outputs that are inputs, constants or views get a copy node of their own,
 * so that every output is a contiguous buffer its kernel writes. */
static bool add_output_copies(cu_graph *graph, char *error, size_t error_size) {
    for (int i = 0; i < graph->num_outputs; i++) {
        const cu_node *node = &graph->nodes[graph->outputs[i]];
        if (node->kind != CU_INPUT && node->kind != CU_CONSTANT && node->kind != CU_VIEW) continue;
        if (graph->num_nodes == graph->capacity) {
            int capacity = graph->capacity * 2 + 8;
            cu_node *grown = realloc(graph->nodes, (size_t)capacity * sizeof *grown);
            if (!grown) return tpcommon_error(error, error_size, "out of memory planning"), false;
            graph->nodes = grown;
            graph->capacity = capacity;
            node = &graph->nodes[graph->outputs[i]];
        }
        cu_node copy = *node;
        copy.kind = CU_POINTWISE;
        copy.op = "copy";
        copy.op_id = CU_OP_COPY;
        copy.compute = node->dtype;
        copy.num_operands = 1;
        copy.owned_data = NULL;
        copy.data = NULL;
        copy.has_where = false;
        copy.operands = malloc(sizeof(int));
        if (!copy.operands)
            return tpcommon_error(error, error_size, "out of memory planning"), false;
        copy.operands[0] = graph->outputs[i];
        graph->nodes[graph->num_nodes] = copy;
        graph->outputs[i] = graph->num_nodes++;
    }
    return true;
}

/* The matmul's epilogue root, or -1 (see the file comment). */
static int epilogue_root(const cu_graph *graph, int matmul, const int *single_reader) {
    const cu_node *m = &graph->nodes[matmul];
    if (m->consumers != 1 || m->materialized) return -1;
    int current = single_reader[matmul];
    while (current >= 0) {
        const cu_node *node = &graph->nodes[current];
        if (node->kind != CU_POINTWISE) return -1;
        if (node->ndim != m->ndim || memcmp(node->dims, m->dims, sizeof(int64_t) * (size_t)m->ndim))
            return -1;
        if (node->materialized) return current;
        if (node->consumers != 1) return -1;
        current = single_reader[current];
    }
    return -1;
}

/* Cuts long inlined chains: `inlined[i]` bounds the nodes a kernel that
 * reads node i computes for it (i and its inlined pointwise producers,
 * shared ones counted once per path, so an upper bound). When a node would
 * exceed TPCOMMON_FUSION_MAX_MEMBERS, its inlined pointwise operands are
 * materialized: each becomes a kernel of its own, and no kernel is one
 * expression thousands of operations deep (NVRTC's compile time and the
 * emitter's walk grow with it). One pass in id order (operands first). */
static bool cap_inlined_chains(cu_graph *graph) {
    int n = graph->num_nodes;
    int64_t *inlined = calloc((size_t)n + 1, sizeof *inlined);
    if (!inlined) return false;
    for (int i = 0; i < n; i++) {
        cu_node *node = &graph->nodes[i];
        if (node->kind != CU_POINTWISE) continue;
        int64_t size = 1;
        for (int k = 0; k < node->num_operands; k++) {
            const cu_node *operand = &graph->nodes[node->operands[k]];
            if (operand->kind == CU_POINTWISE && !operand->materialized)
                size += inlined[node->operands[k]];
        }
        if (size > TPCOMMON_FUSION_MAX_MEMBERS) {
            for (int k = 0; k < node->num_operands; k++) {
                cu_node *operand = &graph->nodes[node->operands[k]];
                if (operand->kind == CU_POINTWISE) operand->materialized = true;
            }
            size = 1;
        }
        inlined[i] = node->materialized ? 0 : size;
    }
    free(inlined);
    return true;
}

static bool add_buffer(cu_graph *graph, cu_buffer_role role, int node, int input) {
    cu_buffer *grown = realloc(graph->buffers, (size_t)(graph->num_buffers + 1) * sizeof *grown);
    if (!grown) return false;
    graph->buffers = grown;
    cu_node *n = &graph->nodes[node];
    size_t nbytes = (size_t)cu_numel(n) * tpcommon_dtype_size(n->dtype);
    graph->buffers[graph->num_buffers] =
        (cu_buffer){.role = role, .node = node, .input = input, .nbytes = nbytes};
    set_contiguous(n, graph->num_buffers++);
    return true;
}

static uint32_t clamp_grid(int64_t blocks, int64_t limit) {
    if (blocks < 1) blocks = 1;
    return (uint32_t)(blocks < limit ? blocks : limit);
}

/* Number of elements the reduction reads per output, and outputs. */
static void reduction_extent(const cu_graph *graph, const cu_node *node, int64_t *outputs,
                             int64_t *reduced) {
    const cu_node *in = &graph->nodes[node->operands[0]];
    uint32_t mask = node->kind == CU_ARGMAX ? 1u << node->axis : node->reduce_mask;
    *outputs = 1;
    *reduced = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (mask & (1u << d))
            *reduced *= in->dims[d];
        else
            *outputs *= in->dims[d];
    }
}

static void configure_kernel(const cu_graph *graph, cu_kernel *kernel, int multiprocessors) {
    const cu_node *root = &graph->nodes[kernel->root];
    int64_t wide = (int64_t)multiprocessors * 32;
    kernel->block = 256;
    kernel->grid[1] = kernel->grid[2] = 1;
    switch (kernel->kind) {
    case CU_KERNEL_REDUCE_ROWS:
    case CU_KERNEL_REDUCE_COLUMNS: {
        int64_t outputs, reduced;
        reduction_extent(graph, root, &outputs, &reduced);
        kernel->work = outputs;
        if (kernel->kind == CU_KERNEL_REDUCE_ROWS) {
            if (reduced < 256)
                kernel->block = reduced <= 32 ? 32 : (uint32_t)((reduced + 31) / 32 * 32);
            kernel->grid[0] = clamp_grid(outputs, 65535 * 16);
        } else {
            kernel->grid[0] = clamp_grid((outputs + 255) / 256, wide);
        }
        break;
    }
    case CU_KERNEL_MATMUL: {
        const cu_node *m = &graph->nodes[kernel->matmul];
        const cu_node *a = &graph->nodes[m->operands[0]], *b = &graph->nodes[m->operands[1]];
        int64_t rows = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
        int64_t columns = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
        int64_t batch = cu_numel(m) / (rows * columns > 0 ? rows * columns : 1);
        int tile = rows * columns >= (int64_t)multiprocessors * 128 * 128 ? 128 : 64;
        kernel->work = cu_numel(m);
        kernel->grid[0] = clamp_grid((columns + tile - 1) / tile, 1u << 30);
        kernel->grid[1] = clamp_grid((rows + tile - 1) / tile, 65535);
        kernel->grid[2] = clamp_grid(batch, 65535);
        kernel->block = 256;
        kernel->tile = tile;
        break;
    }
    default:
        kernel->work = cu_numel(root);
        kernel->grid[0] = clamp_grid((kernel->work + 255) / 256, wide);
        break;
    }
}

/* "<graph>_r3_sum_logits": plugins/common's kernel name for kernel 3, from
 * its root's op and (for reading a profile) the value it came from. */
static void name_kernel(const cu_graph *graph, cu_kernel *kernel, int index, const cu_node *node) {
    const char *parts[2] = {node->kind == CU_VIEW ? "reshape" : node->op,
                            node->name ? node->name : ""};
    tpcommon_kernel_name(graph->name, index, parts, 2, kernel->name, sizeof kernel->name);
}

static cu_kernel_kind kernel_kind(const cu_graph *graph, const cu_node *node) {
    switch (node->kind) {
    case CU_REDUCE:
    case CU_ARGMAX: {
        const cu_node *in = &graph->nodes[node->operands[0]];
        uint32_t mask = node->kind == CU_ARGMAX ? 1u << node->axis : node->reduce_mask;
        int64_t outputs, reduced;
        reduction_extent(graph, node, &outputs, &reduced);
        bool inner_reduced = in->ndim == 0 || (mask & (1u << (in->ndim - 1)));
        return inner_reduced || outputs < 1024 ? CU_KERNEL_REDUCE_ROWS : CU_KERNEL_REDUCE_COLUMNS;
    }
    case CU_MATMUL:
        return CU_KERNEL_MATMUL;
    case CU_CONCAT:
        return CU_KERNEL_CONCAT;
    case CU_VIEW:
        return CU_KERNEL_RESHAPE_COPY;
    default:
        return CU_KERNEL_POINTWISE;
    }
}

bool cu_graph_plan(cu_graph *graph, int multiprocessors, char *error, size_t error_size) {
    if (!add_output_copies(graph, error, error_size)) return false;
    int n = graph->num_nodes;
    int *single_reader = malloc((size_t)n * sizeof(int) + 1);
    graph->kernels = calloc((size_t)n + 1, sizeof *graph->kernels);
    if (!single_reader || !graph->kernels) {
        free(single_reader);
        return tpcommon_error(error, error_size, "out of memory planning"), false;
    }
    for (int i = 0; i < n; i++) single_reader[i] = -1;
    for (int i = 0; i < n; i++) {
        cu_node *node = &graph->nodes[i];
        for (int k = 0; k < node->num_operands; k++) {
            cu_node *operand = &graph->nodes[node->operands[k]];
            operand->consumers++;
            single_reader[node->operands[k]] = i;
            if (needs_memory(node) && (operand->kind == CU_POINTWISE || operand->kind == CU_FULL))
                operand->materialized = true;
        }
        if (node->kind == CU_REDUCE || node->kind == CU_ARGMAX || node->kind == CU_MATMUL ||
            node->kind == CU_CONCAT)
            node->materialized = true;
    }
    for (int i = 0; i < graph->num_outputs; i++) {
        cu_node *node = &graph->nodes[graph->outputs[i]];
        node->materialized = true;
        node->consumers++;
    }
    if (!cap_inlined_chains(graph)) {
        free(single_reader);
        return tpcommon_error(error, error_size, "out of memory planning"), false;
    }
    /* matmul epilogues (decided before buffers: an absorbed matmul has none) */
    int *epilogue_of = malloc((size_t)n * sizeof(int) + 1);
    if (!epilogue_of) {
        free(single_reader);
        return tpcommon_error(error, error_size, "out of memory planning"), false;
    }
    for (int i = 0; i < n; i++) epilogue_of[i] = -1;
    for (int i = 0; i < n; i++) {
        cu_node *node = &graph->nodes[i];
        if (node->kind != CU_MATMUL) continue;
        node->materialized = false;
        int root = epilogue_root(graph, i, single_reader);
        if (root >= 0 && epilogue_of[root] < 0) {
            node->epilogue = true;
            epilogue_of[root] = i;
        } else {
            node->materialized = true;
        }
    }
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        cu_node *node = &graph->nodes[i];
        if (node->kind == CU_INPUT) {
            int input = 0;
            while (graph->inputs[input] != i) input++;
            ok = add_buffer(graph, CU_BUFFER_INPUT, i, input);
        } else if (node->kind == CU_CONSTANT) {
            ok = add_buffer(graph, CU_BUFFER_CONSTANT, i, -1);
        } else if (node->kind == CU_VIEW && !node->materialized) {
            const cu_node *operand = &graph->nodes[node->operands[0]];
            if (!derive_view(node, &operand->where)) node->materialized = true;
        }
        if (ok && node->materialized) ok = add_buffer(graph, CU_BUFFER_VALUE, i, -1);
        if (ok && node->materialized) {
            cu_kernel *kernel = &graph->kernels[graph->num_kernels];
            kernel->root = i;
            kernel->matmul = epilogue_of[i] >= 0 ? epilogue_of[i] : i;
            kernel->kind = epilogue_of[i] >= 0 ? CU_KERNEL_MATMUL : kernel_kind(graph, node);
            name_kernel(graph, kernel, graph->num_kernels, node);
            configure_kernel(graph, kernel, multiprocessors);
            graph->num_kernels++;
        }
    }
    free(single_reader);
    free(epilogue_of);
    if (!ok) tpcommon_error(error, error_size, "out of memory planning");
    return ok;
}
