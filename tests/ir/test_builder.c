/* The graph builder and its accessors (core/ir/graph.c). */
#include <string.h>

#include "ir/graph_internal.h"
#include "ir_helpers.h"

static tp_graph *new_graph(void) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create("g", &graph), TP_OK);
    return graph;
}

START_TEST(create_with_null_name_is_main) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create(NULL, &graph), TP_OK);
    ck_assert_str_eq(tp_graph_name(graph), "main");
    ck_assert_int_eq(tp_graph_num_values(graph), 0);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(create_rejects_non_identifier_name) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create("9lives", &graph), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(graph);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "9lives"));
}
END_TEST

START_TEST(node_type_comes_from_the_op_rule) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 2, IR_T(2), IR_T(3));
    tp_value_id x, t;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = 0;
    attrs.dim1 = 1;
    ck_assert_int_eq(tp_graph_add_node(graph, "transpose", &x, 1, &attrs, "t", &t), TP_OK);
    const tp_type *result = tp_graph_value_type(graph, t);
    ck_assert_int_eq(result->dtype, TP_F32);
    ck_assert_int_eq(result->ndim, 2);
    ck_assert_int_eq(result->dims[0], 3);
    ck_assert_int_eq(result->dims[1], 2);
    ck_assert_str_eq(tp_graph_value_op(graph, t), "transpose");
    ck_assert_int_eq(tp_graph_value_num_operands(graph, t), 1);
    ck_assert_int_eq(tp_graph_value_operand(graph, t, 0), x);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(automatic_names_are_the_value_number) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, IR_T(4));
    tp_value_id x, y;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 0;
    ck_assert_int_eq(tp_graph_add_node(graph, "softmax", &x, 1, &attrs, NULL, &y), TP_OK);
    ck_assert_str_eq(tp_graph_value_name(graph, y), "1");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(automatic_name_skips_a_number_already_used) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, IR_T(4));
    tp_value_id x, y;
    tp_graph_add_input(graph, "1", &type, &x); /* value 0 named "1" */
    tp_attrs attrs = TP_ATTRS_INIT;
    ck_assert_int_eq(tp_graph_add_node(graph, "softmax", &x, 1, &attrs, NULL, &y), TP_OK);
    ck_assert_str_eq(tp_graph_value_name(graph, y), "2");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(duplicate_value_name_is_rejected) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, IR_T(4));
    tp_value_id x;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(x, TP_NO_VALUE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "%x is already defined"));
    ck_assert_int_eq(tp_graph_num_values(graph), 1);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(unknown_op_suggests_the_closest_name) {
    tp_graph *graph = new_graph();
    tp_value_id y;
    ck_assert_int_eq(tp_graph_add_node(graph, "sofmax", NULL, 0, NULL, NULL, &y), TP_ERR_NOT_FOUND);
    ck_assert_str_eq(tp_last_error(), "unknown op 'sofmax' (did you mean 'softmax'?)");
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(operand_id_out_of_range_is_rejected) {
    tp_graph *graph = new_graph();
    tp_value_id bad = 5, y;
    ck_assert_int_eq(tp_graph_add_node(graph, "softmax", &bad, 1, NULL, NULL, &y),
                     TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_graph_num_values(graph), 0);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(shape_rule_error_names_the_node) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, IR_T(6));
    tp_value_id x, y;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = 2;
    attrs.shape[0] = 4;
    attrs.shape[1] = 4;
    ck_assert_int_ne(tp_graph_add_node(graph, "reshape", &x, 1, &attrs, "y", &y), TP_OK);
    ck_assert_msg(strncmp(tp_last_error(), "%y: ", 4) == 0, "%s", tp_last_error());
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "reshape"));
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(undeclared_attributes_are_dropped) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, IR_T(4));
    tp_value_id x, y;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 0;
    attrs.eps = 0.5;      /* softmax does not take eps */
    attrs.keepdim = true; /* nor keepdim */
    ck_assert_int_eq(tp_graph_add_node(graph, "softmax", &x, 1, &attrs, NULL, &y), TP_OK);
    ck_assert(tp_graph_value_attrs(graph, y)->eps == 1e-5);
    ck_assert(!tp_graph_value_attrs(graph, y)->keepdim);
    ck_assert_int_eq(tp_graph_verify(graph), TP_ERR_INVALID_GRAPH); /* no outputs yet */
    ck_assert_int_eq(tp_graph_set_outputs(graph, &y, 1), TP_OK);
    ck_assert_int_eq(tp_graph_verify(graph), TP_OK);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(constant_payload_is_retained_by_the_graph) {
    tp_graph *graph = new_graph();
    float values[3] = {1, 2, 3};
    int64_t shape[1] = {3};
    tp_tensor *data;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &data), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.data = data;
    tp_value_id c;
    ck_assert_int_eq(tp_graph_add_node(graph, "constant", NULL, 0, &attrs, "c", &c), TP_OK);
    tp_tensor_release(data); /* the graph keeps its own reference */
    const tp_attrs *stored = tp_graph_value_attrs(graph, c);
    ck_assert_ptr_eq(stored->data, data);
    ck_assert(tp_tensor_get_f64(stored->data, 2) == 3.0);
    ck_assert_int_eq(tp_graph_value_type(graph, c)->dims[0], 3);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(constant_without_payload_is_rejected) {
    tp_graph *graph = new_graph();
    tp_value_id c;
    ck_assert_int_eq(tp_graph_add_node(graph, "constant", NULL, 0, NULL, "c", &c),
                     TP_ERR_INVALID_ARGUMENT);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(symbols_are_interned_by_name) {
    tp_graph *graph = new_graph();
    int64_t n, m, n_again;
    ck_assert_int_eq(tp_graph_symbol(graph, "n", &n), TP_OK);
    ck_assert_int_eq(tp_graph_symbol(graph, "m", &m), TP_OK);
    ck_assert_int_eq(tp_graph_symbol(graph, "n", &n_again), TP_OK);
    ck_assert(TP_DIM_IS_SYMBOL(n) && TP_DIM_IS_SYMBOL(m));
    ck_assert_int_eq(n, n_again);
    ck_assert_int_ne(n, m);
    ck_assert_str_eq(tp_graph_symbol_name(graph, m), "m");
    ck_assert_ptr_null(tp_graph_symbol_name(graph, 3));
    ck_assert_ptr_null(tp_graph_symbol_name(graph, TP_DIM_SYMBOL(7)));
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(input_with_unknown_symbol_is_rejected) {
    tp_graph *graph = new_graph();
    tp_type type = ir_type(TP_F32, 1, TP_DIM_SYMBOL(0));
    tp_value_id x;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "%x"));
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(accessors_return_null_or_minus_one_on_bad_ids) {
    tp_graph *graph = new_graph();
    ck_assert_ptr_null(tp_graph_value_type(graph, 0));
    ck_assert_ptr_null(tp_graph_value_name(graph, -1));
    ck_assert_ptr_null(tp_graph_value_op(graph, 99));
    ck_assert_ptr_null(tp_graph_value_attrs(graph, 0));
    ck_assert_int_eq(tp_graph_value_num_operands(graph, 0), -1);
    ck_assert_int_eq(tp_graph_value_operand(graph, 0, 0), TP_NO_VALUE);
    ck_assert_int_eq(tp_graph_input(graph, 0), TP_NO_VALUE);
    ck_assert_int_eq(tp_graph_output(graph, -1), TP_NO_VALUE);
    ck_assert_int_eq(tp_graph_num_inputs(NULL), 0);
    ck_assert_ptr_null(tp_graph_name(NULL));
    tp_graph_destroy(graph);
    tp_graph_destroy(NULL);
}
END_TEST

START_TEST(set_outputs_rejects_unknown_values) {
    tp_graph *graph = new_graph();
    tp_value_id bad = 0;
    ck_assert_int_eq(tp_graph_set_outputs(graph, &bad, 1), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_graph_num_outputs(graph), 0);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(clone_is_independent_and_prints_the_same) {
    tp_graph *graph = new_graph();
    int64_t n;
    tp_graph_symbol(graph, "n", &n);
    tp_type type = ir_type(TP_F32, 2, n, IR_T(3));
    tp_value_id x, y, z;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 1;
    tp_graph_add_node(graph, "softmax", &x, 1, &attrs, "y", &y);
    tp_graph_set_outputs(graph, &y, 1);
    tp_graph *copy = NULL;
    ck_assert_int_eq(tp_graph_clone(graph, &copy), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(graph, "log_softmax", &y, 1, &attrs, "z", &z), TP_OK);
    ck_assert_int_eq(tp_graph_num_values(copy), 2);
    ck_assert_int_eq(tp_graph_num_values(graph), 3);
    ck_assert_int_eq(tp_graph_verify(copy), TP_OK);
    char *text = ir_print_ok(copy);
    ck_assert_str_eq(text, "graph g(%x: f32[n, 3]) {\n"
                           "  %y: f32[n, 3] = softmax(%x) {axis=1}\n"
                           "  return %y\n"
                           "}\n");
    tp_free(text);
    tp_graph_destroy(graph);
    tp_graph_destroy(copy);
}
END_TEST

TP_TEST_SUITE(ir_builder) {
    Suite *suite = suite_create("ir.builder");
    TCase *tc = tcase_create("builder");
    tcase_add_test(tc, create_with_null_name_is_main);
    tcase_add_test(tc, create_rejects_non_identifier_name);
    tcase_add_test(tc, node_type_comes_from_the_op_rule);
    tcase_add_test(tc, automatic_names_are_the_value_number);
    tcase_add_test(tc, automatic_name_skips_a_number_already_used);
    tcase_add_test(tc, duplicate_value_name_is_rejected);
    tcase_add_test(tc, unknown_op_suggests_the_closest_name);
    tcase_add_test(tc, operand_id_out_of_range_is_rejected);
    tcase_add_test(tc, shape_rule_error_names_the_node);
    tcase_add_test(tc, undeclared_attributes_are_dropped);
    tcase_add_test(tc, constant_payload_is_retained_by_the_graph);
    tcase_add_test(tc, constant_without_payload_is_rejected);
    tcase_add_test(tc, symbols_are_interned_by_name);
    tcase_add_test(tc, input_with_unknown_symbol_is_rejected);
    tcase_add_test(tc, accessors_return_null_or_minus_one_on_bad_ids);
    tcase_add_test(tc, set_outputs_rejects_unknown_values);
    tcase_add_test(tc, clone_is_independent_and_prints_the_same);
    suite_add_tcase(suite, tc);
    return suite;
}
