/* FLOAT16 and BFLOAT16 in ONNX models: inputs, initializers (raw_data and
 * the typed int32_data field that holds their bits) and Cast to and from
 * them, imported and run by the reference interpreter against hand-worked
 * values. */
#include <stdio.h>
#include <string.h>

#include "onnx_model_builder.h"
#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"
#include "tp_test.h"

#ifdef TP_WITH_ONNX
#include "onnx_test_import.h"

#define FLOAT16  ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
#define BFLOAT16 ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16

static tp_tensor *run_one(tp_graph *graph, tp_tensor *input) {
    tp_tensor *output = NULL;
    ck_assert_msg(tp_graph_run(graph, &input, 1, &output) == TP_OK, "%s", tp_last_error());
    return output;
}

/* y = x + w, all float16, w in raw_data. f16 bits: 1.0 = 0x3C00,
 * 2048 = 0x6800, -0.5 = 0xB800; w: 0.5 = 0x3800, 1.0 = 0x3C00, 0.25 = 0x3400.
 * 1 + 0.5 = 1.5 (0x3E00); 2048 + 1 = 2049 lies halfway between the f16
 * neighbours 2048 and 2050 and goes to the even 2048 (0x6800);
 * -0.5 + 0.25 = -0.25 (0xB400). */
START_TEST(float16_input_and_initializer_add_in_f16) {
    static const uint16_t weight[3] = {0x3800, 0x3C00, 0x3400};
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT16, 1, (int64_t[]){3}, NULL);
    onnx_test_raw_initializer(&m, "w", FLOAT16, 1, (int64_t[]){3}, weight, sizeof weight);
    onnx_test_node(&m, "Add", "add", NAMES("x", "w"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT16, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_int_eq(tp_graph_value_type(graph, tp_graph_input(graph, 0))->dtype, TP_F16);
    tp_tensor *x = NULL;
    ck_assert_int_eq(
        tp_tensor_from_data(TP_F16, 1, (int64_t[]){3}, (uint16_t[]){0x3C00, 0x6800, 0xB800}, &x),
        TP_OK);
    tp_tensor *y = run_one(graph, x);
    ck_assert_int_eq(tp_tensor_dtype(y), TP_F16);
    const uint16_t *bits = tp_tensor_data(y);
    ck_assert_int_eq(bits[0], 0x3E00);
    ck_assert_int_eq(bits[1], 0x6800);
    ck_assert_int_eq(bits[2], 0xB400);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* y = x + Cast(b, FLOAT) with b bfloat16 in int32_data: 0x3FC0 = 1.5,
 * 0xC020 = -2.5; x = [1, 1] gives [2.5, -1.5]. */
START_TEST(bfloat16_initializer_in_the_int32_field_casts_to_float) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){2}, NULL);
    onnx_test_int32_field_initializer(&m, "b", BFLOAT16, 2, (int32_t[]){0x3FC0, 0xC020});
    Onnx__NodeProto *cast = onnx_test_node(&m, "Cast", "widen", NAMES("b"), NAMES("bf"));
    onnx_test_int_attr(&m, cast, "to", FLOAT);
    onnx_test_node(&m, "Add", "add", NAMES("x", "bf"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, (int64_t[]){2}, (float[]){1, 1}, &x), TP_OK);
    tp_tensor *y = run_one(graph, x);
    ck_assert_int_eq(tp_tensor_dtype(y), TP_F32);
    ck_assert_float_eq(((const float *)tp_tensor_data(y))[0], 2.5f);
    ck_assert_float_eq(((const float *)tp_tensor_data(y))[1], -1.5f);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* Cast(x: float -> BFLOAT16): 1 + 2^-8 + 2^-20 is above the midpoint of the
 * bf16 neighbours 1 and 1 + 2^-7, so it rounds up to 0x3F81; 1 + 2^-8 is the
 * midpoint itself and goes to the even 1.0 (0x3F80). */
START_TEST(cast_to_bfloat16_rounds_to_nearest_even) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){2}, NULL);
    Onnx__NodeProto *cast = onnx_test_node(&m, "Cast", "narrow", NAMES("x"), NAMES("y"));
    onnx_test_int_attr(&m, cast, "to", BFLOAT16);
    onnx_test_value(&m, 1, "y", BFLOAT16, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *x = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, (int64_t[]){2},
                                         (float[]){1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-8f}, &x),
                     TP_OK);
    tp_tensor *y = run_one(graph, x);
    ck_assert_int_eq(tp_tensor_dtype(y), TP_BF16);
    const uint16_t *bits = tp_tensor_data(y);
    ck_assert_int_eq(bits[0], 0x3F81);
    ck_assert_int_eq(bits[1], 0x3F80);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

TP_TEST_SUITE(onnx_half) {
    Suite *suite = suite_create("onnx.half");
    TCase *tc = tcase_create("half");
    tcase_add_test(tc, float16_input_and_initializer_add_in_f16);
    tcase_add_test(tc, bfloat16_initializer_in_the_int32_field_casts_to_float);
    tcase_add_test(tc, cast_to_bfloat16_rounds_to_nearest_even);
    suite_add_tcase(suite, tc);
    return suite;
}

#else

START_TEST(without_the_importer_there_is_nothing_to_check) {
    ck_assert(!tp_onnx_available());
}
END_TEST

TP_TEST_SUITE(onnx_half) {
    Suite *suite = suite_create("onnx.half");
    TCase *tc = tcase_create("unavailable");
    tcase_add_test(tc, without_the_importer_there_is_nothing_to_check);
    suite_add_tcase(suite, tc);
    return suite;
}
#endif
