/* stax-llvm — the packed f32 matmul driver around a micro-kernel family's
 * tile kernels (stax_gemm_kernels.c). Rows split into tiles of mr rows, then
 * at most one tile of each smaller height for the rest (m = 23 with mr = 12:
 * 12 + 8 + 2 + 1), so no row is ever padded; column edges are masked inside
 * the kernels. Per k block of kc, B is packed into nr-column panels (the
 * packing reads B through its strides, so a transposed or broadcast operand
 * costs no copy of its own); A is read in place through its strides. A task
 * sweeps chunks of mc rows: for each panel (in L1), every tile of the chunk
 * (whose rows stay in L2). Three ways to share the work between threads:
 *   rows     large m: threads pack B's panels together, then split the row tiles;
 *   columns  few rows, many panels: each thread packs and sweeps its own panels;
 *   batches  many small products (attention's batch x heads): each thread
 *            runs whole products, with its own packing buffer.
 * After a product's last k block, the rows (or columns) a task finished go
 * through the fused epilogue kernel while they are still in cache. */
#include <string.h>

#include "stax_internal.h"

typedef struct row_tiles {
    int64_t m, full, count; /* `full` tiles of mr rows, then the tail tiles */
    int32_t mr, tails;
    int64_t tail_row[STAX_GEMM_MAX_HEIGHTS];
    int32_t tail_kernel[STAX_GEMM_MAX_HEIGHTS]; /* index into heights[] */
} row_tiles;

static row_tiles split_rows(const stax_gemm_family *family, int64_t m) {
    row_tiles rt = {.m = m, .mr = family->mr, .full = m / family->mr};
    int64_t row = rt.full * family->mr, rest = m - row;
    for (int32_t i = 1; i < family->num_heights && rest > 0; i++)
        if (rest >= family->heights[i]) {
            rt.tail_row[rt.tails] = row;
            rt.tail_kernel[rt.tails++] = i;
            row += family->heights[i];
            rest -= family->heights[i];
        }
    rt.count = rt.full + rt.tails;
    return rt;
}

static int64_t tile_row(const row_tiles *rt, int64_t tile) {
    if (tile >= rt->count) return rt->m;
    return tile < rt->full ? tile * rt->mr : rt->tail_row[tile - rt->full];
}

static int32_t tile_kernel(const row_tiles *rt, int64_t tile) {
    return tile < rt->full ? 0 : rt->tail_kernel[tile - rt->full];
}

typedef struct gemm_call {
    const tp_plugin_host *host;
    const stax_gemm *g;
    void **slots;
    const stax_gemm_kernels *kernels;
    stax_kernel_fn epilogue;
    row_tiles rt;
    int64_t nr, kc_max, panels, threads;
    const float *a_base, *b_base;
    float *c_base, *workspace;
} gemm_call;

/* One k block of one product: A at column pc, B at row pc, the packed panels. */
typedef struct k_block {
    const gemm_call *call;
    const float *a, *b;
    float *c, *packed;
    int64_t pc, kc, batch;
    bool first, last;
} k_block;

static int64_t panel_floats(const gemm_call *call) {
    return call->kc_max * call->nr;
}

static void batch_offsets(const stax_gemm *g, int64_t batch, int64_t *a_off, int64_t *b_off) {
    *a_off = 0, *b_off = 0;
    for (int32_t d = g->batch_ndim - 1; d >= 0; d--) {
        int64_t index = batch % g->batch_dims[d];
        batch /= g->batch_dims[d];
        *a_off += index * g->a_batch_strides[d];
        *b_off += index * g->b_batch_strides[d];
    }
}

static k_block block_of(const gemm_call *call, int64_t batch, int64_t pc, float *packed) {
    const stax_gemm *g = call->g;
    int64_t a_off, b_off;
    batch_offsets(g, batch, &a_off, &b_off);
    int64_t kc = g->k - pc < call->kc_max ? g->k - pc : call->kc_max;
    return (k_block){.call = call,
                     .a = call->a_base + a_off + pc * g->a_cs,
                     .b = call->b_base + b_off + pc * g->b_rs,
                     .c = call->c_base + batch * g->m * g->n,
                     .packed = packed,
                     .pc = pc,
                     .kc = kc,
                     .batch = batch,
                     .first = pc == 0,
                     .last = pc + kc >= g->k};
}

/* Panel p of this k block: kc rows of nr floats, zeros past n. */
static void pack_panel(const k_block *kb, int64_t p) {
    const stax_gemm *g = kb->call->g;
    int64_t nr = kb->call->nr, j0 = p * nr, cols = g->n - j0 < nr ? g->n - j0 : nr;
    float *out = kb->packed + p * panel_floats(kb->call);
    const float *b = kb->b + j0 * g->b_cs;
    if (g->b_cs == 1) {
        for (int64_t k = 0; k < kb->kc; k++) {
            memcpy(out + k * nr, b + k * g->b_rs, sizeof(float) * (size_t)cols);
            memset(out + k * nr + cols, 0, sizeof(float) * (size_t)(nr - cols));
        }
        return;
    }
    if (cols < nr) memset(out, 0, sizeof(float) * (size_t)(kb->kc * nr));
    /* a transposed B: each column is contiguous along k */
    for (int64_t j = 0; j < cols; j++)
        for (int64_t k = 0; k < kb->kc; k++) out[k * nr + j] = b[k * g->b_rs + j * g->b_cs];
}

static void tile(const k_block *kb, int64_t t, int64_t p) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    int64_t row = tile_row(&call->rt, t), j0 = p * call->nr;
    int64_t cols = g->n - j0 < call->nr ? g->n - j0 : call->nr;
    stax_gemm_tile_fn kernel = call->kernels->tile[tile_kernel(&call->rt, t)];
    kernel(kb->a + row * g->a_rs, g->a_rs, g->a_cs, kb->packed + p * panel_floats(call),
           kb->c + row * g->n + j0, g->n, kb->kc, kb->first ? 0 : 1, cols);
}

/* Tiles [t0, t1) times panels [p0, p1), mc rows of A at a time. */
static void sweep(const k_block *kb, int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
    int64_t per_chunk = kb->call->kernels->mc / kb->call->rt.mr;
    if (per_chunk < 1) per_chunk = 1;
    for (int64_t c0 = t0; c0 < t1; c0 += per_chunk) {
        int64_t c1 = c0 + per_chunk < t1 ? c0 + per_chunk : t1;
        for (int64_t p = p0; p < p1; p++)
            for (int64_t t = c0; t < c1; t++) tile(kb, t, p);
    }
}

static void epilogue_rows(const gemm_call *call, int64_t batch, int64_t r0, int64_t r1) {
    int64_t base = batch * call->g->m;
    if (call->epilogue && r1 > r0)
        call->epilogue(call->slots, (base + r0) * call->g->n, (base + r1) * call->g->n);
}

/* ---- rows ---- */

static void pack_range(void *context, int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; p++) pack_panel(context, p);
}

static void rows_range(void *context, int64_t begin, int64_t end) {
    const k_block *kb = context;
    sweep(kb, begin, end, 0, kb->call->panels);
    if (kb->last)
        epilogue_rows(kb->call, kb->batch, tile_row(&kb->call->rt, begin),
                      tile_row(&kb->call->rt, end));
}

static void run_by_rows(const gemm_call *call, bool parallel) {
    const stax_gemm *g = call->g;
    int64_t tiles = call->rt.count, panels = call->panels;
    for (int64_t batch = 0; batch < g->batch; batch++)
        for (int64_t pc = 0; pc < g->k; pc += call->kc_max) {
            k_block kb = block_of(call, batch, pc, call->workspace);
            if (parallel && panels > 1)
                call->host->parallel_for(panels, stax_grain(call->host, panels, 1, call->threads),
                                         pack_range, &kb);
            else
                pack_range(&kb, 0, panels);
            if (parallel && tiles > 1)
                call->host->parallel_for(tiles, stax_grain(call->host, tiles, 1, call->threads),
                                         rows_range, &kb);
            else
                rows_range(&kb, 0, tiles);
        }
}

/* ---- columns ---- */

typedef struct columns_job {
    const gemm_call *call;
    int64_t batch;
} columns_job;

static void columns_range(void *context, int64_t begin, int64_t end) {
    const columns_job *job = context;
    const gemm_call *call = job->call;
    const stax_gemm *g = call->g;
    for (int64_t pc = 0; pc < g->k; pc += call->kc_max) {
        k_block kb = block_of(call, job->batch, pc, call->workspace);
        for (int64_t p = begin; p < end; p++) {
            pack_panel(&kb, p);
            sweep(&kb, 0, call->rt.count, p, p + 1);
        }
    }
    if (!call->epilogue) return;
    int64_t j0 = begin * call->nr, j1 = end * call->nr < g->n ? end * call->nr : g->n;
    for (int64_t r = 0; r < g->m; r++) {
        int64_t row = (job->batch * g->m + r) * g->n;
        call->epilogue(call->slots, row + j0, row + j1);
    }
}

/* ---- batches ---- */

static void batches_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    const stax_gemm *g = call->g;
    int64_t slices = call->threads < g->batch ? call->threads : g->batch;
    for (int64_t slice = begin; slice < end; slice++) {
        float *packed = call->workspace + slice * call->panels * panel_floats(call);
        for (int64_t batch = slice * g->batch / slices; batch < (slice + 1) * g->batch / slices;
             batch++) {
            for (int64_t pc = 0; pc < g->k; pc += call->kc_max) {
                k_block kb = block_of(call, batch, pc, packed);
                pack_range(&kb, 0, call->panels);
                sweep(&kb, 0, call->rt.count, 0, call->panels);
            }
            epilogue_rows(call, batch, 0, g->m);
        }
    }
}

/* ---- entry ---- */

static int64_t panels_of(const stax_gemm *g, const stax_gemm_kernels *kernels) {
    return (g->n + kernels->family->nr - 1) / kernels->family->nr;
}

size_t stax_gemm_packed_workspace_bytes(const stax_gemm *gemm, const stax_gemm_kernels *kernels,
                                        int64_t threads) {
    size_t per_thread = (size_t)(panels_of(gemm, kernels) * kernels->kc * kernels->family->nr);
    return per_thread * (size_t)(threads > 1 ? threads : 1) * sizeof(float);
}

void stax_gemm_packed_run(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                          float *workspace, const stax_gemm_kernels *kernels,
                          stax_kernel_fn epilogue, int64_t threads) {
    float *c_base = (float *)slots[g->c_slot] + g->c_offset;
    if (g->k <= 0) { /* an empty sum (dynamic sizes): zeros, then the epilogue */
        int64_t total = g->batch * g->m * g->n;
        if (total > 0) memset(c_base, 0, sizeof(float) * (size_t)total);
        if (epilogue && total > 0) epilogue(slots, 0, total);
        return;
    }
    gemm_call call = {.host = host,
                      .g = g,
                      .slots = slots,
                      .kernels = kernels,
                      .epilogue = epilogue,
                      .rt = split_rows(kernels->family, g->m),
                      .nr = kernels->family->nr,
                      .kc_max = kernels->kc,
                      .panels = panels_of(g, kernels),
                      .threads = threads > 1 ? threads : 1,
                      .a_base = (const float *)slots[g->a_slot] + g->a_offset,
                      .b_base = (const float *)slots[g->b_slot] + g->b_offset,
                      .c_base = c_base,
                      .workspace = workspace};
    bool parallel = call.threads > 1 && host && host->parallel_for;
    double work = (double)g->m * (double)g->n * (double)g->k;
    if (parallel && g->batch >= call.threads &&
        (work <= (double)(1 << 24) || call.rt.count < 2 * call.threads)) {
        int64_t slices = call.threads < g->batch ? call.threads : g->batch;
        host->parallel_for(slices, 1, batches_range, &call);
        return;
    }
    if (parallel && g->m <= 256 && call.panels >= 2 * call.threads) {
        for (int64_t batch = 0; batch < g->batch; batch++) {
            columns_job job = {&call, batch};
            host->parallel_for(call.panels, stax_grain(host, call.panels, 1, call.threads),
                               columns_range, &job);
        }
        return;
    }
    run_by_rows(&call, parallel);
}
