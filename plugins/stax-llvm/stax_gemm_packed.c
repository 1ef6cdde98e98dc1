/* stax-llvm — the packed f32 matmul driver around a micro-kernel family's
 * tile kernels (stax_gemm_kernels.c). Rows split into tiles of mr rows, then
 * at most one tile of each smaller height for the rest (m = 23 with mr = 12:
 * 12 + 8 + 2 + 1), so no row is ever padded; column edges are masked inside
 * the kernels. Per k block of kc, B is packed into nr-column panels and A,
 * mc rows at a time, into tile-high k-major strips; the packing reads both
 * through their strides, so a transposed or broadcast operand costs no copy
 * of its own. For each panel (in L1), every tile of the A chunk (in L2).
 *
 * The work is cut into slices (a few per thread, so that a thread the
 * scheduler wakes late takes fewer), each with its own A buffer:
 *   columns  at least two panels per thread: a slice packs and sweeps its own
 *            panels over all rows, with no barrier between k blocks;
 *   rows     fewer panels (a narrow B): threads pack B's panels together,
 *            then the slices split the row tiles; or B packed at compile
 *            and at least 16 row tiles a thread: each slice takes its row
 *            tiles through every k block, and no row of A is packed twice;
 *   batches  many small products (attention's batch x heads): a slice runs
 *            whole products, with its own B buffer too.
 * A per-row bias (conv) is added by the tile kernels as they store C in the
 * first k block. During a product's last k block, each block of rows and a
 * few panels a slice finishes (at most STAX_GEMM_FINISH_FLOATS) goes
 * through the fused epilogue kernel while it is still in cache.
 *
 * A caller may supply B's panels itself (stax_gemm_source.pack_b): conv packs
 * its im2col columns straight into the panel layout, so the unpacked im2col
 * matrix never exists. A B that is a constant of the graph is packed once at
 * compile (stax_gemm_pack_whole_b, all k blocks) and read from there by every
 * call (stax_gemm_source.b_packed, or the gemm's own packed_b_slot): no slice
 * packs B then, and a one-row product streams its weight exactly once.
 * A product of at most 2 * mr rows (m = 1, small batches, GPT-2 decoding)
 * whose B is not packed at compile but row-major f32 reads B in place
 * through the strided tile kernels: packing would cost a pass over B for
 * work that uses each element of B only m times. (Not for more rows: a
 * panel read in place is kc rows a row stride apart, which a power-of-two
 * stride maps onto a few cache sets, so it does not stay in L1 for the
 * many tiles that reuse it; a caller that measured otherwise for its
 * shapes asks for it with stax_gemm_source.b_in_place: 1x1 convs.) Only
 * the last, partial panel is packed (its zero padding keeps the kernels'
 * loads inside B). An f32 product of at most STAX_GEMV_MAX_ROWS rows with
 * such a B goes to the row-streaming kernels of stax_gemv.c instead. */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "stax_gemv.h"
#include "stax_internal.h"
#include "stax_storage_float.h"

stax_gemm_row_tiles stax_gemm_split_rows(const stax_gemm_family *family, int64_t m) {
    stax_gemm_row_tiles rt = {.m = m, .mr = family->mr, .full = m / family->mr};
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

int32_t stax_gemm_tile_rows(const stax_gemm_family *family, int64_t m, int64_t row) {
    stax_gemm_row_tiles rt = stax_gemm_split_rows(family, m);
    if (row >= 0 && row < rt.full * rt.mr) return row % rt.mr == 0 ? rt.mr : 0;
    for (int32_t i = 0; i < rt.tails; i++)
        if (rt.tail_row[i] == row) return family->heights[rt.tail_kernel[i]];
    return 0;
}

int64_t stax_gemm_tile_row(const stax_gemm_row_tiles *rt, int64_t tile) {
    if (tile >= rt->count) return rt->m;
    return tile < rt->full ? tile * rt->mr : rt->tail_row[tile - rt->full];
}

int32_t stax_gemm_tile_kernel(const stax_gemm_row_tiles *rt, int64_t tile) {
    return tile < rt->full ? 0 : rt->tail_kernel[tile - rt->full];
}

typedef struct gemm_call {
    const tp_plugin_host *host;
    const stax_gemm *g;
    void **slots;
    const stax_gemm_kernels *kernels;
    stax_kernel_fn epilogue;
    const stax_gemm_source *source; /* never NULL (an empty one: B through its strides) */
    stax_gemm_row_tiles rt;
    int64_t nr, kc_max, panels, threads, tiles_per_chunk;
    int64_t grain;                   /* units (panels, tiles or batches) per slice */
    int64_t row_slices;              /* rows_in_place: slices of evenly split row tiles */
    const float *a_base, *b_base;    /* f32 operands */
    const float *b_packed;           /* B packed for all k blocks (whole_b_block), or NULL */
    bool b_in_place;                 /* whole panels read from B by the strided kernels */
    const uint16_t *a_bits, *b_bits; /* f16/bf16 operands (the other base is NULL) */
    float *c_base;
    float *b_space, *a_space; /* B panels (per slice in batches mode), A chunks per slice */
    bool shared_space;        /* slices run one after another: all use slice 0's spaces */
} gemm_call;

/* One k block of one product. */
typedef struct k_block {
    const gemm_call *call;
    const float *a, *b;           /* A at column pc, B at row pc */
    float *c, *packed;            /* C of the product; its B panels from panel0 on */
    int64_t panel0, panel_stride; /* floats from one packed panel to the next */
    int64_t pc, kc, batch;        /* B's rows [pc, pc + kc) */
    int64_t a_at, b_at;           /* element offsets of a and b (f16/bf16 operands) */
    bool first, last;
} k_block;

static int64_t panel_floats(const gemm_call *call) {
    return call->kc_max * call->nr;
}

static int64_t chunk_floats(const gemm_call *call) {
    return call->tiles_per_chunk * call->rt.mr * call->kc_max;
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

/* Where k block pc of a B packed whole starts: the blocks before it hold pc
 * rows of every panel (panels * nr floats per row), and within the block the
 * panels are kc * nr floats apart. */
static int64_t whole_b_block(const gemm_call *call, int64_t pc) {
    return pc * call->panels * call->nr;
}

/* One k block whose B panels are packed into `packed` from panel `panel0`
 * on, or, with a B packed whole, read from there (packed and panel0 unused). */
static k_block block_of(const gemm_call *call, int64_t batch, int64_t pc, float *packed,
                        int64_t panel0) {
    const stax_gemm *g = call->g;
    int64_t a_off, b_off;
    batch_offsets(g, batch, &a_off, &b_off);
    int64_t kc = g->k - pc < call->kc_max ? g->k - pc : call->kc_max;
    int64_t a_at = a_off + pc * g->a_cs, b_at = b_off + pc * g->b_rs;
    bool whole = call->b_packed != NULL;
    return (k_block){.call = call,
                     .packed = whole ? (float *)call->b_packed + whole_b_block(call, pc) : packed,
                     .panel0 = whole ? 0 : panel0,
                     .panel_stride = whole ? kc * call->nr : panel_floats(call),
                     .a = call->a_base ? call->a_base + a_at : NULL,
                     .b = call->b_base ? call->b_base + b_at : NULL,
                     .a_at = a_at,
                     .b_at = b_at,
                     .c = call->c_base + batch * g->m * g->n,
                     .pc = pc,
                     .kc = kc,
                     .batch = batch,
                     .first = pc == 0,
                     .last = pc + kc >= g->k};
}

/* ---- f16/bf16 operands: widened to f32 as they are packed ---- */

static void pack_panel_storage_float(const k_block *kb, int64_t p, float *out) {
    const stax_gemm *g = kb->call->g;
    int64_t nr = kb->call->nr, j0 = p * nr, cols = g->n - j0 < nr ? g->n - j0 : nr;
    const uint16_t *b = kb->call->b_bits + kb->b_at + j0 * g->b_cs;
    for (int64_t k = 0; k < kb->kc; k++) {
        float *line = out + k * nr;
        stax_storage_floats_to_f32(g->b_dtype, b + k * g->b_rs, g->b_cs, line, cols);
        for (int64_t j = cols; j < nr; j++) line[j] = 0.0f;
    }
}

/* One tile of h rows: each row widened as a run along k, then interleaved. */
static void pack_a_tile_storage_float(const k_block *kb, int64_t row, int64_t h, float *out) {
    enum { RUN = 256 };
    const stax_gemm *g = kb->call->g;
    const uint16_t *a = kb->call->a_bits + kb->a_at + row * g->a_rs;
    float run[RUN];
    for (int64_t k0 = 0; k0 < kb->kc; k0 += RUN) {
        int64_t length = kb->kc - k0 < RUN ? kb->kc - k0 : RUN;
        for (int64_t r = 0; r < h; r++) {
            stax_storage_floats_to_f32(g->a_dtype, a + r * g->a_rs + k0 * g->a_cs, g->a_cs, run,
                                       length);
            for (int64_t k = 0; k < length; k++) out[(k0 + k) * h + r] = run[k];
        }
    }
}

/* dst[0..count) = src[0..count), in runs of 8 floats as fixed-size copies
 * that the compiler inlines as vector moves (a loop of unknown length stays
 * scalar at -O2, or becomes a memmove call), then the rest. */
static void copy_floats(float *restrict dst, const float *restrict src, int64_t count) {
    int64_t j = 0;
    for (; j + 8 <= count; j += 8) memcpy(dst + j, src + j, 8 * sizeof(float));
    for (; j < count; j++) dst[j] = src[j];
}

/* The widest panel of any family (avx512's nr). */
#define STAX_GEMM_MAX_PANEL_COLUMNS 32

/* Panel p of this k block: kc rows of nr floats, zeros past n. */
static void pack_panel(const k_block *kb, int64_t p) {
    const stax_gemm *g = kb->call->g;
    int64_t nr = kb->call->nr, j0 = p * nr, cols = g->n - j0 < nr ? g->n - j0 : nr;
    float *out = kb->packed + (p - kb->panel0) * kb->panel_stride;
    if (g->b_dtype != TP_PLUGIN_F32) {
        pack_panel_storage_float(kb, p, out);
        return;
    }
    if (kb->call->b_in_place && cols == nr) return; /* read in place by sweep */
    const float *b = kb->b + j0 * g->b_cs;
    if (kb->call->source->pack_b) {
        kb->call->source->pack_b(kb->call->source->b_context, kb->batch, kb->pc, kb->kc, j0, cols,
                                 nr, out);
        return;
    }
    if (g->b_cs == 1) {
        /* rows of nr floats: plain loops (a memcpy call per 64 bytes costs
         * more than the copy) */
        for (int64_t k = 0; k < kb->kc; k++) {
            copy_floats(out + k * nr, b + k * g->b_rs, cols);
            for (int64_t j = cols; j < nr; j++) out[k * nr + j] = 0.0f;
        }
        return;
    }
    if (g->b_rs == 1 && cols == nr && nr <= STAX_GEMM_MAX_PANEL_COLUMNS) {
        /* a transposed B, a whole panel: its nr columns, each contiguous
         * along k, interleaved like an A tile of nr rows (4x4 transposes) */
        const float *columns[STAX_GEMM_MAX_PANEL_COLUMNS];
        for (int64_t j = 0; j < nr; j++) columns[j] = b + j * g->b_cs;
        stax_pack_rows_k_major(columns, nr, kb->kc, out);
        return;
    }
    if (cols < nr) memset(out, 0, sizeof(float) * (size_t)(kb->kc * nr));
    /* a transposed B: each column is contiguous along k */
    for (int64_t j = 0; j < cols; j++)
        for (int64_t k = 0; k < kb->kc; k++) out[k * nr + j] = b[k * g->b_rs + j * g->b_cs];
}

/* Packs panels [begin, end) of a k block (nothing when B was packed whole). */
static void pack_range(void *context, int64_t begin, int64_t end) {
    const k_block *kb = context;
    const gemm_call *call = kb->call;
    if (call->b_packed) return;
    if (call->source->pack_b_panels && call->g->b_dtype == TP_PLUGIN_F32 && begin < end) {
        call->source->pack_b_panels(call->source->b_context, kb->batch, kb->pc, kb->kc, begin, end,
                                    call->nr, call->g->n, kb->panel_stride,
                                    kb->packed + (begin - kb->panel0) * kb->panel_stride);
        return;
    }
    const stax_gemm *g = call->g;
    if (g->b_dtype == TP_PLUGIN_F32 && g->b_cs == 1 && !call->source->pack_b) {
        stax_gemm_pack_row_major_panels(
            kb->b, g->b_rs, g->n, kb->kc, call->nr, begin, end, call->b_in_place,
            kb->packed + (begin - kb->panel0) * kb->panel_stride, kb->panel_stride);
        return;
    }
    for (int64_t p = begin; p < end; p++) pack_panel(kb, p);
}

/* Tiles [t0, t1) of A's k block into `out`: each tile h floats per k. */
static void pack_a(const k_block *kb, int64_t t0, int64_t t1, float *out) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    for (int64_t t = t0; t < t1; t++) {
        int64_t row = stax_gemm_tile_row(&call->rt, t);
        int64_t h = call->kernels->family->heights[stax_gemm_tile_kernel(&call->rt, t)];
        if (g->a_dtype != TP_PLUGIN_F32) {
            pack_a_tile_storage_float(kb, row, h, out);
            out += h * kb->kc;
            continue;
        }
        const float *a = kb->a + row * g->a_rs;
        const float *rows[STAX_GEMM_MAX_TILE_ROWS];
        for (int64_t r = 0; r < h; r++) rows[r] = a + r * g->a_rs;
        if (g->a_cs == 1) {
            stax_pack_rows_k_major(rows, h, kb->kc, out);
            out += h * kb->kc;
            continue;
        }
        /* written in order; the h rows are read as h streams */
        for (int64_t k = 0; k < kb->kc; k++, out += h)
            for (int64_t r = 0; r < h; r++) out[r] = rows[r][k * g->a_cs];
    }
}

/* C[r][j0..j1) += row_bias[r] for rows [r0, r1) of a product (one whose k
 * is 0: no tile adds it). */
static void add_row_bias(const gemm_call *call, float *c, int64_t r0, int64_t r1, int64_t j0,
                         int64_t j1) {
    const float *bias = call->source->row_bias;
    if (!bias) return;
    for (int64_t r = r0; r < r1; r++) stax_add_to_floats(c + r * call->g->n + j0, bias[r], j1 - j0);
}

static void epilogue_rows(const gemm_call *call, int64_t batch, int64_t r0, int64_t r1) {
    int64_t base = batch * call->g->m, offset = call->source->epilogue_offset;
    if (call->source->finish) {
        if (r1 > r0 && call->g->n > 0)
            call->source->finish(call->source->finish_context, batch, r0, r1, 0, call->g->n);
        return;
    }
    add_row_bias(call, call->c_base + batch * call->g->m * call->g->n, r0, r1, 0, call->g->n);
    if (call->epilogue && r1 > r0)
        call->epilogue(call->slots, offset + (base + r0) * call->g->n,
                       offset + (base + r1) * call->g->n);
}

/* C elements a one-thread product with A packed before the call (a conv)
 * keeps in cache through its k blocks (64 KiB of f32, in L2). */
#define STAX_GEMM_CACHED_C_FLOATS 16384

/* C elements a finished block's epilogue takes at once (about 128 KiB of
 * f32: in L2 while the bias and the epilogue read it back). */
#define STAX_GEMM_FINISH_FLOATS 32768

/* Bias and epilogue of rows [r0, r1) x panels [p0, p1) of the block's
 * product, once its last k block is in: one epilogue call per row, or one
 * for all the rows when the panels span them. */
static void finish_block(const k_block *kb, int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    int64_t j0 = p0 * call->nr, j1 = p1 * call->nr < g->n ? p1 * call->nr : g->n;
    if (call->source->finish) {
        if (r1 > r0 && j1 > j0)
            call->source->finish(call->source->finish_context, kb->batch, r0, r1, j0, j1);
        return;
    }
    if (!call->epilogue || r1 <= r0) return; /* the tiles added the bias */
    int64_t first = call->source->epilogue_offset + kb->batch * g->m * g->n;
    if (j0 == 0 && j1 == g->n) {
        call->epilogue(call->slots, first + r0 * g->n, first + r1 * g->n);
        return;
    }
    for (int64_t r = r0; r < r1; r++)
        call->epilogue(call->slots, first + r * g->n + j0, first + r * g->n + j1);
}

/* dst[0..count) = src[0..count); with `stream`, through non-temporal
 * stores from dst's first 16-byte boundary on (the caller fences). */
static void store_floats(float *restrict dst, const float *restrict src, int64_t count,
                         bool stream) {
#if defined(__SSE2__)
    if (stream) {
        int64_t j = 0;
        for (; j < count && ((uintptr_t)(dst + j) & 15) != 0; j++) dst[j] = src[j];
        for (; j + 4 <= count; j += 4) _mm_stream_ps(dst + j, _mm_loadu_ps(src + j));
        for (; j < count; j++) dst[j] = src[j];
        return;
    }
#else
    (void)stream;
#endif
    copy_floats(dst, src, count);
}

/* A staged block (stax_gemm_source.stage): rows [r0, r1) x panels [p0, p1)
 * of the product, `width` floats a row in `stage`, made final by this k
 * block. The bias and the epilogue on the stage, which is in cache (the
 * epilogue reads and writes element i of C: through a copy of the slots
 * whose C slot is moved so that the row's elements land in the stage), then
 * each row into C. */
static void finish_staged(const k_block *kb, float *stage, int64_t width, int64_t r0, int64_t r1,
                          int64_t p0, int64_t p1) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    const stax_gemm_source *source = call->source;
    int64_t j0 = p0 * call->nr, j1 = p1 * call->nr < g->n ? p1 * call->nr : g->n;
    if (call->epilogue) {
        void *slots[STAX_GEMM_STAGE_MAX_SLOTS];
        memcpy(slots, call->slots, sizeof(void *) * (size_t)source->epilogue_slots);
        /* element i of C is at slots[c_slot] + value_offset + i */
        int64_t value_offset = g->c_offset - source->epilogue_offset;
        int64_t first = source->epilogue_offset + kb->batch * g->m * g->n;
        for (int64_t r = r0; r < r1; r++) {
            int64_t i0 = first + r * g->n + j0;
            uintptr_t row = (uintptr_t)(stage + (r - r0) * width);
            slots[g->c_slot] = (void *)(row - (uintptr_t)(value_offset + i0) * sizeof(float));
            call->epilogue(slots, i0, i0 + (j1 - j0));
        }
    }
    for (int64_t r = r0; r < r1; r++)
        store_floats(kb->c + r * g->n + j0, stage + (r - r0) * width, j1 - j0, source->stream_c);
#if defined(__SSE2__)
    if (source->stream_c) _mm_sfence(); /* the streamed lines reach memory before C is read */
#endif
}

/* Panels per finished block for a chunk of `rows` rows: the block stays
 * within STAX_GEMM_FINISH_FLOATS, at least one panel. */
static int64_t panels_per_finish(const gemm_call *call, int64_t rows) {
    int64_t panels = STAX_GEMM_FINISH_FLOATS / ((rows > 0 ? rows : 1) * call->nr);
    return panels > 0 ? panels : 1;
}

/* The A chunk of tiles [c0, c1) for this k block: packed before the call,
 * or packed now into a_buffer. */
static const float *a_chunk_of(const k_block *kb, int64_t c0, int64_t c1, float *a_buffer) {
    const gemm_call *call = kb->call;
    if (call->source->a_packed) /* k block pc: m * kc floats at m * pc, tiles in order */
        return call->source->a_packed + call->g->m * kb->pc +
               stax_gemm_tile_row(&call->rt, c0) * kb->kc;
    pack_a(kb, c0, c1, a_buffer);
    return a_buffer;
}

/* With B packed at compile (a weight, read from memory by every call; a B
 * packed by the call is in cache already), the panel that a sweep over
 * panels [p0, p1) of k block kb takes after panel p, once the row tiles of
 * the chunk ending at tile c1 (of t1) are done with it: panel p + 1; after
 * p1 - 1, panel p0 for the next chunk of rows, or panel p0 of the next k
 * block; NULL after the last. */
static const float *panel_after(const k_block *kb, int64_t p, int64_t p0, int64_t p1, int64_t c1,
                                int64_t t1) {
    const gemm_call *call = kb->call;
    if (!call->b_packed) return NULL;
    if (p + 1 < p1) return kb->packed + (p + 1) * kb->panel_stride;
    if (c1 < t1) return kb->packed + p0 * kb->panel_stride;
    int64_t pc = kb->pc + kb->kc;
    if (pc >= call->g->k) return NULL;
    int64_t kc = call->g->k - pc < call->kc_max ? call->g->k - pc : call->kc_max;
    return call->b_packed + whole_b_block(call, pc) + p0 * kc * call->nr;
}

/* The part of panel `next` (NULL: none) that the turn-th tile over the
 * current panel prefetches (NULL: none): the streaming tile kernels fetch
 * kc / 2 lines each, so consecutive tiles take consecutive parts until
 * the panel is covered. */
static const float *prefetch_part(const k_block *kb, const float *next, int64_t turn) {
    int64_t lines = (kb->kc + 1) / 2, panel_lines = kb->kc * kb->call->nr / 16;
    if (!next || turn * lines >= panel_lines) return NULL;
    return next + turn * lines * 16;
}

/* The tile kernels' accumulate argument for a tile whose first row of the
 * product is `row`: 1 after the first k block (add to C); in the first, the
 * address of the row's bias where the product has one (stax_gemm_source.
 * row_bias: the kernel adds it as it stores, instead of a pass over the
 * finished block in cache, which took 4% of MobileNetV2-b1's samples),
 * else 0. */
static int64_t tile_accumulate(const k_block *kb, int64_t row) {
    const float *bias = kb->call->source->row_bias;
    if (!kb->first) return 1;
    return bias ? (int64_t)(uintptr_t)(bias + row) : 0;
}

/* One tile (kernel `kernel`, A at a) times panel p into c, ldc floats a row,
 * prefetching from `prefetch` (NULL: nothing to fetch). */
static void run_tile(const k_block *kb, int32_t kernel, const float *a, int64_t row, int64_t p,
                     float *c, int64_t ldc, const float *prefetch) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    int64_t accumulate = tile_accumulate(kb, row);
    int64_t j0 = p * call->nr, cols = g->n - j0 < call->nr ? g->n - j0 : call->nr;
    const float *panel = kb->packed + (p - kb->panel0) * kb->panel_stride;
    if (call->b_in_place && cols == call->nr)
        call->kernels->strided[kernel](a, kb->b + j0, c, ldc, kb->kc, accumulate, cols, g->b_rs);
    else if (prefetch && call->kernels->streaming[kernel])
        call->kernels->streaming[kernel](a, panel, c, ldc, kb->kc, accumulate, cols, prefetch);
    else
        call->kernels->tile[kernel](a, panel, c, ldc, kb->kc, accumulate, cols);
}

/* B's floats (kc rows of a block of panels) that a staged block keeps in L2
 * while each row tile reads them. */
#define STAX_GEMM_STAGE_B_FLOATS 65536

/* Panels of one staged block: the tallest tile's rows of all of them fit
 * the stage, and their B block fits STAX_GEMM_STAGE_B_FLOATS. */
static int64_t stage_panels(const gemm_call *call, int64_t kc) {
    int64_t by_stage = STAX_GEMM_STAGE_FLOATS / (call->rt.mr * call->nr);
    int64_t by_b = STAX_GEMM_STAGE_B_FLOATS / ((kc > 0 ? kc : 1) * call->nr);
    int64_t panels = by_stage < by_b ? by_stage : by_b;
    return panels > 0 ? panels : 1;
}

/* Tiles [t0, t1) times panels [p0, p1) when this one k block makes C final
 * (stax_gemm_source.stage): per block of panels, each row tile across all of
 * them into the stage, then its rows finished and copied out whole, so that
 * C is written in long runs along its rows, a tile's rows at a time. */
static void sweep_staged(const k_block *kb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                         float *a_buffer, float *stage) {
    const gemm_call *call = kb->call;
    int64_t group = stage_panels(call, kb->kc);
    for (int64_t c0 = t0; c0 < t1; c0 += call->tiles_per_chunk) {
        int64_t c1 = c0 + call->tiles_per_chunk < t1 ? c0 + call->tiles_per_chunk : t1;
        const float *a_chunk = a_chunk_of(kb, c0, c1, a_buffer);
        for (int64_t q0 = p0; q0 < p1; q0 += group) {
            int64_t q1 = q0 + group < p1 ? q0 + group : p1, width = (q1 - q0) * call->nr;
            const float *a = a_chunk;
            for (int64_t t = c0; t < c1; t++) {
                int32_t kernel = stax_gemm_tile_kernel(&call->rt, t);
                int64_t row = stax_gemm_tile_row(&call->rt, t),
                        h = call->kernels->family->heights[kernel];
                for (int64_t p = q0; p < q1; p++)
                    run_tile(kb, kernel, a, row, p, stage + (p - q0) * call->nr, width, NULL);
                finish_staged(kb, stage, width, row, row + h, q0, q1);
                a += h * kb->kc;
            }
        }
    }
}

/* Tiles [t0, t1) times panels [p0, p1), one A chunk at a time in `a_buffer`.
 * On the last k block, each block of the chunk's rows and a few panels gets
 * its bias and epilogue as soon as it is final, while it is in cache. With
 * a stage and one k block for all of k: sweep_staged. */
static void sweep(const k_block *kb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                  float *a_buffer, float *stage) {
    const gemm_call *call = kb->call;
    const stax_gemm *g = call->g;
    if (stage && kb->first && kb->last) {
        sweep_staged(kb, t0, t1, p0, p1, a_buffer, stage);
        return;
    }
    bool finishing = kb->last && (call->epilogue || call->source->finish);
    for (int64_t c0 = t0; c0 < t1; c0 += call->tiles_per_chunk) {
        int64_t c1 = c0 + call->tiles_per_chunk < t1 ? c0 + call->tiles_per_chunk : t1;
        int64_t r0 = stax_gemm_tile_row(&call->rt, c0), r1 = stax_gemm_tile_row(&call->rt, c1);
        const float *a_chunk = a_chunk_of(kb, c0, c1, a_buffer);
        int64_t group = finishing ? panels_per_finish(call, r1 - r0) : p1 - p0;
        for (int64_t q0 = p0; q0 < p1; q0 += group) {
            int64_t q1 = q0 + group < p1 ? q0 + group : p1;
            for (int64_t p = q0; p < q1; p++) {
                const float *a = a_chunk;
                const float *next = panel_after(kb, p, p0, p1, c1, t1);
                for (int64_t t = c0; t < c1; t++) {
                    int32_t kernel = stax_gemm_tile_kernel(&call->rt, t);
                    int64_t row = stax_gemm_tile_row(&call->rt, t);
                    run_tile(kb, kernel, a, row, p, kb->c + row * g->n + p * call->nr, g->n,
                             prefetch_part(kb, next, t - c0));
                    a += call->kernels->family->heights[kernel] * kb->kc;
                }
            }
            if (finishing) finish_block(kb, r0, r1, q0, q1);
        }
    }
}

/* Slice s's stage (stax_gemm_source.stage), or NULL. */
static float *stage_of(const gemm_call *call, int64_t s) {
    return call->source->stage ? call->source->stage + s * STAX_GEMM_STAGE_FLOATS : NULL;
}

/* Units [begin, end) of slice s (units of call->grain). */
static void slice_units(const gemm_call *call, int64_t s, int64_t units, int64_t *begin,
                        int64_t *end) {
    *begin = s * call->grain;
    *end = *begin + call->grain < units ? *begin + call->grain : units;
}

static int64_t slices_of(const gemm_call *call, int64_t units) {
    return (units + call->grain - 1) / call->grain;
}

/* Runs fn over slices [0, slices): on the pool, or inline. */
static void run_slices(const gemm_call *call, int64_t slices, tp_plugin_range_fn fn,
                       void *context) {
    if (slices > 1 && call->threads > 1 && call->host && call->host->parallel_for)
        call->host->parallel_for(slices, 1, fn, context);
    else
        fn(context, 0, slices);
}

/* ---- rows ---- */

/* Slice s's row tiles times every panel of k block kb. */
static void sweep_slice_rows(const k_block *kb, int64_t s) {
    const gemm_call *call = kb->call;
    int64_t t0, t1;
    slice_units(call, s, call->rt.count, &t0, &t1);
    sweep(kb, t0, t1, 0, call->panels, call->a_space + s * chunk_floats(call), stage_of(call, s));
}

static void rows_range(void *context, int64_t begin, int64_t end) {
    const k_block *kb = context;
    for (int64_t s = begin; s < end; s++) sweep_slice_rows(kb, s);
}

/* B packed whole before the call: no k block waits for a shared packing,
 * so each slice runs its row tiles through every product and k block. */
static void rows_every_block_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    for (int64_t s = begin; s < end; s++)
        for (int64_t batch = 0; batch < call->g->batch; batch++)
            for (int64_t pc = 0; pc < call->g->k; pc += call->kc_max) {
                k_block kb = block_of(call, batch, pc, call->b_space, 0);
                sweep_slice_rows(&kb, s);
            }
}

static void run_by_rows(gemm_call *call) {
    const stax_gemm *g = call->g;
    bool parallel = call->threads > 1 && call->host && call->host->parallel_for;
    call->grain = stax_grain(call->host, call->rt.count, 1, call->threads);
    int64_t slices = slices_of(call, call->rt.count);
    if (call->b_packed) {
        run_slices(call, slices, rows_every_block_range, call);
        return;
    }
    /* per k block: the threads pack its panels together, then sweep them */
    for (int64_t batch = 0; batch < g->batch; batch++)
        for (int64_t pc = 0; pc < g->k; pc += call->kc_max) {
            k_block kb = block_of(call, batch, pc, call->b_space, 0);
            if (parallel && call->panels > 1)
                call->host->parallel_for(call->panels,
                                         stax_grain(call->host, call->panels, 1, call->threads),
                                         pack_range, &kb);
            else
                pack_range(&kb, 0, call->panels);
            run_slices(call, slices, rows_range, &kb);
        }
}

/* ---- rows through every k block, B read in place ---- */

/* B read in place (a 1x1 conv's image) and A packed before the call: no
 * slice packs anything but the last, partial panel, so the slices can take
 * their row tiles through every k block without the per-block barrier of
 * run_by_rows (a 960 -> 160 conv on a 7x7 map: 16 pool dispatches a call
 * for 15 MFLOP). The partial panel of every k block is packed first, block
 * i's at b_space + i * panel_floats. The row tiles are split into `slices`
 * runs that differ by at most one tile. */
static int64_t k_blocks_of(const gemm_call *call) {
    return (call->g->k + call->kc_max - 1) / call->kc_max;
}

static bool has_partial_panel(const gemm_call *call) {
    return call->g->n % call->nr != 0;
}

static k_block in_place_block(const gemm_call *call, int64_t block) {
    return block_of(call, 0, block * call->kc_max, call->b_space + block * panel_floats(call),
                    call->panels - 1);
}

static void pack_partial_panels_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    for (int64_t block = begin; block < end; block++) {
        k_block kb = in_place_block(call, block);
        pack_range(&kb, call->panels - 1, call->panels);
    }
}

/* Tiles [*t0, *t1) of slice s of `slices`. */
static void tiles_of_slice(const gemm_call *call, int64_t s, int64_t slices, int64_t *t0,
                           int64_t *t1) {
    int64_t count = call->rt.count;
    *t0 = s * count / slices, *t1 = (s + 1) * count / slices;
}

static void rows_in_place_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    for (int64_t s = begin; s < end; s++) {
        int64_t t0, t1;
        tiles_of_slice(call, s, call->row_slices, &t0, &t1);
        for (int64_t block = 0; block < k_blocks_of(call); block++) {
            k_block kb = in_place_block(call, block);
            sweep(&kb, t0, t1, 0, call->panels, call->a_space + s * chunk_floats(call),
                  stage_of(call, s));
        }
    }
}

/* Rows of tiles [t0, t1). */
static int64_t rows_of_tiles(const gemm_call *call, int64_t t0, int64_t t1) {
    return stax_gemm_tile_row(&call->rt, t1) - stax_gemm_tile_row(&call->rt, t0);
}

/* Slices for rows_in_place: the most (up to four a thread) that split the
 * tiles evenly, else one a thread. */
static int64_t rows_in_place_slices(const gemm_call *call) {
    for (int64_t per_thread = 4; per_thread > 1; per_thread--)
        if (call->rt.count % (per_thread * call->threads) == 0) return per_thread * call->threads;
    return call->threads;
}

/* Whether a one-product call with B read in place and A packed over several
 * k blocks takes rows_in_place: the buffers hold every block's partial
 * panel, and either there are too few panels for product_columns_range
 * (run_by_rows would take it, with a barrier per k block), or its busiest
 * thread computes fewer C elements than with the panels split between the
 * threads (where also every slice reads all of A). */
static bool takes_rows_in_place(const gemm_call *call) {
    const stax_gemm *g = call->g;
    if (call->threads <= 1 || !call->b_in_place || !call->source->a_packed || g->batch != 1 ||
        k_blocks_of(call) < 2)
        return false;
    if (has_partial_panel(call) &&
        k_blocks_of(call) > stax_most_slices(call->threads) * call->panels)
        return false;
    if (call->panels < 2 * call->threads) return true;
    int64_t slices = rows_in_place_slices(call), busiest_rows = 0;
    for (int64_t t = 0; t < call->threads; t++) { /* slices dealt out in turn */
        int64_t rows = 0;
        for (int64_t s = t; s < slices; s += call->threads) {
            int64_t t0, t1;
            tiles_of_slice(call, s, slices, &t0, &t1);
            rows += rows_of_tiles(call, t0, t1);
        }
        if (rows > busiest_rows) busiest_rows = rows;
    }
    int64_t busiest_panels = (call->panels + call->threads - 1) / call->threads;
    return busiest_rows * call->panels < busiest_panels * g->m;
}

static void run_rows_in_place(gemm_call *call) {
    if (has_partial_panel(call)) {
        int64_t min_blocks = 16384 / (call->kc_max * call->nr) + 1;
        stax_parallel_range(call->host, k_blocks_of(call), min_blocks, call->threads,
                            pack_partial_panels_range, call);
    }
    call->row_slices = rows_in_place_slices(call);
    run_slices(call, call->row_slices, rows_in_place_range, call);
}

/* ---- columns ---- */

typedef struct columns_job {
    const gemm_call *call;
    int64_t batch;
} columns_job;

/* Panels [p0, p1) of product `batch` over all rows, B packed into `panels`. */
static void columns_of(const gemm_call *call, int64_t batch, int64_t p0, int64_t p1, float *panels,
                       float *a_buffer, float *stage) {
    for (int64_t pc = 0; pc < call->g->k; pc += call->kc_max) {
        k_block kb = block_of(call, batch, pc, panels, p0);
        pack_range(&kb, p0, p1);
        sweep(&kb, 0, call->rt.count, p0, p1, a_buffer, stage);
    }
}

static void columns_range(void *context, int64_t begin, int64_t end) {
    const columns_job *job = context;
    const gemm_call *call = job->call;
    for (int64_t s = begin; s < end; s++) {
        int64_t p0, p1;
        slice_units(call, s, call->panels, &p0, &p1);
        columns_of(call, job->batch, p0, p1, call->b_space + p0 * panel_floats(call),
                   call->a_space + s * chunk_floats(call), stage_of(call, s));
    }
}

/* A packed before the call (no slice packs it): the units are the panels of
 * every product, batch-major, split in one pass over the pool; a slice's
 * units that span products run as one piece per product. Each slice packs
 * into its own `panels` panels of B space. */
static void product_columns_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    int64_t units = call->g->batch * call->panels;
    for (int64_t s = begin; s < end; s++) {
        int64_t u0, u1;
        slice_units(call, s, units, &u0, &u1);
        int64_t space = call->shared_space ? 0 : s;
        float *panels = call->b_space + space * call->panels * panel_floats(call);
        for (int64_t u = u0; u < u1;) {
            int64_t batch = u / call->panels, p0 = u % call->panels;
            int64_t p1 = p0 + (u1 - u) < call->panels ? p0 + (u1 - u) : call->panels;
            columns_of(call, batch, p0, p1, panels, call->a_space + space * chunk_floats(call),
                       stage_of(call, space));
            u += p1 - p0;
        }
    }
}

/* ---- batches ---- */

static void batches_range(void *context, int64_t begin, int64_t end) {
    const gemm_call *call = context;
    const stax_gemm *g = call->g;
    for (int64_t s = begin; s < end; s++) {
        int64_t b0, b1;
        slice_units(call, s, g->batch, &b0, &b1);
        float *packed = call->b_space + s * call->panels * panel_floats(call);
        float *a_buffer = call->a_space + s * chunk_floats(call);
        for (int64_t batch = b0; batch < b1; batch++) {
            for (int64_t pc = 0; pc < g->k; pc += call->kc_max) {
                k_block kb = block_of(call, batch, pc, packed, 0);
                pack_range(&kb, 0, call->panels);
                sweep(&kb, 0, call->rt.count, 0, call->panels, a_buffer, stage_of(call, s));
            }
        }
    }
}

/* ---- A packed once for all k blocks ---- */

typedef struct whole_a_job {
    const gemm_call *call;
    float *out;
} whole_a_job;

static void pack_whole_a_range(void *context, int64_t begin, int64_t end) {
    const whole_a_job *job = context;
    const gemm_call *call = job->call;
    for (int64_t pc = 0; pc < call->g->k; pc += call->kc_max) {
        k_block kb = block_of(call, 0, pc, NULL, 0);
        pack_a(&kb, begin, end,
               job->out + call->g->m * pc + stax_gemm_tile_row(&call->rt, begin) * kb.kc);
    }
}

void stax_gemm_pack_whole_a(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                            const stax_gemm_kernels *kernels, int64_t threads, float *out) {
    static const stax_gemm_source strided = {0};
    gemm_call call = {.host = host,
                      .g = g,
                      .kernels = kernels,
                      .source = &strided,
                      .rt = stax_gemm_split_rows(kernels->family, g->m),
                      .kc_max = kernels->kc,
                      .threads = threads > 1 && host && host->parallel_for ? threads : 1,
                      .a_base = (const float *)slots[g->a_slot] + g->a_offset,
                      .b_base = (const float *)slots[g->b_slot] + g->b_offset};
    whole_a_job job = {&call, out};
    stax_parallel_range(host, call.rt.count, 1, call.threads, pack_whole_a_range, &job);
}

/* ---- entry ---- */

static int64_t panels_of(const stax_gemm *g, const stax_gemm_kernels *kernels) {
    return (g->n + kernels->family->nr - 1) / kernels->family->nr;
}

/* ---- B packed once for all k blocks ---- */

static const float *operand_floats(void **slots, int32_t slot, int64_t offset, int32_t dtype) {
    return dtype == TP_PLUGIN_F32 ? (const float *)slots[slot] + offset : NULL;
}

static const uint16_t *operand_bits(void **slots, int32_t slot, int64_t offset, int32_t dtype) {
    return dtype == TP_PLUGIN_F32 ? NULL : (const uint16_t *)slots[slot] + offset;
}

size_t stax_gemm_whole_b_floats(const stax_gemm *g, const stax_gemm_kernels *kernels) {
    return (size_t)(g->k * panels_of(g, kernels) * kernels->family->nr);
}

void stax_gemm_batch_offsets(const stax_gemm *g, int64_t batch, int64_t *a_offset,
                             int64_t *b_offset) {
    batch_offsets(g, batch, a_offset, b_offset);
}

bool stax_gemm_b_shared_by_batches(const stax_gemm *g) {
    for (int32_t d = 0; d < g->batch_ndim; d++)
        if (g->b_batch_strides[d] != 0) return false;
    return true;
}

typedef struct whole_b_job {
    const gemm_call *call;
    float *out;
} whole_b_job;

/* Units [begin, end) of a whole B: unit u is panel u % panels of k block
 * u / panels, so a slice packs runs of panels within one or more blocks. */
static void pack_whole_b_range(void *context, int64_t begin, int64_t end) {
    const whole_b_job *job = context;
    const gemm_call *call = job->call;
    for (int64_t u = begin; u < end;) {
        int64_t block = u / call->panels, p0 = u % call->panels;
        int64_t p1 = end - u < call->panels - p0 ? p0 + (end - u) : call->panels;
        int64_t pc = block * call->kc_max;
        k_block kb = block_of(call, 0, pc, job->out + whole_b_block(call, pc), 0);
        kb.panel_stride = kb.kc * call->nr; /* the layout block_of reads with b_packed */
        pack_range(&kb, p0, p1);
        u += p1 - p0;
    }
}

void stax_gemm_pack_whole_b(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                            const stax_gemm_kernels *kernels, int64_t threads, float *out) {
    static const stax_gemm_source strided = {0};
    gemm_call call = {.g = g,
                      .kernels = kernels,
                      .source = &strided,
                      .nr = kernels->family->nr,
                      .kc_max = kernels->kc,
                      .panels = panels_of(g, kernels),
                      .b_base = operand_floats(slots, g->b_slot, g->b_offset, g->b_dtype),
                      .b_bits = operand_bits(slots, g->b_slot, g->b_offset, g->b_dtype)};
    whole_b_job job = {&call, out};
    int64_t units = (g->k + call.kc_max - 1) / call.kc_max * call.panels;
    /* a slice of at least 64 KiB of packed floats: less is not worth a wake-up */
    int64_t min_units = 16384 / (call.kc_max * call.nr) + 1;
    stax_parallel_range(host, units, min_units, threads, pack_whole_b_range, &job);
}

/* Whether the strided kernels read B in place (see the head of this file). */
static bool reads_b_in_place(const gemm_call *call) {
    const stax_gemm *g = call->g;
    bool worth_it = g->m <= 2 * call->kernels->family->mr || call->source->b_in_place;
    return !call->b_packed && !call->source->pack_b && call->b_base && g->b_cs == 1 && worth_it &&
           call->kernels->strided[0] != NULL;
}

/* Whether g's B was packed at compile for these kernels (compile_time_b). */
static bool b_packed_at_compile(const stax_gemm *g, const stax_gemm_kernels *kernels) {
    return g->packed_b_kc > 0 && g->packed_b_kc == kernels->kc &&
           g->packed_b_family == kernels->family;
}

/* B's panels packed at compile for these kernels (the family and kc they
 * were packed for), or NULL: a tuned step with other blocking packs B itself. */
static const float *compile_time_b(const stax_gemm *g, void **slots,
                                   const stax_gemm_kernels *kernels) {
    return b_packed_at_compile(g, kernels) ? slots[g->packed_b_slot] : NULL;
}

static int64_t tiles_per_chunk(const stax_gemm_kernels *kernels) {
    int64_t tiles = kernels->mc / kernels->family->mr;
    return tiles > 0 ? tiles : 1;
}

size_t stax_gemm_stage_bytes(int64_t threads) {
    return (size_t)stax_most_slices(threads) * STAX_GEMM_STAGE_FLOATS * sizeof(float);
}

/* Enough for the most slices stax_grain makes (four per thread). */
size_t stax_gemm_packed_workspace_bytes(const stax_gemm *gemm, const stax_gemm_kernels *kernels,
                                        int64_t threads) {
    int64_t slices = stax_most_slices(threads);
    int64_t b = panels_of(gemm, kernels) * kernels->kc * kernels->family->nr;
    int64_t a = tiles_per_chunk(kernels) * kernels->family->mr * kernels->kc;
    return (size_t)(slices * (a + b)) * sizeof(float);
}

static bool parallel_host(const tp_plugin_host *host, int64_t threads) {
    return threads > 1 && host && host->parallel_for;
}

/* Row tiles per thread from which a product whose B was packed at compile
 * splits by rows (stax_gemm_packed_default_split). */
#define ROWS_SPLIT_TILES_PER_THREAD 16

stax_gemm_split stax_gemm_packed_default_split(const tp_plugin_host *host, const stax_gemm *g,
                                               const stax_gemm_kernels *kernels, int64_t threads) {
    if (!parallel_host(host, threads)) return STAX_GEMM_SPLIT_ROWS;
    int64_t row_tiles = stax_gemm_split_rows(kernels->family, g->m).count;
    double work = (double)g->m * (double)g->n * (double)g->k;
    if (g->batch >= threads && (work <= (double)(1 << 24) || row_tiles < 2 * threads))
        return STAX_GEMM_SPLIT_BATCHES;
    /* B packed at compile: the rows split shares no packing of B and packs
     * each row of A once, where the columns split has every slice pack all
     * of A for its panels; with enough row tiles that the slices balance
     * (encoder, 1024 rows: 3-5% faster; GPT-2 block, 128 rows: columns) */
    if (b_packed_at_compile(g, kernels) && row_tiles >= ROWS_SPLIT_TILES_PER_THREAD * threads)
        return STAX_GEMM_SPLIT_ROWS;
    if (panels_of(g, kernels) >= 2 * threads) return STAX_GEMM_SPLIT_COLUMNS;
    return STAX_GEMM_SPLIT_ROWS;
}

void stax_gemm_packed_run(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                          float *workspace, const stax_gemm_kernels *kernels,
                          stax_kernel_fn epilogue, int64_t threads) {
    stax_gemm_packed_run_split(host, g, slots, workspace, kernels, epilogue, threads,
                               STAX_GEMM_SPLIT_AUTO);
}

static void run_packed(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                       float *workspace, const stax_gemm_kernels *kernels, stax_kernel_fn epilogue,
                       int64_t threads, stax_gemm_split split, const stax_gemm_source *source);

void stax_gemm_packed_run_split(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                                float *workspace, const stax_gemm_kernels *kernels,
                                stax_kernel_fn epilogue, int64_t threads, stax_gemm_split split) {
    static const stax_gemm_source strided = {0};
    run_packed(host, g, slots, workspace, kernels, epilogue, threads, split, &strided);
}

void stax_gemm_packed_run_from(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                               float *workspace, const stax_gemm_kernels *kernels,
                               stax_kernel_fn epilogue, int64_t threads,
                               const stax_gemm_source *source) {
    run_packed(host, g, slots, workspace, kernels, epilogue, threads, STAX_GEMM_SPLIT_AUTO, source);
}

/* Panels whose C block (all rows) stays within STAX_GEMM_CACHED_C_FLOATS. */
static int64_t cached_c_panels(const gemm_call *call) {
    int64_t panels = STAX_GEMM_CACHED_C_FLOATS / (call->g->m * call->nr);
    return panels > 0 ? panels : 1;
}

/* One thread, A packed before the call (a conv's weights): whether taking a
 * few panels at a time through every k block (their C block in cache from
 * the first k block to the epilogue, B packed per slice in L2) moves fewer
 * floats through memory than the rows split, which packs all of B's k block
 * into a buffer larger than L2 and sweeps all of C once per k block; the
 * columns pay for reading A once per slice. */
static bool columns_move_less(const gemm_call *call) {
    const stax_gemm *g = call->g;
    double k_blocks = (double)((g->k + call->kc_max - 1) / call->kc_max);
    double slices = (double)((call->panels + cached_c_panels(call) - 1) / cached_c_panels(call));
    double rows_extra =
        2.0 * (double)g->m * (double)g->n * (k_blocks - 1) + 2.0 * (double)g->k * (double)g->n;
    double columns_extra = (double)g->m * (double)g->k * (slices - 1);
    return columns_extra < rows_extra;
}

static void run_packed(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                       float *workspace, const stax_gemm_kernels *kernels, stax_kernel_fn epilogue,
                       int64_t threads, stax_gemm_split split, const stax_gemm_source *source) {
    float *c_base = (float *)slots[g->c_slot] + g->c_offset;
    int64_t most_slices = stax_most_slices(threads);
    gemm_call call = {.host = host,
                      .g = g,
                      .slots = slots,
                      .kernels = kernels,
                      .epilogue = epilogue,
                      .source = source,
                      .rt = stax_gemm_split_rows(kernels->family, g->m),
                      .nr = kernels->family->nr,
                      .kc_max = kernels->kc,
                      .panels = panels_of(g, kernels),
                      .threads = parallel_host(host, threads) ? threads : 1,
                      .tiles_per_chunk = tiles_per_chunk(kernels),
                      .a_base = operand_floats(slots, g->a_slot, g->a_offset, g->a_dtype),
                      .b_base = operand_floats(slots, g->b_slot, g->b_offset, g->b_dtype),
                      .a_bits = operand_bits(slots, g->a_slot, g->a_offset, g->a_dtype),
                      .b_bits = operand_bits(slots, g->b_slot, g->b_offset, g->b_dtype),
                      .c_base = c_base,
                      .b_space = workspace};
    if (!source->pack_b)
        call.b_packed = source->b_packed ? source->b_packed : compile_time_b(g, slots, kernels);
    call.b_in_place = reads_b_in_place(&call);
    if (g->k <= 0) { /* an empty sum (dynamic sizes): zeros, the bias, then the epilogue */
        int64_t total = g->batch * g->m * g->n;
        if (total > 0) memset(c_base, 0, sizeof(float) * (size_t)total);
        for (int64_t batch = 0; batch < g->batch; batch++) epilogue_rows(&call, batch, 0, g->m);
        return;
    }
    if (!call.b_packed && !source->finish &&
        stax_gemv_takes(g, source, kernels)) { /* a few rows: stax_gemv.c */
        stax_gemv_run(host, g, slots, kernels, epilogue, call.threads, source);
        return;
    }
    call.a_space = workspace + most_slices * call.panels * panel_floats(&call);
    bool automatic = split == STAX_GEMM_SPLIT_AUTO;
    if (automatic) split = stax_gemm_packed_default_split(host, g, kernels, threads);
    if (split == STAX_GEMM_SPLIT_BATCHES) {
        call.grain = stax_grain(host, g->batch, 1, call.threads);
        run_slices(&call, slices_of(&call, g->batch), batches_range, &call);
        return;
    }
    if (automatic && takes_rows_in_place(&call)) {
        run_rows_in_place(&call);
        return;
    }
    if (automatic && call.threads > 1 && source->a_packed &&
        g->batch * call.panels >= 2 * call.threads) {
        int64_t units = g->batch * call.panels;
        call.grain = stax_grain(host, units, 1, call.threads);
        if (call.grain < (units + most_slices - 1) / most_slices) /* within the B space */
            call.grain = (units + most_slices - 1) / most_slices;
        run_slices(&call, slices_of(&call, units), product_columns_range, &call);
        return;
    }
    if (automatic && call.threads <= 1 && source->a_packed && columns_move_less(&call)) {
        int64_t units = g->batch * call.panels;
        /* staged (one k block): a slice is one block of staged panels */
        bool staged = source->stage && g->k <= call.kc_max;
        call.grain = staged ? stage_panels(&call, g->k) : cached_c_panels(&call);
        call.shared_space = true;
        run_slices(&call, slices_of(&call, units), product_columns_range, &call);
        return;
    }
    if (split == STAX_GEMM_SPLIT_COLUMNS) {
        /* one slice per thread: each slice packs all of A */
        call.grain = (call.panels + call.threads - 1) / call.threads;
        for (int64_t batch = 0; batch < g->batch; batch++) {
            columns_job job = {&call, batch};
            run_slices(&call, slices_of(&call, call.panels), columns_range, &job);
        }
        return;
    }
    run_by_rows(&call);
}
