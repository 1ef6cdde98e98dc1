/* stax-llvm — products of a few rows (m = 1: a classifier, a decoding step;
 * small batches) on the row-streaming kernels of stax_gemv_kernels.c.
 *
 * Such a product uses each element of B only m times, so its time is the
 * time to read B once: nothing is packed (a copy would be a second pass
 * over B), and B is read row by row, each row from start to end, a few rows
 * at a time. C is cut into blocks of columns that stay in L1 while every
 * row of B goes through them (STAX_GEMV_BLOCK_FLOATS), with all the rows of
 * A in one kernel call. Each finished block gets the source's row bias and
 * the fused epilogue while it is in cache. On the pool, slices of columns
 * (whole cache lines of C) of every product of the batch, one per thread,
 * the same on every call (stax_parallel_static).
 *
 * A constant f32 B is kept row-major for these kernels at compile, not
 * packed into panels (stax_gemm_packed.c); a transposed one is transposed
 * once (stax_gemv_row_major_b). */
#include "stax_gemv.h"

/* Floats of C one block of columns holds for all the rows (8 KiB: in L1
 * next to the rows of B streaming through). */
#define STAX_GEMV_BLOCK_FLOATS 2048
/* Columns per unit of work on the pool: whole cache lines of C per slice. */
#define STAX_GEMV_UNIT_COLUMNS 64
/* Multiply-adds below which a slice is not worth a thread's wake-up. */
#define STAX_GEMV_MIN_SLICE_WORK 65536

bool stax_gemv_suits_shape(const stax_gemm *g) {
    return g->m >= 1 && g->m <= STAX_GEMV_MAX_ROWS && g->n > 0 && g->k > 0 &&
           g->a_dtype == TP_PLUGIN_F32;
}

/* B read by columns (each contiguous along k) by the dot kernels, which
 * also read A's rows as vectors. */
static bool reads_b_by_columns(const stax_gemm *g) {
    return g->b_cs != 1 && g->b_rs == 1 && g->a_cs == 1;
}

bool stax_gemv_suits_operands(const stax_gemm *g, const stax_gemm_source *source) {
    return stax_gemv_suits_shape(g) && g->b_dtype == TP_PLUGIN_F32 &&
           (g->b_cs == 1 || reads_b_by_columns(g)) && g->packed_b_kc <= 0 && !source->pack_b &&
           !source->a_packed && !source->b_packed;
}

bool stax_gemv_takes(const stax_gemm *g, const stax_gemm_source *source,
                     const stax_gemm_kernels *kernels) {
    if (!stax_gemv_suits_operands(g, source)) return false;
    for (int32_t r = 0; r < STAX_GEMV_MAX_ROWS; r++)
        if (!kernels->gemv[r] || !kernels->gemv_dot[r]) return false;
    return true;
}

enum { ROW_MAJOR_TILE = 64 };

typedef struct row_major_job {
    const stax_gemm *g;
    const float *b;
    float *out;
} row_major_job;

/* Row blocks [begin, end) of ROW_MAJOR_TILE rows of k. */
static void row_major_range(void *context, int64_t begin, int64_t end) {
    enum { TILE = ROW_MAJOR_TILE };
    const row_major_job *job = context;
    const stax_gemm *g = job->g;
    const float *b = job->b;
    float *out = job->out;
    /* tiles of TILE x TILE, each written a column at a time (reading along
     * k, contiguous in a transposed weight) while it stays in L1 */
    for (int64_t p0 = begin * TILE; p0 < g->k && p0 < end * TILE; p0 += TILE) {
        int64_t p1 = p0 + TILE < g->k ? p0 + TILE : g->k;
        for (int64_t j0 = 0; j0 < g->n; j0 += TILE) {
            int64_t j1 = j0 + TILE < g->n ? j0 + TILE : g->n;
            for (int64_t j = j0; j < j1; j++)
                for (int64_t p = p0; p < p1; p++) out[p * g->n + j] = b[p * g->b_rs + j * g->b_cs];
        }
    }
}

void stax_gemv_row_major_b(const tp_plugin_host *host, const stax_gemm *g, int64_t threads,
                           const float *b_data, float *out) {
    row_major_job job = {g, b_data + g->b_offset, out};
    int64_t blocks = (g->k + ROW_MAJOR_TILE - 1) / ROW_MAJOR_TILE;
    /* at least 64 KiB written per slice */
    int64_t min_blocks = 16384 / (ROW_MAJOR_TILE * (g->n > 0 ? g->n : 1)) + 1;
    stax_parallel_range(host, blocks, min_blocks, threads, row_major_range, &job);
}

typedef struct gemv_call {
    const tp_plugin_host *host;
    const stax_gemm *g;
    void **slots;
    const stax_gemm_kernels *kernels;
    stax_kernel_fn epilogue;
    const stax_gemm_source *source;
    const float *a, *b;
    float *c;
    int64_t units_per_product, block_columns;
} gemv_call;

/* Row bias and epilogue of columns [j0, j1) of every row of product `batch`. */
static void finish_columns(const gemv_call *call, int64_t batch, float *c, int64_t j0, int64_t j1) {
    const stax_gemm *g = call->g;
    const float *bias = call->source->row_bias;
    for (int64_t r = 0; bias && r < g->m; r++)
        for (int64_t j = j0; j < j1; j++) c[r * g->n + j] += bias[r];
    if (!call->epilogue) return;
    int64_t first = call->source->epilogue_offset + batch * g->m * g->n;
    if (j0 == 0 && j1 == g->n) {
        call->epilogue(call->slots, first, first + g->m * g->n);
        return;
    }
    for (int64_t r = 0; r < g->m; r++)
        call->epilogue(call->slots, first + r * g->n + j0, first + r * g->n + j1);
}

/* Columns [j0, j1) of product `batch`, one block of columns at a time. */
static void product_columns(const gemv_call *call, int64_t batch, int64_t j0, int64_t j1) {
    const stax_gemm *g = call->g;
    int64_t a_off, b_off;
    stax_gemm_batch_offsets(g, batch, &a_off, &b_off);
    const float *a = call->a + a_off, *b = call->b + b_off;
    float *c = call->c + batch * g->m * g->n;
    for (int64_t b0 = j0; b0 < j1; b0 += call->block_columns) {
        int64_t b1 = b0 + call->block_columns < j1 ? b0 + call->block_columns : j1;
        if (g->b_cs == 1)
            call->kernels->gemv[g->m - 1](a, g->a_rs, g->a_cs, b + b0, g->b_rs, c + b0, g->n, g->k,
                                          b1 - b0);
        else
            call->kernels->gemv_dot[g->m - 1](a, g->a_rs, 1, b + b0 * g->b_cs, g->b_cs, c + b0,
                                              g->n, g->k, b1 - b0);
        finish_columns(call, batch, c, b0, b1);
    }
}

/* Units [begin, end) of STAX_GEMV_UNIT_COLUMNS columns, product-major; the
 * units within one product run as one range of columns. */
static void units_range(void *context, int64_t begin, int64_t end) {
    const gemv_call *call = context;
    for (int64_t u = begin; u < end;) {
        int64_t batch = u / call->units_per_product, first = u % call->units_per_product;
        int64_t last = first + (end - u) < call->units_per_product ? first + (end - u)
                                                                   : call->units_per_product;
        int64_t j1 = last * STAX_GEMV_UNIT_COLUMNS;
        product_columns(call, batch, first * STAX_GEMV_UNIT_COLUMNS,
                        j1 < call->g->n ? j1 : call->g->n);
        u += last - first;
    }
}

static int64_t block_columns(const stax_gemm *g) {
    int64_t columns = STAX_GEMV_BLOCK_FLOATS / g->m / STAX_GEMV_UNIT_COLUMNS;
    return (columns > 0 ? columns : 1) * STAX_GEMV_UNIT_COLUMNS;
}

void stax_gemv_run(const tp_plugin_host *host, const stax_gemm *g, void **slots,
                   const stax_gemm_kernels *kernels, stax_kernel_fn epilogue, int64_t threads,
                   const stax_gemm_source *source) {
    gemv_call call = {.host = host,
                      .g = g,
                      .slots = slots,
                      .kernels = kernels,
                      .epilogue = epilogue,
                      .source = source,
                      .a = (const float *)slots[g->a_slot] + g->a_offset,
                      .b = (const float *)slots[g->b_slot] + g->b_offset,
                      .c = (float *)slots[g->c_slot] + g->c_offset,
                      .units_per_product =
                          (g->n + STAX_GEMV_UNIT_COLUMNS - 1) / STAX_GEMV_UNIT_COLUMNS,
                      .block_columns = block_columns(g)};
    int64_t units = g->batch * call.units_per_product;
    int64_t unit_work = g->m * g->k * STAX_GEMV_UNIT_COLUMNS;
    int64_t min_grain = STAX_GEMV_MIN_SLICE_WORK / unit_work;
    /* the same columns of B for each thread on every call: a B that fits
     * the L2 caches together is read from there (5 MB: 124 -> 76 us) */
    stax_parallel_static(host, units, min_grain > 1 ? min_grain : 1, threads, units_range, &call);
}
