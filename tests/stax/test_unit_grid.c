/* stax_unit_grid.c on hand-made grids: whether a count of units splits
 * evenly between threads (worked out by hand from the slicing rule: slices
 * of ceil(units / (4 * threads)) units, handed out one at a time), how
 * unevenly a grid's work falls on them, and which grid the balancing
 * picks for the shifted conv's shapes. */
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

START_TEST(work_per_thread_of_hand_made_grids) {
    /* 27 column tiles in 4 units (6, 7, 7, 7), 11 row groups in 2 (5, 6):
     * 8 slices of 1 unit, claimed in turn: thread 0 takes units 0, 2, 4,
     * 6 (30 + 35 + 36 + 42 = 143), thread 1 units 1, 3, 5, 7 (35 + 35 +
     * 42 + 42 = 154) */
    ck_assert_double_eq_tol(stax_grid_imbalance(27, 11, 4, 2, 2), 154.0 / 143.0, 1e-12);
    /* 6 column units (4, 5, 4, 5, 4, 5): 6 slices of 2 units (45, 45, 45,
     * 54, 54, 54): 144 and 153 */
    ck_assert_double_eq_tol(stax_grid_imbalance(27, 11, 6, 2, 2), 153.0 / 144.0, 1e-12);
    /* 102 tiles in 18 units: 6 slices of 3 units, each 17 tiles */
    ck_assert_double_eq_tol(stax_grid_imbalance(102, 6, 18, 1, 2), 1.0, 1e-12);
    /* one thread: nothing to balance */
    ck_assert_double_eq_tol(stax_grid_imbalance(27, 11, 4, 2, 1), 1.0, 1e-12);
}
END_TEST

START_TEST(a_grid_that_splits_evenly_is_left_alone) {
    /* 7 tiles in 3 units (2, 2, 3), 22 groups in 4 (5, 6, 5, 6): 6
     * slices of 2 units (20, 27, 30, 20, 27, 30): 77 and 77 */
    int64_t cu = 3, ru = 4;
    ck_assert_double_eq_tol(stax_grid_imbalance(7, 22, 3, 4, 2), 1.0, 1e-12);
    ck_assert(stax_balance_unit_grid(7, 22, 2, &cu, &ru));
    ck_assert_int_eq(cu, 3);
    ck_assert_int_eq(ru, 4);
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
     * one; no row count up to 6 splits evenly (26, 39, 52, 65, 78); of the
     * column counts that do (16, 18, 24), 16 and 24 leave one thread 4%
     * more tiles, 18 none */
    cu = 13, ru = 1;
    ck_assert(stax_balance_unit_grid(102, 6, 2, &cu, &ru));
    ck_assert_int_eq(cu, 18);
    ck_assert_int_eq(ru, 1);
}
END_TEST

START_TEST(the_grid_of_least_imbalance_is_taken) {
    /* a 28x28 conv to 128 channels: 4 x 2 splits evenly by count, but 6 x
     * 2 less unevenly by work (see work_per_thread_of_hand_made_grids);
     * more row units do no better (4 x 3 and 4 x 4: 154 / 143 again) */
    int64_t cu = 4, ru = 2;
    ck_assert(stax_balance_unit_grid(27, 11, 2, &cu, &ru));
    ck_assert_int_eq(cu, 6);
    ck_assert_int_eq(ru, 2);
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
    tcase_add_test(c, work_per_thread_of_hand_made_grids);
    tcase_add_test(c, a_grid_that_splits_evenly_is_left_alone);
    tcase_add_test(c, more_row_units_first_then_more_column_units);
    tcase_add_test(c, the_grid_of_least_imbalance_is_taken);
    tcase_add_test(c, a_grid_too_small_to_balance_is_unchanged);
    suite_add_tcase(s, c);
    return s;
}
