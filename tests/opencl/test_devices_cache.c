/* Device selection (index, name substring, platform), option errors, probe
 * with no ICD visible, the program binary cache (hit, corrupt entry is a
 * miss) and the per-buffer allocation limit. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ocl_harness.h"
#include "tp_test.h"

static tp_graph *small_graph(void) {
    tp_graph *graph = oclt_graph("small");
    const int64_t dims[] = {17};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 1, dims);
    tp_value_id y = oclt_unary(graph, "cos", x);
    oclt_outputs(graph, &y, 1);
    return graph;
}

/* The error text of compiling the small graph with `options`. */
static tp_status compile_with(const char *const *options, int count, char *error, size_t size) {
    tp_graph *graph = small_graph();
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("opencl", &backend), TP_OK);
    tp_executable *executable = NULL;
    tp_status status = tp_backend_compile(backend, graph, NULL, 0, options, count, &executable);
    snprintf(error, size, "%s", status == TP_OK ? "" : tp_last_error());
    tp_executable_destroy(executable);
    tp_graph_destroy(graph);
    return status;
}

START_TEST(device_by_index_runs) {
    tp_graph *graph = small_graph();
    tp_tensor *input = oclt_random(TP_F32, 1, (const int64_t[]){17}, 1);
    const char *options[] = {"device=0", "platform=0"};
    oclt_check_against_eager(graph, &input, 1, options, 2);
    tp_tensor_release(input);
    tp_graph_destroy(graph);
}
END_TEST

/* An unmatched device lists the devices ("0: NAME (PLATFORM)"); a substring
 * of the first name then selects it. */
START_TEST(device_by_name_substring_runs) {
    char error[2048];
    const char *bad[] = {"device=no-such-device-anywhere"};
    ck_assert_int_ne(compile_with(bad, 1, error, sizeof error), TP_OK);
    const char *listed = strstr(error, "0: ");
    ck_assert_msg(listed != NULL, "no device list in: %s", error);
    char name[64];
    snprintf(name, sizeof name, "%.5s", listed + 3); /* a prefix of the first name */
    char option[96];
    snprintf(option, sizeof option, "device=%s", name);
    tp_graph *graph = small_graph();
    tp_tensor *input = oclt_random(TP_F32, 1, (const int64_t[]){17}, 2);
    const char *options[] = {option};
    oclt_check_against_eager(graph, &input, 1, options, 1);
    tp_tensor_release(input);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(unknown_platform_is_explained) {
    char error[2048];
    const char *options[] = {"platform=no-such-platform"};
    ck_assert_int_ne(compile_with(options, 1, error, sizeof error), TP_OK);
    ck_assert_msg(strstr(error, "no OpenCL platform matches platform=no-such-platform") &&
                      strstr(error, "platforms: 0: "),
                  "%s", error);
}
END_TEST

START_TEST(unknown_option_is_named) {
    char error[2048];
    const char *options[] = {"tile=32"};
    ck_assert_int_ne(compile_with(options, 1, error, sizeof error), TP_OK);
    ck_assert_msg(strstr(error, "unknown option 'tile'") && strstr(error, "platform") &&
                      strstr(error, "device"),
                  "%s", error);
}
END_TEST

/* With OCL_ICD_VENDORS pointing at an empty folder the loader finds no
 * ICD; the lookup fails with the explained reason. Run in a child so the
 * environment change stays there. */
START_TEST(probe_without_icd_explains) {
    char empty[4200];
    snprintf(empty, sizeof empty, "%s/no-icds", tp_test_temp_dir());
    mkdir(empty, 0700);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(fds[0]);
        setenv("OCL_ICD_VENDORS", empty, 1);
        tp_backend *backend = NULL;
        tp_status status = tp_backend_lookup("opencl", &backend);
        const char *text = status == TP_OK ? "(loaded)" : tp_last_error();
        ssize_t written = write(fds[1], text, strlen(text));
        _exit(written > 0 ? 0 : 1);
    }
    close(fds[1]);
    char reason[2048] = "";
    ssize_t length = read(fds[0], reason, sizeof reason - 1);
    reason[length > 0 ? length : 0] = '\0';
    close(fds[0]);
    int child_status = 0;
    waitpid(child, &child_status, 0);
    ck_assert_msg(strstr(reason, "no OpenCL platform found (install an ICD such as "
                                 "pocl-opencl-icd or your GPU vendor's)"),
                  "%s", reason);
}
END_TEST

START_TEST(allocation_over_device_limit_names_both_sizes) {
    tp_graph *graph = oclt_graph("huge");
    const int64_t dims[] = {(int64_t)1 << 40}; /* 4 TiB of f32: never allocated */
    tp_value_id x = oclt_input(graph, "x", TP_F32, 1, dims);
    tp_value_id y = oclt_unary(graph, "exp", x);
    oclt_outputs(graph, &y, 1);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("opencl", &backend), TP_OK);
    tp_executable *executable = NULL;
    ck_assert_int_ne(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable), TP_OK);
    const char *error = tp_last_error();
    ck_assert_msg(strstr(error, "needs 4398046511104 bytes") &&
                      strstr(error, "CL_DEVICE_MAX_MEM_ALLOC_SIZE") && strstr(error, "at most "),
                  "%s", error);
    tp_graph_destroy(graph);
}
END_TEST

/* ---- the program binary cache ---- */

static int cache_hits, cache_misses;

static void count_cache_lines(tp_log_level level, const char *message, void *user_data) {
    (void)level, (void)user_data;
    if (strstr(message, "program cache hit")) cache_hits++;
    if (strstr(message, "program cache miss")) cache_misses++;
}

/* A fresh cache folder for this test (the suite's is shared). */
static void fresh_cache(char *folder, size_t size, const char *name) {
    snprintf(folder, size, "%s/%s", tp_test_temp_dir(), name);
    setenv("TP_CACHE_DIR", folder, 1);
    tp_set_log_handler(count_cache_lines, NULL);
    tp_set_log_level(TP_LOG_DEBUG);
    cache_hits = cache_misses = 0;
}

static void compile_small(void) {
    char error[2048];
    ck_assert_msg(compile_with(NULL, 0, error, sizeof error) == TP_OK, "%s", error);
}

START_TEST(second_compile_hits_the_binary_cache) {
    char folder[4200];
    fresh_cache(folder, sizeof folder, "cache-hit");
    compile_small();
    ck_assert_int_eq(cache_misses, 1);
    compile_small();
    ck_assert_int_eq(cache_hits, 1);
}
END_TEST

/* Overwrites every entry with bytes that are no valid entry. */
static int corrupt_entries(const char *folder) {
    char path[4400];
    snprintf(path, sizeof path, "%s/opencl", folder);
    DIR *dir = opendir(path);
    ck_assert_ptr_nonnull(dir);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t length = strlen(entry->d_name);
        if (length < 6 || strcmp(entry->d_name + length - 6, ".entry") != 0) continue;
        char file_path[4800];
        snprintf(file_path, sizeof file_path, "%s/%s", path, entry->d_name);
        FILE *file = fopen(file_path, "wb");
        ck_assert_ptr_nonnull(file);
        fputs("TPCACHE2 this is not a cache entry", file);
        fclose(file);
        count++;
    }
    closedir(dir);
    return count;
}

START_TEST(corrupt_cache_entry_is_a_miss_and_is_rewritten) {
    char folder[4200];
    fresh_cache(folder, sizeof folder, "cache-corrupt");
    compile_small();
    ck_assert_int_eq(corrupt_entries(folder), 1);
    compile_small(); /* still compiles: the entry is a miss */
    ck_assert_int_eq(cache_misses, 2);
    ck_assert_int_eq(cache_hits, 0);
    compile_small(); /* and was written again */
    ck_assert_int_eq(cache_hits, 1);
}
END_TEST

TP_TEST_SUITE(opencl_devices_cache) {
    oclt_environment();
    Suite *suite = suite_create("opencl_devices_cache");
    TCase *tc = tcase_create("devices_cache");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, device_by_index_runs);
    tcase_add_test(tc, device_by_name_substring_runs);
    tcase_add_test(tc, unknown_platform_is_explained);
    tcase_add_test(tc, unknown_option_is_named);
    tcase_add_test(tc, probe_without_icd_explains);
    tcase_add_test(tc, allocation_over_device_limit_names_both_sizes);
    tcase_add_test(tc, second_compile_hits_the_binary_cache);
    tcase_add_test(tc, corrupt_cache_entry_is_a_miss_and_is_rewritten);
    suite_add_tcase(suite, tc);
    return suite;
}
