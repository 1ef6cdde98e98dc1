/* stax-llvm — the matmul micro-kernels as a library module of their own.
 *
 * The tile kernels of a family (and the legacy 6x16 pair), its gemv
 * kernels and the fused attention's softmax update (stax_attention.c: every
 * size an argument, with the float math routines it calls) are the same for
 * every graph, and the drivers call them through pointers, never inlined.
 * Compiling them into each graph's module made every compile of a graph
 * with a matmul (or an attention) pay for optimising and emitting them
 * again. They are compiled here once per process and family instead (the
 * JIT's memory cache then hands every executable the same module, and its
 * disk cache keeps the object across processes), always at O3: a graph
 * compiled with opt_level=0 for debugging still multiplies at full speed.
 * A prebuilt object made at build time for the family's baseline CPU
 * (stax_gemm_prebuilt.c) is taken before any of that, where the host can
 * run it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_gemv.h"
#include "stax_kernel_bodies.h"
#include "stax_internal.h"

char *stax_gemm_library_ir(bool legacy, const stax_gemm_family *family, const char *cpu,
                           const char *features) {
    tpcommon_buf m;
    tpcommon_buf_init(&m);
    /* the legacy kernel and the 8-wide families use the <8 x float> fma */
    tpcommon_buf_append(
        &m, "declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)\n\n");
    if (legacy) stax_emit_gemm_microkernel(&m);
    if (family) stax_emit_gemm_family_kernels(&m, family);
    if (family) stax_emit_gemv_kernels(&m, family);
    if (family) { /* the fused attention's softmax update, with the math it calls */
        tpcommon_buf_append(&m, "declare float @llvm.maxnum.f32(float, float)\n"
                                "declare double @llvm.floor.f64(double)\n");
        tpcommon_buf_append(&m, stax_mathlib_ir);
        stax_emit_attention_rows(&m, STAX_ATTENTION_ROWS_NAME, false);
        stax_emit_attention_rows(&m, STAX_ATTENTION_ROWS_MASKED_NAME, true);
    }
    /* #1: the math routines, inlined; STAX_ATTRS_WIDE: the attention rows'
     * loops, 512-bit vectors where the target has them (their exp pays) */
    bool wide = stax_features_enable(features, "avx512f");
    tpcommon_buf_printf(&m,
                        "attributes #0 = { nounwind \"target-cpu\"=\"%s\" "
                        "\"target-features\"=\"%s\" }\n"
                        "attributes #1 = { alwaysinline nounwind \"target-cpu\"=\"%s\" "
                        "\"target-features\"=\"%s\" }\n"
                        "attributes #%d = { nounwind \"target-cpu\"=\"%s\" "
                        "\"target-features\"=\"%s\" %s}\n",
                        cpu, features, cpu, features, STAX_ATTRS_WIDE, cpu, features,
                        wide ? "\"prefer-vector-width\"=\"512\" " : "");
    return tpcommon_buf_take(&m);
}

/* dump_ir=DIR/NAME.ll puts the library's IR in DIR/NAME.gemm.ll (NAME.gemm
 * appended when the path has no extension). */
static char *library_dump_path(const char *graph_dump) {
    const char *slash = strrchr(graph_dump, '/');
    const char *dot = strrchr(graph_dump, '.');
    if (dot && slash && dot < slash) dot = NULL;
    size_t stem = dot ? (size_t)(dot - graph_dump) : strlen(graph_dump);
    size_t length = strlen(graph_dump) + sizeof ".gemm";
    char *path = malloc(length);
    if (path) snprintf(path, length, "%.*s.gemm%s", (int)stem, graph_dump, dot ? dot : "");
    return path;
}

/* TP_LOG=debug: where the library came from (a prebuilt object logs its file). */
static void log_library_source(const tp_plugin_host *host, bool legacy,
                               const stax_gemm_family *family, int cache_hit, double ms) {
    if (!host || !host->log || cache_hit == 3) return;
    char line[256], compiled[64];
    snprintf(compiled, sizeof compiled, "compiled in %.1f ms", ms);
    snprintf(line, sizeof line, "stax: micro-kernel library %s%s: %s",
             family ? family->name : "legacy", legacy && family ? " + legacy" : "",
             cache_hit == 1   ? "from memory"
             : cache_hit == 2 ? "from the disk cache"
                              : compiled);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
}

int32_t stax_gemm_library_load(const tp_plugin_host *host, bool legacy,
                               const stax_gemm_family *family, const stax_jit_options *graph,
                               stax_gemm_library *out, char *error, size_t error_size) {
    memset(out, 0, sizeof *out);
    if (!legacy && !family) return TP_PLUGIN_OK;
    double started = stax_clock_ms();
    const char *graph_dump_ir = graph ? graph->dump_ir : NULL;
    bool dumping =
        graph && ((graph->dump_ir && *graph->dump_ir) || (graph->dump_asm && *graph->dump_asm));
    char tile_names[STAX_GEMM_MAX_HEIGHTS][STAX_GEMM_TWINS][96];
    char gemv_names[2 * STAX_GEMV_MAX_ROWS][96];
    char offset_a_names[STAX_GEMM_MAX_TILE_ROWS][96];
    enum {
        MOST_NAMES = 2 + STAX_GEMM_TWINS * STAX_GEMM_MAX_HEIGHTS + 2 * STAX_GEMV_MAX_ROWS +
                     STAX_GEMM_MAX_TILE_ROWS + 2
    };
    const char *names[MOST_NAMES];
    void *addresses[MOST_NAMES] = {0};
    int32_t count = 0;
    if (legacy) {
        names[count++] = STAX_GEMM_KERNEL_NAME;
        names[count++] = STAX_GEMM_KERNEL4_NAME;
    }
    for (int32_t i = 0; family && i < family->num_heights; i++)
        for (int twin = 0; twin < STAX_GEMM_TWINS; twin++) {
            stax_gemm_family_kernel_name(family, family->heights[i], (stax_gemm_twin)twin,
                                         tile_names[i][twin], sizeof tile_names[i][twin]);
            names[count++] = tile_names[i][twin];
        }
    for (int32_t r = 0; family && r < STAX_GEMV_MAX_ROWS; r++) {
        char *row_name = gemv_names[2 * r], *dot_name = gemv_names[2 * r + 1];
        stax_gemv_kernel_name(family, r + 1, row_name, sizeof gemv_names[0]);
        names[count++] = row_name;
        stax_gemv_dot_kernel_name(family, r + 1, dot_name, sizeof gemv_names[0]);
        names[count++] = dot_name;
    }
    for (int32_t h = 1; family && h <= family->mr; h++) {
        stax_gemm_family_offset_a_kernel_name(family, h, offset_a_names[h - 1],
                                              sizeof offset_a_names[0]);
        names[count++] = offset_a_names[h - 1];
    }
    if (family) {
        names[count++] = STAX_ATTENTION_ROWS_NAME;
        names[count++] = STAX_ATTENTION_ROWS_MASKED_NAME;
    }
    int cache_hit = 0;
    int32_t status = stax_gemm_prebuilt_load(host, legacy, family, dumping, names, count, addresses,
                                             &out->module, &cache_hit, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (!out->module) {
        char *ir = stax_gemm_library_ir(legacy, family, stax_jit_cpu(), stax_jit_features());
        if (!ir) return tpcommon_error(error, error_size, "stax: out of memory");
        stax_jit_options jit = {3, NULL, NULL, host};
        char *dump = graph_dump_ir && *graph_dump_ir ? library_dump_path(graph_dump_ir) : NULL;
        jit.dump_ir = dump;
        status = stax_jit_load(ir, &jit, names, count, addresses, &out->module, &cache_hit, error,
                               error_size);
        free(dump);
        free(ir);
        if (status != TP_PLUGIN_OK) return status;
    }
    log_library_source(host, legacy, family, cache_hit, stax_clock_ms() - started);
    int32_t at = 0;
    if (legacy)
        for (int i = 0; i < 2; i++) out->ukernels[i] = (stax_ukernel_fn)(uintptr_t)addresses[at++];
    for (int32_t i = 0; family && i < family->num_heights; i++) {
        void **twins = addresses + at; /* in the order the names loop gave them */
        out->tiles[i] = (stax_gemm_tile_fn)(uintptr_t)twins[STAX_GEMM_PACKED_B];
        out->strided[i] = (stax_gemm_strided_tile_fn)(uintptr_t)twins[STAX_GEMM_STRIDED_B];
        out->offset[i] = (stax_gemm_offset_tile_fn)(uintptr_t)twins[STAX_GEMM_OFFSET_B];
        out->streaming[i] = (stax_gemm_streaming_tile_fn)(uintptr_t)twins[STAX_GEMM_STREAMING_B];
        at += STAX_GEMM_TWINS;
    }
    for (int32_t r = 0; family && r < STAX_GEMV_MAX_ROWS; r++) {
        out->gemv[r] = (stax_gemv_fn)(uintptr_t)addresses[at++];
        out->gemv_dot[r] = (stax_gemv_fn)(uintptr_t)addresses[at++];
    }
    for (int32_t h = 1; family && h <= family->mr; h++)
        out->offset_a[h] = (stax_gemm_offset_a_tile_fn)(uintptr_t)addresses[at++];
    for (int masked = 0; family && masked < 2; masked++)
        out->attention_rows[masked] = addresses[at++];
    out->cache_hit = cache_hit;
    return TP_PLUGIN_OK;
}

void stax_gemm_kernels_from_library(const tp_plugin_host *host, const stax_gemm_family *family,
                                    const stax_gemm_library *library, stax_gemm_kernels *out) {
    out->family = family;
    memcpy(out->tile, library->tiles, sizeof out->tile);
    memcpy(out->strided, library->strided, sizeof out->strided);
    memcpy(out->offset, library->offset, sizeof out->offset);
    memcpy(out->streaming, library->streaming, sizeof out->streaming);
    memcpy(out->offset_a, library->offset_a, sizeof out->offset_a);
    memcpy(out->gemv, library->gemv, sizeof out->gemv);
    memcpy(out->gemv_dot, library->gemv_dot, sizeof out->gemv_dot);
    memcpy(out->attention_rows, library->attention_rows, sizeof out->attention_rows);
    stax_gemm_family_blocking(host, family, &out->kc, &out->mc);
}
