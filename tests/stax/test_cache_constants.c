/* stax's disk cache and a graph's constants: the cached object holds the
 * kernels' code, not the weights (they are copied and packed into each
 * executable at compile), so a compile from the disk cache computes with the
 * constants of the graph it is given, whether they are the ones of the
 * compile that wrote the entry or new ones. Checked against a matmul done
 * here in double precision. */
#include "stax_harness.h"

enum { ROWS = 8, DEPTH = 64, COLUMNS = 48 };

static char compile_sources[2048]; /* the compile-phases log lines seen */

static void keep_compile_phases(tp_log_level level, const char *message, void *user_data) {
    (void)level, (void)user_data;
    if (!strstr(message, "compile phases")) return;
    size_t used = strlen(compile_sources);
    snprintf(compile_sources + used, sizeof compile_sources - used, "%s\n", message);
}

/* relu(x @ w) with w a constant of the graph (packed at compile). */
static tp_graph *relu_of_product(const tp_tensor *w) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("cached_weights", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, (int64_t[]){ROWS, DEPTH});
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.data = (tp_tensor *)w;
    tp_value_id weight = stax_test_node(g, "constant", NULL, 0, &attrs);
    tp_value_id product = stax_test_node(g, "matmul", (tp_value_id[]){x, weight}, 2, NULL);
    tp_value_id y = stax_test_node(g, "relu", &product, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    return g;
}

/* Compiles relu(x @ w), runs it and checks it against the same in double
 * precision; returns the compile-phases log line. */
static void compile_and_check(const tp_tensor *w, const tp_tensor *x, const char *what) {
    compile_sources[0] = '\0';
    tp_set_log_handler(keep_compile_phases, NULL);
    tp_set_log_level(TP_LOG_DEBUG);
    tp_graph *g = relu_of_product(w);
    tp_tensor *y = NULL;
    tp_status status = stax_test_run("stax", g, (tp_tensor *const *)&x, 1, NULL, 0, &y);
    tp_set_log_handler(NULL, NULL);
    tp_set_log_level(TP_LOG_WARN);
    ck_assert_msg(status == TP_OK, "%s: %s", what, tp_last_error());
    const float *a = tp_tensor_data(x), *b = tp_tensor_data(w), *got = tp_tensor_data(y);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLUMNS; j++) {
            double sum = 0;
            for (int k = 0; k < DEPTH; k++) sum += (double)a[i * DEPTH + k] * b[k * COLUMNS + j];
            double want = sum > 0 ? sum : 0;
            ck_assert_msg(fabs(got[i * COLUMNS + j] - want) <= 1e-5 * fabs(want) + 1e-5,
                          "%s: y[%d][%d] = %.9g, want %.9g", what, i, j, got[i * COLUMNS + j],
                          want);
        }
    tp_tensor_release(y);
    tp_graph_destroy(g);
}

START_TEST(a_compile_from_the_disk_cache_computes_what_the_cold_one_did) {
    stax_test_cache_dir();
    tp_tensor *w = stax_test_random(TP_F32, 2, (int64_t[]){DEPTH, COLUMNS}, 11);
    tp_tensor *x = stax_test_random(TP_F32, 2, (int64_t[]){ROWS, DEPTH}, 12);
    compile_and_check(w, x, "cold");
    ck_assert_msg(strstr(compile_sources, "kernels") && strstr(compile_sources, "(compiled)"),
                  "the first compile did not compile: %s", compile_sources);
    compile_and_check(w, x, "from the disk cache");
    ck_assert_msg(strstr(compile_sources, "(from the disk cache)"),
                  "the second compile did not read the disk cache: %s", compile_sources);
    tp_tensor_release(w);
    tp_tensor_release(x);
}
END_TEST

START_TEST(a_changed_constant_is_used_when_the_object_comes_from_the_disk_cache) {
    stax_test_cache_dir();
    tp_tensor *w = stax_test_random(TP_F32, 2, (int64_t[]){DEPTH, COLUMNS}, 21);
    tp_tensor *other = stax_test_random(TP_F32, 2, (int64_t[]){DEPTH, COLUMNS}, 22);
    tp_tensor *x = stax_test_random(TP_F32, 2, (int64_t[]){ROWS, DEPTH}, 23);
    compile_and_check(w, x, "first weights");
    compile_and_check(other, x, "other weights");
    ck_assert_msg(strstr(compile_sources, "(from the disk cache)"),
                  "the code does not depend on the weights' values, so it should come from "
                  "the disk cache: %s",
                  compile_sources);
    tp_tensor_release(w);
    tp_tensor_release(other);
    tp_tensor_release(x);
}
END_TEST

TP_TEST_SUITE(stax_cache_constants) {
    Suite *s = suite_create("stax_cache_constants");
    TCase *c = tcase_create("cache_constants");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, a_compile_from_the_disk_cache_computes_what_the_cold_one_did);
    tcase_add_test(c, a_changed_constant_is_used_when_the_object_comes_from_the_disk_cache);
    suite_add_tcase(s, c);
    return s;
}
