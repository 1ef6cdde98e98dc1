/* The thread's last error and status names. */
#include <string.h>

#include "base/error.h"
#include "tp_test.h"

START_TEST(error_set_returns_status_and_keeps_message) {
    ck_assert_int_eq(tp_error_set(TP_ERR_SHAPE, "add: f32[%d] vs f32[%d]", 2, 3), TP_ERR_SHAPE);
    ck_assert_str_eq(tp_last_error(), "add: f32[2] vs f32[3]");
}
END_TEST

START_TEST(error_prefix_prepends_location) {
    tp_error_set(TP_ERR_PARSE, "expected ')'");
    tp_error_prefix(TP_ERR_PARSE, "%s:%d:%d: ", "g.tpir", 3, 7);
    ck_assert_str_eq(tp_last_error(), "g.tpir:3:7: expected ')'");
}
END_TEST

START_TEST(clear_error_empties_message) {
    tp_error_set(TP_ERR_IO, "x");
    tp_clear_error();
    ck_assert_str_eq(tp_last_error(), "");
}
END_TEST

START_TEST(status_names_are_distinct) {
    for (int i = 0; i < TP_STATUS_COUNT; i++)
        for (int j = i + 1; j < TP_STATUS_COUNT; j++)
            ck_assert_str_ne(tp_status_name(i), tp_status_name(j));
    ck_assert_str_eq(tp_status_name(TP_OK), "ok");
}
END_TEST

START_TEST(version_is_0_1_0) {
    ck_assert_str_eq(tp_version(), "0.1.0");
}
END_TEST

TP_TEST_SUITE(error) {
    Suite *suite = suite_create("base.error");
    TCase *tc = tcase_create("error");
    tcase_add_test(tc, error_set_returns_status_and_keeps_message);
    tcase_add_test(tc, error_prefix_prepends_location);
    tcase_add_test(tc, clear_error_empties_message);
    tcase_add_test(tc, status_names_are_distinct);
    tcase_add_test(tc, version_is_0_1_0);
    suite_add_tcase(suite, tc);
    return suite;
}
