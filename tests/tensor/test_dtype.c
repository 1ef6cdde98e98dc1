/* dtypes: names, sizes, categories and the promotion table of tensor.h. */
#include <string.h>

#include "tensorplay/tensor.h"
#include "tp_test.h"

START_TEST(dtype_names_and_sizes) {
    static const struct {
        tp_dtype dtype;
        const char *name;
        size_t size;
    } expected[] = {{TP_F32, "f32", 4},
                    {TP_F64, "f64", 8},
                    {TP_I32, "i32", 4},
                    {TP_I64, "i64", 8},
                    {TP_BOOL, "bool", 1}};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        ck_assert_str_eq(tp_dtype_name(expected[i].dtype), expected[i].name);
        ck_assert_uint_eq(tp_dtype_size(expected[i].dtype), expected[i].size);
    }
}
END_TEST

START_TEST(invalid_dtype_has_question_mark_name_and_zero_size) {
    ck_assert_str_eq(tp_dtype_name(TP_DTYPE_COUNT), "?");
    ck_assert_str_eq(tp_dtype_name((tp_dtype)-1), "?");
    ck_assert_uint_eq(tp_dtype_size(TP_DTYPE_COUNT), 0);
}
END_TEST

START_TEST(dtype_from_name_round_trips_every_dtype) {
    for (int i = 0; i < TP_DTYPE_COUNT; i++) {
        tp_dtype parsed = TP_DTYPE_COUNT;
        ck_assert_int_eq(tp_dtype_from_name(tp_dtype_name((tp_dtype)i), &parsed), TP_OK);
        ck_assert_int_eq(parsed, i);
    }
}
END_TEST

START_TEST(dtype_from_name_rejects_unknown_and_lists_accepted) {
    tp_dtype parsed = TP_F32;
    ck_assert_int_eq(tp_dtype_from_name("float32", &parsed), TP_ERR_NOT_FOUND);
    const char *message = tp_last_error();
    ck_assert_ptr_nonnull(strstr(message, "'float32'"));
    const char *names[] = {"f32", "f64", "i32", "i64", "bool"};
    for (int i = 0; i < 5; i++) ck_assert_ptr_nonnull(strstr(message, names[i]));
    ck_assert_int_eq(tp_dtype_from_name(NULL, &parsed), TP_ERR_NOT_FOUND);
}
END_TEST

START_TEST(dtype_categories) {
    ck_assert(tp_dtype_is_float(TP_F32) && tp_dtype_is_float(TP_F64));
    ck_assert(!tp_dtype_is_float(TP_I32) && !tp_dtype_is_float(TP_I64) &&
              !tp_dtype_is_float(TP_BOOL));
    ck_assert(tp_dtype_is_integer(TP_I32) && tp_dtype_is_integer(TP_I64));
    ck_assert(!tp_dtype_is_integer(TP_BOOL) && !tp_dtype_is_integer(TP_F32) &&
              !tp_dtype_is_integer(TP_F64));
    ck_assert(!tp_dtype_is_float(TP_DTYPE_COUNT) && !tp_dtype_is_integer(TP_DTYPE_COUNT));
}
END_TEST

/* Written out by hand from the rule in tensor.h (bool < integer < float,
 * wider inside a category, integer + float gives the float's own dtype). */
START_TEST(promotion_table_for_all_25_pairs) {
#define F32 TP_F32
#define F64 TP_F64
#define I32 TP_I32
#define I64 TP_I64
#define B   TP_BOOL
    static const tp_dtype order[5] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};
    static const tp_dtype expected[5][5] = {
        /*          f32  f64  i32  i64  bool */
        /* f32  */ {F32, F64, F32, F32, F32},
        /* f64  */ {F64, F64, F64, F64, F64},
        /* i32  */ {F32, F64, I32, I64, I32},
        /* i64  */ {F32, F64, I64, I64, I64},
        /* bool */ {F32, F64, I32, I64, B},
    };
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            ck_assert_msg(tp_dtype_promote(order[a], order[b]) == expected[a][b],
                          "promote(%s, %s) gave %s, expected %s", tp_dtype_name(order[a]),
                          tp_dtype_name(order[b]),
                          tp_dtype_name(tp_dtype_promote(order[a], order[b])),
                          tp_dtype_name(expected[a][b]));
#undef F32
#undef F64
#undef I32
#undef I64
#undef B
}
END_TEST

START_TEST(promotion_of_invalid_dtype_is_invalid) {
    ck_assert_int_eq(tp_dtype_promote(TP_DTYPE_COUNT, TP_F32), TP_DTYPE_COUNT);
    ck_assert_int_eq(tp_dtype_promote(TP_F32, (tp_dtype)99), TP_DTYPE_COUNT);
}
END_TEST

TP_TEST_SUITE(dtype) {
    Suite *suite = suite_create("tensor.dtype");
    TCase *tc = tcase_create("dtype");
    tcase_add_test(tc, dtype_names_and_sizes);
    tcase_add_test(tc, invalid_dtype_has_question_mark_name_and_zero_size);
    tcase_add_test(tc, dtype_from_name_round_trips_every_dtype);
    tcase_add_test(tc, dtype_from_name_rejects_unknown_and_lists_accepted);
    tcase_add_test(tc, dtype_categories);
    tcase_add_test(tc, promotion_table_for_all_25_pairs);
    tcase_add_test(tc, promotion_of_invalid_dtype_is_invalid);
    suite_add_tcase(suite, tc);
    return suite;
}
