/* What stax claims through calls.supports and refuses at compile, on
 * hand-made graph views (the core's builder refuses such graphs): an op id
 * newer than stax's plugin_ops.h and a dtype stax does not lower are refused
 * as TP_PLUGIN_UNSUPPORTED with a reason naming the op; a row composite is
 * claimed (stax has a kernel for it); two contexts from two init calls work
 * independently (no global host table). */
#include <dlfcn.h>

#include "stax_harness.h"

static void host_parallel_for(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *ctx) {
    (void)grain;
    fn(ctx, 0, n);
}
static int32_t host_threads(void) {
    return 1;
}

/* %c = OP(%a, %b) on DTYPE[4] operands: a hand-made view with its nodes. */
typedef struct binary_view {
    int32_t operands[2], inputs[2], outputs[1];
    tp_plugin_value values[3];
    tp_plugin_node nodes[3];
    tp_plugin_graph graph;
    tp_plugin_tensor_meta meta[2];
} binary_view;

static void make_binary_view(binary_view *b, const char *op, int32_t dtype) {
    memset(b, 0, sizeof *b);
    b->operands[0] = b->inputs[0] = 0;
    b->operands[1] = b->inputs[1] = 1;
    b->outputs[0] = 2;
    tp_plugin_type type = {.dtype = dtype, .ndim = 1, .dims = {4}};
    b->values[0] = (tp_plugin_value){.name = "a", .type = type, .fusion_region = -1};
    b->values[1] = (tp_plugin_value){.name = "b", .type = type, .fusion_region = -1};
    b->values[2] = (tp_plugin_value){.name = "c",
                                     .op = op,
                                     .type = type,
                                     .num_operands = 2,
                                     .operands = b->operands,
                                     .fusion_region = -1};
    stax_direct_fill_nodes(b->values, 3, b->nodes);
    b->graph = (tp_plugin_graph){.struct_size = sizeof b->graph,
                                 .name = "handmade",
                                 .num_values = 3,
                                 .values = b->values,
                                 .num_inputs = 2,
                                 .inputs = b->inputs,
                                 .num_outputs = 1,
                                 .outputs = b->outputs,
                                 .nodes = b->nodes};
    for (int i = 0; i < 2; i++)
        b->meta[i] = (tp_plugin_tensor_meta){.dtype = dtype, .ndim = 1, .dims = {4}};
}

static int32_t supports(stax_direct *d, const binary_view *b, int32_t value) {
    stax_direct_error[0] = 0;
    return d->table->calls.supports(d->context, &b->graph, value);
}

START_TEST(supports_refuses_an_op_id_newer_than_stax_with_a_reason) {
    stax_direct d;
    stax_open_direct(&d, host_parallel_for, host_threads);
    binary_view b;
    make_binary_view(&b, "frobnicate", TP_PLUGIN_F32);
    ck_assert_int_eq(b.nodes[2].op_id, TP_PLUGIN_OP_COUNT);
    ck_assert_int_eq(supports(&d, &b, 2), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(stax_direct_error, "op 'frobnicate'") && strstr(stax_direct_error, "%c") &&
                      strstr(stax_direct_error, "does not know this op"),
                  "%s", stax_direct_error);
    stax_close_direct(&d);
}
END_TEST

START_TEST(supports_refuses_a_dtype_stax_does_not_lower_with_a_reason) {
    stax_direct d;
    stax_open_direct(&d, host_parallel_for, host_threads);
    binary_view b;
    make_binary_view(&b, "add", TP_PLUGIN_BOOL); /* add on bool: the op table's rules refuse it */
    ck_assert_int_eq(supports(&d, &b, 2), TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(stax_direct_error, "'add'") && strstr(stax_direct_error, "bool"), "%s",
                  stax_direct_error);
    make_binary_view(&b, "add", TP_PLUGIN_F32);
    ck_assert_int_eq(supports(&d, &b, 2), TP_PLUGIN_OK);
    stax_close_direct(&d);
}
END_TEST

START_TEST(supports_claims_the_row_composites_and_linear) {
    stax_direct d;
    stax_open_direct(&d, host_parallel_for, host_threads);
    static const char *const composites[] = {"softmax", "log_softmax", "layer_norm", "gelu",
                                             "silu",    "softplus",    "linear"};
    for (size_t i = 0; i < sizeof composites / sizeof composites[0]; i++) {
        binary_view b;
        make_binary_view(&b, composites[i], TP_PLUGIN_F32);
        ck_assert_msg(supports(&d, &b, 2) == TP_PLUGIN_OK, "%s: %s", composites[i],
                      stax_direct_error);
    }
    stax_close_direct(&d);
}
END_TEST

/* The window ops are claimed at f32 only; the indexing ops at every dtype,
 * the storage floats included (their kernel copies bits). */
START_TEST(supports_claims_f32_window_ops_and_the_indexing_ops_at_every_dtype) {
    stax_direct d;
    stax_open_direct(&d, host_parallel_for, host_threads);
    static const char *const windows[] = {"conv", "conv_transpose", "max_pool", "avg_pool"};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        binary_view b;
        make_binary_view(&b, windows[i], TP_PLUGIN_F32);
        ck_assert_msg(supports(&d, &b, 2) == TP_PLUGIN_OK, "%s: %s", windows[i], stax_direct_error);
        make_binary_view(&b, windows[i], TP_PLUGIN_F64);
        ck_assert_msg(supports(&d, &b, 2) == TP_PLUGIN_UNSUPPORTED, "%s f64 claimed", windows[i]);
    }
    static const char *const indexing[] = {"gather", "gather_elements"};
    static const int32_t dtypes[] = {TP_PLUGIN_F32,  TP_PLUGIN_F64, TP_PLUGIN_I32, TP_PLUGIN_I64,
                                     TP_PLUGIN_BOOL, TP_PLUGIN_F16, TP_PLUGIN_BF16};
    for (size_t i = 0; i < sizeof indexing / sizeof indexing[0]; i++)
        for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
            binary_view b;
            make_binary_view(&b, indexing[i], dtypes[t]);
            ck_assert_msg(supports(&d, &b, 2) == TP_PLUGIN_OK, "%s dtype %d: %s", indexing[i],
                          (int)dtypes[t], stax_direct_error);
        }
    stax_close_direct(&d);
}
END_TEST

START_TEST(compile_refuses_an_unknown_op_as_unsupported_naming_it) {
    stax_test_cache_dir();
    stax_direct d;
    stax_open_direct(&d, host_parallel_for, host_threads);
    binary_view b;
    make_binary_view(&b, "frobnicate", TP_PLUGIN_F32);
    tp_plugin_executable *exe = NULL;
    char error[512] = "";
    ck_assert_int_eq(stax_direct_compile(&d, &b.graph, b.meta, 2, &exe, error, sizeof error),
                     TP_PLUGIN_UNSUPPORTED);
    ck_assert_ptr_null(exe);
    ck_assert_msg(strstr(error, "op 'frobnicate'") && strstr(error, "%c"), "%s", error);
    stax_close_direct(&d);
}
END_TEST

/* 1 + 2 = 3 on both contexts, after the first is shut down: the second's
 * host table and JIT do not depend on the first. */
static void expect_add_runs(stax_direct *d) {
    binary_view b;
    make_binary_view(&b, "add", TP_PLUGIN_F32);
    tp_plugin_executable *exe = NULL;
    char error[512] = "";
    ck_assert_msg(stax_direct_compile(d, &b.graph, b.meta, 2, &exe, error, sizeof error) ==
                      TP_PLUGIN_OK,
                  "%s", error);
    static float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
    float z[4] = {0};
    tp_plugin_buffer in[2] = {
        {.data = x, .nbytes = sizeof x, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}},
        {.data = y, .nbytes = sizeof y, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}}};
    tp_plugin_buffer out = {
        .data = z, .nbytes = sizeof z, .dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    ck_assert_msg(stax_direct_run(d, exe, in, 2, &out, 1) == TP_PLUGIN_OK, "%s", stax_direct_error);
    for (int i = 0; i < 4; i++) ck_assert_float_eq(z[i], x[i] + y[i]);
    stax_direct_release(d, exe);
}

static char first_error[512];
static void first_set_error(const tp_plugin_host *host, const char *message) {
    (void)host;
    snprintf(first_error, sizeof first_error, "%s", message);
}

START_TEST(two_contexts_from_two_inits_work_independently) {
    stax_test_cache_dir();
    stax_direct first, second;
    stax_open_direct(&first, host_parallel_for, host_threads);
    first.host.set_error = first_set_error; /* the context keeps &first.host */
    stax_open_direct(&second, host_parallel_for, host_threads);
    ck_assert_ptr_ne(first.context, second.context);
    expect_add_runs(&first);
    expect_add_runs(&second);
    /* a refusal on the first context reaches the first host, though the
     * second was initialised last */
    binary_view b;
    make_binary_view(&b, "frobnicate", TP_PLUGIN_F32);
    first_error[0] = stax_direct_error[0] = 0;
    ck_assert_int_eq(first.table->calls.supports(first.context, &b.graph, 2),
                     TP_PLUGIN_UNSUPPORTED);
    ck_assert_msg(strstr(first_error, "frobnicate") != NULL, "first host got '%s'", first_error);
    ck_assert_str_eq(stax_direct_error, "");
    /* shutting the first down leaves the second (and the JIT it shares) working */
    stax_close_direct(&first);
    expect_add_runs(&second);
    stax_close_direct(&second);
}
END_TEST

TP_TEST_SUITE(stax_claims) {
    Suite *s = suite_create("stax_claims");
    TCase *c = tcase_create("claims");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, supports_refuses_an_op_id_newer_than_stax_with_a_reason);
    tcase_add_test(c, supports_refuses_a_dtype_stax_does_not_lower_with_a_reason);
    tcase_add_test(c, supports_claims_the_row_composites_and_linear);
    tcase_add_test(c, supports_claims_f32_window_ops_and_the_indexing_ops_at_every_dtype);
    tcase_add_test(c, compile_refuses_an_unknown_op_as_unsupported_naming_it);
    tcase_add_test(c, two_contexts_from_two_inits_work_independently);
    suite_add_tcase(s, c);
    return s;
}
