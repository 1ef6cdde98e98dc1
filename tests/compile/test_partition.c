/* Partitioning: a fixture backend that claims only some ops runs whole
 * graphs with the rest on a fallback, results equal eager; regions are
 * convex and cover every node once; fallback none / fullgraph name the
 * unclaimed ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../passes/random_graph.h"
#include "compile/partition.h"
#include "ir/graph_internal.h"
#include "registry/registry_internal.h"
#include "tensorplay/compile.h"
#include "tensorplay/plugin_ops.h"
#include "tp_test.h"

/* ---- the fixture backend: claims the ops in claimed_ops -------------------- */

static bool claimed_ops[TP_PLUGIN_OP_COUNT];

static void claim_only(const int32_t *ops, int count) {
    memset(claimed_ops, 0, sizeof claimed_ops);
    for (int i = 0; i < count; i++) claimed_ops[ops[i]] = true;
}

struct tp_plugin_executable {
    tp_graph *graph;
};

static int32_t partial_init(const tp_plugin_host *host, void **context) {
    *context = (void *)host;
    return TP_PLUGIN_OK;
}
static int32_t partial_supports(void *context, const tp_plugin_graph *graph, int32_t value) {
    const tp_plugin_host *host = context;
    int32_t op = graph->nodes[value].op_id;
    if (op >= 0 && claimed_ops[op]) return TP_PLUGIN_OK;
    host->set_error(host, "not one of the fixture's ops");
    return TP_PLUGIN_UNSUPPORTED;
}
/* Runs only what it claimed: a region with any other op is a partitioner bug. */
static int32_t partial_compile(void *context, const tp_plugin_graph *view,
                               const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                               const tp_plugin_option *options, int32_t num_options,
                               tp_plugin_executable **out) {
    const tp_plugin_host *host = context;
    (void)inputs, (void)num_inputs, (void)options, (void)num_options;
    for (int32_t v = 0; v < view->num_values; v++)
        if (view->nodes[v].op_id >= 0 && !claimed_ops[view->nodes[v].op_id]) {
            host->set_error(host, "given a node it did not claim");
            return TP_PLUGIN_ERROR;
        }
    tp_plugin_executable *executable = calloc(1, sizeof *executable);
    if (tp_graph_clone(tp_graph_view_source(view), &executable->graph) != TP_OK) return 1;
    *out = executable;
    return TP_PLUGIN_OK;
}
static int32_t partial_run(void *context, tp_plugin_executable *executable,
                           const tp_plugin_buffer *inputs, int32_t num_inputs,
                           tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context;
    tp_tensor *in[64] = {0}, *out[64] = {0};
    for (int i = 0; i < num_inputs; i++)
        ck_assert_int_eq(tp_tensor_from_data((tp_dtype)inputs[i].dtype, inputs[i].ndim,
                                             inputs[i].dims, inputs[i].data, &in[i]),
                         TP_OK);
    ck_assert_int_eq(tp_graph_run(executable->graph, in, num_inputs, out), TP_OK);
    for (int i = 0; i < num_outputs; i++) {
        memcpy(outputs[i].data, tp_tensor_data(out[i]), outputs[i].nbytes);
        tp_tensor_release(out[i]);
    }
    for (int i = 0; i < num_inputs; i++) tp_tensor_release(in[i]);
    return TP_PLUGIN_OK;
}
static void partial_release(void *context, tp_plugin_executable *executable) {
    (void)context;
    tp_graph_destroy(executable->graph);
    free(executable);
}

static const tp_plugin_backend partial_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "partial",
    .version = "test",
    .description = "claims only the ops the test names",
    .calls = {.init = partial_init,
              .supports = partial_supports,
              .compile = partial_compile,
              .run = partial_run,
              .release = partial_release},
};

static const int32_t four_ops[] = {TP_PLUGIN_OP_ADD, TP_PLUGIN_OP_MUL, TP_PLUGIN_OP_RELU,
                                   TP_PLUGIN_OP_MATMUL};

static void setup_partial(void) {
    claim_only(four_ops, 4);
    ck_assert_int_eq(tp_backend_register(&partial_table, NULL), TP_OK);
}

/* ---- helpers ------------------------------------------------------------------ */

static tp_graph *load_example(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", tp_test_source_dir(), name);
    tp_graph *graph = NULL;
    ck_assert_msg(tp_graph_load(path, &graph) == TP_OK, "%s", tp_last_error());
    return graph;
}

static void random_inputs(const tp_graph *graph, uint64_t seed, tp_tensor **inputs) {
    random_source rng = {seed * 2654435761u + 1};
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) {
        const tp_type *type = tp_graph_value_type(graph, tp_graph_input(graph, i));
        ck_assert_int_eq(tp_tensor_create(type->dtype, type->ndim, type->dims, &inputs[i]), TP_OK);
        float *data = tp_tensor_data_mut(inputs[i]);
        for (int64_t k = 0; k < tp_tensor_numel(inputs[i]); k++)
            data[k] = (float)random_uniform(&rng, -1.0, 1.0);
    }
}

/* Runs `graph` compiled with `backend` (and `fallback`) on `inputs`. */
static tp_compiled *run_graph(const tp_graph *graph, const char *backend, const char *fallback,
                              tp_tensor **inputs, tp_tensor **outputs) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    options.fallback_backend = fallback;
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile_graph(graph, &options, &compiled) == TP_OK, "%s", tp_last_error());
    tp_arg args[16];
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) args[i] = tp_arg_tensor(inputs[i]);
    ck_assert_msg(tp_call(compiled, args, tp_graph_num_inputs(graph), outputs) == TP_OK, "%s",
                  tp_last_error());
    return compiled;
}

static void assert_close(const tp_tensor *got, const tp_tensor *want) {
    ck_assert_int_eq(tp_tensor_numel(got), tp_tensor_numel(want));
    for (int64_t k = 0; k < tp_tensor_numel(want); k++) {
        double a = tp_tensor_get_f64(got, k), b = tp_tensor_get_f64(want, k);
        ck_assert_msg(fabs(a - b) <= 1e-5 + 1e-5 * fabs(b), "element %lld: %g vs eager %g",
                      (long long)k, a, b);
    }
}

/* The graph through `partial` + fallback equals eager alone. */
static tp_partition_region_info *check_against_eager(const char *example, const char *fallback,
                                                     int *count) {
    tp_graph *graph = load_example(example);
    tp_tensor *inputs[16] = {0}, *got[8] = {0}, *want[8] = {0};
    random_inputs(graph, 7, inputs);
    tp_compiled *partitioned = run_graph(graph, "partial", fallback, inputs, got);
    tp_compiled *reference = run_graph(graph, "eager", NULL, inputs, want);
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) assert_close(got[i], want[i]);
    tp_partition_region_info *regions = NULL;
    ck_assert_int_eq(tp_compiled_last_partition(partitioned, &regions, count), TP_OK);
    for (int i = 0; i < tp_graph_num_outputs(graph); i++)
        tp_tensor_release(got[i]), tp_tensor_release(want[i]);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
    tp_compiled_free(partitioned);
    tp_compiled_free(reference);
    tp_graph_destroy(graph);
    return regions;
}

/* ---- end to end ------------------------------------------------------------------ */

START_TEST(mlp_is_claimed_whole_and_compiles_as_one_region) {
    setup_partial();
    int count = 0;
    tp_partition_region_info *regions = check_against_eager("mlp.tpir", "eager", &count);
    /* matmul, add, relu, matmul, add: all four-op, one region of 5 nodes. */
    ck_assert_int_eq(count, 1);
    ck_assert_str_eq(regions[0].backend, "partial");
    ck_assert_int_eq(regions[0].num_nodes, 5);
    tp_free(regions);
}
END_TEST

static void examples_run_with_fallback(const char *fallback) {
    setup_partial();
    const char *examples[] = {"softmax_classifier.tpir", "attention_block.tpir"};
    for (int e = 0; e < 2; e++) {
        int count = 0;
        tp_partition_region_info *regions = check_against_eager(examples[e], fallback, &count);
        ck_assert_int_ge(count, 2);
        bool saw_partial = false;
        for (int r = 0; r < count; r++) {
            saw_partial |= strcmp(regions[r].backend, "partial") == 0;
            if (r) ck_assert_str_ne(regions[r].backend, regions[r - 1].backend);
        }
        ck_assert(saw_partial);
        tp_free(regions);
    }
}

START_TEST(examples_split_between_partial_and_eager_equal_eager) {
    examples_run_with_fallback("eager");
}
END_TEST

START_TEST(examples_split_between_partial_and_stax_equal_eager) {
    tp_backend *stax = NULL;
    if (tp_backend_lookup("stax", &stax) != TP_OK) return; /* stax not built here */
    examples_run_with_fallback("stax");
}
END_TEST

START_TEST(examples_split_between_partial_and_opencl_equal_eager) {
    tp_backend *opencl = NULL;
    if (tp_backend_lookup("opencl", &opencl) != TP_OK) return; /* opencl not built here */
    examples_run_with_fallback("opencl");
}
END_TEST

/* ---- composites ---------------------------------------------------------------------- */

/* x -> softmax(x) compiled on `partial` with `claims`; the partition. */
static tp_partition_region_info *softmax_partition(const int32_t *claims, int num_claims,
                                                   int *count) {
    claim_only(claims, num_claims);
    ck_assert_int_eq(tp_backend_register(&partial_table, NULL), TP_OK);
    tp_graph *graph = NULL;
    tp_type type = {.dtype = TP_F32, .ndim = 2, .dims = {3, 5}};
    tp_value_id x, y;
    ck_assert_int_eq(tp_graph_create("rows", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = -1;
    ck_assert_msg(tp_graph_add_node(graph, "softmax", &x, 1, &attrs, "y", &y) == TP_OK, "%s",
                  tp_last_error());
    ck_assert_int_eq(tp_graph_set_outputs(graph, &y, 1), TP_OK);
    tp_tensor *inputs[1], *got[1] = {0}, *want[1] = {0};
    random_inputs(graph, 5, inputs);
    tp_compiled *partitioned = run_graph(graph, "partial", "eager", inputs, got);
    tp_compiled *reference = run_graph(graph, "eager", NULL, inputs, want);
    assert_close(got[0], want[0]);
    tp_partition_region_info *regions = NULL;
    ck_assert_int_eq(tp_compiled_last_partition(partitioned, &regions, count), TP_OK);
    tp_tensor_release(got[0]), tp_tensor_release(want[0]), tp_tensor_release(inputs[0]);
    tp_compiled_free(partitioned);
    tp_compiled_free(reference);
    tp_graph_destroy(graph);
    return regions;
}

/* A small conv net, relu(conv) -> max_pool -> conv -> mean: opencl and cuda
 * claim none of the window ops, so the graph splits between them and the
 * fallback and still equals eager. */
static const char conv_net_tpir[] =
    "graph conv_net(%x: f32[2, 3, 9, 9], %w1: f32[4, 3, 3, 3], %b1: f32[4], %w2: f32[4, 1, 3, "
    "3]) {\n"
    "  %c1: f32[2, 4, 9, 9] = conv(%x, %w1, %b1) {strides=[], pads=[1, 1, 1, 1], dilations=[], "
    "group=1}\n"
    "  %r: f32[2, 4, 9, 9] = relu(%c1)\n"
    "  %p: f32[2, 4, 5, 5] = max_pool(%r) {kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, "
    "1], dilations=[], ceil_mode=false}\n"
    "  %c2: f32[2, 4, 5, 5] = conv(%p, %w2) {strides=[], pads=[1, 1, 1, 1], dilations=[], "
    "group=4}\n"
    "  %t: f32[2, 4, 5, 5] = tanh(%c2)\n"
    "  %m: f32[2, 4, 1, 1] = mean(%t) {axes=[2, 3], keepdim=true}\n"
    "  return %m\n"
    "}\n";

static void conv_net_runs_on(const char *backend_name) {
    tp_backend *backend = NULL;
    if (tp_backend_lookup(backend_name, &backend) != TP_OK) return; /* not built or no device */
    tp_graph *graph = NULL;
    ck_assert_msg(
        tp_graph_parse(conv_net_tpir, sizeof conv_net_tpir - 1, "conv_net.tpir", &graph) == TP_OK,
        "%s", tp_last_error());
    tp_tensor *inputs[4] = {0}, *got[1] = {0}, *want[1] = {0};
    random_inputs(graph, 11, inputs);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend_name;
    options.fallback_backend = "eager";
    tp_compiled *compiled = NULL;
    tp_status status = tp_compile_graph(graph, &options, &compiled);
    ck_assert_msg(status == TP_OK, "%s: %s", backend_name, tp_last_error());
    tp_arg args[4];
    for (int i = 0; i < 4; i++) args[i] = tp_arg_tensor(inputs[i]);
    status = tp_call(compiled, args, 4, got);
    ck_assert_msg(status == TP_OK, "%s: %s", backend_name, tp_last_error());
    tp_compiled *reference = run_graph(graph, "eager", NULL, inputs, want);
    assert_close(got[0], want[0]);
    tp_partition_region_info *regions = NULL;
    int count = 0;
    ck_assert_int_eq(tp_compiled_last_partition(compiled, &regions, &count), TP_OK);
    bool saw_fallback = false;
    for (int r = 0; r < count; r++) saw_fallback |= strcmp(regions[r].backend, "eager") == 0;
    ck_assert_msg(saw_fallback, "%s claimed the window ops it has no kernels for", backend_name);
    tp_free(regions);
    tp_tensor_release(got[0]);
    tp_tensor_release(want[0]);
    for (int i = 0; i < 4; i++) tp_tensor_release(inputs[i]);
    tp_compiled_free(compiled);
    tp_compiled_free(reference);
    tp_graph_destroy(graph);
}

START_TEST(a_conv_net_runs_on_opencl_through_the_fallback_and_equals_eager) {
    conv_net_runs_on("opencl");
}
END_TEST

START_TEST(a_conv_net_runs_on_cuda_through_the_fallback_and_equals_eager) {
    conv_net_runs_on("cuda");
}
END_TEST

START_TEST(a_claimed_softmax_is_not_decomposed) {
    static const int32_t claims[] = {TP_PLUGIN_OP_SOFTMAX};
    int count = 0;
    tp_partition_region_info *regions = softmax_partition(claims, 1, &count);
    ck_assert_int_eq(count, 1);
    ck_assert_str_eq(regions[0].backend, "partial");
    ck_assert_int_eq(regions[0].num_nodes, 1); /* the softmax itself */
    tp_free(regions);
}
END_TEST

START_TEST(an_unclaimed_softmax_is_decomposed_into_ops_the_backend_claims) {
    /* softmax = exp(x - max(x)) / sum(exp(x - max(x))): max, sub, exp, sum, div. */
    static const int32_t claims[] = {TP_PLUGIN_OP_MAX, TP_PLUGIN_OP_SUB, TP_PLUGIN_OP_EXP,
                                     TP_PLUGIN_OP_SUM, TP_PLUGIN_OP_DIV};
    int count = 0;
    tp_partition_region_info *regions = softmax_partition(claims, 5, &count);
    ck_assert_int_eq(count, 1);
    ck_assert_str_eq(regions[0].backend, "partial");
    ck_assert_int_ge(regions[0].num_nodes, 5);
    tp_free(regions);
}
END_TEST

/* ---- describing -------------------------------------------------------------------------- */

START_TEST(describe_shows_which_node_goes_where_and_why) {
    setup_partial();
    tp_graph *graph = load_example("softmax_classifier.tpir");
    char *text = NULL;
    ck_assert_msg(tp_partition_describe(graph, "partial", "eager", &text) == TP_OK, "%s",
                  tp_last_error());
    /* After the passes: linear = add(matmul(x, transpose(w)), b), then
     * log_softmax's max, sub, exp, sum, log, sub, then argmax. transpose
     * runs first on eager, matmul + add on partial, the rest on eager;
     * transpose's and add's results cross. */
    ck_assert_msg(strstr(text, "nodes: partial 2, eager 8; regions 3; tensors crossing 2\n"), "%s",
                  text);
    ck_assert_msg(strstr(text, "region 0: eager (1 node)\n"
                               "  %3 = transpose  # refused by 'partial': not one of the "
                               "fixture's ops\n"
                               "region 1: partial (2 nodes)\n"
                               "  %4 = matmul\n"
                               "  %5 = add\n"
                               "region 2: eager (7 nodes)\n"),
                  "%s", text);
    tp_free(text);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(describe_with_fallback_none_marks_unclaimed_regions_as_errors) {
    setup_partial();
    tp_graph *graph = load_example("softmax_classifier.tpir");
    char *text = NULL;
    ck_assert_msg(tp_partition_describe(graph, "partial", "none", &text) == TP_OK, "%s",
                  tp_last_error());
    ck_assert_msg(strstr(text, "region 0: unclaimed, an error with fallback_backend 'none' (1 "
                               "node)\n"),
                  "%s", text);
    ck_assert_msg(strstr(text, "region 1: partial (2 nodes)\n"), "%s", text);
    tp_free(text);
    tp_graph_destroy(graph);
}
END_TEST

/* ---- refusals ---------------------------------------------------------------------- */

static const char *compile_error(const char *example, const char *fallback, bool fullgraph) {
    setup_partial();
    tp_graph *graph = load_example(example);
    tp_tensor *inputs[16] = {0}, *outputs[8] = {0};
    random_inputs(graph, 3, inputs);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "partial";
    options.fallback_backend = fallback;
    options.fullgraph = fullgraph;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile_graph(graph, &options, &compiled), TP_OK);
    tp_arg args[16];
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) args[i] = tp_arg_tensor(inputs[i]);
    ck_assert_int_ne(tp_call(compiled, args, tp_graph_num_inputs(graph), outputs), TP_OK);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
    tp_compiled_free(compiled);
    tp_graph_destroy(graph);
    return tp_last_error();
}

START_TEST(fallback_none_names_each_unclaimed_op_and_the_reason) {
    const char *error = compile_error("softmax_classifier.tpir", "none", false);
    ck_assert_msg(strstr(error, "fallback_backend is 'none'") != NULL, "%s", error);
    /* The passes renumber values; the op names and the reason stay. */
    ck_assert_msg(strstr(error, "argmax %") != NULL, "%s", error);
    ck_assert_msg(strstr(error, "exp %") != NULL, "%s", error);
    ck_assert_msg(strstr(error, "(not one of the fixture's ops)") != NULL, "%s", error);
    ck_assert_msg(strstr(error, "matmul") == NULL, "claimed ops are not listed: %s", error);
}
END_TEST

START_TEST(fullgraph_refuses_a_split_and_lists_the_unclaimed_ops) {
    const char *error = compile_error("softmax_classifier.tpir", "eager", true);
    ck_assert_msg(strstr(error, "fullgraph") != NULL, "%s", error);
    ck_assert_msg(strstr(error, "argmax %") != NULL, "%s", error);
}
END_TEST

/* ---- configuration and logging ------------------------------------------------------ */

/* softmax_classifier on `partial` with options.fallback_backend = `option`;
 * the status of the first call. */
static tp_status call_with_fallback(const char *option) {
    tp_graph *graph = load_example("softmax_classifier.tpir");
    tp_tensor *inputs[16] = {0}, *outputs[8] = {0};
    random_inputs(graph, 3, inputs);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "partial";
    options.fallback_backend = option;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile_graph(graph, &options, &compiled), TP_OK);
    tp_arg args[16];
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) args[i] = tp_arg_tensor(inputs[i]);
    tp_status status = tp_call(compiled, args, tp_graph_num_inputs(graph), outputs);
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) tp_tensor_release(outputs[i]);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
    tp_compiled_free(compiled);
    tp_graph_destroy(graph);
    return status;
}

START_TEST(fallback_backend_follows_option_then_environment_then_ini) {
    setup_partial();
    char path[4200];
    snprintf(path, sizeof path, "%s/tensorplay.ini", tp_test_temp_dir());
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("[compile]\nfallback_backend = none\n", file);
    fclose(file);
    setenv("TP_CONFIG", path, 1);
    unsetenv("TP_FALLBACK_BACKEND");
    tp_config_reload();
    ck_assert_int_ne(call_with_fallback(NULL), TP_OK); /* ini: none */
    ck_assert_msg(strstr(tp_last_error(), "fallback_backend is 'none'"), "%s", tp_last_error());
    setenv("TP_FALLBACK_BACKEND", "eager", 1);
    tp_config_reload();
    ck_assert_msg(call_with_fallback(NULL) == TP_OK, "%s", tp_last_error()); /* env wins */
    ck_assert_int_ne(call_with_fallback("none"), TP_OK);                     /* option wins */
    ck_assert_int_ne(call_with_fallback("no_such_backend"), TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "fallback_backend 'no_such_backend'"), "%s",
                  tp_last_error());
    unsetenv("TP_CONFIG");
    unsetenv("TP_FALLBACK_BACKEND");
    tp_config_reload();
}
END_TEST

static char logged[4096];
static void keep_partition_lines(tp_log_level level, const char *message, void *user) {
    (void)user;
    if (level == TP_LOG_INFO && strstr(message, "partition"))
        snprintf(logged + strlen(logged), sizeof logged - strlen(logged), "%s\n", message);
}

START_TEST(info_log_has_one_partition_line_per_compile) {
    setup_partial();
    logged[0] = '\0';
    tp_set_log_level(TP_LOG_INFO);
    tp_set_log_handler(keep_partition_lines, NULL);
    ck_assert_msg(call_with_fallback("eager") == TP_OK, "%s", tp_last_error());
    tp_set_log_handler(NULL, NULL);
    /* transpose on eager, matmul + add on partial, the rest (7) on eager. */
    ck_assert_msg(strstr(logged, "partition nodes: eager 8, partial 2; regions 3;"), "%s", logged);
    ck_assert_ptr_null(strchr(strchr(logged, '\n') + 1, '\n')); /* one line */
}
END_TEST

/* ---- random graphs ------------------------------------------------------------------ */

START_TEST(random_partitions_are_convex_and_cover_every_node_once) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        tp_graph *graph = NULL;
        ck_assert_int_eq(random_graph(seed, 60, &graph), TP_OK);
        random_source rng = {seed + 99};
        int32_t count = graph->num_values;
        int32_t *color = calloc((size_t)count, sizeof *color);
        int num_colors = 1 + random_below(&rng, 3);
        for (int32_t v = 0; v < count; v++) color[v] = random_below(&rng, num_colors);
        tp_partition partition;
        ck_assert_int_eq(tp_partition_compute(graph, color, num_colors, &partition), TP_OK);
        int64_t covered = 0;
        for (int32_t r = 0; r < partition.num_regions; r++) covered += partition.region_size[r];
        int64_t nodes = 0;
        for (int32_t v = 0; v < count; v++) {
            const tp_value *value = &graph->values[v];
            if (!value->op) {
                ck_assert_int_eq(partition.region_of[v], -1);
                continue;
            }
            nodes++;
            int32_t region = partition.region_of[v];
            ck_assert(region >= 0 && region < partition.num_regions);
            ck_assert_int_eq(partition.region_color[region], color[v]);
            /* Every edge goes to the same or a later region: a path that
             * leaves a region can never come back (convex). */
            for (int32_t k = 0; k < value->num_operands; k++) {
                int32_t from = partition.region_of[value->operands[k]];
                ck_assert_int_le(from, region);
            }
        }
        ck_assert_int_eq(covered, nodes);
        tp_partition_clear(&partition);
        free(color);
        tp_graph_destroy(graph);
    }
}
END_TEST

START_TEST(random_graphs_with_random_claims_equal_eager) {
    ck_assert_int_eq(tp_backend_register(&partial_table, NULL), TP_OK);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        random_source rng = {seed * 7 + 3};
        memset(claimed_ops, 0, sizeof claimed_ops);
        for (int op = 0; op < TP_PLUGIN_OP_COUNT; op++) claimed_ops[op] = random_below(&rng, 2);
        tp_graph *graph = NULL;
        ck_assert_int_eq(random_graph(seed, 40, &graph), TP_OK);
        tp_tensor *inputs[64] = {0}, *got[64] = {0}, *want[64] = {0};
        random_inputs(graph, seed, inputs);
        tp_compiled *partitioned = run_graph(graph, "partial", "eager", inputs, got);
        tp_compiled *reference = run_graph(graph, "eager", NULL, inputs, want);
        for (int i = 0; i < tp_graph_num_outputs(graph); i++) {
            assert_close(got[i], want[i]);
            tp_tensor_release(got[i]), tp_tensor_release(want[i]);
        }
        for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
        tp_compiled_free(partitioned);
        tp_compiled_free(reference);
        tp_graph_destroy(graph);
    }
}
END_TEST

TP_TEST_SUITE(compile_partition) {
    Suite *suite = suite_create("compile.partition");
    TCase *tc = tcase_create("partition");
    tcase_add_test(tc, mlp_is_claimed_whole_and_compiles_as_one_region);
    tcase_add_test(tc, examples_split_between_partial_and_eager_equal_eager);
    tcase_add_test(tc, examples_split_between_partial_and_stax_equal_eager);
    tcase_add_test(tc, examples_split_between_partial_and_opencl_equal_eager);
    tcase_add_test(tc, a_conv_net_runs_on_opencl_through_the_fallback_and_equals_eager);
    tcase_add_test(tc, a_conv_net_runs_on_cuda_through_the_fallback_and_equals_eager);
    tcase_add_test(tc, a_claimed_softmax_is_not_decomposed);
    tcase_add_test(tc, an_unclaimed_softmax_is_decomposed_into_ops_the_backend_claims);
    tcase_add_test(tc, describe_shows_which_node_goes_where_and_why);
    tcase_add_test(tc, describe_with_fallback_none_marks_unclaimed_regions_as_errors);
    tcase_add_test(tc, fallback_backend_follows_option_then_environment_then_ini);
    tcase_add_test(tc, info_log_has_one_partition_line_per_compile);
    tcase_add_test(tc, fallback_none_names_each_unclaimed_op_and_the_reason);
    tcase_add_test(tc, fullgraph_refuses_a_split_and_lists_the_unclaimed_ops);
    tcase_add_test(tc, random_partitions_are_convex_and_cover_every_node_once);
    tcase_add_test(tc, random_graphs_with_random_claims_equal_eager);
    suite_add_tcase(suite, tc);
    return suite;
}
