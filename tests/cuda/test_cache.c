/* The CUBIN disk cache (plugins/cuda/cuda_cache.c, compiled into this
 * suite): round trip, atomic files, corrupt or truncated entries are misses
 * and are removed, TP_CACHE_DIR decides the folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../plugins/cuda/cuda_cache.h"
#include "cuda_harness.h"

static char folder[4096];

static void fresh_folder(const char *name) {
    snprintf(folder, sizeof folder, "%s/%s", tp_test_temp_dir(), name);
    mkdir(folder, 0755);
}

static void entry(const char *key, char *path, size_t size) {
    snprintf(path, size, "%s/%s.cubin", folder, key);
}

START_TEST(stored_entry_loads_back_identical) {
    fresh_folder("roundtrip");
    const char payload[] = "\x7f"
                           "ELF fake cubin bytes";
    ck_assert(cu_cache_store(folder, "k1", payload, sizeof payload));
    size_t size = 0;
    char *loaded = cu_cache_load(folder, "k1", &size);
    ck_assert_ptr_nonnull(loaded);
    ck_assert_uint_eq(size, sizeof payload);
    ck_assert_mem_eq(loaded, payload, sizeof payload);
    free(loaded);
}
END_TEST

START_TEST(missing_entry_is_a_miss) {
    fresh_folder("missing");
    size_t size = 0;
    ck_assert_ptr_null(cu_cache_load(folder, "absent", &size));
}
END_TEST

START_TEST(corrupt_entry_is_a_miss_and_is_removed) {
    fresh_folder("corrupt");
    const char payload[64] = "some cubin";
    ck_assert(cu_cache_store(folder, "k2", payload, sizeof payload));
    char path[4200];
    entry("k2", path, sizeof path);
    FILE *file = fopen(path, "r+b");
    ck_assert_ptr_nonnull(file);
    fseek(file, 30, SEEK_SET);
    fputc('#', file); /* flips a payload byte: the checksum no longer matches */
    fclose(file);
    size_t size = 0;
    ck_assert_ptr_null(cu_cache_load(folder, "k2", &size));
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(truncated_entry_is_a_miss) {
    fresh_folder("truncated");
    const char payload[64] = "some cubin";
    ck_assert(cu_cache_store(folder, "k3", payload, sizeof payload));
    char path[4200];
    entry("k3", path, sizeof path);
    ck_assert_int_eq(truncate(path, 20), 0);
    size_t size = 0;
    ck_assert_ptr_null(cu_cache_load(folder, "k3", &size));
}
END_TEST

START_TEST(garbage_file_is_a_miss) {
    fresh_folder("garbage");
    char path[4200];
    entry("k4", path, sizeof path);
    FILE *file = fopen(path, "wb");
    fputs("not a cache entry at all, just text", file);
    fclose(file);
    size_t size = 0;
    ck_assert_ptr_null(cu_cache_load(folder, "k4", &size));
}
END_TEST

START_TEST(store_leaves_no_temporary_files) {
    fresh_folder("atomic");
    ck_assert(cu_cache_store(folder, "k5", "abc", 3));
    ck_assert(cu_cache_store(folder, "k5", "abcd", 4)); /* replaced atomically */
    size_t size = 0;
    char *loaded = cu_cache_load(folder, "k5", &size);
    ck_assert_uint_eq(size, 4);
    free(loaded);
    char command[4300];
    snprintf(command, sizeof command, "test $(ls -A '%s' | wc -l) -eq 1", folder);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

START_TEST(cache_folder_follows_tp_cache_dir) {
    char expected[4200], got[4200];
    fresh_folder("env");
    setenv("TP_CACHE_DIR", folder, 1);
    ck_assert(cu_cache_folder(got, sizeof got));
    unsetenv("TP_CACHE_DIR");
    snprintf(expected, sizeof expected, "%s/cuda", folder);
    ck_assert_str_eq(got, expected);
    struct stat info;
    ck_assert_int_eq(stat(expected, &info), 0);
    ck_assert(S_ISDIR(info.st_mode));
}
END_TEST

TP_TEST_SUITE(cuda_cache) {
    Suite *suite = suite_create("cuda_cache");
    TCase *cases = tcase_create("cache");
    tcase_add_test(cases, stored_entry_loads_back_identical);
    tcase_add_test(cases, missing_entry_is_a_miss);
    tcase_add_test(cases, corrupt_entry_is_a_miss_and_is_removed);
    tcase_add_test(cases, truncated_entry_is_a_miss);
    tcase_add_test(cases, garbage_file_is_a_miss);
    tcase_add_test(cases, store_leaves_no_temporary_files);
    tcase_add_test(cases, cache_folder_follows_tp_cache_dir);
    suite_add_tcase(suite, cases);
    return suite;
}
