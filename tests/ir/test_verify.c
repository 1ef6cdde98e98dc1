/* The verifier (core/ir/verify.c): each test breaks one rule in a graph that
 * verifies, by editing the internal struct as a faulty pass would. */
#include <string.h>

#include "ir/graph_internal.h"
#include "ir_helpers.h"

/* %x: f32[2, 3] -> %t = transpose -> %s = softmax; returns %s. */
static tp_graph *valid_graph(void) {
    return ir_parse_ok("graph g(%x: f32[2, 3]) {\n"
                       "  %t: f32[3, 2] = transpose(%x) {dim0=0, dim1=1}\n"
                       "  %s: f32[3, 2] = softmax(%t) {axis=1}\n"
                       "  return %s\n"
                       "}\n");
}

static void expect_invalid(tp_graph *graph, const char *fragment) {
    ck_assert_int_eq(tp_graph_verify(graph), TP_ERR_INVALID_GRAPH);
    ck_assert_msg(strstr(tp_last_error(), fragment), "message '%s' lacks '%s'", tp_last_error(),
                  fragment);
    tp_graph_destroy(graph);
}

START_TEST(valid_graph_verifies) {
    tp_graph *graph = valid_graph();
    ck_assert_int_eq(tp_graph_verify(graph), TP_OK);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(operand_defined_after_use_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[1].operands[0] = 2; /* %t reads %s */
    expect_invalid(graph, "%t (transpose): operand 0 (id 2) is not defined before its use");
}
END_TEST

START_TEST(wrong_arity_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[2].num_operands = 0;
    expect_invalid(graph, "%s (softmax) has 0 operands; softmax takes 1 to 1");
}
END_TEST

START_TEST(undeclared_attribute_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[2].attrs->keepdim = true;
    expect_invalid(graph, "%s (softmax): attribute keepdim is set, but softmax does not take it");
}
END_TEST

START_TEST(stored_type_differing_from_the_rule_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[2].type.dims[0] = 7;
    expect_invalid(graph, "%s (softmax) is typed f32[7, 2], but its op gives f32[3, 2]");
}
END_TEST

START_TEST(attribute_the_rule_rejects_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[1].attrs->dim1 = 5;
    expect_invalid(graph, "graph 'g': %t: ");
}
END_TEST

START_TEST(missing_outputs_are_reported) {
    tp_graph *graph = valid_graph();
    graph->num_outputs = 0;
    expect_invalid(graph, "returns nothing");
}
END_TEST

START_TEST(output_id_out_of_range_is_reported) {
    tp_graph *graph = valid_graph();
    graph->outputs[0] = 9;
    expect_invalid(graph, "output #0 is id 9");
}
END_TEST

START_TEST(input_with_an_unknown_symbol_is_reported) {
    tp_graph *graph = valid_graph();
    graph->values[0].type.dims[0] = TP_DIM_SYMBOL(3);
    expect_invalid(graph, "input %x: ");
}
END_TEST

TP_TEST_SUITE(ir_verify) {
    Suite *suite = suite_create("ir.verify");
    TCase *tc = tcase_create("verify");
    tcase_add_test(tc, valid_graph_verifies);
    tcase_add_test(tc, operand_defined_after_use_is_reported);
    tcase_add_test(tc, wrong_arity_is_reported);
    tcase_add_test(tc, undeclared_attribute_is_reported);
    tcase_add_test(tc, stored_type_differing_from_the_rule_is_reported);
    tcase_add_test(tc, attribute_the_rule_rejects_is_reported);
    tcase_add_test(tc, missing_outputs_are_reported);
    tcase_add_test(tc, output_id_out_of_range_is_reported);
    tcase_add_test(tc, input_with_an_unknown_symbol_is_reported);
    suite_add_tcase(suite, tc);
    return suite;
}
