/* The graph view a revision-2 backend receives: values, operands, and per
 * node what the op table says (op id, kind, compute and result dtypes); no
 * fusion plan (fusion is the backend's). An in-process backend records what
 * its compile saw. */
#include <string.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"
#include "tp_test.h"

#define MAX_SEEN 32
static int seen_count;
static char seen_names[MAX_SEEN][32];
static int32_t seen_regions[MAX_SEEN];
static tp_plugin_node seen_nodes[MAX_SEEN];
static uint32_t seen_struct_size;

typedef struct recorder {
    const tp_plugin_host *host;
} recorder;
static recorder the_recorder;

static int32_t recording_init(const tp_plugin_host *host, void **context) {
    the_recorder.host = host;
    *context = &the_recorder;
    return TP_PLUGIN_OK;
}

static int32_t recording_compile(void *context, const tp_plugin_graph *graph,
                                 const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                 const tp_plugin_option *options, int32_t num_options,
                                 tp_plugin_executable **executable) {
    recorder *self = context;
    seen_struct_size = graph->struct_size;
    seen_count = graph->num_values < MAX_SEEN ? graph->num_values : MAX_SEEN;
    for (int i = 0; i < seen_count; i++) {
        snprintf(seen_names[i], sizeof seen_names[i], "%s", graph->values[i].name);
        seen_regions[i] = graph->values[i].fusion_region;
        seen_nodes[i] = graph->nodes[i];
    }
    self->host->set_error(self->host, "recording backend: compile only records the view");
    return TP_PLUGIN_ERROR;
}

static int32_t recording_run(void *context, tp_plugin_executable *executable,
                             const tp_plugin_buffer *inputs, int32_t num_inputs,
                             tp_plugin_buffer *outputs, int32_t num_outputs) {
    return TP_PLUGIN_ERROR;
}
static void recording_release(void *context, tp_plugin_executable *executable) {}

static const tp_plugin_backend recording_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "view_recorder",
    .version = "1",
    .description = "records the graph view it is given",
    .calls = {.init = recording_init,
              .compile = recording_compile,
              .run = recording_run,
              .release = recording_release},
};

/* Mixed dtypes, so each compute rule shows: NumPy computes i32 / i32 in a
 * float (f32 here: integers divide in f32), i32 + f64 in f64, sum of i32 in
 * i64, a comparison of i32 with f32 in f32 (result bool), where's values in
 * their promoted dtype, and tanh of i32 in f32. */
static const char graph_text[] = "graph mixed(%i: i32[4], %j: i32[4], %d: f64[4], %f: f32[4]) {\n"
                                 "  %q: f32[4] = div(%i, %j)\n"
                                 "  %p: f64[4] = add(%i, %d)\n"
                                 "  %s: i64[] = sum(%i) {axes=[], keepdim=false}\n"
                                 "  %c: bool[4] = lt(%i, %f)\n"
                                 "  %w: f64[4] = where(%c, %f, %d)\n"
                                 "  %t: f32[4] = tanh(%j)\n"
                                 "  %m: f32[] = matmul(%f, %f)\n"
                                 "  return %q, %p, %s, %w, %t\n"
                                 "}\n";

static const tp_plugin_node *node_of(const char *name) {
    for (int i = 0; i < seen_count; i++)
        if (strcmp(seen_names[i], name) == 0) return &seen_nodes[i];
    ck_abort_msg("value %%%s not in the view", name);
    return NULL;
}

static void expect_node(const char *name, int32_t op_id, int32_t kind, int32_t compute,
                        int32_t result) {
    const tp_plugin_node *node = node_of(name);
    ck_assert_msg(node->op_id == op_id && node->kind == kind && node->compute_dtype == compute &&
                      node->result_dtype == result,
                  "%%%s: op %d kind %d compute %d result %d, want %d %d %d %d", name, node->op_id,
                  node->kind, node->compute_dtype, node->result_dtype, op_id, kind, compute,
                  result);
}

START_TEST(view_carries_op_ids_kinds_and_compute_dtypes) {
    ck_assert_int_eq(tp_backend_register(&recording_table, "debug"), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("view_recorder", &backend), TP_OK);
    tp_graph *graph = NULL;
    ck_assert_msg(tp_graph_parse(graph_text, strlen(graph_text), "mixed.tpir", &graph) == TP_OK,
                  "%s", tp_last_error());
    tp_executable *executable = NULL;
    ck_assert_int_eq(tp_backend_compile(backend, graph, NULL, 0, NULL, 0, &executable),
                     TP_ERR_BACKEND);
    ck_assert_msg(strstr(tp_last_error(), "compile only records the view"), "%s", tp_last_error());
    ck_assert_uint_ge(seen_struct_size, TP_PLUGIN_GRAPH_SIZE_V2);
    ck_assert_int_eq(seen_count, 11);
    expect_node("i", -1, -1, TP_PLUGIN_I32, TP_PLUGIN_I32);
    expect_node("q", TP_PLUGIN_OP_DIV, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32, TP_PLUGIN_F32);
    expect_node("p", TP_PLUGIN_OP_ADD, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F64, TP_PLUGIN_F64);
    expect_node("s", TP_PLUGIN_OP_SUM, TP_PLUGIN_KIND_REDUCTION, TP_PLUGIN_I64, TP_PLUGIN_I64);
    expect_node("c", TP_PLUGIN_OP_LT, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32, TP_PLUGIN_BOOL);
    expect_node("w", TP_PLUGIN_OP_WHERE, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F64, TP_PLUGIN_F64);
    expect_node("t", TP_PLUGIN_OP_TANH, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32, TP_PLUGIN_F32);
    expect_node("m", TP_PLUGIN_OP_MATMUL, TP_PLUGIN_KIND_MATMUL, TP_PLUGIN_F32, TP_PLUGIN_F32);
    for (int i = 0; i < seen_count; i++)
        ck_assert_msg(seen_regions[i] == -1, "%%%s carries fusion region %d", seen_names[i],
                      seen_regions[i]);
    tp_graph_destroy(graph);
    ck_assert_int_eq(tp_backend_unregister("view_recorder"), TP_OK);
}
END_TEST

TP_TEST_SUITE(registry_graph_view) {
    Suite *suite = suite_create("registry.graph_view");
    TCase *tc = tcase_create("graph_view");
    tcase_add_test(tc, view_carries_op_ids_kinds_and_compute_dtypes);
    suite_add_tcase(suite, tc);
    return suite;
}
