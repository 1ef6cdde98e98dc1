/* stax's max-autotune mode: an unknown mode is refused naming the known
 * ones; the tuned executables compute what a double-precision loop written
 * here computes; the choices are measured once and then read from the
 * tuning cache (counted through the log lines stax writes); a corrupted
 * cache entry is ignored with a warning and measured again; the cache key
 * (stax_autotune_entry.c, compiled into this suite) changes with the CPU
 * name and the features, and the stored text is parsed strictly. */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "stax_autotune.h"
#include "stax_harness.h"

/* C = A @ B (B stored transposed when b_transposed), `batch` products. */
typedef struct product {
    int64_t batch, m, k, n;
    bool b_transposed, relu;
} product;

static tp_value_id add_node(tp_graph *g, const char *op, const tp_value_id *in, int n,
                            const tp_attrs *attrs) {
    tp_value_id id;
    tp_status status = tp_graph_add_node(g, op, in, n, attrs, NULL, &id);
    ck_assert_msg(status == TP_OK, "%s: %s", op, tp_last_error());
    return id;
}

static int operand_dims(const product *p, bool is_a, int64_t *dims) {
    int nd = 0;
    if (p->batch > 1) dims[nd++] = p->batch;
    if (is_a) {
        dims[nd++] = p->m, dims[nd++] = p->k;
    } else if (p->b_transposed) {
        dims[nd++] = p->n, dims[nd++] = p->k;
    } else {
        dims[nd++] = p->k, dims[nd++] = p->n;
    }
    return nd;
}

static tp_graph *build(const product *p) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("autotune", &g), TP_OK);
    tp_value_id operands[2];
    for (int i = 0; i < 2; i++) {
        tp_type t = {.dtype = TP_F32};
        t.ndim = operand_dims(p, i == 0, t.dims);
        ck_assert_int_eq(tp_graph_add_input(g, i == 0 ? "a" : "b", &t, &operands[i]), TP_OK);
    }
    if (p->b_transposed) {
        tp_attrs attrs = TP_ATTRS_INIT;
        int nd = p->batch > 1 ? 3 : 2;
        attrs.dim0 = nd - 2, attrs.dim1 = nd - 1;
        operands[1] = add_node(g, "transpose", &operands[1], 1, &attrs);
    }
    tp_value_id y = add_node(g, "matmul", operands, 2, NULL);
    if (p->relu) y = add_node(g, "relu", &y, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* |y - sum| <= 1e-5 * sum |a||b| + 1e-6 against the double loop. */
static void check_against_loop(const product *p, tp_tensor *const *in, const tp_tensor *y,
                               const char *what) {
    const float *a = tp_tensor_data(in[0]), *b = tp_tensor_data(in[1]), *c = tp_tensor_data(y);
    ck_assert_int_eq(tp_tensor_numel(y), p->batch * p->m * p->n);
    for (int64_t bi = 0; bi < p->batch; bi++)
        for (int64_t i = 0; i < p->m; i++)
            for (int64_t j = 0; j < p->n; j++) {
                double sum = 0, magnitude = 0;
                for (int64_t k = 0; k < p->k; k++) {
                    double bv = p->b_transposed ? b[(bi * p->n + j) * p->k + k]
                                                : b[(bi * p->k + k) * p->n + j];
                    double term = a[(bi * p->m + i) * p->k + k] * bv;
                    sum += term;
                    magnitude += fabs(term);
                }
                if (p->relu && sum < 0) sum = 0;
                double got = c[(bi * p->m + i) * p->n + j];
                ck_assert_msg(fabs(got - sum) <= 1e-5 * magnitude + 1e-6,
                              "%s: batch %lld, C[%lld][%lld] is %.9g, the loop gives %.9g", what,
                              (long long)bi, (long long)i, (long long)j, got, sum);
            }
}

/* What stax logged: tuning runs, cache reads, ignored entries. */
typedef struct log_counts {
    int measured, from_cache, ignored, not_cached;
} log_counts;

static void count_lines(tp_log_level level, const char *message, void *user_data) {
    (void)level;
    log_counts *counts = user_data;
    if (strstr(message, "max-autotune:") == NULL) return;
    if (strstr(message, "candidates")) counts->measured++;
    if (strstr(message, "from the tuning cache")) counts->from_cache++;
    if (strstr(message, "ignoring tuning cache entry")) counts->ignored++;
    if (strstr(message, "not cached")) counts->not_cached++;
}

/* A cache folder of this test's own, so no other test's entries are seen. */
static void fresh_cache_dir(const char *name, char *path, size_t size) {
    snprintf(path, size, "%s/autotune-%s", tp_test_temp_dir(), name);
    setenv("TP_CACHE_DIR", path, 1);
}

/* Compiles and runs `p` in `mode` (with `extra`, an option or NULL) with the
 * log counted; checks the result. */
static void run_product_with(const product *p, const char *mode, const char *extra,
                             log_counts *counts) {
    tp_graph *g = build(p);
    tp_tensor *inputs[2];
    for (int i = 0; i < 2; i++) {
        int64_t dims[3];
        int nd = operand_dims(p, i == 0, dims);
        inputs[i] = stax_test_random(TP_F32, nd, dims, 21 + (uint64_t)i);
    }
    char option[64];
    snprintf(option, sizeof option, "mode=%s", mode);
    const char *options[] = {option, "threads=2", extra};
    tp_log_level level = tp_get_log_level();
    tp_set_log_handler(count_lines, counts);
    tp_set_log_level(TP_LOG_DEBUG);
    tp_tensor *y[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, options, extra ? 3 : 2, y);
    tp_set_log_handler(NULL, NULL);
    tp_set_log_level(level);
    ck_assert_msg(status == TP_OK, "%s: %s", mode, tp_last_error());
    char what[256];
    snprintf(what, sizeof what, "%s, batch %lld, m %lld, k %lld, n %lld%s%s", mode,
             (long long)p->batch, (long long)p->m, (long long)p->k, (long long)p->n,
             p->b_transposed ? ", B^T" : "", p->relu ? ", relu" : "");
    check_against_loop(p, inputs, y[0], what);
    tp_tensor_release(y[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}

static void run_product(const product *p, const char *mode, log_counts *counts) {
    run_product_with(p, mode, NULL, counts);
}

START_TEST(an_unknown_mode_is_an_error_naming_it_and_the_known_modes) {
    stax_test_cache_dir();
    product p = {.batch = 1, .m = 4, .k = 4, .n = 4};
    tp_graph *g = build(&p);
    int64_t dims[2] = {4, 4};
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, dims, 1),
                            stax_test_random(TP_F32, 2, dims, 2)};
    const char *options[] = {"mode=turbo"};
    tp_tensor *y[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, options, 1, y);
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "unknown mode 'turbo'") != NULL, "%s", tp_last_error());
    ck_assert_msg(strstr(tp_last_error(), "default, max-autotune") != NULL, "%s", tp_last_error());
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(the_default_mode_measures_nothing) {
    char path[4200];
    fresh_cache_dir("default", path, sizeof path);
    log_counts counts = {0};
    product p = {.batch = 1, .m = 40, .k = 50, .n = 60};
    run_product(&p, "default", &counts);
    ck_assert_int_eq(counts.measured, 0);
    ck_assert_int_eq(counts.from_cache, 0);
}
END_TEST

/* Odd sizes, k past the k blocks, a transposed B, batches, an epilogue. */
static const product shapes[] = {
    {.batch = 1, .m = 64, .k = 64, .n = 64},
    {.batch = 1, .m = 23, .k = 300, .n = 50},
    {.batch = 1, .m = 300, .k = 129, .n = 17, .relu = true},
    {.batch = 1, .m = 37, .k = 70, .n = 130, .b_transposed = true},
    {.batch = 6, .m = 33, .k = 20, .n = 40},
    {.batch = 4, .m = 40, .k = 16, .n = 40, .b_transposed = true, .relu = true},
};

START_TEST(max_autotune_computes_what_a_double_loop_computes) {
    char path[4200];
    fresh_cache_dir("results", path, sizeof path);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        log_counts counts = {0};
        run_product(&shapes[s], "max-autotune", &counts);
        ck_assert_msg(counts.measured == 1, "shape %d: %d tuning runs", (int)s, counts.measured);
        run_product(&shapes[s], "default", &counts);
    }
}
END_TEST

START_TEST(a_second_compile_reads_the_tuning_cache) {
    char path[4200];
    fresh_cache_dir("second", path, sizeof path);
    product p = {.batch = 1, .m = 50, .k = 70, .n = 90};
    log_counts first = {0}, second = {0};
    run_product(&p, "max-autotune", &first);
    ck_assert_int_eq(first.measured, 1);
    ck_assert_int_eq(first.from_cache, 0);
    run_product(&p, "max-autotune", &second);
    ck_assert_int_eq(second.measured, 0);
    ck_assert_int_eq(second.from_cache, 1);
    /* another shape is another entry */
    product other = {.batch = 1, .m = 51, .k = 70, .n = 90};
    log_counts third = {0};
    run_product(&other, "max-autotune", &third);
    ck_assert_int_eq(third.measured, 1);
}
END_TEST

START_TEST(a_search_the_budget_cuts_short_is_not_cached) {
    char path[4200];
    fresh_cache_dir("budget", path, sizeof path);
    /* 2 * 384^3 = 113 MFLOP: measuring the defaults alone takes longer than
     * 1 ms on any two cores of today, so the search is always cut short */
    product p = {.batch = 1, .m = 384, .k = 384, .n = 384};
    log_counts first = {0}, second = {0};
    run_product_with(&p, "max-autotune", "autotune_budget_ms=1", &first);
    ck_assert_int_eq(first.not_cached, 1);
    run_product_with(&p, "max-autotune", "autotune_budget_ms=1", &second);
    ck_assert_int_eq(second.from_cache, 0);
    ck_assert_int_eq(second.not_cached, 1);
}
END_TEST

/* Overwrites the middle of every entry file under `folder`. */
static int corrupt_entries(const char *folder) {
    DIR *dir = opendir(folder);
    ck_assert_msg(dir != NULL, "no tuning cache folder %s", folder);
    int count = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char file[4700];
        snprintf(file, sizeof file, "%s/%s", folder, e->d_name);
        int fd = open(file, O_RDWR);
        ck_assert_int_ge(fd, 0);
        off_t end = lseek(fd, 0, SEEK_END);
        ck_assert_int_eq(pwrite(fd, "garbage!", 8, end / 2), 8);
        close(fd);
        count++;
    }
    closedir(dir);
    return count;
}

START_TEST(a_corrupted_tuning_cache_entry_is_ignored_and_measured_again) {
    char path[4200], folder[4300];
    fresh_cache_dir("corrupt", path, sizeof path);
    snprintf(folder, sizeof folder, "%s/stax-autotune", path);
    product p = {.batch = 1, .m = 45, .k = 33, .n = 70};
    log_counts first = {0}, second = {0}, third = {0};
    run_product(&p, "max-autotune", &first);
    ck_assert_int_eq(first.measured, 1);
    ck_assert_int_eq(corrupt_entries(folder), 1);
    run_product(&p, "max-autotune", &second);
    ck_assert_int_eq(second.ignored, 1);
    ck_assert_int_eq(second.from_cache, 0);
    ck_assert_int_eq(second.measured, 1);
    /* measuring again wrote a good entry in its place */
    run_product(&p, "max-autotune", &third);
    ck_assert_int_eq(third.ignored, 0);
    ck_assert_int_eq(third.from_cache, 1);
}
END_TEST

START_TEST(the_key_changes_with_the_cpu_and_its_features) {
    stax_gemm g = {.batch = 1,
                   .m = 64,
                   .n = 32,
                   .k = 16,
                   .a_rs = 16,
                   .a_cs = 1,
                   .b_rs = 32,
                   .b_cs = 1,
                   .epilogue = -1};
    char base[1024], again[1024], cpu[1024], features[1024], transposed[1024];
    ck_assert(stax_autotune_key("znver3", "+avx2,+fma", "avx2,generic", 2, &g, base, sizeof base));
    ck_assert(
        stax_autotune_key("znver3", "+avx2,+fma", "avx2,generic", 2, &g, again, sizeof again));
    ck_assert_str_eq(base, again);
    ck_assert(stax_autotune_key("znver4", "+avx2,+fma", "avx2,generic", 2, &g, cpu, sizeof cpu));
    ck_assert_str_ne(base, cpu);
    ck_assert(stax_autotune_key("znver3", "+avx2,+fma,+avx512f", "avx2,generic", 2, &g, features,
                                sizeof features));
    ck_assert_str_ne(base, features);
    g.b_rs = 1, g.b_cs = 16; /* B read transposed */
    ck_assert(stax_autotune_key("znver3", "+avx2,+fma", "avx2,generic", 2, &g, transposed,
                                sizeof transposed));
    ck_assert_str_ne(base, transposed);
    char small[16];
    ck_assert(!stax_autotune_key("znver3", "+avx2", "avx2", 2, &g, small, sizeof small));
}
END_TEST

START_TEST(a_choice_reads_back_as_written_and_nothing_else_parses) {
    stax_gemm_choice choice = {
        .family = "avx2", .kc = 128, .mc = 480, .threads = 2, .split = STAX_GEMM_SPLIT_COLUMNS};
    char text[256], why[128];
    stax_gemm_choice_format(&choice, text, sizeof text);
    ck_assert_str_eq(text, "family avx2; kc 128; mc 480; split columns; threads 2\n");
    stax_gemm_choice back;
    ck_assert(stax_gemm_choice_parse(text, strlen(text), &back, why, sizeof why));
    ck_assert_str_eq(back.family, "avx2");
    ck_assert_int_eq(back.kc, 128);
    ck_assert_int_eq(back.mc, 480);
    ck_assert_int_eq(back.threads, 2);
    ck_assert_int_eq(back.split, STAX_GEMM_SPLIT_COLUMNS);
    static const char *const refused[] = {
        "family avx2; kc 0; mc 480; split columns; threads 2\n",
        "family avx2; kc 128; mc 480; split sideways; threads 2\n",
        "family avx2; kc 128; mc 480; split auto; threads 2\n",
        "family avx2; kc 128; mc 480; split rows; threads 9999\n",
        "family avx2; kc 128; mc 480; split rows; threads 2\nextra",
        "family AVX2; kc 128; mc 480; split rows; threads 2\n",
        "\x7f\x45LF garbage",
        "",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        ck_assert_msg(
            !stax_gemm_choice_parse(refused[i], strlen(refused[i]), &back, why, sizeof why),
            "parsed: %s", refused[i]);
}
END_TEST

TP_TEST_SUITE(stax_autotune) {
    Suite *s = suite_create("stax_autotune");
    TCase *c = tcase_create("autotune");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, an_unknown_mode_is_an_error_naming_it_and_the_known_modes);
    tcase_add_test(c, the_default_mode_measures_nothing);
    tcase_add_test(c, max_autotune_computes_what_a_double_loop_computes);
    tcase_add_test(c, a_second_compile_reads_the_tuning_cache);
    tcase_add_test(c, a_corrupted_tuning_cache_entry_is_ignored_and_measured_again);
    tcase_add_test(c, a_search_the_budget_cuts_short_is_not_cached);
    tcase_add_test(c, the_key_changes_with_the_cpu_and_its_features);
    tcase_add_test(c, a_choice_reads_back_as_written_and_nothing_else_parses);
    suite_add_tcase(s, c);
    return s;
}
