/* The graph view a backend receives: values, operands, attributes and the
 * fusion regions of the core's fusion pass. An in-process backend records
 * what its compile saw. */
#include <string.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/plugin.h"
#include "tp_test.h"

#define MAX_SEEN 32
static int seen_count;
static char seen_ops[MAX_SEEN][32];
static int32_t seen_regions[MAX_SEEN];

static int32_t recording_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                                 int32_t num_inputs, const tp_plugin_option *options,
                                 int32_t num_options, tp_plugin_executable **executable,
                                 char *error, size_t error_size) {
    seen_count = graph->num_values < MAX_SEEN ? graph->num_values : MAX_SEEN;
    for (int i = 0; i < seen_count; i++) {
        const char *op = graph->values[i].op;
        snprintf(seen_ops[i], sizeof seen_ops[i], "%s", op ? op : "(input)");
        seen_regions[i] = graph->values[i].fusion_region;
    }
    snprintf(error, error_size, "recording backend: compile only records the view");
    return TP_PLUGIN_ERROR;
}

static int32_t recording_init(const tp_plugin_host *host) {
    return TP_PLUGIN_OK;
}
static int32_t recording_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                             int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    return TP_PLUGIN_ERROR;
}
static void recording_release(tp_plugin_executable *executable) {}

static const tp_plugin_backend recording_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = TP_BACKEND_CONTRACT_VERSION,
    .name = "view_recorder",
    .version = "1",
    .description = "records the graph view it is given",
    .init = recording_init,
    .compile = recording_compile,
    .run = recording_run,
    .release = recording_release,
};

/* t = tanh(x * w + b) then s = sum(t) over axis 1; m = matmul(t, w2) reads t
 * outside the region. Regions: {mul, add, tanh, sum} and nothing for matmul. */
static const char graph_text[] =
    "graph fused(%x: f32[4, 8], %w: f32[8], %b: f32[8], %w2: f32[8, 3]) {\n"
    "  %m: f32[4, 8] = mul(%x, %w)\n"
    "  %a: f32[4, 8] = add(%m, %b)\n"
    "  %t: f32[4, 8] = tanh(%a)\n"
    "  %s: f32[4] = sum(%t) {axes=[1], keepdim=false}\n"
    "  %p: f32[4, 3] = matmul(%t, %w2)\n"
    "  return %s, %p\n"
    "}\n";

static int32_t region_of(const char *op) {
    for (int i = 0; i < seen_count; i++)
        if (strcmp(seen_ops[i], op) == 0) return seen_regions[i];
    ck_abort_msg("op %s not in the view", op);
    return -2;
}

START_TEST(view_carries_the_core_fusion_regions) {
    ck_assert_int_eq(tp_backend_register(&recording_table, "debug"), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("view_recorder", &backend), TP_OK);
    tp_graph *graph = NULL;
    ck_assert_msg(tp_graph_parse(graph_text, strlen(graph_text), "fused.tpir", &graph) == TP_OK,
                  "%s", tp_last_error());
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable),
                     TP_ERR_BACKEND);
    ck_assert_int_eq(seen_count, 9);
    ck_assert_int_eq(region_of("(input)"), -1);
    int32_t region = region_of("mul");
    ck_assert_int_ge(region, 0);
    ck_assert_int_eq(region_of("add"), region);
    ck_assert_int_eq(region_of("tanh"), region);
    ck_assert_int_eq(region_of("sum"), region);
    ck_assert_int_eq(region_of("matmul"), -1);
    tp_graph_destroy(graph);
    ck_assert_int_eq(tp_backend_unregister("view_recorder"), TP_OK);
}
END_TEST

TP_TEST_SUITE(registry_graph_view) {
    Suite *suite = suite_create("registry.graph_view");
    TCase *tc = tcase_create("graph_view");
    tcase_add_test(tc, view_carries_the_core_fusion_regions);
    suite_add_tcase(suite, tc);
    return suite;
}
