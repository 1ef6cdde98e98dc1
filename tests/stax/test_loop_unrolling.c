/* Which loops stax leaves to LLVM's interleaving and unrolling
 * (stax_emit_core.h, STAX_LOOP_NO_UNROLL): a loop of independent iterations
 * over more than a few elements carries llvm.loop.unroll.disable; a loop
 * that carries a sum from one iteration to the next does not (its chain of
 * adds is what interleaving splits), nor does a loop over a few elements
 * known at compile. Each graph's kernels are dumped at opt_level=0, where
 * LLVM keeps the loops as stax wrote them, and its outputs are checked
 * against sums computed here, at opt_level 0 and at the default 3. */
#include "stax_harness.h"

/* The IR of `g` with inputs `in` compiled at `opt_level` (0 dumps it as
 * written); the first output is returned in *out. */
static char *compiled_ir(const tp_graph *g, tp_tensor *const *in, int n, int opt_level,
                         const char *name, tp_tensor **out) {
    char path[4300], dump[4400], level[32];
    snprintf(path, sizeof path, "%s/%s.ll", tp_test_temp_dir(), name);
    snprintf(dump, sizeof dump, "dump_ir=%s", path);
    snprintf(level, sizeof level, "opt_level=%d", opt_level);
    const char *options[] = {dump, level, "threads=1"};
    ck_assert_msg(stax_test_run("stax", g, in, n, options, 3, out) == TP_OK, "%s", tp_last_error());
    return stax_test_read_text(path);
}

/* Where the line holding `p` starts. */
static const char *line_start(const char *ir, const char *p) {
    while (p > ir && p[-1] != '\n') p--;
    return p;
}

/* Back-edges of stax's loops ("br label %lhN" right after the store of the
 * incremented counter %lnN; the first branch to lhN enters the loop): how
 * many carry loop metadata and how many do not. */
static void count_back_edges(const char *ir, int *tagged, int *plain) {
    *tagged = *plain = 0;
    for (const char *p = strstr(ir, "br label %lh"); p; p = strstr(p + 1, "br label %lh")) {
        const char *start = line_start(ir, p);
        if (start == ir || strncmp(line_start(ir, start - 1), "  store i64 %ln", 15) != 0) continue;
        const char *line_end = strchr(p, '\n'), *tag = strstr(p, "!llvm.loop");
        if (tag && (!line_end || tag < line_end))
            (*tagged)++;
        else
            (*plain)++;
    }
}

static tp_value_id input(tp_graph *g, const char *name, int64_t rows, int64_t columns) {
    tp_type type = {.dtype = TP_F32, .ndim = 2, .dims = {rows, columns}};
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_input(g, name, &type, &id), TP_OK);
    return id;
}

START_TEST(independent_iterations_are_not_unrolled) {
    stax_test_cache_dir();
    /* y = x * x over [8, 1000] x [1000] (a row broadcast: not one flat loop) */
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("squares", &g), TP_OK);
    tp_value_id x = input(g, "x", 8, 1000);
    tp_type row_type = {.dtype = TP_F32, .ndim = 1, .dims = {1000}};
    tp_value_id row;
    ck_assert_int_eq(tp_graph_add_input(g, "row", &row_type, &row), TP_OK);
    tp_value_id y = stax_test_node(g, "mul", (tp_value_id[]){x, row}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    int64_t dims[2] = {8, 1000}, row_dims[1] = {1000};
    tp_tensor *in[2] = {stax_test_random(TP_F32, 2, dims, 1),
                        stax_test_random(TP_F32, 1, row_dims, 2)};
    for (int level = 0; level <= 3; level += 3) {
        tp_tensor *out = NULL;
        char *ir = compiled_ir(g, in, 2, level, level ? "squares3" : "squares0", &out);
        const float *a = tp_tensor_data(in[0]), *b = tp_tensor_data(in[1]),
                    *got = tp_tensor_data(out);
        for (int64_t i = 0; i < 8000; i++)
            ck_assert_msg(got[i] == a[i] * b[i % 1000], "opt_level %d: y[%lld] = %.9g, want %.9g",
                          level, (long long)i, got[i], a[i] * b[i % 1000]);
        ck_assert_ptr_nonnull(strstr(ir, "llvm.loop.unroll.disable"));
        if (level == 0) {
            int tagged, plain;
            count_back_edges(ir, &tagged, &plain);
            ck_assert_msg(tagged >= 1 && plain == 0, "%d loops tagged, %d not", tagged, plain);
        }
        free(ir);
        tp_tensor_release(out);
    }
    tp_tensor_release(in[0]);
    tp_tensor_release(in[1]);
    tp_graph_destroy(g);
}
END_TEST

/* Row sums of x [rows, columns] (axis 1), checked within f32 rounding. */
static void check_row_sums(const tp_tensor *x, const tp_tensor *y, int64_t rows, int64_t columns) {
    const float *a = tp_tensor_data(x), *got = tp_tensor_data(y);
    for (int64_t r = 0; r < rows; r++) {
        double want = 0, magnitude = 0;
        for (int64_t c = 0; c < columns; c++) {
            want += a[r * columns + c];
            magnitude += fabs(a[r * columns + c]);
        }
        ck_assert_msg(fabs(got[r] - want) <= 1e-6 * magnitude + 1e-7,
                      "sum of row %lld = %.9g, want %.9g", (long long)r, got[r], want);
    }
}

START_TEST(a_loop_that_carries_a_sum_keeps_llvm_unrolling) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("row_sums", &g), TP_OK);
    tp_value_id x = input(g, "x", 8, 1000);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = 1;
    attrs.axes[0] = 1;
    tp_value_id y = stax_test_node(g, "sum", &x, 1, &attrs);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    int64_t dims[2] = {8, 1000};
    tp_tensor *in = stax_test_random(TP_F32, 2, dims, 3);
    for (int level = 0; level <= 3; level += 3) {
        tp_tensor *out = NULL;
        char *ir = compiled_ir(g, &in, 1, level, level ? "sums3" : "sums0", &out);
        check_row_sums(in, out, 8, 1000);
        if (level == 0) {
            int tagged, plain;
            count_back_edges(ir, &tagged, &plain);
            ck_assert_msg(plain >= 1, "the loop that adds up a row is tagged (%d tagged)", tagged);
        }
        free(ir);
        tp_tensor_release(out);
    }
    tp_tensor_release(in);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(a_loop_over_a_few_elements_keeps_llvm_unrolling) {
    stax_test_cache_dir();
    /* y = t + t, t = transpose(x) for x [3, 500]: y [500, 3] is written a
     * row of 3 at a time, reading x down its columns; the loop along a row
     * (a chunk's part of it) runs at most 3 times, known at compile */
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("narrow", &g), TP_OK);
    tp_value_id x = input(g, "x", 3, 500);
    tp_value_id t = stax_test_swap_last_two(g, x, 2);
    tp_value_id y = stax_test_node(g, "add", (tp_value_id[]){t, t}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    int64_t dims[2] = {3, 500};
    tp_tensor *in = stax_test_random(TP_F32, 2, dims, 4);
    tp_tensor *out = NULL;
    char *ir = compiled_ir(g, &in, 1, 0, "narrow0", &out);
    const float *a = tp_tensor_data(in), *got = tp_tensor_data(out);
    for (int64_t i = 0; i < 500; i++)
        for (int64_t j = 0; j < 3; j++)
            ck_assert_msg(got[i * 3 + j] == a[j * 500 + i] + a[j * 500 + i],
                          "y[%lld][%lld] = %.9g, want %.9g", (long long)i, (long long)j,
                          got[i * 3 + j], a[j * 500 + i] + a[j * 500 + i]);
    int tagged, plain;
    count_back_edges(ir, &tagged, &plain);
    ck_assert_msg(plain >= 1, "the loop of 3 is tagged (%d tagged)", tagged);
    free(ir);
    tp_tensor_release(out);
    tp_tensor_release(in);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_loop_unrolling) {
    Suite *s = suite_create("stax_loop_unrolling");
    TCase *c = tcase_create("loops");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, independent_iterations_are_not_unrolled);
    tcase_add_test(c, a_loop_that_carries_a_sum_keeps_llvm_unrolling);
    tcase_add_test(c, a_loop_over_a_few_elements_keeps_llvm_unrolling);
    suite_add_tcase(s, c);
    return s;
}
