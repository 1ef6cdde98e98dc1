/* stax's prebuilt micro-kernel objects (stax_gemm_prebuilt.c): the build
 * puts one per family beside stax-llvm.so, made for the family's baseline
 * CPU; a compile with a matmul loads it instead of compiling the library.
 * Pinned here: each family this host runs natively loads its file (the debug
 * log names it) and multiplies as a double-precision product says, with
 * rows and columns that leave tails in every tile shape, as does the same
 * compile with STAX_PREBUILT_KERNELS=off; a truncated copy, a copy with a
 * changed key, a corrupt object, an object the JIT refuses, one lacking the
 * kernels, a group-writable file and a missing file each fall back to compiling, saying why; a bad
 * STAX_PREBUILT_KERNELS fails the compile naming the variable; dumping IR never uses the prebuilt
 * object; and the decision which hosts may run a family's object (checked
 * with feature strings of other hosts, since this one cannot be faked). The
 * broken copies sit in a folder of their own that STAX_PREBUILT_DIR (a
 * test-only override of the plugin's folder) points at. */
#include <sys/stat.h>
#include <unistd.h>

#include "stax_harness.h"
#include "stax_prebuilt.h"
#include "tpcommon_cache.h"

/* ---- helpers ---- */

static const char *plugin_folder(void) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/plugins", tp_test_build_dir());
    return path;
}

/* The built file of `family` (plain family kernels), or NULL when the build
 * made none (TP_STAX_PREBUILT=OFF): then the test skips. A static buffer:
 * the next call overwrites it. */
static const char *built_file(const char *family) {
    static char path[4400];
    char name[128];
    stax_prebuilt_file_name(false, family, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", plugin_folder(), name);
    return access(path, R_OK) == 0 ? path : NULL;
}

static bool host_runs_natively(const char *family) {
    if (!strcmp(family, "avx512"))
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512cd");
    if (!strcmp(family, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("bmi2");
    return true;
}

static unsigned char *read_whole(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    ck_assert_msg(file != NULL, "cannot open %s", path);
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)length);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_uint_eq(fread(bytes, 1, (size_t)length, file), (size_t)length);
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

/* A folder TEMP/NAME holding `bytes` as `family`'s prebuilt file (mode
 * `mode`); points STAX_PREBUILT_DIR at it. */
static void make_prebuilt_folder(const char *name, const char *family, const unsigned char *bytes,
                                 size_t size, mode_t mode) {
    char folder[4200], path[4400], file_name[128];
    snprintf(folder, sizeof folder, "%s/%s", tp_test_temp_dir(), name);
    mkdir(folder, 0700);
    stax_prebuilt_file_name(false, family, file_name, sizeof file_name);
    snprintf(path, sizeof path, "%s/%s", folder, file_name);
    if (bytes) {
        FILE *file = fopen(path, "wb");
        ck_assert_ptr_nonnull(file);
        ck_assert_uint_eq(fwrite(bytes, 1, size, file), size);
        fclose(file);
        ck_assert_int_eq(chmod(path, mode), 0);
    }
    setenv("STAX_PREBUILT_DIR", folder, 1);
}

/* y = x [m, k] @ w [k, n] on stax (both inputs), checked against the product
 * in double; returns how many compile log lines contain `needle`. */
static int multiply_and_count(int64_t m, int64_t k, int64_t n, const char *needle,
                              const char *const *options, int num_options, const char *what) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("prebuilt", &g), TP_OK);
    int64_t x_dims[2] = {m, k}, w_dims[2] = {k, n};
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, x_dims);
    tp_value_id w = stax_test_input(g, "w", TP_F32, 2, w_dims);
    tp_value_id y = stax_test_node(g, "matmul", (tp_value_id[]){x, w}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *operands[2] = {stax_test_random(TP_F32, 2, x_dims, 7),
                              stax_test_random(TP_F32, 2, w_dims, 8)};
    tp_tensor *out = NULL;
    int lines = 0;
    tp_status status =
        stax_test_run_counting(needle, g, operands, 2, options, num_options, &out, &lines);
    ck_assert_msg(status == TP_OK, "%s: compile: %s", what, tp_last_error());
    stax_test_product shape = {.batch = 1, .m = m, .k = k, .n = n, .dtype = TP_F32};
    stax_test_check_product(&shape, operands, out, what);
    tp_tensor_release(out);
    tp_tensor_release(operands[0]);
    tp_tensor_release(operands[1]);
    tp_graph_destroy(g);
    return lines;
}

/* Shapes: a tile product with row and column tails for every family (37 =
 * 3 x 12 + 1 rows, 45 = 32 + 13 columns, k not a multiple of 4), and a gemv
 * product (2 rows). */
static const int64_t shapes[2][3] = {{37, 301, 45}, {2, 130, 70}};

static void reset_environment(void) {
    unsetenv("STAX_GEMM_KERNEL");
    unsetenv("STAX_PREBUILT_KERNELS");
    unsetenv("STAX_PREBUILT_DIR");
}

/* ---- through the plugin ---- */

START_TEST(each_native_family_loads_its_prebuilt_object_and_matches_a_double_product) {
    stax_test_cache_dir();
    static const char *const families[] = {"avx512", "avx2", "generic"};
    int tried = 0;
    for (int f = 0; f < 3; f++) {
        const char *path = built_file(families[f]);
        if (!path || !host_runs_natively(families[f])) continue;
        tried++;
        setenv("STAX_GEMM_KERNEL", families[f], 1);
        char needle[4600], what[128];
        snprintf(needle, sizeof needle, "micro-kernel library %s: prebuilt %s", families[f], path);
        for (int s = 0; s < 2; s++) {
            snprintf(what, sizeof what, "%s prebuilt, %lldx%lldx%lld", families[f],
                     (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2]);
            ck_assert_int_eq(
                multiply_and_count(shapes[s][0], shapes[s][1], shapes[s][2], needle, NULL, 0, what),
                1);
        }
    }
    reset_environment();
    if (!tried) fprintf(stderr, "skipped: this build made no prebuilt objects\n");
}
END_TEST

START_TEST(prebuilt_kernels_off_compiles_the_library_and_matches_a_double_product) {
    stax_test_cache_dir();
    static const char *const families[] = {"avx512", "avx2", "generic"};
    for (int f = 0; f < 3; f++) {
        if (!host_runs_natively(families[f])) continue;
        setenv("STAX_GEMM_KERNEL", families[f], 1);
        setenv("STAX_PREBUILT_KERNELS", "off", 1);
        char what[128];
        for (int s = 0; s < 2; s++) {
            snprintf(what, sizeof what, "%s compiled, %lldx%lldx%lld", families[f],
                     (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2]);
            ck_assert_int_eq(multiply_and_count(shapes[s][0], shapes[s][1], shapes[s][2],
                                                ": prebuilt /", NULL, 0, what),
                             0);
        }
        setenv("STAX_PREBUILT_KERNELS", "on", 1);
        ck_assert_int_eq(
            multiply_and_count(5, 40, 33, "not used: STAX_PREBUILT_KERNELS=off", NULL, 0, "on"), 0);
    }
    reset_environment();
}
END_TEST

/* The host's family with its file replaced by `bytes` in a folder of its
 * own: the compile says `why` (once) and multiplies right without it. */
static void expect_fallback(const char *folder_name, const unsigned char *bytes, size_t size,
                            mode_t mode, const char *why) {
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "generic", 1); /* every x86-64 host runs it natively */
    make_prebuilt_folder(folder_name, "generic", bytes, size, mode);
    ck_assert_int_eq(multiply_and_count(37, 301, 45, why, NULL, 0, folder_name), 1);
    ck_assert_int_eq(multiply_and_count(37, 301, 45, ": prebuilt /", NULL, 0, folder_name), 0);
    reset_environment();
}

START_TEST(a_truncated_copy_falls_back_to_compiling_and_says_so) {
    const char *path = built_file("generic");
    if (!path) return;
    size_t size = 0;
    unsigned char *bytes = read_whole(path, &size);
    expect_fallback("truncated", bytes, size / 2, 0644, "the file is truncated");
    free(bytes);
}
END_TEST

START_TEST(a_copy_with_a_changed_key_falls_back_to_compiling_and_says_so) {
    const char *path = built_file("generic");
    if (!path) return;
    size_t size = 0;
    unsigned char *bytes = read_whole(path, &size);
    ck_assert_int_eq(memcmp(bytes + 32, "stax prebuilt", 13), 0); /* the key follows the header */
    bytes[32] = 'S';
    expect_fallback("other-key", bytes, size, 0644, "made for another key");
    free(bytes);
}
END_TEST

START_TEST(a_corrupt_object_falls_back_to_compiling_and_says_so) {
    const char *path = built_file("generic");
    if (!path) return;
    size_t size = 0;
    unsigned char *bytes = read_whole(path, &size);
    bytes[size - 100] ^= 0x5a;
    expect_fallback("corrupt", bytes, size, 0644, "the file is corrupt");
    free(bytes);
}
END_TEST

/* An entry under the key of generic's file (so it passes the key and
 * checksum checks) whose object is `object`. */
static void write_entry_with_generic_key(const char *folder_name, const void *object,
                                         size_t object_size) {
    size_t size = 0, key_size = 0;
    unsigned char *bytes = read_whole(built_file("generic"), &size);
    const char *stored = tpcommon_cache_entry_stored_key(bytes, size, &key_size);
    ck_assert_ptr_nonnull(stored);
    char *key = strndup(stored, key_size);
    char folder[4200], path[4400];
    snprintf(folder, sizeof folder, "%s/%s", tp_test_temp_dir(), folder_name);
    mkdir(folder, 0700);
    snprintf(path, sizeof path, "%s/stax-gemm-generic.prebuilt", folder);
    ck_assert(tpcommon_cache_write_file(path, key, object, object_size, 0644));
    free(key);
    free(bytes);
}

START_TEST(an_object_the_jit_refuses_falls_back_to_compiling_and_says_so) {
    if (!built_file("generic")) return;
    static const char not_an_object[] = "this is not an ELF object file at all";
    write_entry_with_generic_key("not-an-object", not_an_object, sizeof not_an_object);
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "generic", 1);
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/not-an-object", tp_test_temp_dir());
    setenv("STAX_PREBUILT_DIR", folder, 1);
    ck_assert_int_eq(
        multiply_and_count(37, 301, 45, "not used: the JIT refuses it", NULL, 0, "not an object"),
        1);
    reset_environment();
}
END_TEST

START_TEST(an_object_lacking_the_kernels_falls_back_to_compiling_and_says_so) {
    if (!built_file("generic") || !built_file("avx2")) return;
    size_t size = 0, offset = 0, object_size = 0, key_size = 0;
    unsigned char *bytes = read_whole(built_file("avx2"), &size);
    const char *stored = tpcommon_cache_entry_stored_key(bytes, size, &key_size);
    char *key = strndup(stored, key_size);
    ck_assert_ptr_null(tpcommon_cache_entry_problem(bytes, size, key, &offset, &object_size));
    /* avx2's object (other kernels, other symbol names) under generic's key */
    write_entry_with_generic_key("other-kernels", bytes + offset, object_size);
    free(key);
    free(bytes);
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "generic", 1);
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/other-kernels", tp_test_temp_dir());
    setenv("STAX_PREBUILT_DIR", folder, 1);
    ck_assert_int_eq(
        multiply_and_count(37, 301, 45, "not used: the JIT refuses it", NULL, 0, "other kernels"),
        1);
    /* the refused object left nothing behind: avx2's own file still loads */
    unsetenv("STAX_PREBUILT_DIR");
    if (host_runs_natively("avx2")) {
        setenv("STAX_GEMM_KERNEL", "avx2", 1);
        ck_assert_int_eq(multiply_and_count(37, 301, 45, "avx2: prebuilt /", NULL, 0, "avx2 after"),
                         1);
    }
    reset_environment();
}
END_TEST

START_TEST(a_group_writable_file_is_not_trusted_and_says_how_to_fix_it) {
    const char *path = built_file("generic");
    if (!path) return;
    size_t size = 0;
    unsigned char *bytes = read_whole(path, &size);
    expect_fallback("group-writable", bytes, size, 0664, "writable by its group (mode 0664)");
    free(bytes);
}
END_TEST

START_TEST(a_missing_file_falls_back_to_compiling) {
    expect_fallback("empty", NULL, 0, 0644, "cannot be opened");
}
END_TEST

START_TEST(a_bad_setting_fails_the_compile_naming_the_variable) {
    stax_test_cache_dir();
    setenv("STAX_PREBUILT_KERNELS", "yes", 1);
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("prebuilt", &g), TP_OK);
    int64_t dims[2] = {8, 8};
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, dims);
    tp_value_id y = stax_test_node(g, "matmul", (tp_value_id[]){x, x}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *input = stax_test_random(TP_F32, 2, dims, 3), *out = NULL;
    tp_status status = stax_test_run("stax", g, &input, 1, NULL, 0, &out);
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_PREBUILT_KERNELS is 'yes'; use on or off"),
                  "error: %s", tp_last_error());
    tp_tensor_release(input);
    tp_graph_destroy(g);
    reset_environment();
}
END_TEST

START_TEST(dumping_the_ir_compiles_the_library) {
    stax_test_cache_dir();
    char option[4300];
    snprintf(option, sizeof option, "dump_ir=%s/prebuilt-dump.ll", tp_test_temp_dir());
    const char *options[1] = {option};
    ck_assert_int_eq(multiply_and_count(37, 301, 45, "not used: dump_ir or dump_asm is set",
                                        options, 1, "dump_ir"),
                     1);
    char library_dump[4400];
    snprintf(library_dump, sizeof library_dump, "%s/prebuilt-dump.gemm.ll", tp_test_temp_dir());
    ck_assert_int_eq(access(library_dump, R_OK), 0);
}
END_TEST

START_TEST(a_forced_family_the_host_lacks_compiles_for_the_host) {
    if (host_runs_natively("avx512")) {
        fprintf(stderr, "skipped: this host has AVX-512 (the decision test covers it)\n");
        return;
    }
    stax_test_cache_dir();
    setenv("STAX_GEMM_KERNEL", "avx512", 1);
    ck_assert_int_eq(
        multiply_and_count(37, 301, 45, "not used: the host lacks", NULL, 0, "forced avx512"), 1);
    ck_assert_int_eq(multiply_and_count(37, 301, 45, ": prebuilt /", NULL, 0, "forced avx512"), 0);
    reset_environment();
}
END_TEST

/* ---- the decision, for hosts this one cannot be ---- */

/* LLVM 19's host features of an AMD Zen 3 (AVX2, no AVX-512), abridged. */
static const char zen3[] =
    "+64bit,+adx,+aes,+avx,+avx2,-avx512bw,-avx512cd,-avx512dq,-avx512f,-avx512vl,+bmi,+bmi2,"
    "+clflushopt,+cmov,+cx16,+cx8,-evex512,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,+popcnt,+sahf,"
    "+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave";
/* A Sapphire Rapids (AVX-512), abridged. */
static const char sapphire_rapids[] =
    "+64bit,+avx,+avx2,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512fp16,+avx512vl,+bmi,+bmi2,"
    "+cmov,+cx16,+cx8,+evex512,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,+popcnt,+sahf,+sse,+sse2,"
    "+sse3,+sse4.1,+sse4.2,+ssse3,+xsave";
/* An x86-64 without AVX (Nehalem-like). */
static const char sse_only[] = "+64bit,-avx,-avx2,+cmov,+cx16,+cx8,-fma,+fxsr,+mmx,+popcnt,+sahf,"
                               "+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3";
static const char triple[] = "x86_64-pc-linux-gnu";

START_TEST(an_avx2_host_never_gets_the_avx512_object) {
    char why[256];
    const char *refusal = stax_prebuilt_refusal(triple, false, "avx512", zen3, why, sizeof why);
    ck_assert_ptr_nonnull(refusal);
    ck_assert_msg(strstr(refusal, "the host lacks avx512"), "%s", refusal);
    ck_assert_msg(strstr(refusal, "x86-64-v4"), "%s", refusal);
    ck_assert_ptr_nonnull(stax_prebuilt_refusal(triple, true, "avx512", zen3, why, sizeof why));
    ck_assert_ptr_null(stax_prebuilt_refusal(triple, false, "avx2", zen3, why, sizeof why));
    ck_assert_ptr_null(stax_prebuilt_refusal(triple, true, "avx2", zen3, why, sizeof why));
    ck_assert_ptr_null(stax_prebuilt_refusal(triple, false, "generic", zen3, why, sizeof why));
    ck_assert_ptr_null(stax_prebuilt_refusal(triple, true, NULL, zen3, why, sizeof why));
}
END_TEST

START_TEST(an_avx512_host_runs_every_family_object) {
    char why[256];
    static const char *const families[] = {"avx512", "avx2", "generic"};
    for (int f = 0; f < 3; f++)
        for (int legacy = 0; legacy < 2; legacy++)
            ck_assert_ptr_null(stax_prebuilt_refusal(triple, legacy, families[f], sapphire_rapids,
                                                     why, sizeof why));
}
END_TEST

START_TEST(a_host_without_avx_gets_only_the_generic_object) {
    char why[256];
    ck_assert_ptr_null(stax_prebuilt_refusal(triple, false, "generic", sse_only, why, sizeof why));
    const char *refusal = stax_prebuilt_refusal(triple, false, "avx2", sse_only, why, sizeof why);
    ck_assert_msg(refusal && strstr(refusal, "the host lacks avx of the avx2 baseline (x86-64-v3)"),
                  "%s", refusal ? refusal : "(used)");
    ck_assert_ptr_nonnull(stax_prebuilt_refusal(triple, true, NULL, sse_only, why, sizeof why));
}
END_TEST

START_TEST(another_architecture_or_an_unknown_family_has_no_object) {
    char why[256];
    const char *refusal = stax_prebuilt_refusal("aarch64-unknown-linux-gnu", false, "generic",
                                                "+neon", why, sizeof why);
    ck_assert_msg(refusal && strstr(refusal, "aarch64-unknown-linux-gnu"), "%s",
                  refusal ? refusal : "(used)");
    ck_assert_ptr_nonnull(
        stax_prebuilt_refusal(triple, false, "avx10", sapphire_rapids, why, sizeof why));
    ck_assert_ptr_nonnull(stax_prebuilt_refusal(triple, false, NULL, sapphire_rapids, why,
                                                sizeof why)); /* no library at all */
}
END_TEST

START_TEST(the_setting_takes_on_off_or_unset_and_names_itself_otherwise) {
    bool use = false;
    char error[256] = "";
    ck_assert_int_eq(stax_prebuilt_setting(NULL, &use, error, sizeof error), TP_PLUGIN_OK);
    ck_assert(use);
    ck_assert_int_eq(stax_prebuilt_setting("on", &use, error, sizeof error), TP_PLUGIN_OK);
    ck_assert(use);
    ck_assert_int_eq(stax_prebuilt_setting("off", &use, error, sizeof error), TP_PLUGIN_OK);
    ck_assert(!use);
    ck_assert_int_eq(stax_prebuilt_setting("0", &use, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_str_eq(error, "stax: STAX_PREBUILT_KERNELS is '0'; use on or off (or unset it)");
}
END_TEST

START_TEST(file_names_say_family_and_variant) {
    char name[128];
    stax_prebuilt_file_name(false, "avx512", name, sizeof name);
    ck_assert_str_eq(name, "stax-gemm-avx512.prebuilt");
    stax_prebuilt_file_name(true, "avx2", name, sizeof name);
    ck_assert_str_eq(name, "stax-gemm-avx2-legacy.prebuilt");
    stax_prebuilt_file_name(true, NULL, name, sizeof name);
    ck_assert_str_eq(name, "stax-gemm-legacy.prebuilt");
}
END_TEST

TP_TEST_SUITE(stax_prebuilt) {
    Suite *s = suite_create("stax_prebuilt");
    TCase *c = tcase_create("prebuilt");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, each_native_family_loads_its_prebuilt_object_and_matches_a_double_product);
    tcase_add_test(c, prebuilt_kernels_off_compiles_the_library_and_matches_a_double_product);
    tcase_add_test(c, a_truncated_copy_falls_back_to_compiling_and_says_so);
    tcase_add_test(c, a_copy_with_a_changed_key_falls_back_to_compiling_and_says_so);
    tcase_add_test(c, a_corrupt_object_falls_back_to_compiling_and_says_so);
    tcase_add_test(c, an_object_the_jit_refuses_falls_back_to_compiling_and_says_so);
    tcase_add_test(c, an_object_lacking_the_kernels_falls_back_to_compiling_and_says_so);
    tcase_add_test(c, a_group_writable_file_is_not_trusted_and_says_how_to_fix_it);
    tcase_add_test(c, a_missing_file_falls_back_to_compiling);
    tcase_add_test(c, a_bad_setting_fails_the_compile_naming_the_variable);
    tcase_add_test(c, dumping_the_ir_compiles_the_library);
    tcase_add_test(c, a_forced_family_the_host_lacks_compiles_for_the_host);
    suite_add_tcase(s, c);
    TCase *d = tcase_create("decision");
    tcase_add_test(d, an_avx2_host_never_gets_the_avx512_object);
    tcase_add_test(d, an_avx512_host_runs_every_family_object);
    tcase_add_test(d, a_host_without_avx_gets_only_the_generic_object);
    tcase_add_test(d, another_architecture_or_an_unknown_family_has_no_object);
    tcase_add_test(d, the_setting_takes_on_off_or_unset_and_names_itself_otherwise);
    tcase_add_test(d, file_names_say_family_and_variant);
    suite_add_tcase(s, d);
    return s;
}
