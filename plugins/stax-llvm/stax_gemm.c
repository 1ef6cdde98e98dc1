/* stax-llvm — the f32 matmul driver: blocked and packed around the JIT's
 * 6x16 AVX2/FMA micro-kernel (stax_emit.c) and its 4x16 sibling. The rows
 * split into 6-row blocks, then 4-row blocks so that m % 6 == 2 or 4 needs no
 * padded rows (m = 32: 4 x 6 + 2 x 4), then at most one partial tail block.
 * Per batch and per block of STAX_GEMM_KC along k, the calling thread packs
 * B into 16-column panels (zero-padded), then host->parallel_for splits the
 * row blocks;
 * each task sweeps the panels over its rows (the panel stays in L1, the rows
 * of A in L2). After the last k block a task runs the fused epilogue kernel
 * (bias, activation, the following pointwise region) on the rows it just
 * finished, while they are still in cache. Edge tiles go through small
 * padded copies. A and B may be any strided views (a transposed weight is
 * free). */
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"

#define MR STAX_GEMM_MR
#define NR STAX_GEMM_NR
#define KC STAX_GEMM_KC

/* How m rows split into blocks: n6 blocks of 6 rows, then n4 of 4, then one
 * tail block of the remaining 1, 3 or 5 rows (or 2 when m == 2) if any. */
typedef struct row_blocks {
    int64_t m, n6, n4, count;
} row_blocks;

static row_blocks split_rows(int64_t m) {
    row_blocks rb = {.m = m, .n6 = m / MR, .n4 = 0};
    int64_t rest = m % MR;
    if (rest == 4) {
        rb.n4 = 1;
    } else if (rest == 2 && rb.n6 > 0) {
        rb.n6--, rb.n4 = 2;
    }
    int64_t tail = m - rb.n6 * MR - rb.n4 * 4;
    rb.count = rb.n6 + rb.n4 + (tail > 0 ? 1 : 0);
    return rb;
}

/* The first row of block b (m for b == count). */
static int64_t block_row(const row_blocks *rb, int64_t b) {
    if (b >= rb->count) return rb->m;
    int64_t row = b <= rb->n6 ? b * MR : rb->n6 * MR + (b - rb->n6) * 4;
    return row < rb->m ? row : rb->m;
}

/* The micro-kernel height of block b: 6 or 4 (a tail of 5 rows uses 6). */
static int64_t block_height(const row_blocks *rb, int64_t b) {
    if (b < rb->n6) return MR;
    if (b < rb->n6 + rb->n4) return 4;
    return rb->m - block_row(rb, b) > 4 ? MR : 4;
}

size_t stax_gemm_workspace_bytes(const stax_gemm *gemm) {
    int64_t panels = (gemm->n + NR - 1) / NR;
    return (size_t)(panels * KC * NR) * sizeof(float);
}

typedef struct gemm_task {
    const stax_gemm *gemm;
    void **slots;
    const stax_ukernel_fn *ukernels; /* 6-row, 4-row */
    stax_kernel_fn epilogue;
    const row_blocks *rb;
    const float *a; /* A of this batch at row 0, column pc */
    const float *packed;
    const float *a_edge;   /* the partial tail row block of A packed (kc columns), or NULL */
    float *c;              /* C of this batch, row 0 */
    int64_t kc, batch_row; /* rows of earlier batches */
    bool first, last;
} gemm_task;

static void tile(const gemm_task *t, int64_t block, int64_t panel) {
    const stax_gemm *g = t->gemm;
    int64_t i0 = block_row(t->rb, block), mr = block_height(t->rb, block);
    int64_t rows = g->m - i0 < mr ? g->m - i0 : mr;
    stax_ukernel_fn ukernel = t->ukernels[mr == MR ? 0 : 1];
    int64_t j0 = panel * NR, cols = g->n - j0 < NR ? g->n - j0 : NR;
    const float *a = t->a + i0 * g->a_rs;
    int64_t rsa = g->a_rs, csa = g->a_cs;
    float a_edge[MR * KC];
    if (rows < mr && t->a_edge) {
        a = t->a_edge, rsa = t->kc, csa = 1;
    } else if (rows < mr) {
        memset(a_edge, 0, sizeof a_edge);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t k = 0; k < t->kc; k++) a_edge[r * t->kc + k] = a[r * rsa + k * csa];
        a = a_edge, rsa = t->kc, csa = 1;
    }
    const float *b = t->packed + panel * t->kc * NR;
    float *c = t->c + i0 * g->n + j0;
    if (rows == mr && cols == NR) {
        ukernel(a, rsa, csa, b, c, g->n, t->kc, t->first ? 0 : 1);
        return;
    }
    float c_edge[MR * NR];
    memset(c_edge, 0, sizeof c_edge);
    if (!t->first)
        for (int64_t r = 0; r < rows; r++)
            memcpy(c_edge + r * NR, c + r * g->n, sizeof(float) * (size_t)cols);
    ukernel(a, rsa, csa, b, c_edge, NR, t->kc, t->first ? 0 : 1);
    for (int64_t r = 0; r < rows; r++)
        memcpy(c + r * g->n, c_edge + r * NR, sizeof(float) * (size_t)cols);
}

static void rows_task(void *context, int64_t begin, int64_t end) {
    const gemm_task *t = context;
    const stax_gemm *g = t->gemm;
    int64_t panels = (g->n + NR - 1) / NR;
    for (int64_t p = 0; p < panels; p++)
        for (int64_t block = begin; block < end; block++) tile(t, block, p);
    if (t->last && t->epilogue) {
        int64_t r0 = block_row(t->rb, begin), r1 = block_row(t->rb, end);
        t->epilogue(t->slots, (t->batch_row + r0) * g->n, (t->batch_row + r1) * g->n);
    }
}

static void pack_panels(const stax_gemm *g, const float *b, int64_t kc, float *packed,
                        int64_t first, int64_t last) {
    for (int64_t p = first; p < last; p++) {
        float *out = packed + p * kc * NR;
        int64_t j0 = p * NR, cols = g->n - j0 < NR ? g->n - j0 : NR;
        for (int64_t k = 0; k < kc; k++) {
            const float *row = b + k * g->b_rs + j0 * g->b_cs;
            float *dst = out + k * NR;
            if (g->b_cs == 1) {
                memcpy(dst, row, sizeof(float) * (size_t)cols);
            } else {
                for (int64_t j = 0; j < cols; j++) dst[j] = row[j * g->b_cs];
            }
            for (int64_t j = cols; j < NR; j++) dst[j] = 0.0f;
        }
    }
}

static void pack_b(const stax_gemm *g, const float *b, int64_t kc, float *packed) {
    pack_panels(g, b, kc, packed, 0, (g->n + NR - 1) / NR);
}

/* Few rows (a batch of activations times a weight): the threads split the
 * 16-column panels instead. Each packs its own panels (no serial packing, no
 * barrier per k block), sweeps all rows of A (in L2) over a panel for every
 * k block while the panel's C tile stays in L1, then runs the epilogue on
 * its columns of every row. */
typedef struct columns_task {
    const stax_gemm *gemm;
    void **slots;
    const stax_ukernel_fn *ukernels;
    stax_kernel_fn epilogue;
    const row_blocks *rb;
    const float *a, *b; /* this batch, k = 0 */
    float *c, *packed;
    int64_t batch_row;
} columns_task;

static void columns_range(void *context, int64_t begin, int64_t end) {
    const columns_task *ct = context;
    const stax_gemm *g = ct->gemm;
    const row_blocks *rb = ct->rb;
    int64_t blocks = rb->count;
    int64_t edge_row = blocks > 0 && block_row(rb, blocks - 1) + block_height(rb, blocks - 1) > g->m
                           ? block_row(rb, blocks - 1)
                           : -1;
    float a_edge[MR * KC];
    for (int64_t pc = 0; pc < g->k; pc += KC) {
        int64_t kc = g->k - pc < KC ? g->k - pc : KC;
        if (edge_row >= 0) { /* packed once per k block, not once per panel */
            const float *a = ct->a + pc * g->a_cs + edge_row * g->a_rs;
            memset(a_edge, 0, sizeof a_edge);
            for (int64_t r = 0; r < g->m - edge_row; r++)
                for (int64_t k = 0; k < kc; k++) a_edge[r * kc + k] = a[r * g->a_rs + k * g->a_cs];
        }
        for (int64_t p = begin; p < end; p++) {
            /* the panel's slot of the workspace is p * KC * NR, whatever kc is */
            float *packed = ct->packed + p * (KC - kc) * NR;
            pack_panels(g, ct->b + pc * g->b_rs, kc, packed, p, p + 1);
            gemm_task task = {.gemm = g,
                              .slots = ct->slots,
                              .ukernels = ct->ukernels,
                              .rb = rb,
                              .a = ct->a + pc * g->a_cs,
                              .packed = packed,
                              .a_edge = edge_row >= 0 ? a_edge : NULL,
                              .c = ct->c,
                              .kc = kc,
                              .batch_row = ct->batch_row,
                              .first = pc == 0,
                              .last = false};
            for (int64_t block = 0; block < blocks; block++) tile(&task, block, p);
        }
    }
    if (ct->epilogue) {
        int64_t j0 = begin * NR, j1 = end * NR < g->n ? end * NR : g->n;
        for (int64_t r = 0; r < g->m; r++) {
            int64_t row = (ct->batch_row + r) * g->n;
            ct->epilogue(ct->slots, row + j0, row + j1);
        }
    }
}

void stax_gemm_run(const tp_plugin_host *host, const stax_gemm *g, void **slots, float *workspace,
                   const stax_ukernel_fn ukernels[2], stax_kernel_fn epilogue, int64_t threads) {
    const float *a_base = (const float *)slots[g->a_slot] + g->a_offset;
    const float *b_base = (const float *)slots[g->b_slot] + g->b_offset;
    float *c_base = (float *)slots[g->c_slot] + g->c_offset;
    if (g->k <= 0) { /* an empty sum (dynamic sizes): zeros, then the epilogue */
        int64_t total = g->batch * g->m * g->n;
        if (total > 0) memset(c_base, 0, sizeof(float) * (size_t)total);
        if (epilogue && total > 0) epilogue(slots, 0, total);
        return;
    }
    row_blocks rb = split_rows(g->m);
    int64_t blocks = rb.count, panels = (g->n + NR - 1) / NR;
    int64_t grain = stax_grain(host, blocks, 1, threads);
    bool by_columns =
        threads > 1 && g->m <= 256 && panels >= 2 * threads && host && host->parallel_for;
    if (grain < 1) grain = 1;
    for (int64_t batch = 0; batch < g->batch; batch++) {
        int64_t a_off = 0, b_off = 0, rest = batch;
        for (int32_t d = g->batch_ndim - 1; d >= 0; d--) {
            int64_t index = rest % g->batch_dims[d];
            rest /= g->batch_dims[d];
            a_off += index * g->a_batch_strides[d];
            b_off += index * g->b_batch_strides[d];
        }
        if (by_columns) {
            columns_task ct = {.gemm = g,
                               .slots = slots,
                               .ukernels = ukernels,
                               .epilogue = epilogue,
                               .rb = &rb,
                               .a = a_base + a_off,
                               .b = b_base + b_off,
                               .c = c_base + batch * g->m * g->n,
                               .packed = workspace,
                               .batch_row = batch * g->m};
            host->parallel_for(panels, stax_grain(host, panels, 1, threads), columns_range, &ct);
            continue;
        }
        for (int64_t pc = 0; pc < g->k; pc += KC) {
            int64_t kc = g->k - pc < KC ? g->k - pc : KC;
            pack_b(g, b_base + b_off + pc * g->b_rs, kc, workspace);
            gemm_task task = {
                .gemm = g,
                .slots = slots,
                .ukernels = ukernels,
                .epilogue = epilogue,
                .rb = &rb,
                .a = a_base + a_off + pc * g->a_cs,
                .packed = workspace,
                .c = c_base + batch * g->m * g->n,
                .kc = kc,
                .batch_row = batch * g->m,
                .first = pc == 0,
                .last = pc + KC >= g->k,
            };
            if (threads > 1 && blocks > 1 && host && host->parallel_for)
                host->parallel_for(blocks, grain, rows_task, &task);
            else
                rows_task(&task, 0, blocks);
        }
    }
}
