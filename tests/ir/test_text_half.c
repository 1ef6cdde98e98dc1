/* f16 and bf16 in .tpir text: type names, payload elements rounded once on
 * parse, printed as the f32 they widen to (the shortest form that reads back
 * to the same float, from NumPy: repr(np.float32(np.float16(0.1))) is
 * 0.099975586; bf16(0.1) = 0x3DCD = 0.100097656 by nearest-even rounding of
 * the f32 bits 0x3DCCCCCD), and out-of-range elements refused. */
#include <string.h>

#include "ir_helpers.h"

START_TEST(half_types_and_payloads_round_trip) {
    const char *canonical =
        "graph halves(%x: f16[3], %y: bf16[3]) {\n"
        "  %a: f16[3] = constant() {value=[0.099975586, 65504, -0]}\n"
        "  %b: bf16[3] = constant() {value=[0.100097656, 3.0040553e+38, -2.5]}\n"
        "  %s: f16[3] = add(%x, %a)\n"
        "  %t: bf16[3] = mul(%y, %b)\n"
        "  %u: f32[3] = add(%s, %t)\n"
        "  return %s, %t, %u\n"
        "}\n";
    tp_graph *graph = ir_parse_ok(canonical);
    char *text = ir_print_ok(graph);
    ck_assert_str_eq(text, canonical);
    const uint16_t *a = tp_tensor_data(tp_graph_value_attrs(graph, 2)->data);
    const uint16_t *b = tp_tensor_data(tp_graph_value_attrs(graph, 3)->data);
    ck_assert_int_eq(a[0], 0x2E66);
    ck_assert_int_eq(a[1], 0x7BFF);
    ck_assert_int_eq(a[2], 0x8000);
    ck_assert_int_eq(b[0], 0x3DCD);
    ck_assert_int_eq(b[1], 0x7F62);
    ck_assert_int_eq(b[2], 0xC020);
    tp_free(text);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(payload_elements_round_once_to_the_dtype) {
    tp_graph *graph = ir_parse_ok("graph g() {\n"
                                  "  %a: f16[2] = constant() {value=[0.1, 1e-7]}\n"
                                  "  %b: bf16[1] = constant() {value=[0.1]}\n"
                                  "  return %a, %b\n"
                                  "}\n");
    const uint16_t *a = tp_tensor_data(tp_graph_value_attrs(graph, 0)->data);
    const uint16_t *b = tp_tensor_data(tp_graph_value_attrs(graph, 1)->data);
    ck_assert_int_eq(a[0], 0x2E66);
    ck_assert_int_eq(a[1], 0x0002); /* 1e-7 is about 1.68 steps of 2^-24: 2 subnormal steps */
    ck_assert_int_eq(b[0], 0x3DCD);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(payload_beyond_f16_range_is_refused) {
    const char *message = ir_parse_error("graph g() {\n"
                                         "  %a: f16[1] = constant() {value=[65520]}\n"
                                         "  return %a\n"
                                         "}\n",
                                         TP_ERR_PARSE);
    ck_assert_msg(strstr(message, "a number in f16 range for an f16 element"), "%s", message);
}
END_TEST

TP_TEST_SUITE(ir_text_half) {
    Suite *suite = suite_create("ir.text_half");
    TCase *tc = tcase_create("half");
    tcase_add_test(tc, half_types_and_payloads_round_trip);
    tcase_add_test(tc, payload_elements_round_once_to_the_dtype);
    tcase_add_test(tc, payload_beyond_f16_range_is_refused);
    suite_add_tcase(suite, tc);
    return suite;
}
