/* Streaming stores (stax_emit_stream.c): a graph output written by a flat
 * pointwise kernel goes out in aligned chunks past the cache, with the
 * elements before the first aligned address and after the last whole chunk
 * stored plainly. The outputs are checked exactly against the sums computed
 * here, at every size around the chunk, on 1-3 threads, into tensors of the
 * library's alignment and into caller memory one element off a line; the
 * dumped IR shows which setting streams what, and which loops prefer 512-bit
 * vectors. */
#include "stax_harness.h"

static tp_value_id typed_input(tp_graph *g, const char *name, tp_dtype dtype, int64_t n) {
    tp_type type = {.dtype = dtype, .ndim = 1, .dims = {n}};
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_input(g, name, &type, &id), TP_OK);
    return id;
}

/* y = a + b and z = a (a copy kernel into the second output) */
static tp_graph *sum_and_copy_graph(tp_dtype dtype, int64_t n) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("stream", &g), TP_OK);
    tp_value_id a = typed_input(g, "a", dtype, n), b = typed_input(g, "b", dtype, n);
    tp_value_id outs[2] = {stax_test_node(g, "add", (tp_value_id[]){a, b}, 2, NULL), a};
    ck_assert_int_eq(tp_graph_set_outputs(g, outs, 2), TP_OK);
    return g;
}

static double element(const void *data, tp_dtype dtype, int64_t i) {
    switch (dtype) {
    case TP_F32:
        return ((const float *)data)[i];
    case TP_F64:
        return ((const double *)data)[i];
    default:
        return ((const int32_t *)data)[i];
    }
}

/* Exact: f32 and f64 sums of values in [-2, 2) with 20 bits round the same
 * way in the kernel and here (one addition each), ints are exact. */
static void expect_sum_and_copy(tp_tensor *const *in, tp_tensor *const *out, tp_dtype dtype,
                                int64_t n, const char *what) {
    const void *a = tp_tensor_data(in[0]), *b = tp_tensor_data(in[1]);
    const void *y = tp_tensor_data(out[0]), *z = tp_tensor_data(out[1]);
    for (int64_t i = 0; i < n; i++) {
        double want = dtype == TP_F32 ? (double)(float)(element(a, dtype, i) + element(b, dtype, i))
                                      : element(a, dtype, i) + element(b, dtype, i);
        ck_assert_msg(element(y, dtype, i) == want, "%s: y[%lld] = %.9g, want %.9g", what,
                      (long long)i, element(y, dtype, i), want);
        ck_assert_msg(element(z, dtype, i) == element(a, dtype, i), "%s: z[%lld] = %.9g, want %.9g",
                      what, (long long)i, element(z, dtype, i), element(a, dtype, i));
    }
}

/* outputs over caller memory starting one element past a 64-byte line */
static void wrap_off_a_line(tp_dtype dtype, int64_t n, void *memory[2], tp_tensor *out[2]) {
    size_t size = tp_dtype_size(dtype);
    for (int k = 0; k < 2; k++) {
        memory[k] = aligned_alloc(64, ((size_t)n + 1) * size / 64 * 64 + 64);
        ck_assert_ptr_nonnull(memory[k]);
        memset(memory[k], 0xA5, ((size_t)n + 1) * size); /* none of the right values */
        ck_assert_int_eq(
            tp_tensor_wrap(dtype, 1, &n, (char *)memory[k] + size, NULL, NULL, &out[k]), TP_OK);
    }
}

static void check_streamed(tp_dtype dtype, int64_t n, const char *threads) {
    char what[160];
    snprintf(what, sizeof what, "%s[%lld], %s", tp_dtype_name(dtype), (long long)n, threads);
    tp_graph *g = sum_and_copy_graph(dtype, n);
    tp_tensor *in[2] = {stax_test_random(dtype, 1, &n, (uint64_t)n),
                        stax_test_random(dtype, 1, &n, (uint64_t)n + 1)};
    const char *options[] = {threads};
    tp_executable *exe = NULL;
    ck_assert_msg(tp_backend_compile(stax_test_backend("stax"), g, in, 2, options, 1, &exe) ==
                      TP_OK,
                  "%s: %s", what, tp_last_error());
    tp_tensor *out[2] = {NULL, NULL};
    ck_assert_msg(tp_executable_run(exe, in, 2, out) == TP_OK, "%s: %s", what, tp_last_error());
    expect_sum_and_copy(in, out, dtype, n, what);
    void *memory[2];
    tp_tensor *off[2];
    wrap_off_a_line(dtype, n, memory, off);
    ck_assert_msg(tp_executable_run(exe, in, 2, off) == TP_OK, "%s: %s", what, tp_last_error());
    strncat(what, ", off a line", sizeof what - strlen(what) - 1);
    expect_sum_and_copy(in, off, dtype, n, what);
    for (int k = 0; k < 2; k++) {
        tp_tensor_release(in[k]);
        tp_tensor_release(out[k]);
        tp_tensor_release(off[k]);
        free(memory[k]);
    }
    tp_executable_destroy(exe);
    tp_graph_destroy(g);
}

START_TEST(streamed_outputs_are_exact_at_every_size_alignment_and_thread_count) {
    stax_test_cache_dir();
    setenv("STAX_STREAM_STORES", "on", 1);
    /* around one chunk (2 KiB: 512 f32, 256 f64), a few chunks with tails,
     * and enough for each thread to stream several */
    static const int64_t sizes[] = {1, 15, 511, 513, 1040, 4099, 70001};
    static const tp_dtype dtypes[] = {TP_F32, TP_F64, TP_I32};
    static const char *const threads[] = {"threads=1", "threads=2", "threads=3"};
    for (size_t d = 0; d < 3; d++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (size_t t = 0; t < 3; t++) check_streamed(dtypes[d], sizes[s], threads[t]);
    unsetenv("STAX_STREAM_STORES");
}
END_TEST

/* The optimised IR of y = a + b (and z = a) over n f32 on one thread. */
static char *dumped_ir(int64_t n, const char *name) {
    tp_graph *g = sum_and_copy_graph(TP_F32, n);
    tp_tensor *in[2] = {stax_test_random(TP_F32, 1, &n, 3), stax_test_random(TP_F32, 1, &n, 4)};
    char path[4300], option[4400];
    snprintf(path, sizeof path, "%s/%s.ll", tp_test_temp_dir(), name);
    snprintf(option, sizeof option, "dump_ir=%s", path);
    const char *options[] = {option, "threads=1"};
    tp_tensor *out[2] = {NULL, NULL};
    ck_assert_msg(stax_test_run("stax", g, in, 2, options, 2, out) == TP_OK, "%s", tp_last_error());
    expect_sum_and_copy(in, out, TP_F32, n, name);
    for (int k = 0; k < 2; k++) {
        tp_tensor_release(in[k]);
        tp_tensor_release(out[k]);
    }
    tp_graph_destroy(g);
    return stax_test_read_text(path);
}

START_TEST(only_large_graph_outputs_stream_unless_told) {
#if defined(__x86_64__) || defined(__i386__)
    stax_test_cache_dir();
    /* 8M f32 (32 MiB) is past four times any L2 of one thread we know; 1000
     * is a few KiB */
    static const struct {
        const char *setting;
        int64_t n;
        bool streams;
    } cases[] = {
        {NULL, 1000, false},   {"auto", 1000, false},   {"on", 1000, true},
        {NULL, 8 << 20, true}, {"off", 8 << 20, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].setting)
            setenv("STAX_STREAM_STORES", cases[i].setting, 1);
        else
            unsetenv("STAX_STREAM_STORES");
        char name[64];
        snprintf(name, sizeof name, "stream%zu", i);
        char *ir = dumped_ir(cases[i].n, name);
        bool streams = strstr(ir, "!nontemporal") != NULL;
        ck_assert_msg(streams == cases[i].streams, "STAX_STREAM_STORES=%s, %lld f32: %s",
                      cases[i].setting ? cases[i].setting : "(unset)", (long long)cases[i].n,
                      streams ? "streamed" : "not streamed");
        ck_assert_msg(!streams || strstr(ir, "llvm.x86.sse.sfence"), "streamed without a fence");
        free(ir);
    }
    unsetenv("STAX_STREAM_STORES");
#endif
}
END_TEST

/* The optimised IR of y = tanh(a) over n f32 (checked against tanh in
 * double precision) on one thread. */
static char *dumped_tanh_ir(int64_t n, const char *name) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("wide", &g), TP_OK);
    tp_value_id a = typed_input(g, "a", TP_F32, n);
    tp_value_id y = stax_test_node(g, "tanh", &a, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *in = stax_test_random(TP_F32, 1, &n, 5);
    char path[4300], option[4400];
    snprintf(path, sizeof path, "%s/%s.ll", tp_test_temp_dir(), name);
    snprintf(option, sizeof option, "dump_ir=%s", path);
    const char *options[] = {option, "threads=1"};
    tp_tensor *out = NULL;
    ck_assert_msg(stax_test_run("stax", g, &in, 1, options, 2, &out) == TP_OK, "%s",
                  tp_last_error());
    const float *x = tp_tensor_data(in), *got = tp_tensor_data(out);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - tanh(x[i])) <= 4e-7 * fabs(tanh(x[i])) + 1e-9,
                      "%s: tanh(%.9g) = %.9g, want %.9g", name, x[i], got[i], tanh(x[i]));
    tp_tensor_release(in);
    tp_tensor_release(out);
    tp_graph_destroy(g);
    return stax_test_read_text(path);
}

START_TEST(math_loops_prefer_512_bits_on_avx512_unless_told) {
    stax_test_cache_dir();
    char *ir = dumped_tanh_ir(1000, "wide");
    bool wide = strstr(ir, "\"prefer-vector-width\"=\"512\"") != NULL;
    free(ir);
#if defined(__x86_64__) || defined(__i386__)
    ck_assert_msg(wide == (bool)__builtin_cpu_supports("avx512f"),
                  "prefer-vector-width 512 %s on a host %s avx512f", wide ? "set" : "not set",
                  __builtin_cpu_supports("avx512f") ? "with" : "without");
#else
    ck_assert(!wide);
#endif
    /* a loop of adds is memory-bound: no wide preference (it only costs
     * compile time) */
    ir = dumped_ir(1000, "adds");
    ck_assert_ptr_null(strstr(ir, "prefer-vector-width"));
    free(ir);
    setenv("STAX_PREFER_512", "off", 1);
    ir = dumped_tanh_ir(1000, "narrow");
    ck_assert_ptr_null(strstr(ir, "prefer-vector-width"));
    free(ir);
    unsetenv("STAX_PREFER_512");
}
END_TEST

START_TEST(unknown_settings_are_refused_by_name) {
    stax_test_cache_dir();
    static const char *const variables[] = {"STAX_STREAM_STORES", "STAX_PREFER_512"};
    for (int v = 0; v < 2; v++) {
        setenv(variables[v], "sometimes", 1);
        int64_t n = 64;
        tp_graph *g = sum_and_copy_graph(TP_F32, n);
        tp_tensor *in[2] = {stax_test_random(TP_F32, 1, &n, 1), stax_test_random(TP_F32, 1, &n, 2)};
        tp_tensor *out[2] = {NULL, NULL};
        ck_assert_int_ne(stax_test_run("stax", g, in, 2, NULL, 0, out), TP_OK);
        char want[96];
        snprintf(want, sizeof want, "%s is 'sometimes'", variables[v]);
        ck_assert_msg(strstr(tp_last_error(), want), "%s", tp_last_error());
        unsetenv(variables[v]);
        tp_tensor_release(in[0]);
        tp_tensor_release(in[1]);
        tp_graph_destroy(g);
    }
}
END_TEST

TP_TEST_SUITE(stax_stream_stores) {
    Suite *s = suite_create("stax_stream_stores");
    TCase *c = tcase_create("stream_stores");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, streamed_outputs_are_exact_at_every_size_alignment_and_thread_count);
    tcase_add_test(c, only_large_graph_outputs_stream_unless_told);
    tcase_add_test(c, math_loops_prefer_512_bits_on_avx512_unless_told);
    tcase_add_test(c, unknown_settings_are_refused_by_name);
    suite_add_tcase(s, c);
    return s;
}
