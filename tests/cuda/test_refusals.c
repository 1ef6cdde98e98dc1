/* What the cuda backend refuses at compile, and how it says so: an op or a
 * dtype it cannot lower is refused with plugin.h's "unsupported: ..." text
 * (naming the op, the value and the operand dtypes), a malformed option
 * value with the option and what is expected. The graph views are built by
 * hand here, so the ops and dtypes can be ones no core would produce. */
#include <string.h>

#include "tensorplay/plugin_ops.h"

#include "cuda_harness.h"

/* One input %x: f32[4] and one node %y = op(%x) of result dtype `dtype`. */
typedef struct one_node_graph {
    tp_plugin_value values[2];
    tp_plugin_node nodes[2];
    int32_t operands[1], inputs[1], outputs[1];
    tp_plugin_graph graph;
    tp_plugin_tensor_meta meta;
} one_node_graph;

/* The op id the core's view gives `name`; TP_PLUGIN_OP_COUNT (an op newer
 * than plugin_ops.h) for a name the op list lacks. */
static int32_t op_id_of(const char *name) {
#define OP_NAME(ID, NAME, KIND, MIN, MAX) NAME,
    static const char *const names[] = {TP_PLUGIN_OP_LIST(OP_NAME)};
#undef OP_NAME
    for (int32_t op = 0; op < TP_PLUGIN_OP_COUNT; op++)
        if (strcmp(names[op], name) == 0) return op;
    return TP_PLUGIN_OP_COUNT;
}

static void build(one_node_graph *g, const char *op, int32_t dtype) {
    memset(g, 0, sizeof *g);
    tp_plugin_type f32_4 = {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    g->values[0] = (tp_plugin_value){.name = "x", .type = f32_4, .fusion_region = -1};
    g->operands[0] = 0;
    g->values[1] = (tp_plugin_value){.name = "y",
                                     .op = op,
                                     .type = f32_4,
                                     .num_operands = 1,
                                     .operands = g->operands,
                                     .fusion_region = -1};
    g->values[1].type.dtype = dtype;
    g->inputs[0] = 0;
    g->outputs[0] = 1;
    /* the op computes in its operand's dtype (f32) on every case here */
    g->nodes[0] = (tp_plugin_node){-1, -1, TP_PLUGIN_F32, TP_PLUGIN_F32};
    g->nodes[1] = (tp_plugin_node){op_id_of(op), -1, TP_PLUGIN_F32, dtype};
    g->graph = (tp_plugin_graph){.struct_size = sizeof(tp_plugin_graph),
                                 .name = "refusal",
                                 .num_values = 2,
                                 .values = g->values,
                                 .num_inputs = 1,
                                 .inputs = g->inputs,
                                 .num_outputs = 1,
                                 .outputs = g->outputs,
                                 .nodes = g->nodes};
    g->meta = (tp_plugin_tensor_meta){.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
}

/* Compiles for PTX with `extra` as a second option; returns the status. */
static int32_t compile(const one_node_graph *g, const char *extra_key, const char *extra_value,
                       char *error, size_t error_size) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_plugin_option options[2] = {{"target", "ptx:compute_75"}, {extra_key, extra_value}};
    tp_plugin_executable *exe = NULL;
    int32_t status = p->table->compile(&g->graph, &g->meta, 1, options, extra_key ? 2 : 1, &exe,
                                       error, error_size);
    if (exe) p->table->release(exe);
    return status;
}

START_TEST(unknown_op_is_refused_as_unsupported_naming_op_value_and_dtype) {
    one_node_graph g;
    build(&g, "frobnicate", TP_PLUGIN_F32);
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, NULL, NULL, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strncmp(error, "unsupported: op 'frobnicate' (%y) on f32 operands", 49) == 0,
                  "%s", error);
}
END_TEST

START_TEST(unknown_result_dtype_is_refused_as_unsupported) {
    one_node_graph g;
    build(&g, "neg", 42); /* a dtype code from a newer core */
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, NULL, NULL, error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_msg(strncmp(error, "unsupported: op 'neg' (%y)", 26) == 0, "%s", error);
}
END_TEST

START_TEST(known_op_on_known_dtypes_compiles) {
    one_node_graph g;
    build(&g, "neg", TP_PLUGIN_F32);
    char error[4096] = "";
    ck_assert_msg(compile(&g, NULL, NULL, error, sizeof error) == TP_PLUGIN_OK, "%s", error);
}
END_TEST

START_TEST(cache_option_other_than_on_or_off_is_refused) {
    one_node_graph g;
    build(&g, "neg", TP_PLUGIN_F32);
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, "cache", "maybe", error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_str_eq(error, "option cache=maybe: expected on or off");
}
END_TEST

START_TEST(device_option_out_of_range_is_refused) {
    one_node_graph g;
    build(&g, "neg", TP_PLUGIN_F32);
    char error[1024] = "";
    ck_assert_int_eq(compile(&g, "device", "16", error, sizeof error), TP_PLUGIN_ERROR);
    ck_assert_str_eq(error, "option device=16: expected an integer from 0 to 15");
}
END_TEST

TP_TEST_SUITE(cuda_refusals) {
    Suite *suite = suite_create("cuda_refusals");
    TCase *cases = tcase_create("refusals");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, unknown_op_is_refused_as_unsupported_naming_op_value_and_dtype);
    tcase_add_test(cases, unknown_result_dtype_is_refused_as_unsupported);
    tcase_add_test(cases, known_op_on_known_dtypes_compiles);
    tcase_add_test(cases, cache_option_other_than_on_or_off_is_refused);
    tcase_add_test(cases, device_option_out_of_range_is_refused);
    suite_add_tcase(suite, cases);
    return suite;
}
