/* Malformed .tpir: every error names FILE:LINE:COL, what was expected and
 * what was found. Columns are counted by hand from the texts below (1-based
 * bytes; node lines start with two spaces, so '%' is column 3 and an op
 * after "%y: f32[2] = " starts at column 16). */
#include <string.h>

#include "ir_helpers.h"

#define HEADER "graph g(%x: f32[2]) {\n"

static void expect_error(const char *text, const char *message) {
    ck_assert_str_eq(ir_parse_error(text, TP_ERR_PARSE), message);
}

START_TEST(unknown_op_suggests_a_near_name) {
    expect_error(HEADER "  %y: f32[2] = sofmax(%x) {axis=0}\n  return %y\n}\n",
                 "t.tpir:2:16: expected an op name, found unknown op 'sofmax' (did you mean "
                 "'softmax'?)");
}
END_TEST

START_TEST(unknown_op_far_from_every_name_has_no_suggestion) {
    expect_error(HEADER "  %y: f32[2] = frobnicate(%x)\n  return %y\n}\n",
                 "t.tpir:2:16: expected an op name, found unknown op 'frobnicate'");
}
END_TEST

START_TEST(wrong_arity_is_reported_at_the_op) {
    expect_error(HEADER "  %y: f32[2] = softmax(%x, %x) {axis=0}\n  return %y\n}\n",
                 "t.tpir:2:16: expected 1 operand for softmax, found 2");
}
END_TEST

START_TEST(arity_range_is_stated) {
    expect_error(HEADER "  %y: f32[2] = linear(%x)\n  return %y\n}\n",
                 "t.tpir:2:16: expected 2 to 3 operands for linear, found 1");
}
END_TEST

START_TEST(unknown_attribute_lists_the_ops_attributes) {
    expect_error(HEADER "  %y: f32[2] = softmax(%x) {dim=0}\n  return %y\n}\n",
                 "t.tpir:2:29: expected an attribute of softmax (axis=-1), found 'dim'");
}
END_TEST

START_TEST(attribute_on_an_op_without_attributes_is_unknown) {
    expect_error(HEADER "  %y: f32[2] = silu(%x) {axis=0}\n  return %y\n}\n",
                 "t.tpir:2:26: expected an attribute of silu (it takes none), found 'axis'");
}
END_TEST

START_TEST(duplicate_attribute_is_reported_at_the_second) {
    expect_error(HEADER "  %y: f32[2] = softmax(%x) {axis=0, axis=0}\n  return %y\n}\n",
                 "t.tpir:2:37: expected each attribute once, found 'axis' again");
}
END_TEST

START_TEST(missing_attribute_is_reported_at_the_closing_brace) {
    expect_error(HEADER "  %y: f32[2] = slice(%x) {start=0, stop=1}\n  return %y\n}\n",
                 "t.tpir:2:42: expected attribute 'axis' of slice (axis (required), start=0, "
                 "stop=end, step=1), found '}'");
}
END_TEST

START_TEST(missing_attribute_block_is_reported_at_the_op) {
    expect_error(HEADER "  %y: f32[2, 1] = unsqueeze(%x)\n  return %y\n}\n",
                 "t.tpir:2:19: expected attributes for unsqueeze ({key=value, ...}: axis "
                 "(required)), found none; 'axis' is needed");
}
END_TEST

START_TEST(shape_without_default_for_a_symbolic_result_says_why) {
    expect_error("graph g(%x: f32[n, 4]) {\n  %y: f32[n, 2, 2] = reshape(%x)\n  return %y\n}\n",
                 "t.tpir:2:22: expected attributes for reshape ({key=value, ...}: shape (default "
                 "from the result type)), found none; 'shape' is needed, which has no default "
                 "when the result type has symbols");
}
END_TEST

START_TEST(number_operand_of_a_non_pointwise_op_is_refused) {
    expect_error(HEADER "  %y: f32[] = matmul(%x, 2)\n  return %y\n}\n",
                 "t.tpir:2:26: expected a value (%name), found the number '2': only pointwise ops "
                 "take numbers as operands; define a constant for matmul");
}
END_TEST

START_TEST(fractional_number_operand_of_an_integer_op_is_refused) {
    expect_error("graph g(%x: i32[2]) {\n  %y: i32[2] = mul(%x, 0.5)\n  return %y\n}\n",
                 "t.tpir:2:24: expected an integer in i32 range for an i32 element, found '0.5' "
                 "(the number takes the dtype of the other operands, i32; write it so, or cast)");
}
END_TEST

START_TEST(only_number_operands_are_refused) {
    expect_error(HEADER "  %y: f32[] = add(1, 2)\n  return %y\n}\n",
                 "t.tpir:2:19: expected at least one value operand of add to give the number '1' "
                 "its dtype, found only numbers; define a constant");
}
END_TEST

START_TEST(dotted_value_names_must_join_words) {
    expect_error(HEADER "  %a..b: f32[2] = neg(%x)\n  return %a..b\n}\n",
                 "t.tpir:2:3: expected a value name (% then words of letters, digits and '_' "
                 "joined by single dots, at most 128 bytes), found '%a..b'");
}
END_TEST

START_TEST(attribute_of_the_wrong_value_type_is_reported) {
    expect_error(HEADER "  %y: f32[2] = softmax(%x) {axis=true}\n  return %y\n}\n",
                 "t.tpir:2:34: expected an integer (64-bit) or 'end', found 'true'");
}
END_TEST

START_TEST(integer_out_of_range_is_a_bad_number) {
    expect_error(HEADER "  %y: f32[2] = softmax(%x) {axis=99999999999999999999}\n  return %y\n}\n",
                 "t.tpir:2:34: expected an integer (64-bit) or 'end', found "
                 "'99999999999999999999'");
}
END_TEST

START_TEST(malformed_number_in_a_payload_is_reported) {
    expect_error("graph g() {\n  %c: f32[2] = constant() {value=[1, 1.2.3]}\n  return %c\n}\n",
                 "t.tpir:2:38: expected a number for an f32 element, found '1.2.3'");
}
END_TEST

START_TEST(payload_shorter_than_its_type_is_reported) {
    expect_error("graph g() {\n  %c: f32[3] = constant() {value=[1, 2]}\n  return %c\n}\n",
                 "t.tpir:2:39: expected 3 elements (the size of the type), with ',', found ']'");
}
END_TEST

START_TEST(payload_longer_than_its_type_is_reported) {
    expect_error("graph g() {\n  %c: f32[2] = constant() {value=[1, 2, 3]}\n  return %c\n}\n",
                 "t.tpir:2:39: expected ']' after 2 elements (the size of the type), found ','");
}
END_TEST

START_TEST(written_type_differing_from_the_inferred_one_reports_both) {
    expect_error(HEADER "  %y: f32[3] = softmax(%x) {axis=0}\n  return %y\n}\n",
                 "t.tpir:2:7: expected type f32[2] (inferred for softmax), found f32[3]");
}
END_TEST

START_TEST(operands_that_do_not_fit_the_op_are_reported_at_the_op) {
    const char *message = ir_parse_error("graph g(%x: f32[2, 3], %w: f32[4, 5]) {\n"
                                         "  %y: f32[2, 4] = linear(%x, %w)\n"
                                         "  return %y\n}\n",
                                         TP_ERR_PARSE);
    ck_assert_msg(strncmp(message, "t.tpir:2:19: linear", 19) == 0, "%s", message);
}
END_TEST

START_TEST(undefined_value_is_reported) {
    expect_error(HEADER "  %y: f32[2] = softmax(%z) {axis=0}\n  return %y\n}\n",
                 "t.tpir:2:24: expected a defined value, found '%z', which is not defined above");
}
END_TEST

START_TEST(redefined_value_names_the_first_definition) {
    expect_error(HEADER "  %x: f32[2] = softmax(%x) {axis=0}\n  return %x\n}\n",
                 "t.tpir:2:3: expected a new value name, found '%x', which is already defined on "
                 "line 1");
}
END_TEST

START_TEST(missing_return_is_reported) {
    expect_error(HEADER "}\n",
                 "t.tpir:2:1: expected a node (%name: type = op(...)) or 'return', found '}'");
}
END_TEST

START_TEST(return_without_values_is_reported) {
    expect_error(HEADER "  return\n}\n", "t.tpir:3:1: expected a value (%name), found '}'");
}
END_TEST

START_TEST(file_truncated_inside_a_type_is_reported) {
    expect_error("graph g(%x: f32[",
                 "t.tpir:1:17: expected a size (0 to 2147483647) or a symbol name, found end of "
                 "file");
}
END_TEST

START_TEST(file_truncated_before_the_closing_brace_is_reported) {
    expect_error(HEADER "  return %x\n", "t.tpir:3:1: expected '}', found end of file");
}
END_TEST

START_TEST(empty_text_is_reported) {
    expect_error("", "t.tpir:1:1: expected 'graph', found end of file");
}
END_TEST

START_TEST(trailing_garbage_is_reported) {
    expect_error(HEADER "  return %x\n}\nextra\n",
                 "t.tpir:4:1: expected end of file after the graph's '}', found 'extra'");
}
END_TEST

START_TEST(stray_character_is_reported) {
    expect_error(HEADER "  $\n",
                 "t.tpir:2:3: expected a node (%name: type = op(...)) or 'return', found '$'");
}
END_TEST

START_TEST(nul_byte_is_reported_not_a_terminator) {
    static const char text[] = "graph g(%x: f32[2]) {\n  \0 return %x\n}\n";
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_parse(text, sizeof text - 1, "t.tpir", &graph), TP_ERR_PARSE);
    ck_assert_str_eq(tp_last_error(), "t.tpir:2:3: expected a node (%name: type = op(...)) or "
                                      "'return', found byte 0x00");
}
END_TEST

START_TEST(lone_percent_at_the_end_of_the_text_is_reported) {
    expect_error(HEADER "  %",
                 "t.tpir:2:3: expected a value name (% then words of letters, digits and '_' "
                 "joined by single dots, at most 128 bytes), found '%'");
}
END_TEST

START_TEST(unknown_dtype_lists_the_dtypes) {
    expect_error(
        "graph g(%x: f33[2]) {\n  return %x\n}\n",
        "t.tpir:1:13: expected a dtype (f32, f64, i32, i64, bool, f16, bf16), found 'f33'");
}
END_TEST

START_TEST(negative_size_is_reported) {
    expect_error("graph g(%x: f32[-1]) {\n  return %x\n}\n",
                 "t.tpir:1:17: expected a size (0 to 2147483647) or a symbol name, found '-1'");
}
END_TEST

START_TEST(too_many_dimensions_is_reported) {
    expect_error("graph g(%x: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]) {\n  return %x\n}\n",
                 "t.tpir:1:41: expected ']' (at most 8 dimensions), found '1'");
}
END_TEST

START_TEST(symbol_in_a_constant_type_is_reported) {
    expect_error("graph g(%x: f32[n]) {\n  %c: f32[n] = constant() {value=[]}\n  return %c\n}\n",
                 "t.tpir:2:7: expected a static type for a constant, found symbol 'n'");
}
END_TEST

START_TEST(long_tokens_are_shortened_in_messages) {
    const char *message = ir_parse_error(
        "graph g(%x: f32[2]) {\n  %y: f32[2] = "
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa(%x)\n"
        "  return %y\n}\n",
        TP_ERR_PARSE);
    ck_assert_str_eq(message, "t.tpir:2:16: expected an op name, found unknown op "
                              "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
}
END_TEST

START_TEST(filename_defaults_to_text) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_parse("graph", 5, NULL, &graph), TP_ERR_PARSE);
    ck_assert_str_eq(tp_last_error(), "<text>:1:6: expected a graph name (an identifier of at most "
                                      "128 bytes), found end of file");
}
END_TEST

TP_TEST_SUITE(ir_parse_errors) {
    Suite *suite = suite_create("ir.parse_errors");
    TCase *tc = tcase_create("parse_errors");
    tcase_add_test(tc, unknown_op_suggests_a_near_name);
    tcase_add_test(tc, unknown_op_far_from_every_name_has_no_suggestion);
    tcase_add_test(tc, wrong_arity_is_reported_at_the_op);
    tcase_add_test(tc, arity_range_is_stated);
    tcase_add_test(tc, unknown_attribute_lists_the_ops_attributes);
    tcase_add_test(tc, attribute_on_an_op_without_attributes_is_unknown);
    tcase_add_test(tc, duplicate_attribute_is_reported_at_the_second);
    tcase_add_test(tc, missing_attribute_is_reported_at_the_closing_brace);
    tcase_add_test(tc, missing_attribute_block_is_reported_at_the_op);
    tcase_add_test(tc, shape_without_default_for_a_symbolic_result_says_why);
    tcase_add_test(tc, number_operand_of_a_non_pointwise_op_is_refused);
    tcase_add_test(tc, fractional_number_operand_of_an_integer_op_is_refused);
    tcase_add_test(tc, only_number_operands_are_refused);
    tcase_add_test(tc, dotted_value_names_must_join_words);
    tcase_add_test(tc, attribute_of_the_wrong_value_type_is_reported);
    tcase_add_test(tc, integer_out_of_range_is_a_bad_number);
    tcase_add_test(tc, malformed_number_in_a_payload_is_reported);
    tcase_add_test(tc, payload_shorter_than_its_type_is_reported);
    tcase_add_test(tc, payload_longer_than_its_type_is_reported);
    tcase_add_test(tc, written_type_differing_from_the_inferred_one_reports_both);
    tcase_add_test(tc, operands_that_do_not_fit_the_op_are_reported_at_the_op);
    tcase_add_test(tc, undefined_value_is_reported);
    tcase_add_test(tc, redefined_value_names_the_first_definition);
    tcase_add_test(tc, missing_return_is_reported);
    tcase_add_test(tc, return_without_values_is_reported);
    tcase_add_test(tc, file_truncated_inside_a_type_is_reported);
    tcase_add_test(tc, file_truncated_before_the_closing_brace_is_reported);
    tcase_add_test(tc, empty_text_is_reported);
    tcase_add_test(tc, trailing_garbage_is_reported);
    tcase_add_test(tc, stray_character_is_reported);
    tcase_add_test(tc, nul_byte_is_reported_not_a_terminator);
    tcase_add_test(tc, lone_percent_at_the_end_of_the_text_is_reported);
    tcase_add_test(tc, unknown_dtype_lists_the_dtypes);
    tcase_add_test(tc, negative_size_is_reported);
    tcase_add_test(tc, too_many_dimensions_is_reported);
    tcase_add_test(tc, symbol_in_a_constant_type_is_reported);
    tcase_add_test(tc, long_tokens_are_shortened_in_messages);
    tcase_add_test(tc, filename_defaults_to_text);
    suite_add_tcase(suite, tc);
    return suite;
}
