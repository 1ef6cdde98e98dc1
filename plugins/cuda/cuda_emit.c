/* CUDA C generation for a planned graph (see cuda_emit.h).
 *
 * Kernels:
 *   pointwise     grid-stride loop over the root's elements; every inlined
 *                 node is one local variable; leaves are strided loads
 *                 (broadcast = stride 0), literals, or the matmul accumulator;
 *   reduce rows   one block per output (grid-stride over outputs): each thread
 *                 folds a strided share of the reduced elements (the inlined
 *                 producers computed on the fly), then warp shuffles
 *                 (__shfl_down_sync) and one shared-memory step across warps;
 *   reduce cols   one thread per output, when the innermost axis is kept:
 *                 neighbouring threads read neighbouring addresses;
 *   matmul        TxT output tiles (T = 64 or 128) of 256 threads, each thread
 *                 a (T/16)x(T/16) register tile; A and B staged through shared
 *                 memory in K-slices; the epilogue evaluates the fused
 *                 pointwise chain on the accumulators before the one store;
 *   concat        one pass over the output choosing the operand by coordinate;
 *   reshape copy  a reshape no strides can express.
 * Accumulation: sum/mean of floats in double, of integers in the unsigned
 * 64-bit twin (wraps, as the reference); matmul in the compute dtype
 * (integers in the unsigned twin). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_emit.h"
#include "tensorplay/plugin_ops.h"
#include "tpcommon_text.h"

/* ---- one kernel's expression context ------------------------------------------------------ */

typedef struct kernel_ctx {
    const cu_graph *graph;
    tpcommon_buf *out;
    unsigned char *done; /* per node: its variable exists in the current scope */
    int *touched;        /* the nodes whose done is set (reset_done clears them) */
    int num_touched;
    int root;
    int acc_node; /* the matmul read as acc_text, or -1 */
    const char *acc_text;
    int iter_ndim;
    int64_t iter_dims[CU_MAX_DIMS];
    bool flat; /* `i` is the C-order index of the iteration shape */
    bool failed;
    char *error;
    size_t error_size;
} kernel_ctx;

static void kernel_fail(kernel_ctx *ctx, const char *what, const cu_node *node) {
    if (!ctx->failed)
        tpcommon_error(ctx->error, ctx->error_size, "code generation: %s (%%%s = %s)", what,
                       node->name ? node->name : "?", node->op);
    ctx->failed = true;
}

/* "b3[offset]" for node read at the iteration coordinates (broadcasting). */
static void load_text(const kernel_ctx *ctx, const cu_node *node, char *out, size_t size) {
    const cu_strided *w = &node->where;
    bool same_shape = node->ndim == ctx->iter_ndim &&
                      !memcmp(node->dims, ctx->iter_dims, sizeof(int64_t) * (size_t)node->ndim);
    if (ctx->flat && same_shape && tpcommon_strides_contiguous(w->ndim, w->dims, w->strides)) {
        snprintf(out, size, "b%d[(tp_index)%lld + i]", w->buffer, (long long)w->offset);
        return;
    }
    size_t used =
        (size_t)snprintf(out, size, "b%d[(tp_index)%lld", w->buffer, (long long)w->offset);
    for (int d = 0; d < node->ndim && used < size; d++) {
        if (node->dims[d] == 1 || w->strides[d] == 0) continue;
        int axis = ctx->iter_ndim - node->ndim + d;
        used += (size_t)snprintf(out + used, size - used, " + c%d * (tp_index)%lld", axis,
                                 (long long)w->strides[d]);
    }
    if (used < size) snprintf(out + used, size - used, "]");
}

static void emit_value(kernel_ctx *ctx, int index);

/* Operand k of a pointwise node as text of the type the op computes in. */
static void operand_text(kernel_ctx *ctx, const cu_node *node, int k, char *out, size_t size) {
    int operand = node->operands[k];
    const cu_node *source = &ctx->graph->nodes[operand];
    bool where_condition = node->op_id == TP_PLUGIN_OP_WHERE && k == 0;
    if (where_condition)
        snprintf(out, size, "(v%d != 0)", operand);
    else if (source->dtype != node->compute)
        snprintf(out, size, "((%s)v%d)", cu_ctype(node->compute), operand);
    else
        snprintf(out, size, "v%d", operand);
}

/* Whether node `index` is computed from its operands here (pointwise and
 * neither stored nor the accumulator) rather than loaded or spelled as a
 * literal. */
static bool computed_here(const kernel_ctx *ctx, int index) {
    const cu_node *node = &ctx->graph->nodes[index];
    if (index == ctx->acc_node || (index != ctx->root && node->has_where)) return false;
    return node->kind == CU_POINTWISE;
}

/* Writes `const T vN = ...;` for node `index`, whose operands (if any) have
 * their variables already. */
static void emit_one(kernel_ctx *ctx, int index) {
    const cu_node *node = &ctx->graph->nodes[index];
    const char *T = cu_ctype(node->dtype);
    char expression[2048];
    if (index == ctx->acc_node) {
        snprintf(expression, sizeof expression, "((%s)%s)", T, ctx->acc_text);
    } else if (index != ctx->root && node->has_where) {
        load_text(ctx, node, expression, sizeof expression);
    } else if (node->kind == CU_FULL) {
        cu_literal(node->dtype, node->value, expression, sizeof expression);
    } else if (node->kind == CU_POINTWISE) {
        char operands[3][64];
        const char *texts[3] = {operands[0], operands[1], operands[2]};
        for (int k = 0; k < node->num_operands; k++)
            operand_text(ctx, node, k, operands[k], sizeof operands[k]);
        if (node->op_id == CU_OP_COPY) {
            snprintf(expression, sizeof expression, "%s", texts[0]);
        } else if (!cu_expr_pointwise(node->op_id, node->compute, node->dtype, texts, expression,
                                      sizeof expression)) {
            if (!ctx->failed)
                tpcommon_error(ctx->error, ctx->error_size,
                               "unsupported: op '%s' (%%%s) computing in %s: no CUDA expression",
                               node->op, node->name ? node->name : "?",
                               tpcommon_dtype_name(node->compute));
            ctx->failed = true;
            return;
        }
    } else {
        kernel_fail(ctx, "internal: value is neither stored nor inlinable", node);
        return;
    }
    tpcommon_buf_printf(ctx->out, "            const %s v%d = %s;\n", T, index, expression);
    ctx->done[index] = 1;
    ctx->touched[ctx->num_touched++] = index;
}

/* A node being emitted and the next operand to visit. */
typedef struct emit_frame {
    int node, next;
} emit_frame;

typedef struct emit_stack {
    emit_frame *frames;
    int depth, capacity;
} emit_stack;

static bool emit_stack_push(emit_stack *stack, int node) {
    if (stack->depth == stack->capacity) {
        int capacity = stack->capacity ? stack->capacity * 2 : 32;
        emit_frame *grown = realloc(stack->frames, sizeof *grown * (size_t)capacity);
        if (!grown) return false;
        stack->frames = grown;
        stack->capacity = capacity;
    }
    stack->frames[stack->depth++] = (emit_frame){node, 0};
    return true;
}

/* Emits the variable of node `index` and of every inlined node it reads,
 * operands before their readers, each once per scope. A depth-first walk
 * with an explicit stack, so a long inlined chain needs heap, not C stack. */
static void emit_value(kernel_ctx *ctx, int index) {
    if (ctx->failed || ctx->done[index]) return;
    emit_stack stack = {0};
    bool ok = emit_stack_push(&stack, index);
    while (ok && stack.depth > 0 && !ctx->failed) {
        emit_frame *top = &stack.frames[stack.depth - 1];
        const cu_node *node = &ctx->graph->nodes[top->node];
        if (ctx->done[top->node]) {
            stack.depth--;
            continue;
        }
        bool computed = computed_here(ctx, top->node);
        if (computed && node->num_operands > 3) {
            kernel_fail(ctx, "more than 3 operands", node);
            break;
        }
        if (computed && top->next < node->num_operands) {
            int operand = node->operands[top->next++];
            if (!ctx->done[operand]) ok = emit_stack_push(&stack, operand);
            continue;
        }
        emit_one(ctx, top->node);
        stack.depth--;
    }
    free(stack.frames);
    if (!ok && !ctx->failed) {
        tpcommon_error(ctx->error, ctx->error_size, "out of memory generating code");
        ctx->failed = true;
    }
}

/* Forgets every variable of the current scope (the nodes emit_value marked). */
static void reset_done(kernel_ctx *ctx) {
    for (int i = 0; i < ctx->num_touched; i++) ctx->done[ctx->touched[i]] = 0;
    ctx->num_touched = 0;
}

/* const tp_index cD = ... for the iteration shape from the flat `index`
 * over the axes listed in `axes` (count of them), C order. */
static void emit_unravel(tpcommon_buf *out, const char *index, const int *axes, int count,
                         const int64_t *dims, const char *prefix) {
    int64_t stride = 1;
    int64_t strides[CU_MAX_DIMS];
    for (int j = count - 1; j >= 0; j--) {
        strides[j] = stride;
        stride *= dims[axes[j]];
    }
    for (int j = 0; j < count; j++)
        tpcommon_buf_printf(
            out, "            const tp_index %s%d = (%s / (tp_index)%lld) %% (tp_index)%lld;\n",
            prefix, axes[j], index, (long long)strides[j], (long long)dims[axes[j]]);
}

static void emit_all_coords(kernel_ctx *ctx, const char *index) {
    int axes[CU_MAX_DIMS];
    for (int d = 0; d < ctx->iter_ndim; d++) axes[d] = d;
    emit_unravel(ctx->out, index, axes, ctx->iter_ndim, ctx->iter_dims, "c");
}

static void emit_signature(const cu_graph *graph, tpcommon_buf *out, const cu_kernel *kernel,
                           unsigned block) {
    tpcommon_buf_printf(out, "\nextern \"C\" __global__ void __launch_bounds__(%u) %s(", block,
                        kernel->name);
    for (int b = 0; b < graph->num_buffers; b++) {
        const cu_node *node = &graph->nodes[graph->buffers[b].node];
        tpcommon_buf_printf(out, "%s%s *__restrict__ b%d", b ? ", " : "", cu_ctype(node->dtype), b);
    }
    tpcommon_buf_printf(out, ") {\n");
}

static void set_iteration(kernel_ctx *ctx, const cu_node *shape) {
    ctx->iter_ndim = shape->ndim;
    memcpy(ctx->iter_dims, shape->dims, sizeof ctx->iter_dims);
}

/* ---- pointwise, reshape copy, concat ----------------------------------------------------- */

static void emit_grid_loop(tpcommon_buf *out, int64_t count) {
    tpcommon_buf_printf(
        out,
        "    for (tp_index i = (tp_index)blockIdx.x * blockDim.x + threadIdx.x; i < "
        "(tp_index)%lld;\n         i += (tp_index)gridDim.x * blockDim.x) {\n",
        (long long)count);
}

static void emit_pointwise(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_node *root = &ctx->graph->nodes[kernel->root];
    set_iteration(ctx, root);
    ctx->flat = true;
    emit_grid_loop(ctx->out, cu_numel(root));
    tpcommon_buf_printf(ctx->out, "        {\n");
    emit_all_coords(ctx, "i");
    emit_value(ctx, kernel->root);
    tpcommon_buf_printf(ctx->out, "            b%d[i] = v%d;\n        }\n    }\n",
                        root->where.buffer, kernel->root);
}

static void emit_reshape_copy(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_node *root = &ctx->graph->nodes[kernel->root];
    const cu_node *source = &ctx->graph->nodes[root->operands[0]];
    set_iteration(ctx, source); /* the source's coordinates of flat index i */
    ctx->flat = false;
    emit_grid_loop(ctx->out, cu_numel(root));
    tpcommon_buf_printf(ctx->out, "        {\n");
    emit_all_coords(ctx, "i");
    emit_value(ctx, root->operands[0]);
    tpcommon_buf_printf(ctx->out, "            b%d[i] = v%d;\n        }\n    }\n",
                        root->where.buffer, root->operands[0]);
}

static void emit_concat(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_node *root = &ctx->graph->nodes[kernel->root];
    set_iteration(ctx, root);
    ctx->flat = false;
    emit_grid_loop(ctx->out, cu_numel(root));
    tpcommon_buf_printf(ctx->out, "        {\n");
    int axes[CU_MAX_DIMS], count = 0;
    for (int d = 0; d < root->ndim; d++) axes[count++] = d;
    emit_unravel(ctx->out, "i", axes, count, root->dims, "c");
    tpcommon_buf_printf(ctx->out, "            const tp_index tp_axis = c%d;\n", root->axis);
    tpcommon_buf_printf(ctx->out, "            %s value;\n", cu_ctype(root->dtype));
    int64_t start = 0;
    for (int k = 0; k < root->num_operands; k++) {
        const cu_node *operand = &ctx->graph->nodes[root->operands[k]];
        int64_t end = start + operand->dims[root->axis];
        tpcommon_buf_printf(ctx->out, "            %sif (tp_axis < (tp_index)%lld) {\n",
                            k ? "else " : "", (long long)end);
        tpcommon_buf_printf(ctx->out,
                            "            const tp_index c%d = tp_axis - (tp_index)%lld;\n",
                            root->axis, (long long)start);
        char load[1024];
        load_text(ctx, operand, load, sizeof load);
        tpcommon_buf_printf(ctx->out, "            value = (%s)%s;\n            }\n",
                            cu_ctype(root->dtype), load);
        start = end;
    }
    tpcommon_buf_printf(ctx->out, "            b%d[i] = value;\n        }\n    }\n",
                        root->where.buffer);
}

/* ---- reductions ---------------------------------------------------------------------------- */

typedef struct reduction {
    const char *op; /* sum mean max min argmax */
    const char *acc_type;
    char identity[96];
    int64_t outputs, reduced;
    int kept[CU_MAX_DIMS], num_kept, axes[CU_MAX_DIMS], num_axes;
} reduction;

static void describe_reduction(const cu_graph *graph, const cu_node *node, reduction *r) {
    const cu_node *in = &graph->nodes[node->operands[0]];
    uint32_t mask = node->kind == CU_ARGMAX ? 1u << node->axis : node->reduce_mask;
    r->op = node->kind == CU_ARGMAX ? "argmax" : node->op;
    r->outputs = r->reduced = 1;
    r->num_kept = r->num_axes = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (mask & (1u << d)) {
            r->axes[r->num_axes++] = d;
            r->reduced *= in->dims[d];
        } else {
            r->kept[r->num_kept++] = d;
            r->outputs *= in->dims[d];
        }
    }
    bool is_float = tpcommon_dtype_is_float(in->dtype);
    bool sum = !strcmp(r->op, "sum"), mean = !strcmp(r->op, "mean");
    if (sum || mean) {
        r->acc_type = is_float || mean ? "double" : "unsigned long long";
        snprintf(r->identity, sizeof r->identity, "0");
        return;
    }
    r->acc_type = in->dtype == TP_PLUGIN_BOOL ? "int" : cu_ctype(in->dtype);
    bool lowest = strcmp(r->op, "min") != 0; /* max and argmax start from the lowest */
    switch (in->dtype) {
    case TP_PLUGIN_F32:
    case TP_PLUGIN_F64:
        cu_literal(in->dtype, lowest ? -1.0 / 0.0 : 1.0 / 0.0, r->identity, sizeof r->identity);
        break;
    case TP_PLUGIN_I32:
        snprintf(r->identity, sizeof r->identity, "%s",
                 lowest ? "(-2147483647 - 1)" : "2147483647");
        break;
    case TP_PLUGIN_I64:
        snprintf(r->identity, sizeof r->identity, "%s",
                 lowest ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL");
        break;
    default:
        snprintf(r->identity, sizeof r->identity, "%s", lowest ? "0" : "1");
        break;
    }
}

/* `acc` (and `at`) absorb value `x` (at index `xi`). */
static void emit_combine(tpcommon_buf *out, const reduction *r, const char *x, const char *xi) {
    if (!strcmp(r->op, "sum") || !strcmp(r->op, "mean"))
        tpcommon_buf_printf(out, "            acc += %s;\n", x);
    else if (!strcmp(r->op, "max"))
        tpcommon_buf_printf(out, "            acc = (acc >= %s || acc != acc) ? acc : %s;\n", x, x);
    else if (!strcmp(r->op, "min"))
        tpcommon_buf_printf(out, "            acc = (acc <= %s || acc != acc) ? acc : %s;\n", x, x);
    else /* argmax: first maximum; the first NaN wins over every number */
        tpcommon_buf_printf(
            out,
            "            if (%s > acc || (%s != %s && acc == acc) ||\n"
            "                ((%s == acc || (%s != %s && acc != acc)) && %s < at)) {\n"
            "                acc = %s;\n                at = %s;\n            }\n",
            x, x, x, x, x, x, xi, x, xi);
}

static void emit_finish(tpcommon_buf *out, const reduction *r, const cu_node *node) {
    const char *T = cu_ctype(node->dtype);
    if (!strcmp(r->op, "argmax"))
        tpcommon_buf_printf(out, "b%d[o] = at;\n", node->where.buffer);
    else if (!strcmp(r->op, "mean"))
        tpcommon_buf_printf(out, "b%d[o] = (%s)(acc / (double)%lld);\n", node->where.buffer, T,
                            (long long)r->reduced);
    else
        tpcommon_buf_printf(out, "b%d[o] = (%s)acc;\n", node->where.buffer, T);
}

/* The body that reads reduced element r of output o. */
static void emit_reduce_element(kernel_ctx *ctx, const cu_node *node, const reduction *r) {
    const cu_node *in = &ctx->graph->nodes[node->operands[0]];
    set_iteration(ctx, in);
    ctx->flat = false;
    reset_done(ctx);
    tpcommon_buf_printf(ctx->out, "        {\n");
    emit_unravel(ctx->out, "o", r->kept, r->num_kept, in->dims, "c");
    emit_unravel(ctx->out, "r", r->axes, r->num_axes, in->dims, "c");
    emit_value(ctx, node->operands[0]);
    tpcommon_buf_printf(ctx->out, "            const %s x = (%s)v%d;\n", r->acc_type, r->acc_type,
                        node->operands[0]);
    emit_combine(ctx->out, r, "x", "(long long)r");
    tpcommon_buf_printf(ctx->out, "        }\n");
}

static void emit_reduce_rows(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_node *node = &ctx->graph->nodes[kernel->root];
    reduction r;
    describe_reduction(ctx->graph, node, &r);
    bool argmax = !strcmp(r.op, "argmax");
    tpcommon_buf *out = ctx->out;
    tpcommon_buf_printf(out, "    __shared__ %s tp_partial[32];\n", r.acc_type);
    if (argmax) tpcommon_buf_printf(out, "    __shared__ long long tp_partial_at[32];\n");
    tpcommon_buf_printf(
        out, "    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = "
             "blockDim.x >> 5;\n");
    tpcommon_buf_printf(out,
                        "    for (tp_index o = blockIdx.x; o < (tp_index)%lld; o += gridDim.x) {\n",
                        (long long)r.outputs);
    tpcommon_buf_printf(out,
                        "        %s acc = %s;\n        long long at = 9223372036854775807LL;\n",
                        r.acc_type, r.identity);
    tpcommon_buf_printf(
        out, "        for (tp_index r = threadIdx.x; r < (tp_index)%lld; r += blockDim.x)\n",
        (long long)r.reduced);
    emit_reduce_element(ctx, node, &r);
    /* warp, then block */
    const char *shuffle = "        for (int s = 16; s > 0; s >>= 1) {\n"
                          "            const %s y = __shfl_down_sync(0xffffffffu, acc, s);\n"
                          "            const long long yi = __shfl_down_sync(0xffffffffu, at, s);\n"
                          "            (void)yi;\n";
    tpcommon_buf_printf(out, shuffle, r.acc_type);
    emit_combine(out, &r, "y", "yi");
    tpcommon_buf_printf(out, "        }\n");
    tpcommon_buf_printf(
        out, "        if (lane == 0) {\n            tp_partial[warp] = acc;\n%s        }\n",
        argmax ? "            tp_partial_at[warp] = at;\n" : "");
    tpcommon_buf_printf(out, "        __syncthreads();\n        if (warp == 0) {\n");
    tpcommon_buf_printf(out, "            acc = lane < warps ? tp_partial[lane] : (%s)%s;\n",
                        r.acc_type, r.identity);
    if (argmax)
        tpcommon_buf_printf(
            out, "            at = lane < warps ? tp_partial_at[lane] : 9223372036854775807LL;\n");
    tpcommon_buf_printf(out, shuffle, r.acc_type);
    emit_combine(out, &r, "y", "yi");
    tpcommon_buf_printf(out, "        }\n            if (lane == 0) ");
    emit_finish(out, &r, node);
    tpcommon_buf_printf(out, "        }\n        __syncthreads();\n    }\n");
}

static void emit_reduce_columns(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_node *node = &ctx->graph->nodes[kernel->root];
    reduction r;
    describe_reduction(ctx->graph, node, &r);
    tpcommon_buf *out = ctx->out;
    tpcommon_buf_printf(
        out,
        "    for (tp_index o = (tp_index)blockIdx.x * blockDim.x + threadIdx.x; o < "
        "(tp_index)%lld;\n         o += (tp_index)gridDim.x * blockDim.x) {\n",
        (long long)r.outputs);
    tpcommon_buf_printf(out,
                        "        %s acc = %s;\n        long long at = 9223372036854775807LL;\n",
                        r.acc_type, r.identity);
    tpcommon_buf_printf(out, "        for (tp_index r = 0; r < (tp_index)%lld; r++)\n",
                        (long long)r.reduced);
    emit_reduce_element(ctx, node, &r);
    tpcommon_buf_printf(out, "        (void)at;\n        ");
    emit_finish(out, &r, node);
    tpcommon_buf_printf(out, "    }\n");
}

/* ---- matmul ------------------------------------------------------------------------------- */

typedef struct operand_layout {
    int64_t row_stride, column_stride; /* A: (m, k); B: (k, n) */
    int64_t batch_strides[CU_MAX_DIMS];
} operand_layout;

static void operand_layout_of(const cu_node *operand, bool left, int batch_ndim,
                              const int64_t *batch_dims, operand_layout *layout) {
    const cu_strided *w = &operand->where;
    int nd = operand->ndim;
    if (nd == 1) {
        layout->row_stride = left ? 0 : w->strides[0];
        layout->column_stride = left ? w->strides[0] : 0;
    } else {
        layout->row_stride = w->strides[nd - 2];
        layout->column_stride = w->strides[nd - 1];
    }
    int own_batch = nd > 2 ? nd - 2 : 0;
    for (int j = 0; j < batch_ndim; j++) {
        int source = j - (batch_ndim - own_batch);
        layout->batch_strides[j] = source < 0 || (operand->dims[source] == 1 && batch_dims[j] != 1)
                                       ? 0
                                       : w->strides[source];
    }
}

static void emit_matmul(kernel_ctx *ctx, const cu_kernel *kernel) {
    const cu_graph *g = ctx->graph;
    const cu_node *m = &g->nodes[kernel->matmul], *root = &g->nodes[kernel->root];
    const cu_node *a = &g->nodes[m->operands[0]], *b = &g->nodes[m->operands[1]];
    tpcommon_buf *out = ctx->out;
    int tile = kernel->tile, micro = tile / 16, slice = tile == 64 ? 16 : 8;
    int64_t rows = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    int64_t columns = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
    int64_t depth = a->dims[a->ndim - 1];
    int batch_ndim = m->ndim - (a->ndim >= 2) - (b->ndim >= 2);
    int64_t batch = 1;
    for (int j = 0; j < batch_ndim; j++) batch *= m->dims[j];
    operand_layout la, lb;
    operand_layout_of(a, true, batch_ndim, m->dims, &la);
    operand_layout_of(b, false, batch_ndim, m->dims, &lb);
    const char *CT = cu_ctype(m->compute);
    bool integer = !tpcommon_dtype_is_float(m->compute);
    const char *AT =
        integer ? (m->compute == TP_PLUGIN_I64 ? "unsigned long long" : "unsigned int") : CT;
    tpcommon_buf_printf(out, "    __shared__ %s tp_a[%d][%d];\n    __shared__ %s tp_b[%d][%d];\n",
                        CT, slice, tile + 4, CT, slice, tile);
    tpcommon_buf_printf(out, "    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;\n");
    tpcommon_buf_printf(
        out, "    for (tp_index bz = blockIdx.z; bz < (tp_index)%lld; bz += gridDim.z) {\n",
        (long long)batch);
    int batch_axes[CU_MAX_DIMS];
    for (int j = 0; j < batch_ndim; j++) batch_axes[j] = j;
    emit_unravel(out, "bz", batch_axes, batch_ndim, m->dims, "z");
    tpcommon_buf_printf(out, "        const tp_index a_base = (tp_index)%lld",
                        (long long)a->where.offset);
    for (int j = 0; j < batch_ndim; j++)
        if (la.batch_strides[j])
            tpcommon_buf_printf(out, " + z%d * (tp_index)%lld", j, (long long)la.batch_strides[j]);
    tpcommon_buf_printf(out, ";\n        const tp_index b_base = (tp_index)%lld",
                        (long long)b->where.offset);
    for (int j = 0; j < batch_ndim; j++)
        if (lb.batch_strides[j])
            tpcommon_buf_printf(out, " + z%d * (tp_index)%lld", j, (long long)lb.batch_strides[j]);
    tpcommon_buf_printf(
        out,
        ";\n        const tp_index m0 = (tp_index)blockIdx.y * %d, n0 = (tp_index)blockIdx.x * "
        "%d;\n",
        tile, tile);
    tpcommon_buf_printf(out, "        %s acc[%d][%d];\n", AT, micro, micro);
    tpcommon_buf_printf(out,
                        "#pragma unroll\n        for (int ti = 0; ti < %d; ti++)\n#pragma unroll\n"
                        "            for (int tj = 0; tj < %d; tj++) acc[ti][tj] = 0;\n",
                        micro, micro);
    tpcommon_buf_printf(out, "        for (tp_index k0 = 0; k0 < (tp_index)%lld; k0 += %d) {\n",
                        (long long)depth, slice);
    tpcommon_buf_printf(out, "#pragma unroll\n            for (int q = 0; q < %d; q++) {\n",
                        tile * slice / 256);
    tpcommon_buf_printf(out, "                const int e = threadIdx.x + 256 * q;\n");
    tpcommon_buf_printf(out, "                const int am = e / %d, ak = e %% %d;\n", slice,
                        slice);
    tpcommon_buf_printf(out, "                const tp_index gm = m0 + am, gk = k0 + ak;\n");
    tpcommon_buf_printf(
        out,
        "                tp_a[ak][am] = (gm < (tp_index)%lld && gk < (tp_index)%lld) ? "
        "(%s)b%d[a_base "
        "+ gm * (tp_index)%lld + gk * (tp_index)%lld] : (%s)0;\n",
        (long long)rows, (long long)depth, CT, a->where.buffer, (long long)la.row_stride,
        (long long)la.column_stride, CT);
    tpcommon_buf_printf(out, "                const int bk = e / %d, bn = e %% %d;\n", tile, tile);
    tpcommon_buf_printf(out, "                const tp_index hk = k0 + bk, hn = n0 + bn;\n");
    tpcommon_buf_printf(
        out,
        "                tp_b[bk][bn] = (hk < (tp_index)%lld && hn < (tp_index)%lld) ? "
        "(%s)b%d[b_base "
        "+ hk * (tp_index)%lld + hn * (tp_index)%lld] : (%s)0;\n",
        (long long)depth, (long long)columns, CT, b->where.buffer, (long long)lb.row_stride,
        (long long)lb.column_stride, CT);
    tpcommon_buf_printf(out, "            }\n            __syncthreads();\n");
    tpcommon_buf_printf(out, "#pragma unroll\n            for (int kk = 0; kk < %d; kk++) {\n",
                        slice);
    tpcommon_buf_printf(out, "                %s ra[%d], rb[%d];\n", CT, micro, micro);
    tpcommon_buf_printf(out,
                        "#pragma unroll\n                for (int t = 0; t < %d; t++) {\n"
                        "                    ra[t] = tp_a[kk][ty + 16 * t];\n"
                        "                    rb[t] = tp_b[kk][tx + 16 * t];\n                }\n",
                        micro);
    tpcommon_buf_printf(
        out,
        "#pragma unroll\n                for (int ti = 0; ti < %d; ti++)\n#pragma unroll\n"
        "                    for (int tj = 0; tj < %d; tj++)\n",
        micro, micro);
    if (integer)
        tpcommon_buf_printf(
            out, "                        acc[ti][tj] += (%s)ra[ti] * (%s)rb[tj];\n", AT, AT);
    else
        tpcommon_buf_printf(out, "                        acc[ti][tj] += ra[ti] * rb[tj];\n");
    tpcommon_buf_printf(out, "            }\n            __syncthreads();\n        }\n");
    /* epilogue */
    tpcommon_buf_printf(out,
                        "#pragma unroll\n        for (int ti = 0; ti < %d; ti++)\n#pragma unroll\n"
                        "        for (int tj = 0; tj < %d; tj++) {\n",
                        micro, micro);
    tpcommon_buf_printf(
        out, "            const tp_index mm = m0 + ty + 16 * ti, nn = n0 + tx + 16 * tj;\n");
    tpcommon_buf_printf(out,
                        "            if (mm >= (tp_index)%lld || nn >= (tp_index)%lld) continue;\n",
                        (long long)rows, (long long)columns);
    tpcommon_buf_printf(
        out, "            const tp_index i = (bz * (tp_index)%lld + mm) * (tp_index)%lld + nn;\n",
        (long long)rows, (long long)columns);
    for (int j = 0; j < batch_ndim; j++)
        tpcommon_buf_printf(out, "            const tp_index c%d = z%d;\n", j, j);
    int next = batch_ndim;
    if (a->ndim >= 2) tpcommon_buf_printf(out, "            const tp_index c%d = mm;\n", next++);
    if (b->ndim >= 2) tpcommon_buf_printf(out, "            const tp_index c%d = nn;\n", next++);
    set_iteration(ctx, root);
    ctx->flat = true;
    ctx->acc_node = kernel->matmul;
    ctx->acc_text = "acc[ti][tj]";
    reset_done(ctx);
    emit_value(ctx, kernel->root);
    tpcommon_buf_printf(out, "            b%d[i] = v%d;\n        }\n    }\n", root->where.buffer,
                        kernel->root);
}

/* ---- the module --------------------------------------------------------------------------- */

static bool needs_wide_index(const cu_graph *graph) {
    for (int i = 0; i < graph->num_nodes; i++) {
        const cu_node *node = &graph->nodes[i];
        if (cu_numel(node) >= ((int64_t)1 << 31)) return true;
        if (node->has_where) {
            int64_t last = node->where.offset;
            for (int d = 0; d < node->where.ndim; d++)
                if (node->where.dims[d] > 0)
                    last += (node->where.dims[d] - 1) * node->where.strides[d];
            if (last >= ((int64_t)1 << 31)) return true;
        }
    }
    return false;
}

char *cu_emit_module(const cu_graph *graph, char *error, size_t error_size) {
    tpcommon_buf out;
    tpcommon_buf_init(&out);
    unsigned char *done = calloc((size_t)graph->num_nodes + 1, 1);
    int *touched = malloc(sizeof(int) * ((size_t)graph->num_nodes + 1));
    if (!done || !touched) {
        free(done);
        free(touched);
        tpcommon_error(error, error_size, "out of memory generating code");
        return NULL;
    }
    tpcommon_buf_printf(&out, "// TensorPlay cuda backend: graph '%s'\n",
                        graph->name ? graph->name : "?");
    tpcommon_buf_append(&out, cu_prelude());
    tpcommon_buf_printf(&out, "typedef %s tp_index;\n",
                        needs_wide_index(graph) ? "unsigned long long" : "unsigned int");
    bool ok = true;
    for (int k = 0; k < graph->num_kernels && ok; k++) {
        const cu_kernel *kernel = &graph->kernels[k];
        kernel_ctx ctx = {.graph = graph,
                          .out = &out,
                          .done = done,
                          .touched = touched,
                          .root = kernel->root,
                          .acc_node = -1,
                          .error = error,
                          .error_size = error_size};
        emit_signature(graph, &out, kernel, kernel->block);
        switch (kernel->kind) {
        case CU_KERNEL_POINTWISE:
            emit_pointwise(&ctx, kernel);
            break;
        case CU_KERNEL_RESHAPE_COPY:
            emit_reshape_copy(&ctx, kernel);
            break;
        case CU_KERNEL_CONCAT:
            emit_concat(&ctx, kernel);
            break;
        case CU_KERNEL_REDUCE_ROWS:
            emit_reduce_rows(&ctx, kernel);
            break;
        case CU_KERNEL_REDUCE_COLUMNS:
            emit_reduce_columns(&ctx, kernel);
            break;
        case CU_KERNEL_MATMUL:
            emit_matmul(&ctx, kernel);
            break;
        }
        tpcommon_buf_printf(&out, "}\n");
        reset_done(&ctx);
        ok = !ctx.failed;
    }
    free(done);
    free(touched);
    char *source = ok ? tpcommon_buf_take(&out) : NULL;
    if (ok && !source) tpcommon_error(error, error_size, "out of memory generating code");
    tpcommon_buf_free(&out);
    return source;
}
