/* stax_unit_grid.c on hand-made grids: whether a count of units splits
 * evenly between threads (worked out by hand from the slicing rule: slices
 * of ceil(units / (4 * threads)) units, handed out one at a time), and
 * which grid the balancing picks for the shifted conv's shapes. */
#include <check.h>

#include "stax_unit_grid.h"
#include "tp_test.h"

START_TEST(counts_that_split_evenly_between_threads) {
    /* 2 threads, 8 slices at most: 16 units are 8 slices of 2 (4 each) */
    ck_assert(stax_units_split_evenly(16, 2));
    ck_assert(stax_units_split_evenly(8, 2));
    ck_assert(stax_units_split_evenly(12, 2)); /* 6 slices of 2: 3 each */
    ck_assert(stax_units_split_evenly(24, 2)); /* 8 slices of 3 */
    /* 13: 7 slices of 2 (the last of 1); 14: 7 slices of 2; 9: odd */
    ck_assert(!stax_units_split_evenly(13, 2));
    ck_assert(!stax_units_split_evenly(14, 2));
    ck_assert(!stax_units_split_evenly(9, 2));
    /* 3 threads, 12 slices at most: 12 of 1, or 6 of 3 for 18 (2 each) */
    ck_assert(stax_units_split_evenly(12, 3));
    ck_assert(stax_units_split_evenly(18, 3));
    ck_assert(!stax_units_split_evenly(16, 3));
    /* one thread: any count; no units: never */
    ck_assert(stax_units_split_evenly(13, 1));
    ck_assert(!stax_units_split_evenly(0, 2));
}
END_TEST

START_TEST(a_grid_that_splits_evenly_is_left_alone) {
    int64_t cu = 4, ru = 2;
    ck_assert(stax_balance_unit_grid(27, 11, 2, &cu, &ru));
    ck_assert_int_eq(cu, 4);
    ck_assert_int_eq(ru, 2);
    cu = 13, ru = 1;
    ck_assert(stax_balance_unit_grid(102, 6, 1, &cu, &ru)); /* one thread */
    ck_assert_int_eq(cu, 13);
    ck_assert_int_eq(ru, 1);
}
END_TEST

START_TEST(more_row_units_first_then_more_column_units) {
    /* a 14x14 conv to 256 channels: 7 column tiles in 3 units, 22 row
     * groups in 3; 3 x 4 = 12 splits evenly on 2 threads */
    int64_t cu = 3, ru = 3;
    ck_assert(stax_balance_unit_grid(7, 22, 2, &cu, &ru));
    ck_assert_int_eq(cu, 3);
    ck_assert_int_eq(ru, 4);
    /* a 56x56 conv to 64 channels: 102 tiles in 13 units, 6 row groups in
     * one; no row count up to 6 splits evenly (26, 39, 52, 65, 78), so 16
     * column units do */
    cu = 13, ru = 1;
    ck_assert(stax_balance_unit_grid(102, 6, 2, &cu, &ru));
    ck_assert_int_eq(cu, 16);
    ck_assert_int_eq(ru, 1);
}
END_TEST

START_TEST(a_grid_too_small_to_balance_is_unchanged) {
    /* one column item, one row group: 1 unit can not be split */
    int64_t cu = 1, ru = 1;
    ck_assert(!stax_balance_unit_grid(1, 1, 2, &cu, &ru));
    ck_assert_int_eq(cu, 1);
    ck_assert_int_eq(ru, 1);
    /* 3 columns, 1 row group on 2 threads: 3 units at most, odd */
    cu = 3, ru = 1;
    ck_assert(!stax_balance_unit_grid(3, 1, 2, &cu, &ru));
    ck_assert_int_eq(cu, 3);
    ck_assert_int_eq(ru, 1);
}
END_TEST

TP_TEST_SUITE(stax_unit_grid) {
    Suite *s = suite_create("stax_unit_grid");
    TCase *c = tcase_create("grid");
    tcase_add_test(c, counts_that_split_evenly_between_threads);
    tcase_add_test(c, a_grid_that_splits_evenly_is_left_alone);
    tcase_add_test(c, more_row_units_first_then_more_column_units);
    tcase_add_test(c, a_grid_too_small_to_balance_is_unchanged);
    suite_add_tcase(s, c);
    return s;
}
