/* stax-llvm — the LLVM IR of the row-streaming kernels behind products of a
 * few rows (stax_gemv.c drives them): C[r][0..cols) = sum over p of
 * A[r][p] * B[p][0..cols) for r < R, with B row-major and read in place.
 *
 * The tile kernels of stax_gemm_kernels.c keep a tile of C in registers
 * across k, so a product of one row reads each row of B only a panel wide
 * (64 bytes on AVX2) before jumping a row ahead: one cache line per row, a
 * row stride apart, which the prefetchers follow badly. These kernels keep
 * the block of C in L1 instead and walk B by rows: U rows of B at a time
 * (U streams, each read from start to end), each vector of them multiplied
 * by R broadcast values of A and added into the R rows of C, so every
 * element of B is loaded once and C is loaded and stored once per U rows of
 * B. The last k (k % U) go one row at a time; the columns past the last
 * whole vector take masked loads and stores, so nothing is read past
 * `cols` (B's rows may end there).
 *
 * Like the tile kernels, the IR is plain vector IR of the family's vector
 * width: a forced family computes the same results on any host. */
#include <stdio.h>

#include "stax_internal.h"

typedef struct gemv_shape {
    int rows;  /* R: rows of A and C */
    int width; /* lanes per vector */
    bool fma;
} gemv_shape;

/* Rows of B per step of the main loop (U): four streams of B, and C loaded
 * and stored once per four rows of B. (One row of A with eight was no
 * faster here, Zen 3, 1280 x 1000 from L3; neither was a software prefetch
 * of the next rows.) */
static int rows_of_b_per_step(const gemv_shape *s) {
    (void)s;
    return 4;
}

/* %to = %from + %a * %b (fused where the family fuses). */
static void emit_multiply_add(tpcommon_buf *m, const gemv_shape *s, const char *to, const char *a,
                              const char *b, const char *from) {
    int w = s->width;
    if (s->fma) {
        tpcommon_buf_printf(m,
                            "  %%%s = call <%d x float> @llvm.fma.v%df32(<%d x float> %%%s, "
                            "<%d x float> %%%s, <%d x float> %%%s)\n",
                            to, w, w, w, a, w, b, w, from);
        return;
    }
    tpcommon_buf_printf(m,
                        "  %%%s_p = fmul contract <%d x float> %%%s, %%%s\n"
                        "  %%%s = fadd contract <%d x float> %%%s, %%%s_p\n",
                        to, w, a, b, to, w, from, to);
}

/* %MASK = <w x i1>, lane l on when l < %COUNT (an i64 below w). */
static void emit_lane_mask(tpcommon_buf *m, int w, const char *mask, const char *count) {
    tpcommon_buf_printf(m,
                        "  %%%si = insertelement <%d x i64> poison, i64 %%%s, i64 0\n"
                        "  %%%sv = shufflevector <%d x i64> %%%si, <%d x i64> poison, <%d x i32> "
                        "zeroinitializer\n"
                        "  %%%s = icmp slt <%d x i64> <",
                        count, w, count, count, w, count, w, w, mask, w);
    for (int lane = 0; lane < w; lane++) tpcommon_buf_printf(m, "%si64 %d", lane ? ", " : "", lane);
    tpcommon_buf_printf(m, ">, %%%sv\n", count);
}

/* %VALUE = the vector at %POINTER: a plain load, or with `mask` (the name
 * of an i1 vector) a masked one whose lanes off read as 0 and touch no
 * memory. */
static void emit_vector_load(tpcommon_buf *m, int width, const char *value, const char *pointer,
                             const char *mask) {
    if (mask)
        tpcommon_buf_printf(m,
                            "  %%%s = call <%d x float> @llvm.masked.load.v%df32.p0(ptr %%%s, i32 "
                            "4, <%d x i1> %%%s, <%d x float> zeroinitializer)\n",
                            value, width, width, pointer, width, mask, width);
    else
        tpcommon_buf_printf(m, "  %%%s = load <%d x float>, ptr %%%s, align 4\n", value, width,
                            pointer);
}

/* One vector of columns at %{tag}j: U vectors of B, then each row of C
 * loaded, accumulated and stored; masked when `masked`. */
static void emit_columns(tpcommon_buf *m, const gemv_shape *s, const char *tag, int u_count,
                         bool masked, const char *j) {
    int w = s->width;
    const char *q = masked ? "e" : "v";
    for (int u = 0; u < u_count; u++) {
        tpcommon_buf_printf(m, "  %%%s%sbp%d = getelementptr float, ptr %%%sbrow%d, i64 %%%s\n",
                            tag, q, u, tag, u, j);
        char value[48], pointer[48];
        snprintf(value, sizeof value, "%s%sb%d", tag, q, u);
        snprintf(pointer, sizeof pointer, "%s%sbp%d", tag, q, u);
        emit_vector_load(m, w, value, pointer, masked ? "mask" : NULL);
    }
    for (int r = 0; r < s->rows; r++) {
        tpcommon_buf_printf(m, "  %%%s%scp%d = getelementptr float, ptr %%crow%d, i64 %%%s\n", tag,
                            q, r, r, j);
        char value[48], pointer[48];
        snprintf(value, sizeof value, "%s%sc%d_0", tag, q, r);
        snprintf(pointer, sizeof pointer, "%s%scp%d", tag, q, r);
        emit_vector_load(m, w, value, pointer, masked ? "mask" : NULL);
        for (int u = 0; u < u_count; u++) {
            char to[48], a[48], b[48], from[48];
            snprintf(to, sizeof to, "%s%sc%d_%d", tag, q, r, u + 1);
            snprintf(a, sizeof a, "%sav%d_%d", tag, r, u);
            snprintf(b, sizeof b, "%s%sb%d", tag, q, u);
            snprintf(from, sizeof from, "%s%sc%d_%d", tag, q, r, u);
            emit_multiply_add(m, s, to, a, b, from);
        }
        if (masked)
            tpcommon_buf_printf(m,
                                "  call void @llvm.masked.store.v%df32.p0(<%d x float> "
                                "%%%s%sc%d_%d, ptr %%%s%scp%d, i32 4, <%d x i1> %%mask)\n",
                                w, w, tag, q, r, u_count, tag, q, r, w);
        else
            tpcommon_buf_printf(m, "  store <%d x float> %%%s%sc%d_%d, ptr %%%s%scp%d, align 4\n",
                                w, tag, q, r, u_count, tag, q, r);
    }
}

/* A loop over k from %start (coming from block `pred`) while k < %limit, in
 * steps of u_count rows of B, then on to block `exit`. Labels and values
 * carry `tag`. */
static void emit_k_loop(tpcommon_buf *m, const gemv_shape *s, const char *tag, int u_count,
                        const char *start, const char *pred, const char *limit, const char *exit) {
    int w = s->width;
    tpcommon_buf_printf(m,
                        "%sloop:\n"
                        "  %%%sk = phi i64 [%s, %%%s], [%%%skn, %%%snext]\n"
                        "  %%%smore = icmp slt i64 %%%sk, %s\n"
                        "  br i1 %%%smore, label %%%sbody, label %%%s\n"
                        "%sbody:\n",
                        tag, tag, start, pred, tag, tag, tag, tag, limit, tag, tag, exit, tag);
    for (int u = 0; u < u_count; u++) {
        tpcommon_buf_printf(m,
                            "  %%%sku%d = add i64 %%%sk, %d\n"
                            "  %%%sbo%d = mul i64 %%%sku%d, %%ldb\n"
                            "  %%%sbrow%d = getelementptr float, ptr %%b, i64 %%%sbo%d\n"
                            "  %%%sak%d = mul i64 %%%sku%d, %%acs\n",
                            tag, u, tag, u, tag, u, tag, u, tag, u, tag, u, tag, u, tag, u);
        for (int r = 0; r < s->rows; r++)
            tpcommon_buf_printf(m,
                                "  %%%sao%d_%d = add i64 %%%sak%d, %%arow%d\n"
                                "  %%%sap%d_%d = getelementptr float, ptr %%a, i64 %%%sao%d_%d\n"
                                "  %%%sas%d_%d = load float, ptr %%%sap%d_%d, align 4\n"
                                "  %%%sai%d_%d = insertelement <%d x float> poison, float "
                                "%%%sas%d_%d, i64 0\n"
                                "  %%%sav%d_%d = shufflevector <%d x float> %%%sai%d_%d, <%d x "
                                "float> poison, <%d x i32> zeroinitializer\n",
                                tag, r, u, tag, u, r, tag, r, u, tag, r, u, tag, r, u, tag, r, u,
                                tag, r, u, w, tag, r, u, tag, r, u, w, tag, r, u, w, w);
    }
    tpcommon_buf_printf(m,
                        "  br label %%%sjloop\n"
                        "%sjloop:\n"
                        "  %%%sj = phi i64 [0, %%%sbody], [%%%sjn, %%%sjbody]\n"
                        "  %%%sjmore = icmp slt i64 %%%sj, %%jmain\n"
                        "  br i1 %%%sjmore, label %%%sjbody, label %%%sjafter\n"
                        "%sjbody:\n",
                        tag, tag, tag, tag, tag, tag, tag, tag, tag, tag, tag, tag);
    char j[32];
    snprintf(j, sizeof j, "%sj", tag);
    emit_columns(m, s, tag, u_count, false, j);
    tpcommon_buf_printf(m,
                        "  %%%sjn = add i64 %%%sj, %d\n"
                        "  br label %%%sjloop\n"
                        "%sjafter:\n"
                        "  br i1 %%edge, label %%%sjedge, label %%%snext\n"
                        "%sjedge:\n",
                        tag, tag, w, tag, tag, tag, tag, tag);
    emit_columns(m, s, tag, u_count, true, "jmain");
    tpcommon_buf_printf(m,
                        "  br label %%%snext\n"
                        "%snext:\n"
                        "  %%%skn = add i64 %%%sk, %d\n"
                        "  br label %%%sloop\n",
                        tag, tag, tag, tag, u_count, tag);
}

static void emit_gemv_kernel(tpcommon_buf *m, const char *name, const gemv_shape *s) {
    int w = s->width, u_count = rows_of_b_per_step(s);
    tpcommon_buf_printf(m,
                        "define void @%s(ptr noalias %%a, i64 %%lda, i64 %%acs, ptr noalias %%b, "
                        "i64 %%ldb, ptr noalias %%c, i64 %%ldc, i64 %%k, i64 %%cols) #0 {\n"
                        "entry:\n"
                        "  %%cbytes = shl i64 %%cols, 2\n",
                        name);
    for (int r = 0; r < s->rows; r++)
        tpcommon_buf_printf(m,
                            "  %%arow%d = mul i64 %%lda, %d\n"
                            "  %%coff%d = mul i64 %%ldc, %d\n"
                            "  %%crow%d = getelementptr float, ptr %%c, i64 %%coff%d\n"
                            "  call void @llvm.memset.p0.i64(ptr %%crow%d, i8 0, i64 %%cbytes, "
                            "i1 false)\n",
                            r, r, r, r, r, r, r);
    tpcommon_buf_printf(m,
                        "  %%krest = and i64 %%k, %d\n"
                        "  %%kmain = sub i64 %%k, %%krest\n"
                        "  %%jrest = and i64 %%cols, %d\n"
                        "  %%jmain = sub i64 %%cols, %%jrest\n"
                        "  %%edge = icmp ne i64 %%jrest, 0\n",
                        u_count - 1, w - 1);
    emit_lane_mask(m, w, "mask", "jrest");
    tpcommon_buf_printf(m, "  br label %%gloop\n");
    emit_k_loop(m, s, "g", u_count, "0", "entry", "%kmain", "tloop");
    emit_k_loop(m, s, "t", 1, "%kmain", "gloop", "%k", "done");
    tpcommon_buf_printf(m, "done:\n  ret void\n}\n\n");
}

/* ---- B read by columns (a transposed B: each column contiguous along k) ----
 *
 * C[r][j] = dot(A row r, B column j): J columns at a time (J streams of B,
 * each read from start to end), R * J vector accumulators along k, the last
 * k % width through masked loads (all lanes off when none are left), then
 * each accumulator summed across its lanes. */

/* The loop over columns from %{tag}start while j < %{limit}, `columns` at a
 * time, then on to block `exit`. */
static void emit_dot_columns(tpcommon_buf *m, const gemv_shape *s, const char *tag, int columns,
                             const char *start, const char *pred, const char *limit,
                             const char *exit) {
    int w = s->width;
    tpcommon_buf_printf(m,
                        "%sjloop:\n"
                        "  %%%sj = phi i64 [%s, %%%s], [%%%sjn, %%%sksum]\n"
                        "  %%%sjmore = icmp slt i64 %%%sj, %s\n"
                        "  br i1 %%%sjmore, label %%%sjbody, label %%%s\n"
                        "%sjbody:\n",
                        tag, tag, start, pred, tag, tag, tag, tag, limit, tag, tag, exit, tag);
    for (int q = 0; q < columns; q++)
        tpcommon_buf_printf(m,
                            "  %%%sjq%d = add i64 %%%sj, %d\n"
                            "  %%%sbo%d = mul i64 %%%sjq%d, %%ldb\n"
                            "  %%%sbcol%d = getelementptr float, ptr %%b, i64 %%%sbo%d\n",
                            tag, q, tag, q, tag, q, tag, q, tag, q, tag, q);
    tpcommon_buf_printf(m,
                        "  br label %%%skloop\n"
                        "%skloop:\n"
                        "  %%%sk = phi i64 [0, %%%sjbody], [%%%skn, %%%skbody]\n",
                        tag, tag, tag, tag, tag, tag);
    for (int r = 0; r < s->rows; r++)
        for (int q = 0; q < columns; q++)
            tpcommon_buf_printf(m,
                                "  %%%sacc%d_%d = phi <%d x float> [zeroinitializer, %%%sjbody], "
                                "[%%%snew%d_%d, %%%skbody]\n",
                                tag, r, q, w, tag, tag, r, q, tag);
    tpcommon_buf_printf(m,
                        "  %%%skmore = icmp slt i64 %%%sk, %%kmain\n"
                        "  br i1 %%%skmore, label %%%skbody, label %%%sktail\n"
                        "%skbody:\n",
                        tag, tag, tag, tag, tag, tag);
    for (int pass = 0; pass < 2; pass++) {
        bool masked = pass == 1;
        char k[32] = "%kmain";
        if (!masked) snprintf(k, sizeof k, "%%%sk", tag);
        const char *x = masked ? "t" : "v";
        for (int r = 0; r < s->rows; r++) {
            tpcommon_buf_printf(m,
                                "  %%%s%sao%d = add i64 %%arow%d, %s\n"
                                "  %%%s%sap%d = getelementptr float, ptr %%a, i64 %%%s%sao%d\n",
                                tag, x, r, r, k, tag, x, r, tag, x, r);
            char value[48], pointer[48];
            snprintf(value, sizeof value, "%s%sa%d", tag, x, r);
            snprintf(pointer, sizeof pointer, "%s%sap%d", tag, x, r);
            emit_vector_load(m, w, value, pointer, masked ? "kmask" : NULL);
        }
        for (int q = 0; q < columns; q++) {
            tpcommon_buf_printf(m, "  %%%s%sbp%d = getelementptr float, ptr %%%sbcol%d, i64 %s\n",
                                tag, x, q, tag, q, k);
            char value[48], pointer[48];
            snprintf(value, sizeof value, "%s%sb%d", tag, x, q);
            snprintf(pointer, sizeof pointer, "%s%sbp%d", tag, x, q);
            emit_vector_load(m, w, value, pointer, masked ? "kmask" : NULL);
            for (int r = 0; r < s->rows; r++) {
                char to[48], av[48], bv[48], from[48];
                snprintf(to, sizeof to, "%s%s%d_%d", tag, masked ? "fin" : "new", r, q);
                snprintf(av, sizeof av, "%s%sa%d", tag, x, r);
                snprintf(bv, sizeof bv, "%s%sb%d", tag, x, q);
                snprintf(from, sizeof from, "%sacc%d_%d", tag, r, q);
                emit_multiply_add(m, s, to, av, bv, from);
            }
        }
        if (!masked)
            tpcommon_buf_printf(m,
                                "  %%%skn = add i64 %%%sk, %d\n"
                                "  br label %%%skloop\n"
                                "%sktail:\n",
                                tag, tag, w, tag, tag);
    }
    for (int r = 0; r < s->rows; r++)
        for (int q = 0; q < columns; q++)
            tpcommon_buf_printf(m,
                                "  %%%ssum%d_%d = call reassoc float "
                                "@llvm.vector.reduce.fadd.v%df32(float -0.0, <%d x float> "
                                "%%%sfin%d_%d)\n"
                                "  %%%sco%d_%d = add i64 %%coff%d, %%%sjq%d\n"
                                "  %%%scp%d_%d = getelementptr float, ptr %%c, i64 %%%sco%d_%d\n"
                                "  store float %%%ssum%d_%d, ptr %%%scp%d_%d, align 4\n",
                                tag, r, q, w, w, tag, r, q, tag, r, q, r, tag, q, tag, r, q, tag, r,
                                q, tag, r, q, tag, r, q);
    tpcommon_buf_printf(m,
                        "  br label %%%sksum\n"
                        "%sksum:\n"
                        "  %%%sjn = add i64 %%%sj, %d\n"
                        "  br label %%%sjloop\n",
                        tag, tag, tag, tag, columns, tag);
}

/* Columns of B per step of the dot kernels' main loop (J). */
#define STAX_GEMV_DOT_COLUMNS 4

static void emit_dot_kernel(tpcommon_buf *m, const char *name, const gemv_shape *s) {
    int w = s->width;
    tpcommon_buf_printf(m,
                        "define void @%s(ptr noalias %%a, i64 %%lda, i64 %%acs, ptr noalias %%b, "
                        "i64 %%ldb, ptr noalias %%c, i64 %%ldc, i64 %%k, i64 %%cols) #0 {\n"
                        "entry:\n",
                        name);
    for (int r = 0; r < s->rows; r++)
        tpcommon_buf_printf(m,
                            "  %%arow%d = mul i64 %%lda, %d\n"
                            "  %%coff%d = mul i64 %%ldc, %d\n",
                            r, r, r, r);
    tpcommon_buf_printf(m,
                        "  %%krest = and i64 %%k, %d\n"
                        "  %%kmain = sub i64 %%k, %%krest\n"
                        "  %%jrest = and i64 %%cols, %d\n"
                        "  %%jmain = sub i64 %%cols, %%jrest\n",
                        w - 1, STAX_GEMV_DOT_COLUMNS - 1);
    emit_lane_mask(m, w, "kmask", "krest");
    tpcommon_buf_printf(m, "  br label %%gjloop\n");
    emit_dot_columns(m, s, "g", STAX_GEMV_DOT_COLUMNS, "0", "entry", "%jmain", "tjloop");
    emit_dot_columns(m, s, "t", 1, "%jmain", "gjloop", "%cols", "done");
    tpcommon_buf_printf(m, "done:\n  ret void\n}\n\n");
}

void stax_gemv_dot_kernel_name(const stax_gemm_family *family, int32_t rows, char *name,
                               size_t size) {
    snprintf(name, size, "STAXKEY_gemv_dot_%s_r%d", family->name, (int)rows);
}

void stax_gemv_kernel_name(const stax_gemm_family *family, int32_t rows, char *name, size_t size) {
    snprintf(name, size, "STAXKEY_gemv_%s_r%d", family->name, (int)rows);
}

void stax_emit_gemv_kernels(tpcommon_buf *m, const stax_gemm_family *family) {
    /* the family's kernels (emitted first) declare the fma and masked intrinsics */
    tpcommon_buf_printf(m,
                        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)\n"
                        "declare float @llvm.vector.reduce.fadd.v%df32(float, <%d x float>)\n\n",
                        family->vector_width, family->vector_width);
    for (int32_t rows = 1; rows <= STAX_GEMV_MAX_ROWS; rows++) {
        gemv_shape shape = {rows, family->vector_width, family->fma};
        char name[96];
        stax_gemv_kernel_name(family, rows, name, sizeof name);
        emit_gemv_kernel(m, name, &shape);
        stax_gemv_dot_kernel_name(family, rows, name, sizeof name);
        emit_dot_kernel(m, name, &shape);
    }
}
