/* stax-llvm — the packed matmul's micro-kernel families: which one this host
 * gets (its LLVM features, or STAX_GEMM_KERNEL), their tile shapes and
 * blocking, and the LLVM IR of their tile kernels. The driver that calls them
 * is stax_gemm_packed.c; the older 6x16 kernel pair behind stax_gemm_run is
 * stax_emit.c's.
 *
 * A tile kernel computes C[0..h)[0..cols) (+)= A[h x kc] * B[kc x nr] (plus
 * a bias per row when its accumulate argument is the biases' address) with
 * both packed k-major (B: nr floats per k, zero-padded past n; A: h floats
 * per k), so every load is at a constant offset from two pointers, and the
 * accumulators stay in registers across the k loop.
 * Column edges use masked loads and stores of C; row edges have kernels of
 * their own heights (powers of two below mr), so no tile ever reads or writes
 * padded copies. Each height also has a strided twin that reads B in place,
 * one row of nr floats every ldb floats (a row-major B that a product of at
 * most mr rows would not repay packing); its callers give it whole panels
 * only (nr columns of B exist), so its B loads need no mask. A third twin
 * reads B row k at b + boff[k] (a table of kc offsets): the rows of a conv's
 * taps over its padded input (stax_conv_shifted.c), any order, any gaps.
 * A fourth, the streaming twin, also prefetches into L2 the kc / 2 cache
 * lines from its last argument on, one every second k step: the driver
 * points it at the part of the next panel of a B packed at compile (so
 * read from memory) that this tile's turn fetches, and the weight arrives
 * spread over the previous panel's tiles. (A burst of prefetches between
 * two tile calls gained almost nothing: it filled the line fill buffers
 * that the kernel's own loads need. The plain kernel does not prefetch: a
 * prefetch per k step of lines already in cache cost sgemm-1024 2-4%.)
 * Apart from the twins, every height from 1 to mr has an offset-A kernel:
 * B packed as usual, and A's h values of step k read at a + aoff[k] (h
 * consecutive floats there): h consecutive output pixels of a conv row
 * over its padded input, one tap per k (stax_conv_shifted_rows.c), so a
 * row of any width is cut into tiles without a padded pixel.
 *
 * The IR is plain vector IR for the JIT's target (the host): <16 x float>
 * becomes zmm code where the host has AVX-512 and pairs of ymm operations
 * where it has not, so forcing a family on any host computes the same
 * results (the avx512 family is then only slow); that is how the tests run
 * every family on every machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stax_internal.h"

static const stax_gemm_family families[] = {
    /* 12x32: 24 zmm accumulators, 2 for the B row, the A value as an
     * embedded broadcast (32 registers). B micro-panel 128 x 32 floats =
     * 16 KiB of a 32 KiB L1; a 384-row chunk of A 192 KiB of a 1 MiB L2 (Zen 4). */
    {"avx512", 12, 32, 16, true, 128, 384, 5, {12, 8, 4, 2, 1}},
    /* 6x16: 12 ymm accumulators. B micro-panel 256 x 16 floats = 16 KiB; a
     * 240-row chunk of A 240 KiB of a 512 KiB L2 (Zen 3). */
    {"avx2", 6, 16, 8, true, 256, 240, 4, {6, 4, 2, 1}},
    /* Any other target: 4x8 of <4 x float>, multiply and add (fused where
     * the target can). */
    {"generic", 4, 8, 4, false, 256, 256, 3, {4, 2, 1}},
};

const stax_gemm_family *stax_gemm_family_named(const char *name) {
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (!strcmp(families[i].name, name)) return &families[i];
    return NULL;
}

bool stax_features_enable(const char *features, const char *feature) {
    size_t length = strlen(feature);
    for (const char *p = features; p && (p = strstr(p, feature)); p += length)
        if (p > features && p[-1] == '+' && (p - 1 == features || p[-2] == ',') &&
            (p[length] == ',' || p[length] == '\0'))
            return true;
    return false;
}

const stax_gemm_family *stax_gemm_family_for_features(const char *features) {
    if (stax_features_enable(features, "avx512f")) return stax_gemm_family_named("avx512");
    if (stax_features_enable(features, "avx2") && stax_features_enable(features, "fma"))
        return stax_gemm_family_named("avx2");
    return stax_gemm_family_named("generic");
}

int32_t stax_gemm_family_choose(const tp_plugin_host *host, const char *features,
                                const stax_gemm_family **family, char *error, size_t error_size) {
    const char *forced = host && host->getenv ? host->getenv("STAX_GEMM_KERNEL") : NULL;
    *family = NULL;
    if (!forced || !*forced || !strcmp(forced, "auto")) {
        *family = stax_gemm_family_for_features(features);
        return TP_PLUGIN_OK;
    }
    if (!strcmp(forced, "legacy")) return TP_PLUGIN_OK; /* the 6x16 pair of stax_gemm.c */
    *family = stax_gemm_family_named(forced);
    if (*family) return TP_PLUGIN_OK;
    return tpcommon_error(error, error_size,
                          "stax: STAX_GEMM_KERNEL is '%s'; use auto, avx512, avx2, generic or "
                          "legacy (or unset it)",
                          forced);
}

/* Reads a positive block size from the environment (0: unset or invalid). */
static int64_t env_block(const tp_plugin_host *host, const char *name) {
    const char *text = host && host->getenv ? host->getenv(name) : NULL;
    if (!text || !*text) return 0;
    char *end = NULL;
    long long value = strtoll(text, &end, 10);
    return end && *end == '\0' && value > 0 && value <= 1 << 20 ? (int64_t)value : 0;
}

/* The k block whose B micro-panel (kc rows of nr floats) fills half of
 * this host's L1 data cache, as the families' own blocks do on the 32 KiB
 * L1 they were sized for; a multiple of 16, at most twice and at least half
 * the family's. On a 48 KiB L1 that is 192 for avx512: measured on Emerald
 * Rapids against 128, sgemm 2048^3 on one thread 161-163 -> 170 GFLOP/s,
 * ResNet-18-b1's convs 6% faster (fewer passes over each block of C). The
 * family's own where the C library does not report L1. */
static int64_t k_block_for_l1(const stax_gemm_family *family) {
    long l1 = 0;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
    if (l1 <= 0) return family->kc;
    int64_t kc = (int64_t)l1 / 2 / (family->nr * (int64_t)sizeof(float)) / 16 * 16;
    if (kc > 2 * family->kc) kc = 2 * family->kc;
    if (kc < family->kc / 2) kc = family->kc / 2;
    return kc;
}

void stax_gemm_family_blocking(const tp_plugin_host *host, const stax_gemm_family *family,
                               int64_t *kc, int64_t *mc) {
    int64_t k = env_block(host, "STAX_GEMM_KC"), m = env_block(host, "STAX_GEMM_MC");
    *kc = k ? k : k_block_for_l1(family);
    *mc = m ? m : family->mc;
    if (*mc < family->mr) *mc = family->mr;
}

void stax_gemm_family_kernel_name(const stax_gemm_family *family, int32_t height,
                                  stax_gemm_twin twin, char *name, size_t size) {
    static const char *const suffixes[STAX_GEMM_TWINS] = {"", "_strided_b", "_offset_b",
                                                          "_streaming_b"};
    snprintf(name, size, "STAXKEY_gemm_%s_h%d%s", family->name, (int)height, suffixes[twin]);
}

void stax_gemm_family_offset_a_kernel_name(const stax_gemm_family *family, int32_t height,
                                           char *name, size_t size) {
    snprintf(name, size, "STAXKEY_gemm_%s_h%d_offset_a", family->name, (int)height);
}

/* ---- IR ---- */

typedef struct tile_shape {
    int height, width, vectors; /* rows, lanes per vector, vectors per row */
    bool fma;
    bool strided_b;   /* B rows ldb floats apart (an extra i64 %ldb), not nr */
    bool offset_b;    /* B row k at boff[k] floats (an extra ptr %boff to i64s), not k * nr */
    bool streaming_b; /* an extra ptr %pf: line k / 2 from there prefetched in step k */
    bool offset_a;    /* A's k-th h values at aoff[k] floats (an extra ptr %aoff to i64s), not
                       * k * h */
} tile_shape;

/* %TO{r}_{h} = %FROM{r}_{h} + A value r * B vector h (names of one k step
 * carry its `tag`). */
static void emit_accumulate(tpcommon_buf *m, const tile_shape *s, int r, int h, const char *tag,
                            const char *from, const char *to) {
    int w = s->width;
    if (s->fma) {
        tpcommon_buf_printf(m,
                            "  %%%s%d_%d = call <%d x float> @llvm.fma.v%df32(<%d x float> "
                            "%%av%d%s, <%d x float> %%b%d%s, <%d x float> %%%s%d_%d)\n",
                            to, r, h, w, w, w, r, tag, w, h, tag, w, from, r, h);
        return;
    }
    tpcommon_buf_printf(m,
                        "  %%p%d_%d%s = fmul contract <%d x float> %%av%d%s, %%b%d%s\n"
                        "  %%%s%d_%d = fadd contract <%d x float> %%%s%d_%d, %%p%d_%d%s\n",
                        r, h, tag, w, r, tag, h, tag, to, r, h, w, from, r, h, r, h, tag);
}

/* One k step at index %K: the B row (`vectors` loads) and the A column
 * (height values, k-major) into the accumulators FROM -> TO. */
static void emit_k_step(tpcommon_buf *m, const tile_shape *s, const char *k, const char *tag,
                        const char *from, const char *to) {
    int nr = s->width * s->vectors, w = s->width;
    if (s->offset_a)
        tpcommon_buf_printf(m,
                            "  %%akp%s = getelementptr inbounds i64, ptr %%aoff, i64 %%%s\n"
                            "  %%ak%s = load i64, ptr %%akp%s, align 8\n",
                            tag, k, tag, tag);
    else
        tpcommon_buf_printf(m, "  %%ak%s = mul i64 %%%s, %d\n", tag, k, s->height);
    if (s->strided_b)
        tpcommon_buf_printf(m, "  %%bo%s = mul i64 %%%s, %%ldb\n", tag, k);
    else if (s->offset_b)
        tpcommon_buf_printf(m,
                            "  %%bp%s = getelementptr inbounds i64, ptr %%boff, i64 %%%s\n"
                            "  %%bo%s = load i64, ptr %%bp%s, align 8\n",
                            tag, k, tag, tag);
    else
        tpcommon_buf_printf(m, "  %%bo%s = mul i64 %%%s, %d\n", tag, k, nr);
    if (s->streaming_b)
        /* line k / 2 of the caller's prefetch stream (duplicates for odd k
         * are a uop each, cheaper than a branch) */
        tpcommon_buf_printf(m,
                            "  %%pfl%s = lshr i64 %%%s, 1\n"
                            "  %%pfb%s = shl i64 %%pfl%s, 6\n"
                            "  %%pfa%s = getelementptr i8, ptr %%pf, i64 %%pfb%s\n"
                            "  call void @llvm.prefetch.p0(ptr %%pfa%s, i32 0, i32 2, i32 1)\n",
                            tag, k, tag, tag, tag, tag, tag);
    for (int h = 0; h < s->vectors; h++)
        tpcommon_buf_printf(m,
                            "  %%bq%d%s = add i64 %%bo%s, %d\n"
                            "  %%bp%d%s = getelementptr inbounds float, ptr %%b, i64 %%bq%d%s\n"
                            "  %%b%d%s = load <%d x float>, ptr %%bp%d%s, align 4\n",
                            h, tag, tag, h * w, h, tag, h, tag, h, tag, w, h, tag);
    for (int r = 0; r < s->height; r++) {
        tpcommon_buf_printf(m,
                            "  %%ao%d%s = add i64 %%ak%s, %d\n"
                            "  %%ap%d%s = getelementptr inbounds float, ptr %%a, i64 %%ao%d%s\n"
                            "  %%as%d%s = load float, ptr %%ap%d%s, align 4\n"
                            "  %%ai%d%s = insertelement <%d x float> poison, float %%as%d%s, "
                            "i64 0\n"
                            "  %%av%d%s = shufflevector <%d x float> %%ai%d%s, <%d x float> "
                            "poison, <%d x i32> zeroinitializer\n",
                            r, tag, tag, r, r, tag, r, tag, r, tag, r, tag, r, tag, w, r, tag, r,
                            tag, w, r, tag, w, w);
        for (int h = 0; h < s->vectors; h++) emit_accumulate(m, s, r, h, tag, from, to);
    }
}

/* Independent accumulator sets of a tile with few accumulators (one or two
 * rows): the FMA's latency, not its throughput, would bound a single chain
 * of two to four vectors, so S consecutive k go to S sets, summed at the
 * end; enough sets for about eight accumulators, at most four. */
static int accumulator_sets(const tile_shape *s) {
    int sets = 8 / (s->height * s->vectors);
    return sets < 1 ? 1 : sets > 4 ? 4 : sets;
}

/* One k per iteration into %c{r}_{h} (the tiles with enough accumulators). */
static void emit_k_loop_one_set(tpcommon_buf *m, const tile_shape *s) {
    tpcommon_buf_printf(m, "loop:\n  %%k = phi i64 [0, %%entry], [%%kn, %%body]\n");
    for (int r = 0; r < s->height; r++)
        for (int h = 0; h < s->vectors; h++)
            tpcommon_buf_printf(m,
                                "  %%c%d_%d = phi <%d x float> [zeroinitializer, %%entry], "
                                "[%%d%d_%d, %%body]\n",
                                r, h, s->width, r, h);
    tpcommon_buf_printf(m, "  %%more = icmp slt i64 %%k, %%kc\n"
                           "  br i1 %%more, label %%body, label %%done\nbody:\n");
    emit_k_step(m, s, "k", "", "c", "d");
    tpcommon_buf_printf(m, "  %%kn = add i64 %%k, 1\n  br label %%loop\n");
}

/* The k loop: S k steps per iteration into S accumulator sets
 * (%acc{j}_{r}_{h}), the rest of kc one step at a time into set 0, then the
 * sets summed into %c{r}_{h}. */
static void emit_k_loop(tpcommon_buf *m, const tile_shape *s) {
    int sets = accumulator_sets(s), w = s->width;
    if (sets == 1) {
        emit_k_loop_one_set(m, s);
        return;
    }
    tpcommon_buf_printf(m, "loop:\n  %%k = phi i64 [0, %%entry], [%%kn, %%body]\n");
    for (int j = 0; j < sets; j++)
        for (int r = 0; r < s->height; r++)
            for (int h = 0; h < s->vectors; h++)
                tpcommon_buf_printf(m,
                                    "  %%acc%d_%d_%d = phi <%d x float> [zeroinitializer, "
                                    "%%entry], [%%new%d_%d_%d, %%body]\n",
                                    j, r, h, w, j, r, h);
    tpcommon_buf_printf(m,
                        "  %%kend = add i64 %%k, %d\n"
                        "  %%more = icmp sle i64 %%kend, %%kc\n"
                        "  br i1 %%more, label %%body, label %%tail\nbody:\n",
                        sets);
    for (int j = 0; j < sets; j++) {
        char k[16], tag[16], from[16], to[16];
        snprintf(k, sizeof k, "k_s%d", j);
        snprintf(tag, sizeof tag, "_s%d", j);
        snprintf(from, sizeof from, "acc%d_", j);
        snprintf(to, sizeof to, "new%d_", j);
        tpcommon_buf_printf(m, "  %%k_s%d = add i64 %%k, %d\n", j, j);
        emit_k_step(m, s, k, tag, from, to);
    }
    tpcommon_buf_printf(m,
                        "  %%kn = add i64 %%k, %d\n  br label %%loop\n"
                        "tail:\n  %%kt = phi i64 [%%k, %%loop], [%%ktn, %%tailbody]\n",
                        sets);
    for (int r = 0; r < s->height; r++)
        for (int h = 0; h < s->vectors; h++)
            tpcommon_buf_printf(m,
                                "  %%tacc%d_%d = phi <%d x float> [%%acc0_%d_%d, %%loop], "
                                "[%%tnew%d_%d, %%tailbody]\n",
                                r, h, w, r, h, r, h);
    tpcommon_buf_printf(m, "  %%tmore = icmp slt i64 %%kt, %%kc\n"
                           "  br i1 %%tmore, label %%tailbody, label %%sum\ntailbody:\n");
    emit_k_step(m, s, "kt", "_t", "tacc", "tnew");
    tpcommon_buf_printf(m, "  %%ktn = add i64 %%kt, 1\n  br label %%tail\nsum:\n");
    for (int r = 0; r < s->height; r++)
        for (int h = 0; h < s->vectors; h++) {
            tpcommon_buf_printf(m, "  %%sum1_%d_%d = fadd <%d x float> %%tacc%d_%d, %%acc1_%d_%d\n",
                                r, h, w, r, h, r, h);
            for (int j = 2; j < sets; j++)
                tpcommon_buf_printf(m,
                                    "  %%sum%d_%d_%d = fadd <%d x float> %%sum%d_%d_%d, "
                                    "%%acc%d_%d_%d\n",
                                    j, r, h, w, j - 1, r, h, j, r, h);
            tpcommon_buf_printf(m,
                                "  %%c%d_%d = bitcast <%d x float> %%sum%d_%d_%d to <%d x float>\n",
                                r, h, w, sets - 1, r, h, w);
        }
    tpcommon_buf_printf(m, "  br label %%done\n");
}

/* How a tile kernel stores its accumulators (its accumulate argument). */
typedef enum store_mode {
    STORE_ADD,   /* 1: added to C's values (every k block after the first) */
    STORE_BIAS,  /* above 1, the address of the tile's row biases: row r plus bias[r] */
    STORE_PLAIN, /* 0: as they are */
} store_mode;

/* Stores the accumulators to C: whole rows, or the first `cols` lanes
 * (%mask{h}), in one store mode; tag names this block's values. Only
 * STORE_ADD reads C. */
static void emit_store(tpcommon_buf *m, const tile_shape *s, bool masked, store_mode mode,
                       const char *tag) {
    int w = s->width;
    for (int r = 0; r < s->height; r++) {
        if (mode == STORE_BIAS)
            tpcommon_buf_printf(m,
                                "  %%%sbq%d = getelementptr float, ptr %%biases, i64 %d\n"
                                "  %%%sbl%d = load float, ptr %%%sbq%d, align 4\n"
                                "  %%%sbi%d = insertelement <%d x float> poison, float %%%sbl%d, "
                                "i64 0\n"
                                "  %%%sbv%d = shufflevector <%d x float> %%%sbi%d, <%d x float> "
                                "poison, <%d x i32> zeroinitializer\n",
                                tag, r, r, tag, r, tag, r, tag, r, w, tag, r, tag, r, w, tag, r, w,
                                w);
        for (int h = 0; h < s->vectors; h++) {
            tpcommon_buf_printf(m,
                                "  %%%sco%d_%d = mul i64 %%ldc, %d\n"
                                "  %%%scq%d_%d = add i64 %%%sco%d_%d, %d\n"
                                "  %%%scp%d_%d = getelementptr float, ptr %%c, i64 %%%scq%d_%d\n",
                                tag, r, h, r, tag, r, h, tag, r, h, h * w, tag, r, h, tag, r, h);
            if (mode == STORE_ADD) {
                if (masked)
                    tpcommon_buf_printf(m,
                                        "  %%%sold%d_%d = call <%d x float> "
                                        "@llvm.masked.load.v%df32.p0(ptr %%%scp%d_%d, i32 4, <%d x "
                                        "i1> %%mask%d, <%d x float> zeroinitializer)\n",
                                        tag, r, h, w, w, tag, r, h, w, h, w);
                else
                    tpcommon_buf_printf(m,
                                        "  %%%sold%d_%d = load <%d x float>, ptr %%%scp%d_%d, "
                                        "align 4\n",
                                        tag, r, h, w, tag, r, h);
                tpcommon_buf_printf(m,
                                    "  %%%snew%d_%d = fadd <%d x float> %%%sold%d_%d, %%c%d_%d\n",
                                    tag, r, h, w, tag, r, h, r, h);
            } else if (mode == STORE_BIAS) {
                tpcommon_buf_printf(m, "  %%%snew%d_%d = fadd <%d x float> %%c%d_%d, %%%sbv%d\n",
                                    tag, r, h, w, r, h, tag, r);
            } else {
                tpcommon_buf_printf(m,
                                    "  %%%snew%d_%d = bitcast <%d x float> %%c%d_%d to <%d x "
                                    "float>\n",
                                    tag, r, h, w, r, h, w);
            }
            if (masked)
                tpcommon_buf_printf(m,
                                    "  call void @llvm.masked.store.v%df32.p0(<%d x float> "
                                    "%%%snew%d_%d, ptr %%%scp%d_%d, i32 4, <%d x i1> %%mask%d)\n",
                                    w, w, tag, r, h, tag, r, h, w, h);
            else
                tpcommon_buf_printf(m,
                                    "  store <%d x float> %%%snew%d_%d, ptr %%%scp%d_%d, align 4\n",
                                    w, tag, r, h, tag, r, h);
        }
    }
    tpcommon_buf_printf(m, "  ret void\n");
}

/* The three store modes of a whole tile or its column edge (`where`),
 * chosen by the accumulate argument. */
static void emit_stores(tpcommon_buf *m, const tile_shape *s, bool masked, const char *where) {
    tpcommon_buf_printf(m,
                        "  br i1 %%add, label %%%s_add, label %%%s_first\n"
                        "%s_first:\n"
                        "  br i1 %%biased, label %%%s_bias, label %%%s_plain\n"
                        "%s_add:\n",
                        where, where, where, where, where, where);
    char tag[16];
    snprintf(tag, sizeof tag, "%sa", masked ? "m" : "f");
    emit_store(m, s, masked, STORE_ADD, tag);
    tpcommon_buf_printf(m, "%s_bias:\n", where);
    snprintf(tag, sizeof tag, "%sb", masked ? "m" : "f");
    emit_store(m, s, masked, STORE_BIAS, tag);
    tpcommon_buf_printf(m, "%s_plain:\n", where);
    snprintf(tag, sizeof tag, "%sp", masked ? "m" : "f");
    emit_store(m, s, masked, STORE_PLAIN, tag);
}

/* The lane masks of a column edge: lane j of vector h is live when h*width+j < cols. */
static void emit_masks(tpcommon_buf *m, const tile_shape *s) {
    tpcommon_buf_printf(m,
                        "  %%colsi = insertelement <%d x i64> poison, i64 %%cols, i64 0\n"
                        "  %%colsv = shufflevector <%d x i64> %%colsi, <%d x i64> poison, <%d x "
                        "i32> zeroinitializer\n",
                        s->width, s->width, s->width, s->width);
    for (int h = 0; h < s->vectors; h++) {
        tpcommon_buf_printf(m, "  %%mask%d = icmp slt <%d x i64> <", h, s->width);
        for (int j = 0; j < s->width; j++)
            tpcommon_buf_printf(m, "%si64 %d", j ? ", " : "", h * s->width + j);
        tpcommon_buf_printf(m, ">, %%colsv\n");
    }
}

/* Prefetches the tile of C (each row's nr floats, a 64-byte line at a
 * time) for writing, before the k loop: a C too large for L2 (a 2048-wide
 * product) comes from L3 or memory once per k block, and loaded only after
 * the loop its lines' latency stalls every tile (measured: sgemm-2048 at
 * 0.81x OpenBLAS without it). A prefetch never faults, so the lines past a
 * narrow edge tile's columns cost nothing but the request. */
static void emit_c_prefetch(tpcommon_buf *m, const tile_shape *s) {
    int nr = s->width * s->vectors, per_line = 16;
    for (int r = 0; r < s->height; r++)
        for (int j = 0; j < nr; j += per_line)
            tpcommon_buf_printf(m,
                                "  %%pfo%d_%d = mul i64 %%ldc, %d\n"
                                "  %%pfq%d_%d = add i64 %%pfo%d_%d, %d\n"
                                "  %%pfp%d_%d = getelementptr float, ptr %%c, i64 %%pfq%d_%d\n"
                                "  call void @llvm.prefetch.p0(ptr %%pfp%d_%d, i32 1, i32 3, "
                                "i32 1)\n",
                                r, j, r, r, j, r, j, j, r, j, r, j, r, j);
}

static void emit_tile_kernel(tpcommon_buf *m, const char *name, const tile_shape *s) {
    int nr = s->width * s->vectors;
    tpcommon_buf_printf(m,
                        "define void @%s(ptr noalias %%a, ptr noalias %%b, ptr noalias %%c, "
                        "i64 %%ldc, i64 %%kc, i64 %%acc, i64 %%cols%s) #0 {\n"
                        "entry:\n",
                        name,
                        s->strided_b     ? ", i64 %ldb"
                        : s->offset_b    ? ", ptr noalias %boff"
                        : s->streaming_b ? ", ptr %pf"
                        : s->offset_a    ? ", ptr noalias %aoff"
                                         : "");
    emit_c_prefetch(m, s);
    tpcommon_buf_printf(m, "  br label %%loop\n");
    emit_k_loop(m, s);
    tpcommon_buf_printf(m,
                        "done:\n  %%add = icmp eq i64 %%acc, 1\n"
                        "  %%biased = icmp ugt i64 %%acc, 1\n"
                        "  %%biases = inttoptr i64 %%acc to ptr\n"
                        "  %%full = icmp sge i64 %%cols, %d\n"
                        "  br i1 %%full, label %%whole, label %%edge\nwhole:\n",
                        nr);
    emit_stores(m, s, false, "whole");
    tpcommon_buf_printf(m, "edge:\n");
    emit_masks(m, s);
    emit_stores(m, s, true, "edge");
    tpcommon_buf_printf(m, "}\n\n");
}

void stax_emit_gemm_family_kernels(tpcommon_buf *m, const stax_gemm_family *family) {
    int w = family->vector_width;
    /* the module prelude already declares the <8 x float> fma */
    if (family->fma && w != 8)
        tpcommon_buf_printf(m,
                            "declare <%d x float> @llvm.fma.v%df32(<%d x float>, <%d x float>, "
                            "<%d x float>)\n",
                            w, w, w, w, w);
    tpcommon_buf_printf(m,
                        "declare <%d x float> @llvm.masked.load.v%df32.p0(ptr, i32, <%d x i1>, "
                        "<%d x float>)\n"
                        "declare void @llvm.masked.store.v%df32.p0(<%d x float>, ptr, i32, "
                        "<%d x i1>)\n"
                        "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)\n\n",
                        w, w, w, w, w, w, w);
    for (int32_t i = 0; i < family->num_heights; i++)
        for (int twin = 0; twin < STAX_GEMM_TWINS; twin++) {
            tile_shape shape = {.height = family->heights[i],
                                .width = w,
                                .vectors = family->nr / w,
                                .fma = family->fma,
                                .strided_b = twin == STAX_GEMM_STRIDED_B,
                                .offset_b = twin == STAX_GEMM_OFFSET_B,
                                .streaming_b = twin == STAX_GEMM_STREAMING_B};
            char name[96];
            stax_gemm_family_kernel_name(family, family->heights[i], (stax_gemm_twin)twin, name,
                                         sizeof name);
            emit_tile_kernel(m, name, &shape);
        }
    for (int32_t height = 1; height <= family->mr; height++) {
        tile_shape shape = {.height = height,
                            .width = w,
                            .vectors = family->nr / w,
                            .fma = family->fma,
                            .offset_a = true};
        char name[96];
        stax_gemm_family_offset_a_kernel_name(family, height, name, sizeof name);
        emit_tile_kernel(m, name, &shape);
    }
}
