/* tp-bench compiles what a user's tp_compile_graph compiles
 * (tools/tp-bench/pass_pipeline.c): the case's graph after the core's pass
 * pipeline with the options tp_compile uses for the backend, constants
 * folded, the composites a backend claims kept, every composite decomposed
 * for a backend without claims (the built-in eager one), as tp_compile does.
 * The backend with claims is a stand-in registered here that claims every
 * node and never compiles. */
#include <string.h>

#include "pass_pipeline.h"
#include "tensorplay/plugin.h"
#include "tp_test.h"

static int32_t claims_init(const tp_plugin_host *host, void **context) {
    *context = (void *)host;
    return TP_PLUGIN_OK;
}
static int32_t claims_supports(void *context, const tp_plugin_graph *graph, int32_t value) {
    (void)context, (void)graph, (void)value;
    return TP_PLUGIN_OK;
}
static int32_t claims_compile(void *context, const tp_plugin_graph *graph,
                              const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                              const tp_plugin_option *options, int32_t num_options,
                              tp_plugin_executable **out) {
    const tp_plugin_host *host = context;
    (void)graph, (void)inputs, (void)num_inputs, (void)options, (void)num_options, (void)out;
    host->set_error(host, "the claims stand-in never compiles");
    return TP_PLUGIN_ERROR;
}
static int32_t claims_run(void *context, tp_plugin_executable *executable,
                          const tp_plugin_buffer *inputs, int32_t num_inputs,
                          tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context, (void)executable, (void)inputs, (void)num_inputs, (void)outputs;
    (void)num_outputs;
    return TP_PLUGIN_ERROR;
}
static void claims_release(void *context, tp_plugin_executable *executable) {
    (void)context, (void)executable;
}

static const tp_plugin_backend claims_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "bench_claims",
    .version = "test",
    .description = "claims every node (contract revision 2); never compiles",
    .calls = {.init = claims_init,
              .supports = claims_supports,
              .compile = claims_compile,
              .run = claims_run,
              .release = claims_release},
};

static const char graph_text[] = "graph g(%x: f32[2, 4], %w: f32[4], %b: f32[4]) {\n"
                                 "  %one: f32[] = full() {shape=[], dtype=f32, value=1}\n"
                                 "  %two: f32[] = full() {shape=[], dtype=f32, value=2}\n"
                                 "  %three: f32[] = add(%one, %two)\n"
                                 "  %y: f32[2, 4] = mul(%x, %three)\n"
                                 "  %z: f32[2, 4] = layer_norm(%y, %w, %b) {axis=-1, eps=1e-05}\n"
                                 "  return %z\n"
                                 "}\n";

/* How many nodes of `graph` run `op`. */
static int count_op(const tp_graph *graph, const char *op) {
    int count = 0;
    for (tp_value_id v = 0; v < tp_graph_num_values(graph); v++) {
        const char *name = tp_graph_value_op(graph, v);
        count += name && !strcmp(name, op);
    }
    return count;
}

START_TEST(the_graph_compiled_is_the_one_tp_compile_hands_the_backend) {
    tp_graph *g = NULL, *kept = NULL, *decomposed = NULL;
    ck_assert_int_eq(tp_graph_parse(graph_text, strlen(graph_text), "g.tpir", &g), TP_OK);
    ck_assert_int_eq(tp_backend_register(&claims_table, NULL), TP_OK);
    tp_backend *claims = NULL, *eager = NULL;
    ck_assert_msg(tp_backend_lookup("bench_claims", &claims) == TP_OK, "%s", tp_last_error());
    ck_assert_msg(tp_backend_lookup("eager", &eager) == TP_OK, "%s", tp_last_error());
    double seconds = -1;
    ck_assert_msg(bench_pass_pipeline(claims, g, &kept, &seconds) == TP_OK, "%s", tp_last_error());
    ck_assert(seconds >= 0);
    /* 1 + 2 folded: the add of two constants is gone, the multiply stays */
    ck_assert_int_eq(count_op(g, "add"), 1);
    ck_assert_int_eq(count_op(kept, "add"), 0);
    ck_assert_int_eq(count_op(kept, "mul"), 1);
    /* the claimed composite is kept whole */
    ck_assert_int_eq(count_op(kept, "layer_norm"), 1);
    /* a backend without claims gets it decomposed, as tp_compile gives it */
    ck_assert_msg(bench_pass_pipeline(eager, g, &decomposed, &seconds) == TP_OK, "%s",
                  tp_last_error());
    ck_assert_int_eq(count_op(decomposed, "layer_norm"), 0);
    ck_assert_int_gt(tp_graph_num_values(decomposed), tp_graph_num_values(kept));
    ck_assert_int_eq(tp_backend_unregister("bench_claims"), TP_OK);
    tp_graph_destroy(decomposed);
    tp_graph_destroy(kept);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(pass_pipeline) {
    Suite *suite = suite_create("bench.pass_pipeline");
    TCase *tc = tcase_create("pass_pipeline");
    tcase_add_test(tc, the_graph_compiled_is_the_one_tp_compile_hands_the_backend);
    suite_add_tcase(suite, tc);
    return suite;
}
