/* The pass manager and the whole pipeline: names, options, the per-pass
 * callback, shapeprop, and that the optimized graph computes what the
 * original computes (the reference interpreter on both, on the examples and
 * on seeded random graphs). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pass_test_util.h"
#include "random_graph.h"

/* ---- names and options ---------------------------------------------------- */

START_TEST(pass_names_round_trip_in_pipeline_order) {
    static const char *const expected[] = {"normalize", "constfold", "decompose",
                                           "cse",       "dce",       "shapeprop"};
    ck_assert_int_eq(TP_PASS_COUNT, 6);
    for (int i = 0; i < TP_PASS_COUNT; i++) {
        ck_assert_str_eq(tp_pass_name((tp_pass_id)i), expected[i]);
        tp_pass_id id;
        ck_assert_int_eq(tp_pass_from_name(expected[i], &id), TP_OK);
        ck_assert_int_eq(id, i);
    }
    tp_pass_id id;
    ck_assert_int_eq(tp_pass_from_name("fold", &id), TP_ERR_NOT_FOUND);
    /* Fusion is the backends' (contract revision 2): no core pass any more. */
    ck_assert_int_eq(tp_pass_from_name("fusion", &id), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "constfold"));
}
END_TEST

typedef struct callback_log {
    char names[16][16];
    bool changed[16];
    int count;
} callback_log;

static void record_pass(const char *name, const tp_graph *graph, bool changed, void *user) {
    callback_log *log = user;
    ck_assert_ptr_nonnull(graph);
    if (log->count < 16) {
        snprintf(log->names[log->count], sizeof log->names[0], "%s", name);
        log->changed[log->count++] = changed;
    }
}

static const char *const small_graph = "graph t(%x: f32[3]) {\n"
                                       "  %one: f32[] = full() {shape=[], dtype=f32, value=1}\n"
                                       "  %a: f32[3] = mul(%x, %one)\n"
                                       "  %b: f32[3] = silu(%a)\n"
                                       "  return %b\n"
                                       "}\n";

START_TEST(callback_sees_every_pass_in_order) {
    tp_graph *in = parse_graph(small_graph);
    callback_log log = {.count = 0};
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.after_pass = record_pass;
    options.user = &log;
    options.verify_each_pass = true;
    tp_graph *out = NULL;
    ck_assert_int_eq(tp_pass_pipeline_run(in, &options, &out), TP_OK);
    ck_assert_int_eq(log.count, TP_PASS_COUNT);
    for (int i = 0; i < TP_PASS_COUNT; i++)
        ck_assert_str_eq(log.names[i], tp_pass_name((tp_pass_id)i));
    ck_assert(log.changed[TP_PASS_NORMALIZE]);  /* x * 1 */
    ck_assert(!log.changed[TP_PASS_CONSTFOLD]); /* nothing constant-only */
    ck_assert(log.changed[TP_PASS_DECOMPOSE]);  /* silu */
    ck_assert(log.changed[TP_PASS_DCE]);        /* the unused full */
    ck_assert(!log.changed[TP_PASS_SHAPEPROP]);
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

START_TEST(skipped_passes_do_not_run) {
    tp_graph *in = parse_graph(small_graph);
    callback_log log = {.count = 0};
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.after_pass = record_pass;
    options.user = &log;
    options.skip = TP_PASS_BIT(TP_PASS_DECOMPOSE) | TP_PASS_BIT(TP_PASS_CSE);
    tp_graph *out = NULL;
    ck_assert_int_eq(tp_pass_pipeline_run(in, &options, &out), TP_OK);
    ck_assert_int_eq(log.count, TP_PASS_COUNT - 2);
    for (int i = 0; i < log.count; i++) {
        ck_assert_str_ne(log.names[i], "decompose");
        ck_assert_str_ne(log.names[i], "cse");
    }
    ck_assert_str_eq(output_op(out, 0), "silu");
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

START_TEST(rejects_options_of_unknown_size) {
    tp_graph *in = parse_graph(small_graph);
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.struct_size = sizeof options + 8;
    tp_graph *out = (tp_graph *)in;
    ck_assert_int_eq(tp_pass_pipeline_run(in, &options, &out), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "TP_PASS_OPTIONS_INIT"));
    tp_graph_destroy(in);
}
END_TEST

START_TEST(two_gelu_sites_share_one_erf_chain) {
    tp_graph *in = parse_graph("graph t(%x: f32[4]) {\n"
                               "  %a: f32[4] = gelu(%x) {approximate=none}\n"
                               "  %b: f32[4] = gelu(%x) {approximate=none}\n"
                               "  %c: f32[4] = add(%a, %b)\n"
                               "  return %c\n"
                               "}\n");
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.verify_each_pass = true;
    tp_graph *out = NULL;
    ck_assert_int_eq(tp_pass_pipeline_run(in, &options, &out), TP_OK);
    ck_assert_int_eq(count_op(out, "erf"), 1);
    ck_assert_int_eq(count_op(out, "gelu"), 0);
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

START_TEST(shapeprop_keeps_ids_and_types) {
    bool changed = true;
    tp_graph *in = parse_graph("graph t(%x: f32[n, 3], %v: f32[3]) {\n"
                               "  %a: f32[n, 3] = add(%x, %v)\n"
                               "  %s: f32[n] = sum(%a) {axes=[1], keepdim=false}\n"
                               "  return %s\n"
                               "}\n");
    tp_graph *out = run_one_pass(in, TP_PASS_SHAPEPROP, &changed);
    ck_assert(!changed);
    ck_assert_int_eq(tp_graph_num_values(out), tp_graph_num_values(in));
    for (int v = 0; v < tp_graph_num_values(in); v++) {
        char want[64], got[64];
        tp_type_describe(in, tp_graph_value_type(in, v), want, sizeof want);
        tp_type_describe(out, tp_graph_value_type(out, v), got, sizeof got);
        ck_assert_str_eq(got, want);
        ck_assert_str_eq(tp_graph_value_name(out, v), tp_graph_value_name(in, v));
    }
    tp_graph_destroy(out);
    tp_graph_destroy(in);
}
END_TEST

/* ---- preservation --------------------------------------------------------- */

/* Random inputs for `graph` (symbols bound to 3). */
static void make_inputs(const tp_graph *graph, uint64_t seed, tp_tensor **inputs) {
    random_source rng = {seed * 0x2545F4914F6CDD1Dull + 7};
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) {
        const tp_type *type = tp_graph_value_type(graph, tp_graph_input(graph, i));
        int64_t dims[TP_MAX_DIMS];
        for (int d = 0; d < type->ndim; d++)
            dims[d] = TP_DIM_IS_SYMBOL(type->dims[d]) ? 3 : type->dims[d];
        ck_assert_int_eq(tp_tensor_create(type->dtype, type->ndim, dims, &inputs[i]), TP_OK);
        int64_t count = tp_tensor_numel(inputs[i]);
        void *data = tp_tensor_data_mut(inputs[i]);
        for (int64_t k = 0; k < count; k++) {
            switch (type->dtype) {
            case TP_F32:
                ((float *)data)[k] = (float)random_uniform(&rng, -2, 2);
                break;
            case TP_F64:
                ((double *)data)[k] = random_uniform(&rng, -2, 2);
                break;
            case TP_I32:
                ((int32_t *)data)[k] = random_below(&rng, 7) - 3;
                break;
            case TP_I64:
                ((int64_t *)data)[k] = random_below(&rng, 7) - 3;
                break;
            default:
                ((uint8_t *)data)[k] = (uint8_t)random_below(&rng, 2);
                break;
            }
        }
    }
}

static bool close_enough(double got, double want, tp_dtype dtype) {
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    if (!tp_dtype_is_float(dtype)) return got == want;
    double rtol = dtype == TP_F32 ? 1e-4 : 1e-9, atol = dtype == TP_F32 ? 1e-5 : 1e-12;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Runs `original` and its optimized form on the same inputs; compares. */
static void assert_pipeline_preserves(const tp_graph *original, uint64_t seed, const char *what,
                                      int *nodes_before, int *nodes_after) {
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    options.verify_each_pass = true;
    tp_graph *optimized = NULL;
    ck_assert_msg(tp_pass_pipeline_run(original, &options, &optimized) == TP_OK, "%s: pipeline: %s",
                  what, tp_last_error());
    *nodes_before += count_nodes(original);
    *nodes_after += count_nodes(optimized);

    int num_inputs = tp_graph_num_inputs(original), num_outputs = tp_graph_num_outputs(original);
    ck_assert_int_eq(tp_graph_num_inputs(optimized), num_inputs);
    ck_assert_int_eq(tp_graph_num_outputs(optimized), num_outputs);
    tp_tensor *inputs[64] = {NULL}, *want[64] = {NULL}, *got[64] = {NULL};
    ck_assert_int_le(num_inputs, 64);
    ck_assert_int_le(num_outputs, 64);
    make_inputs(original, seed, inputs);
    ck_assert_msg(tp_graph_run(original, inputs, num_inputs, want) == TP_OK, "%s: run: %s", what,
                  tp_last_error());
    ck_assert_msg(tp_graph_run(optimized, inputs, num_inputs, got) == TP_OK,
                  "%s: run optimized: %s", what, tp_last_error());
    for (int o = 0; o < num_outputs; o++) {
        ck_assert_int_eq(tp_tensor_dtype(got[o]), tp_tensor_dtype(want[o]));
        ck_assert_int_eq(tp_tensor_ndim(got[o]), tp_tensor_ndim(want[o]));
        for (int d = 0; d < tp_tensor_ndim(want[o]); d++)
            ck_assert_int_eq(tp_tensor_dim(got[o], d), tp_tensor_dim(want[o], d));
        for (int64_t k = 0; k < tp_tensor_numel(want[o]); k++) {
            double a = tp_tensor_get_f64(got[o], k), b = tp_tensor_get_f64(want[o], k);
            ck_assert_msg(close_enough(a, b, tp_tensor_dtype(want[o])),
                          "%s: output %d element %lld: optimized %.9g, original %.9g", what, o,
                          (long long)k, a, b);
        }
    }
    for (int i = 0; i < num_inputs; i++) tp_tensor_release(inputs[i]);
    for (int o = 0; o < num_outputs; o++) {
        tp_tensor_release(want[o]);
        tp_tensor_release(got[o]);
    }
    tp_graph_destroy(optimized);
}

START_TEST(pipeline_preserves_the_example_graphs) {
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/examples", tp_test_source_dir());
    DIR *dir = opendir(folder);
    if (!dir) {
        fprintf(stderr, "note: no %s folder; example graphs not checked\n", folder);
        return;
    }
    int checked = 0, before = 0, after = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        size_t length = strlen(entry->d_name);
        if (length < 6 || strcmp(entry->d_name + length - 5, ".tpir") != 0) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        tp_graph *graph = NULL;
        ck_assert_msg(tp_graph_load(path, &graph) == TP_OK, "%s", tp_last_error());
        assert_pipeline_preserves(graph, (uint64_t)checked + 1, entry->d_name, &before, &after);
        tp_graph_destroy(graph);
        checked++;
    }
    closedir(dir);
    ck_assert_int_ge(checked, 1);
    fprintf(stderr, "pipeline: %d example graphs preserved (%d nodes -> %d)\n", checked, before,
            after);
}
END_TEST

START_TEST(pipeline_preserves_random_graphs) {
    int before = 0, after = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        tp_graph *graph = NULL;
        ck_assert_int_eq(random_graph(seed, 8 + (int)(seed % 13), &graph), TP_OK);
        char what[32];
        snprintf(what, sizeof what, "random graph %llu", (unsigned long long)seed);
        assert_pipeline_preserves(graph, seed, what, &before, &after);
        tp_graph_destroy(graph);
    }
    fprintf(stderr, "pipeline: 50 random graphs preserved (%d nodes -> %d)\n", before, after);
}
END_TEST

TP_TEST_SUITE(pipeline) {
    Suite *s = suite_create("passes.pipeline");
    TCase *c = tcase_create("manager");
    tcase_add_test(c, pass_names_round_trip_in_pipeline_order);
    tcase_add_test(c, callback_sees_every_pass_in_order);
    tcase_add_test(c, skipped_passes_do_not_run);
    tcase_add_test(c, rejects_options_of_unknown_size);
    tcase_add_test(c, two_gelu_sites_share_one_erf_chain);
    tcase_add_test(c, shapeprop_keeps_ids_and_types);
    suite_add_tcase(s, c);
    TCase *p = tcase_create("preservation");
    tcase_set_timeout(p, 120);
    tcase_add_test(p, pipeline_preserves_the_example_graphs);
    tcase_add_test(p, pipeline_preserves_random_graphs);
    suite_add_tcase(s, p);
    return s;
}
