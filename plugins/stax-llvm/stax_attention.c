/* stax-llvm — the fused attention step: out = softmax(Q K^T * scale + mask) V
 * per batch index, flash-attention style, never storing the queries x keys
 * matrix. The work is cut into units of one batch index and one block of
 * query rows (a few row tiles of the packed matmul's family), run in slices
 * on the pool, each slice with its own workspace. A slice packs K and V of
 * its batch index once (the tile kernels' B layout); per unit it packs its
 * Q rows (the A layout), then for each block of keys:
 *   S = Q K_block^T                the family's tile kernels (kc = head dim)
 *   rows kernel                    S * scale + mask, the running max and sum
 *                                  updated, S replaced by exp(S - max) and
 *                                  the factor exp(old max - new max) kept
 *   O *= factor; O += P V_block    P: S packed as the tile kernels' A
 * and finally out = O / sum. The rows kernel is LLVM IR emitted here (the
 * loop vectorizer turns its element loops into vector code with the mathlib's
 * exp inlined), so both the matmuls and the softmax run as vector code of the
 * family's width; every size is its argument, so it is compiled once into
 * the micro-kernel library (stax_gemm_library.c), not into each graph.
 *
 * A row whose every logit is -inf (a fully masked row) has sum 0: its output
 * is 0/0 = NaN, as the unfused softmax gives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stax_internal.h"
#include "stax_kernel_bodies.h"

/* Keys per block: S and P of a unit are query block x this many floats. */
#define ATTENTION_KEY_BLOCK 256
/* Row tiles of the family's height per query block. */
#define ATTENTION_TILES_PER_BLOCK 8

typedef void (*attention_rows_fn)(float *s, int64_t lds, int64_t rows, int64_t cols,
                                  const float *mask, int64_t mask_rs, float scale, float *max,
                                  float *sum, float *factor);

/* ---- the rows kernel's IR ---- */

void stax_emit_attention_rows(tpcommon_buf *m, const char *name, bool has_mask) {
    tpcommon_buf_printf(
        m,
        "define void @%s(ptr noalias %%s, i64 %%lds, i64 %%rows, i64 %%cols, ptr noalias %%mask, "
        "i64 %%mrs, float %%scale, ptr noalias %%mx, ptr noalias %%sm, ptr noalias %%fac) #%d {\n"
        "entry:\n  br label %%row\n"
        "row:\n  %%r = phi i64 [0, %%entry], [%%rn, %%rowend]\n"
        "  %%more = icmp slt i64 %%r, %%rows\n  br i1 %%more, label %%rowbody, label %%exit\n"
        "rowbody:\n  %%so = mul i64 %%r, %%lds\n"
        "  %%srow = getelementptr inbounds float, ptr %%s, i64 %%so\n"
        "  %%mo = mul i64 %%r, %%mrs\n"
        "  %%mrow = getelementptr float, ptr %%mask, i64 %%mo\n"
        "  br label %%logits\n"
        /* pass 1: the logits, stored over S, and their max */
        "logits:\n  %%j = phi i64 [0, %%rowbody], [%%jn, %%logits]\n"
        "  %%bmax = phi float [0xFFF0000000000000, %%rowbody], [%%bmaxn, %%logits]\n"
        "  %%sp = getelementptr inbounds float, ptr %%srow, i64 %%j\n"
        "  %%sv = load float, ptr %%sp, align 4\n"
        "  %%x0 = fmul float %%sv, %%scale\n",
        name, STAX_ATTRS_WIDE);
    if (has_mask)
        tpcommon_buf_printf(m, "  %%mp = getelementptr inbounds float, ptr %%mrow, i64 %%j\n"
                               "  %%mv = load float, ptr %%mp, align 4\n"
                               "  %%x = fadd float %%x0, %%mv\n");
    else
        tpcommon_buf_printf(m, "  %%x = fadd float %%x0, 0.0\n");
    tpcommon_buf_printf(
        m, "  store float %%x, ptr %%sp, align 4\n"
           /* nnan nsz let the max reduction vectorize; a NaN logit still makes
            * the row NaN through exp and the sum */
           "  %%bmaxn = call nnan nsz float @llvm.maxnum.f32(float %%bmax, float %%x)\n"
           "  %%jn = add i64 %%j, 1\n  %%jm = icmp slt i64 %%jn, %%cols\n"
           "  br i1 %%jm, label %%logits, label %%update\n"
           "update:\n  %%mxp = getelementptr inbounds float, ptr %%mx, i64 %%r\n"
           "  %%old = load float, ptr %%mxp, align 4\n"
           "  %%new = call float @llvm.maxnum.f32(float %%old, float %%bmaxn)\n"
           "  %%allinf = fcmp oeq float %%new, 0xFFF0000000000000\n"
           "  %%base = select i1 %%allinf, float 0.0, float %%new\n"
           "  br label %%exps\n"
           /* pass 2: exp(logit - max) over S, summed */
           "exps:\n  %%k = phi i64 [0, %%update], [%%kn, %%exps]\n"
           "  %%acc = phi float [0.0, %%update], [%%accn, %%exps]\n"
           "  %%ep = getelementptr inbounds float, ptr %%srow, i64 %%k\n"
           "  %%ev = load float, ptr %%ep, align 4\n"
           "  %%ed = fsub float %%ev, %%base\n"
           "  %%e = call float @stax_expf_nonpositive(float %%ed)\n"
           "  store float %%e, ptr %%ep, align 4\n"
           "  %%accn = fadd reassoc contract float %%acc, %%e\n"
           "  %%kn = add i64 %%k, 1\n  %%km = icmp slt i64 %%kn, %%cols\n"
           "  br i1 %%km, label %%exps, label %%stats\n"
           /* the factor exp(old - new): 0 for a row's first block (old =
            * -inf), without calling exp there: exp(-inf) goes through
            * subnormal intermediates, and a microcode assist for each took
            * half this kernel's time */
           "stats:\n  %%oldinf = fcmp oeq float %%old, 0xFFF0000000000000\n"
           "  %%shift0 = fsub float %%old, %%base\n"
           "  %%shift = select i1 %%oldinf, float 0.0, float %%shift0\n"
           "  %%fv = call float @stax_expf(float %%shift)\n"
           "  %%f = select i1 %%oldinf, float 0.0, float %%fv\n"
           "  %%fp = getelementptr inbounds float, ptr %%fac, i64 %%r\n"
           "  store float %%f, ptr %%fp, align 4\n"
           "  %%smp = getelementptr inbounds float, ptr %%sm, i64 %%r\n"
           "  %%sold = load float, ptr %%smp, align 4\n"
           "  %%sscaled = fmul float %%sold, %%f\n"
           "  %%snew = fadd float %%sscaled, %%accn\n"
           "  store float %%snew, ptr %%smp, align 4\n"
           "  store float %%new, ptr %%mxp, align 4\n"
           "  br label %%rowend\n"
           "rowend:\n  %%rn = add i64 %%r, 1\n  br label %%row\n"
           "exit:\n  ret void\n}\n\n");
}

/* ---- the run ---- */

/* The row tiles of a block of `rows` rows: full tiles, then one of each
 * smaller height the rest needs (as the packed matmul splits rows). */
typedef struct block_tiles {
    int32_t count;
    int64_t row[ATTENTION_TILES_PER_BLOCK + STAX_GEMM_MAX_HEIGHTS];
    int32_t kernel[ATTENTION_TILES_PER_BLOCK + STAX_GEMM_MAX_HEIGHTS]; /* index into heights[] */
} block_tiles;

static block_tiles split_block(const stax_gemm_family *family, int64_t rows) {
    block_tiles bt = {0};
    int64_t row = 0;
    for (; row + family->mr <= rows; row += family->mr) {
        bt.row[bt.count] = row;
        bt.kernel[bt.count++] = 0;
    }
    for (int32_t i = 1; i < family->num_heights && row < rows; i++)
        if (rows - row >= family->heights[i]) {
            bt.row[bt.count] = row;
            bt.kernel[bt.count++] = i;
            row += family->heights[i];
        }
    return bt;
}

typedef struct attention_call {
    const tp_plugin_host *host;
    const stax_attention *at;
    const stax_gemm_kernels *kernels;
    attention_rows_fn rows_fn;
    float scale;
    int64_t nr, query_block, blocks_per_batch, units, grain, threads;
    int64_t key_panels, value_panels;
    const float *base[5];
    float *workspace;
    size_t slice_floats;
} attention_call;

/* A slice's workspace, in floats (each part rounded to 16 floats). */
typedef struct attention_space {
    float *k, *v, *q, *s, *p, *o, *max, *sum, *factor;
} attention_space;

static int64_t round16(int64_t n) {
    return (n + 15) / 16 * 16;
}

static size_t space_floats(const stax_attention *at, const stax_gemm_family *family,
                           attention_space *out, float *base) {
    int64_t nr = family->nr, qb = (int64_t)family->mr * ATTENTION_TILES_PER_BLOCK;
    int64_t key_panels = (at->keys + nr - 1) / nr, value_panels = (at->value_dim + nr - 1) / nr;
    int64_t sizes[9] = {round16(key_panels * at->head_dim * nr),
                        round16(value_panels * at->keys * nr),
                        round16(qb * at->head_dim),
                        round16(qb * ATTENTION_KEY_BLOCK),
                        round16(qb * ATTENTION_KEY_BLOCK),
                        round16(qb * at->value_dim),
                        round16(qb),
                        round16(qb),
                        round16(qb)};
    float **parts[9] = {&out->k, &out->v,   &out->q,   &out->s,     &out->p,
                        &out->o, &out->max, &out->sum, &out->factor};
    int64_t total = 0;
    for (int i = 0; i < 9; i++) {
        if (base) *parts[i] = base + total;
        total += sizes[i];
    }
    return (size_t)total;
}

size_t stax_attention_workspace_bytes(const stax_attention *at, const stax_gemm_kernels *kernels,
                                      int64_t threads) {
    attention_space unused;
    int64_t slices = stax_most_slices(threads);
    return (size_t)slices * space_floats(at, kernels->family, &unused, NULL) * sizeof(float);
}

/* Element offsets of operand `which` at flattened batch index `batch`. */
static int64_t batch_offset(const stax_attention *at, int which, int64_t batch) {
    int64_t offset = 0;
    for (int32_t d = at->batch_ndim - 1; d >= 0; d--) {
        offset += batch % at->batch_dims[d] * at->batch_strides[which][d];
        batch /= at->batch_dims[d];
    }
    return offset;
}

/* K of one batch index as B panels of S = Q K^T: panel p holds keys
 * [p*nr, p*nr + nr), head_dim rows of nr floats, zeros past the last key. */
static void pack_keys(const attention_call *call, const float *k, float *out) {
    const stax_attention *at = call->at;
    int64_t nr = call->nr, d = at->head_dim, rs = at->row_stride[1], cs = at->col_stride[1];
    const float *rows[64]; /* nr: 32 at most (the avx512 family) */
    for (int64_t p = 0; p < call->key_panels; p++, out += d * nr) {
        int64_t j0 = p * nr, cols = at->keys - j0 < nr ? at->keys - j0 : nr;
        if (cols < nr) memset(out, 0, sizeof(float) * (size_t)(d * nr));
        for (int64_t j = 0; j < cols; j++) rows[j] = k + (j0 + j) * rs;
        /* written in order; the keys are read as cols streams */
        if (cs == 1 && cols == nr)
            stax_pack_rows_k_major(rows, nr, d, out);
        else
            for (int64_t c = 0; c < d; c++)
                for (int64_t j = 0; j < cols; j++) out[c * nr + j] = rows[j][c * cs];
    }
}

/* V of one batch index as B panels of O += P V: panel p holds value columns
 * [p*nr, p*nr + nr) for every key, zeros past the last column. */
static void pack_values(const attention_call *call, const float *v, float *out) {
    const stax_attention *at = call->at;
    int64_t nr = call->nr, rs = at->row_stride[2], cs = at->col_stride[2];
    for (int64_t p = 0; p < call->value_panels; p++) {
        int64_t c0 = p * nr, cols = at->value_dim - c0 < nr ? at->value_dim - c0 : nr;
        for (int64_t j = 0; j < at->keys; j++, out += nr) {
            const float *row = v + j * rs + c0 * cs;
            /* a loop, not memcpy: the rows are one panel wide (16 or 32 floats) */
            if (cs == 1)
                for (int64_t c = 0; c < cols; c++) out[c] = row[c];
            else
                for (int64_t c = 0; c < cols; c++) out[c] = row[c * cs];
            for (int64_t c = cols; c < nr; c++) out[c] = 0.0f;
        }
    }
}

/* Rows [q0, q0 + rows) of Q as the A strips of the tiles (h floats per k). */
static void pack_queries(const attention_call *call, const block_tiles *bt, const float *q,
                         int64_t q0, float *out) {
    const stax_attention *at = call->at;
    const int32_t *heights = call->kernels->family->heights;
    int64_t d = at->head_dim, rs = at->row_stride[0], cs = at->col_stride[0];
    for (int32_t t = 0; t < bt->count; t++) {
        int64_t h = heights[bt->kernel[t]];
        float *strip = out + bt->row[t] * d;
        const float *rows[STAX_GEMM_MAX_TILE_ROWS];
        for (int64_t r = 0; r < h; r++) rows[r] = q + (q0 + bt->row[t] + r) * rs;
        if (cs == 1)
            stax_pack_rows_k_major(rows, h, d, strip);
        else
            for (int64_t c = 0; c < d; c++, strip += h)
                for (int64_t r = 0; r < h; r++) strip[r] = rows[r][c * cs];
    }
}

/* One block of keys [j0, j0 + kb) for the unit's rows. */
static void key_block(const attention_call *call, const block_tiles *bt, const attention_space *w,
                      const float *mask, int64_t q0, int64_t rows, int64_t j0, int64_t kb) {
    const stax_attention *at = call->at;
    const stax_gemm_family *family = call->kernels->family;
    int64_t nr = call->nr, d = at->head_dim, dv = at->value_dim, ldk = ATTENTION_KEY_BLOCK;
    int64_t panels = (kb + nr - 1) / nr;
    for (int32_t t = 0; t < bt->count; t++) {
        stax_gemm_tile_fn tile = call->kernels->tile[bt->kernel[t]];
        const float *a = w->q + bt->row[t] * d;
        for (int64_t p = 0; p < panels; p++) {
            int64_t cols = kb - p * nr < nr ? kb - p * nr : nr;
            tile(a, w->k + (j0 / nr + p) * d * nr, w->s + bt->row[t] * ldk + p * nr, ldk, d, 0,
                 cols);
        }
    }
    const float *mask_rows = mask ? mask + q0 * at->row_stride[3] + j0 * at->col_stride[3] : NULL;
    call->rows_fn(w->s, ldk, rows, kb, mask_rows, mask ? at->row_stride[3] : 0, call->scale, w->max,
                  w->sum, w->factor);
    if (j0 > 0)
        for (int64_t r = 0; r < rows; r++) {
            float f = w->factor[r], *o = w->o + r * dv;
            for (int64_t c = 0; c < dv; c++) o[c] *= f;
        }
    for (int32_t t = 0; t < bt->count; t++) {
        int64_t h = family->heights[bt->kernel[t]];
        float *strip = w->p + bt->row[t] * ldk;
        const float *s_rows[STAX_GEMM_MAX_TILE_ROWS];
        for (int64_t r = 0; r < h; r++) s_rows[r] = w->s + (bt->row[t] + r) * ldk;
        stax_pack_rows_k_major(s_rows, h, kb, strip);
        stax_gemm_tile_fn tile = call->kernels->tile[bt->kernel[t]];
        for (int64_t p = 0; p < call->value_panels; p++) {
            int64_t cols = dv - p * nr < nr ? dv - p * nr : nr;
            tile(strip, w->v + p * at->keys * nr + j0 * nr, w->o + bt->row[t] * dv + p * nr, dv, kb,
                 j0 > 0, cols);
        }
    }
}

/* One unit: a block of query rows of one batch index (K and V packed). */
static void run_unit(const attention_call *call, const attention_space *w, int64_t batch,
                     int64_t block) {
    const stax_attention *at = call->at;
    int64_t q0 = block * call->query_block;
    int64_t rows = at->queries - q0 < call->query_block ? at->queries - q0 : call->query_block;
    block_tiles bt = split_block(call->kernels->family, rows);
    pack_queries(call, &bt, call->base[0] + batch_offset(at, 0, batch), q0, w->q);
    for (int64_t r = 0; r < rows; r++) w->max[r] = -INFINITY, w->sum[r] = 0.0f;
    const float *mask = call->base[3] ? call->base[3] + batch_offset(at, 3, batch) : NULL;
    for (int64_t j0 = 0; j0 < at->keys; j0 += ATTENTION_KEY_BLOCK) {
        int64_t kb = at->keys - j0 < ATTENTION_KEY_BLOCK ? at->keys - j0 : ATTENTION_KEY_BLOCK;
        key_block(call, &bt, w, mask, q0, rows, j0, kb);
    }
    float *out = (float *)call->base[4] + batch_offset(at, 4, batch);
    int64_t rs = at->row_stride[4], cs = at->col_stride[4];
    for (int64_t r = 0; r < rows; r++) {
        float inverse = 1.0f / w->sum[r];
        const float *o = w->o + r * at->value_dim;
        float *row = out + (q0 + r) * rs;
        if (cs == 1)
            for (int64_t c = 0; c < at->value_dim; c++) row[c] = o[c] * inverse;
        else
            for (int64_t c = 0; c < at->value_dim; c++) row[c * cs] = o[c] * inverse;
    }
}

static void slices_range(void *context, int64_t begin, int64_t end) {
    const attention_call *call = context;
    const stax_attention *at = call->at;
    for (int64_t s = begin; s < end; s++) {
        attention_space w;
        space_floats(at, call->kernels->family, &w,
                     call->workspace + (size_t)s * call->slice_floats);
        int64_t u0 = s * call->grain,
                u1 = u0 + call->grain < call->units ? u0 + call->grain : call->units;
        int64_t packed = -1; /* the batch index whose K and V are packed */
        for (int64_t u = u0; u < u1; u++) {
            int64_t batch = u / call->blocks_per_batch, block = u % call->blocks_per_batch;
            if (batch != packed) {
                pack_keys(call, call->base[1] + batch_offset(at, 1, batch), w.k);
                pack_values(call, call->base[2] + batch_offset(at, 2, batch), w.v);
                packed = batch;
            }
            run_unit(call, &w, batch, block);
        }
    }
}

static float read_scale(const stax_attention *at, void **slots) {
    float scale = 1.0f;
    for (int32_t i = 0; i < at->num_scales; i++) {
        float value = ((const float *)slots[at->scale_slot[i]])[at->scale_offset[i]];
        scale = at->scale_divides[i] ? scale / value : scale * value;
    }
    return scale;
}

void stax_attention_run(const tp_plugin_host *host, const stax_attention *at, void **slots,
                        float *workspace, const stax_gemm_kernels *kernels, int64_t threads) {
    /* the planner fuses only non-empty shapes */
    if (at->batch <= 0 || at->queries <= 0 || at->keys <= 0 || at->head_dim <= 0 ||
        at->value_dim <= 0)
        return;
    attention_call call = {
        .host = host,
        .at = at,
        .kernels = kernels,
        .rows_fn = (attention_rows_fn)(uintptr_t)kernels->attention_rows[at->slot[3] >= 0],
        .scale = read_scale(at, slots),
        .nr = kernels->family->nr,
        .query_block = (int64_t)kernels->family->mr * ATTENTION_TILES_PER_BLOCK,
        .threads = threads > 1 && host && host->parallel_for ? threads : 1,
        .workspace = workspace};
    call.blocks_per_batch = (at->queries + call.query_block - 1) / call.query_block;
    call.units = at->batch * call.blocks_per_batch;
    call.key_panels = (at->keys + call.nr - 1) / call.nr;
    call.value_panels = (at->value_dim + call.nr - 1) / call.nr;
    attention_space unused;
    call.slice_floats = space_floats(at, kernels->family, &unused, NULL);
    for (int i = 0; i < 5; i++)
        call.base[i] = at->slot[i] >= 0 ? (const float *)slots[at->slot[i]] + at->offset[i] : NULL;
    call.grain = stax_grain(host, call.units, 1, call.threads);
    if (at->batch >= 2 * call.threads) /* slices of whole batch indices: K and V packed once */
        call.grain = (call.grain + call.blocks_per_batch - 1) / call.blocks_per_batch *
                     call.blocks_per_batch;
    int64_t slices = (call.units + call.grain - 1) / call.grain;
    if (slices > 1 && call.threads > 1)
        host->parallel_for(slices, 1, slices_range, &call);
    else
        slices_range(&call, 0, slices);
}
