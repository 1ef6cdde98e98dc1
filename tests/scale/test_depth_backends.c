/* Depth on every backend: a chain of 100,000 adds (scale_chains.h) compiles
 * and runs on eager, stax and opencl and gives (N + 1) * x exactly. Before
 * the lowering walks used explicit stacks, about 2,000 nodes overflowed the
 * C stack in stax and about 4,500 in opencl. A pointwise chain fuses, and
 * a fused region holds at most TPCOMMON_FUSION_MAX_MEMBERS nodes, so the
 * chain also checks that cut regions hand their values on correctly. A chain
 * that cannot fuse (matmul, add, matmul, ...) checks many small kernels. */
#include <stdio.h>

#include "scale_chains.h"
#include "tensorplay/compile.h"
#include "tp_test.h"

static void temp_caches(void) {
    char path[4300];
    snprintf(path, sizeof path, "%s/cache", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", path, 1);
    snprintf(path, sizeof path, "%s/pocl", tp_test_temp_dir());
    setenv("POCL_CACHE_DIR", path, 1);
}

static bool backend_available(const char *name) {
    tp_backend *backend = NULL;
    if (tp_backend_lookup(name, &backend) == TP_OK) return true;
    fprintf(stderr, "scale: %s is unavailable here, its depth test checks nothing: %s\n", name,
            tp_last_error());
    return false;
}

static void run_add_chain(const char *backend) {
    if (!backend_available(backend)) return;
    temp_caches();
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    tp_tensor *x = scale_chain_input();
    tp_tensor *out = scale_run(backend, graph, x);
    char what[64];
    snprintf(what, sizeof what, "%s, %d adds", backend, nodes);
    scale_expect_multiple(out, nodes + 1.0, what);
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}

START_TEST(add_chain_runs_on_eager) {
    run_add_chain("eager");
}
END_TEST

START_TEST(add_chain_runs_on_stax) {
    run_add_chain("stax");
}
END_TEST

START_TEST(add_chain_runs_on_opencl) {
    run_add_chain("opencl");
}
END_TEST

/* The whole path a user takes: tp_compile_graph (pass pipeline, claims,
 * partition, backend compile) and tp_call. */
static void compile_graph_add_chain(const char *backend) {
    if (!backend_available(backend)) return;
    temp_caches();
    int nodes = scale_chain_nodes();
    tp_graph *graph = scale_add_chain(nodes, NULL);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    tp_compiled *compiled = NULL;
    tp_status status = tp_compile_graph(graph, &options, &compiled);
    ck_assert_msg(status == TP_OK, "%s: tp_compile_graph: %s", backend, tp_last_error());
    tp_tensor *x = scale_chain_input(), *out = NULL;
    tp_arg arg = tp_arg_tensor(x);
    status = tp_call(compiled, &arg, 1, &out);
    ck_assert_msg(status == TP_OK, "%s: tp_call: %s", backend, tp_last_error());
    char what[64];
    snprintf(what, sizeof what, "tp_compile_graph on %s, %d adds", backend, nodes);
    scale_expect_multiple(out, nodes + 1.0, what);
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_compiled_free(compiled);
    tp_graph_destroy(graph);
}

START_TEST(add_chain_compiles_as_a_graph_function_on_eager) {
    compile_graph_add_chain("eager");
}
END_TEST

START_TEST(add_chain_compiles_as_a_graph_function_on_stax) {
    compile_graph_add_chain("stax");
}
END_TEST

/* x: f32[1, 4]; `pairs` times v = matmul(v, identity) + x: (pairs + 1) * x.
 * Every matmul is a region of its own (with its add as the epilogue). */
static tp_graph *matmul_chain(int pairs) {
    tp_graph *graph = NULL;
    tp_type x_type = {.dtype = TP_F32, .ndim = 2, .dims = {1, 4}};
    ck_assert_int_eq(tp_graph_create("matmul_chain", &graph), TP_OK);
    tp_value_id x = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &x_type, &x), TP_OK);
    float eye[16] = {0};
    for (int i = 0; i < 4; i++) eye[i * 5] = 1.0f;
    int64_t shape[2] = {4, 4};
    tp_tensor *payload = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 2, shape, eye, &payload), TP_OK);
    tp_attrs constant = TP_ATTRS_INIT;
    constant.data = payload;
    tp_value_id identity = scale_node(graph, "constant", 0, 0, 0, &constant);
    tp_tensor_release(payload);
    tp_value_id v = x;
    for (int i = 0; i < pairs; i++)
        v = scale_node(graph, "add", scale_node(graph, "matmul", v, identity, 2, NULL), x, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &v, 1), TP_OK);
    return graph;
}

static void run_matmul_chain(const char *backend, int pairs) {
    if (!backend_available(backend)) return;
    temp_caches();
    tp_graph *graph = matmul_chain(pairs);
    tp_tensor *x = scale_chain_input();
    int64_t shape[2] = {1, 4};
    tp_tensor *row = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, shape, &row), TP_OK);
    ck_assert_int_eq(tp_tensor_copy_from(row, tp_tensor_data(x), tp_tensor_nbytes(x)), TP_OK);
    tp_tensor *out = scale_run(backend, graph, row);
    char what[64];
    snprintf(what, sizeof what, "%s, %d matmul + add", backend, pairs);
    scale_expect_multiple(out, pairs + 1.0, what);
    tp_tensor_release(out);
    tp_tensor_release(row);
    tp_tensor_release(x);
    tp_graph_destroy(graph);
}

/* 2,000 nodes: past stax's old limit, in kernels that each do little. */
START_TEST(matmul_chain_runs_on_stax) {
    run_matmul_chain("stax", 1000);
}
END_TEST

START_TEST(matmul_chain_runs_on_eager) {
    run_matmul_chain("eager", 1000);
}
END_TEST

/* PoCL compiles each kernel on its first launch (a fixed cost of a few
 * hundred milliseconds each on a loaded machine), so fewer regions here. */
START_TEST(matmul_chain_runs_on_opencl) {
    run_matmul_chain("opencl", 40);
}
END_TEST

TP_TEST_SUITE(depth_backends) {
    Suite *suite = suite_create("depth_backends");
    TCase *chains = tcase_create("chains");
    tcase_set_timeout(chains, 900);
    tcase_add_test(chains, add_chain_runs_on_eager);
    tcase_add_test(chains, add_chain_runs_on_stax);
    tcase_add_test(chains, add_chain_runs_on_opencl);
    tcase_add_test(chains, add_chain_compiles_as_a_graph_function_on_eager);
    tcase_add_test(chains, add_chain_compiles_as_a_graph_function_on_stax);
    tcase_add_test(chains, matmul_chain_runs_on_eager);
    tcase_add_test(chains, matmul_chain_runs_on_stax);
    tcase_add_test(chains, matmul_chain_runs_on_opencl);
    suite_add_tcase(suite, chains);
    return suite;
}
