/* stax's disk cache (TP_CACHE_DIR: a miss writes one entry, a later compile
 * reads it without rewriting, a corrupt entry is a miss and is replaced),
 * its options (unknown option, bad values, dump_ir/dump_asm). */
#include <dirent.h>
#include <sys/stat.h>

#include "stax_harness.h"

static tp_graph *small_graph(const char *name) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create(name, &g), TP_OK);
    tp_type t = {.dtype = TP_F32, .ndim = 2, .dims = {4, 9}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_add_input(g, "x", &t, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(g, "tanh", &x, 1, NULL, NULL, &y), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* The one entry of <cache>/stax (path written into `path`); fails unless exactly one. */
static void only_entry(char *path, size_t size) {
    char folder[4300];
    snprintf(folder, sizeof folder, "%s/stax", getenv("TP_CACHE_DIR"));
    DIR *dir = opendir(folder);
    ck_assert_msg(dir != NULL, "no cache folder %s", folder);
    int count = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (e->d_name[0] != '.') {
            snprintf(path, size, "%.4000s/%.255s", folder, e->d_name);
            count++;
        }
    closedir(dir);
    ck_assert_int_eq(count, 1);
}

static void compile_and_check(tp_graph *g) {
    int64_t shape[2] = {4, 9};
    tp_tensor *x = stax_test_random(TP_F32, 2, shape, 4);
    stax_test_compare(g, &x, 1, 2e-5, 2e-6, "cached graph");
    tp_tensor_release(x);
}

START_TEST(second_compile_reads_the_disk_entry_without_rewriting_it) {
    stax_test_cache_dir();
    tp_graph *g = small_graph("cache_hit");
    compile_and_check(g);
    char path[4400];
    only_entry(path, sizeof path);
    struct stat before, after;
    ck_assert_int_eq(stat(path, &before), 0);
    compile_and_check(g); /* the first executable is gone: this load comes from disk */
    only_entry(path, sizeof path);
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert_msg(before.st_ino == after.st_ino, "a hit must not rewrite the entry");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(corrupt_entry_is_a_miss_and_is_replaced) {
    stax_test_cache_dir();
    tp_graph *g = small_graph("cache_corrupt");
    compile_and_check(g);
    char path[4400];
    only_entry(path, sizeof path);
    struct stat good;
    ck_assert_int_eq(stat(path, &good), 0);
    static const char *const garbage[] = {"", "STAXOBJ1 truncated", "not an object at all"};
    for (int i = 0; i < 3; i++) {
        FILE *file = fopen(path, "wb");
        ck_assert_ptr_nonnull(file);
        fputs(garbage[i], file);
        fclose(file);
        compile_and_check(g); /* still correct */
        struct stat now;
        ck_assert_int_eq(stat(path, &now), 0);
        ck_assert_int_eq(now.st_size, good.st_size); /* replaced by a good entry */
    }
    /* a flipped byte in the payload fails the checksum */
    FILE *file = fopen(path, "r+b");
    ck_assert_ptr_nonnull(file);
    fseek(file, 100, SEEK_SET);
    int c = fgetc(file);
    fseek(file, 100, SEEK_SET);
    fputc(c ^ 0x5a, file);
    fclose(file);
    compile_and_check(g);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(unknown_option_is_an_error_naming_it_and_the_known_ones) {
    stax_test_cache_dir();
    tp_graph *g = small_graph("options");
    tp_executable *exe = NULL;
    const char *options[] = {"threads=1", "frobnicate=3"};
    tp_status status = tp_backend_compile(stax_test_backend("stax"), g, NULL, 0, options, 2, &exe);
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "unknown option 'frobnicate' (known: threads, opt_level, "
                                          "dump_ir, dump_asm, mode, autotune_budget_ms)"),
                  "%s", tp_last_error());
    const char *bad[] = {"opt_level=7"};
    status = tp_backend_compile(stax_test_backend("stax"), g, NULL, 0, bad, 1, &exe);
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "opt_level=7"), "%s", tp_last_error());
    tp_graph_destroy(g);
}
END_TEST

START_TEST(dump_ir_and_dump_asm_write_files) {
    stax_test_cache_dir();
    tp_graph *g = small_graph("dumps");
    char ir[4300], asm_path[4300], opt_ir[4400], opt_asm[4400];
    snprintf(ir, sizeof ir, "%s/k.ll", tp_test_temp_dir());
    snprintf(asm_path, sizeof asm_path, "%s/k.s", tp_test_temp_dir());
    snprintf(opt_ir, sizeof opt_ir, "dump_ir=%s", ir);
    snprintf(opt_asm, sizeof opt_asm, "dump_asm=%s", asm_path);
    const char *options[] = {opt_ir, opt_asm, "opt_level=2"};
    tp_executable *exe = NULL;
    tp_status status = tp_backend_compile(stax_test_backend("stax"), g, NULL, 0, options, 3, &exe);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    tp_executable_destroy(exe);
    struct stat st;
    ck_assert_int_eq(stat(ir, &st), 0);
    ck_assert_int_gt(st.st_size, 100);
    ck_assert_int_eq(stat(asm_path, &st), 0);
    ck_assert_int_gt(st.st_size, 100);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_cache) {
    Suite *s = suite_create("stax_cache");
    TCase *c = tcase_create("cache");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, second_compile_reads_the_disk_entry_without_rewriting_it);
    tcase_add_test(c, corrupt_entry_is_a_miss_and_is_replaced);
    tcase_add_test(c, unknown_option_is_an_error_naming_it_and_the_known_ones);
    tcase_add_test(c, dump_ir_and_dump_asm_write_files);
    suite_add_tcase(s, c);
    return s;
}
