/* The machine code of the matmul's tile kernels on the CPUs their families
 * are for, whatever CPU runs the test: the JIT's IR (dump_ir) with the
 * host's target attributes removed, compiled by LLVM's llc for Zen 4
 * (avx512) and Zen 3 (avx2). The k loop of the tallest tile must hold every
 * accumulator in a register (one FMA per accumulator on the family's
 * vector registers) and touch no stack (no spills), and so must its
 * streaming twin's, which also prefetches one line per k step (the plain
 * kernel none); likewise the gemv
 * kernels' column loop (stax_gemv_kernels.c). Built where CMake found
 * llc (STAX_TEST_LLC); the AVX-512 kernels' results are checked on every
 * host by test_gemm.c. */
#include "stax_harness.h"

#ifdef STAX_TEST_LLC

/* Removes every "target-cpu"="..." and "target-features"="..." so that
 * llc's -mcpu decides. */
static void strip_target_attributes(char *ir) {
    static const char *const keys[] = {"\"target-cpu\"=\"", "\"target-features\"=\""};
    for (int k = 0; k < 2; k++)
        for (char *p; (p = strstr(ir, keys[k]));) {
            char *end = strchr(p + strlen(keys[k]), '"');
            ck_assert_ptr_nonnull(end);
            memmove(p, end + 1, strlen(end + 1) + 1);
        }
}

/* The IR of the matmul micro-kernels compiled with STAX_GEMM_KERNEL=family. */
static char *family_ir(const char *family) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("codegen", &g), TP_OK);
    tp_type t = {.dtype = TP_F32, .ndim = 2, .dims = {64, 64}};
    tp_value_id in[2], y;
    ck_assert_int_eq(tp_graph_add_input(g, "a", &t, &in[0]), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(g, "b", &t, &in[1]), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "matmul", in, 2, NULL, "y", &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, t.dims, 1),
                            stax_test_random(TP_F32, 2, t.dims, 2)};
    char path[4300], option[4400];
    snprintf(path, sizeof path, "%s/%s.ll", tp_test_temp_dir(), family);
    snprintf(option, sizeof option, "dump_ir=%s", path);
    const char *options[1] = {option};
    setenv("STAX_GEMM_KERNEL", family, 1);
    setenv("TP_CACHE_DIR", "off", 1); /* compile, so that the IR is written */
    tp_tensor *out[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, options, 1, out), TP_OK);
    unsetenv("STAX_GEMM_KERNEL");
    tp_tensor_release(out[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
    /* the tile kernels are the micro-kernel library's module, dumped next to the graph's */
    snprintf(path, sizeof path, "%s/%s.gemm.ll", tp_test_temp_dir(), family);
    return stax_test_read_text(path);
}

/* Assembly of `ir` for `cpu`. */
static char *llc(const char *family, char *ir, const char *cpu) {
    strip_target_attributes(ir);
    char in[4300], out[4300], command[9000];
    snprintf(in, sizeof in, "%s/%s-stripped.ll", tp_test_temp_dir(), family);
    snprintf(out, sizeof out, "%s/%s.s", tp_test_temp_dir(), family);
    FILE *file = fopen(in, "wb");
    ck_assert_ptr_nonnull(file);
    fputs(ir, file);
    fclose(file);
    snprintf(command, sizeof command, "'%s' -O3 -mcpu=%s '%s' -o '%s'", STAX_TEST_LLC, cpu, in,
             out);
    ck_assert_msg(system(command) == 0, "failed: %s", command);
    return stax_test_read_text(out);
}

/* The block of `function` labelled "# %LOOP", or "# %LOOP.us" (the loop
 * unswitched: how the IR optimised for some hosts, Sapphire Rapids among
 * them, comes out of LLVM), or NULL. */
static const char *find_loop_block(const char *function, const char *loop) {
    char block[64];
    snprintf(block, sizeof block, "# %%%s", loop);
    for (const char *at = strstr(function, block); at; at = strstr(at + 1, block)) {
        const char *rest = at + strlen(block);
        while (strncmp(rest, ".us", 3) == 0) rest += 3;
        if (*rest == '\n') return at;
    }
    return NULL;
}

/* Counts FMAs on `fma_register`, stack accesses and L2 prefetches in the
 * block labelled "# %LOOP" (the tile kernels' k loop: body) of function
 * `name`. */
static void loop_counts(const char *assembly, const char *name, const char *loop,
                        const char *fma_register, int *fmas, int *stack, int *prefetches) {
    char label[200];
    snprintf(label, sizeof label, "%s:", name);
    const char *function = strstr(assembly, label);
    ck_assert_msg(function != NULL, "no %s in the assembly", name);
    const char *body = find_loop_block(function, loop);
    ck_assert_msg(body != NULL, "%s has no loop %s", name, loop);
    const char *end = strstr(body, "\n.LBB");
    ck_assert_ptr_nonnull(end);
    *fmas = 0, *stack = 0, *prefetches = 0;
    for (const char *line = strchr(body, '\n') + 1; line && line < end;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *eol = strchr(line, '\n');
        size_t length = eol ? (size_t)(eol - line) : strlen(line);
        char text[256];
        snprintf(text, sizeof text, "%.*s", (int)(length < 255 ? length : 255), line);
        if (strstr(text, "vfmadd") && strstr(text, fma_register)) (*fmas)++;
        if (strstr(text, "(%rsp)")) (*stack)++;
        if (strstr(text, "prefetcht1")) (*prefetches)++;
    }
}

static void check_family(const char *family, const char *cpu, const char *fma_register,
                         int accumulators) {
    stax_test_cache_dir();
    char *ir = family_ir(family);
    char *assembly = llc(family, ir, cpu);
    /* the kernel's name carries the module key: find its suffix */
    char suffix[64];
    snprintf(suffix, sizeof suffix, "_gemm_%s_h", family);
    const char *at = strstr(assembly, suffix);
    ck_assert_msg(at != NULL, "no %s kernels in the assembly", family);
    const char *start = at;
    while (start > assembly && start[-1] != '\n' && start[-1] != ' ' && start[-1] != '\t') start--;
    char name[160];
    int tallest = strcmp(family, "avx512") ? 6 : 12;
    snprintf(name, sizeof name, "%.*s%d", (int)(at - start) + (int)strlen(suffix), start, tallest);
    /* the plain kernel, then its streaming twin, which also prefetches the
     * next panel's lines into L2, one prefetch per k step */
    for (int streaming = 0; streaming < 2; streaming++) {
        char kernel[200];
        snprintf(kernel, sizeof kernel, "%s%s", name, streaming ? "_streaming_b" : "");
        int fmas, stack, prefetches;
        loop_counts(assembly, kernel, "body", fma_register, &fmas, &stack, &prefetches);
        ck_assert_msg(fmas > 0 && fmas % accumulators == 0,
                      "%s on %s: %d %s FMAs in the k loop, want a multiple of %d", kernel, cpu,
                      fmas, fma_register, accumulators);
        ck_assert_msg(stack == 0, "%s on %s: the k loop touches the stack %d times (spills)",
                      kernel, cpu, stack);
        int want = streaming ? fmas / accumulators : 0;
        ck_assert_msg(prefetches == want, "%s on %s: %d prefetcht1 in the k loop, want %d", kernel,
                      cpu, prefetches, want);
    }
    free(ir);
    free(assembly);
}

/* The gemv kernel of `rows` rows (stax_gemv_kernels.c): its inner loop
 * (gjbody: four rows of B per step over the columns; for the dot kernels,
 * kind "dot_", gkbody: four columns of B per step along k) multiplies on
 * the family's vector registers, 4 * rows FMAs per vector, and touches no
 * stack when the values of A fit the registers. */
static void check_gemv(const char *family, const char *kind, const char *cpu,
                       const char *fma_register, int rows, bool spill_free) {
    stax_test_cache_dir();
    char *ir = family_ir(family);
    char *assembly = llc(family, ir, cpu);
    char suffix[64];
    snprintf(suffix, sizeof suffix, "_gemv_%s%s_r", kind, family);
    const char *at = strstr(assembly, suffix);
    ck_assert_msg(at != NULL, "no %s gemv kernels in the assembly", family);
    const char *start = at;
    while (start > assembly && start[-1] != '\n' && start[-1] != ' ' && start[-1] != '\t') start--;
    char name[160];
    snprintf(name, sizeof name, "%.*s%d", (int)(at - start) + (int)strlen(suffix), start, rows);
    int fmas, stack, prefetches;
    loop_counts(assembly, name, *kind ? "gkbody" : "gjbody", fma_register, &fmas, &stack,
                &prefetches);
    ck_assert_msg(fmas > 0 && fmas % (4 * rows) == 0,
                  "%s gemv, %d rows, on %s: %d %s FMAs in the column loop, want a multiple of %d",
                  family, rows, cpu, fmas, fma_register, 4 * rows);
    if (spill_free)
        ck_assert_msg(stack == 0,
                      "%s gemv, %d rows, on %s: the column loop touches the stack %d times", family,
                      rows, cpu, stack);
    free(ir);
    free(assembly);
}

START_TEST(avx512_gemv_kernels_multiply_on_zmm_without_spills_on_zen4) {
    for (int rows = 1; rows <= 3; rows++) {
        check_gemv("avx512", "", "znver4", "zmm", rows, true);
        check_gemv("avx512", "dot_", "znver4", "zmm", rows, true);
    }
}
END_TEST

/* Three rows hold 12 broadcast values of A next to the vectors of B: AVX2's
 * 16 registers spill some (reloaded as FMA operands). The dot kernels' 12
 * accumulators, 3 vectors of A and one of B fit. */
START_TEST(avx2_gemv_kernels_multiply_on_ymm_on_zen3) {
    check_gemv("avx2", "", "znver3", "ymm", 1, true);
    check_gemv("avx2", "", "znver3", "ymm", 2, true);
    check_gemv("avx2", "", "znver3", "ymm", 3, false);
    for (int rows = 1; rows <= 3; rows++) check_gemv("avx2", "dot_", "znver3", "ymm", rows, true);
}
END_TEST

START_TEST(avx512_tiles_keep_24_zmm_accumulators_on_zen4) {
    check_family("avx512", "znver4", "zmm", 24);
}
END_TEST

START_TEST(avx2_tiles_keep_12_ymm_accumulators_on_zen3) {
    check_family("avx2", "znver3", "ymm", 12);
}
END_TEST

#endif

TP_TEST_SUITE(stax_gemm_codegen) {
    Suite *s = suite_create("stax_gemm_codegen");
    TCase *c = tcase_create("codegen");
    tcase_set_timeout(c, 300);
#ifdef STAX_TEST_LLC
    tcase_add_test(c, avx512_tiles_keep_24_zmm_accumulators_on_zen4);
    tcase_add_test(c, avx2_tiles_keep_12_ymm_accumulators_on_zen3);
    tcase_add_test(c, avx512_gemv_kernels_multiply_on_zmm_without_spills_on_zen4);
    tcase_add_test(c, avx2_gemv_kernels_multiply_on_ymm_on_zen3);
#endif
    suite_add_tcase(s, c);
    return s;
}
