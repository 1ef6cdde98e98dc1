/* stax-llvm — splitting a grid of work units evenly between threads
 * (stax_unit_grid.h). The pool hands slices out one at a time, so slices
 * of unequal size, or a count of slices that is no multiple of the
 * threads, leave one thread working while the others wait: a 56x56 conv's
 * 13 units on 2 threads went 7 to one and 6 to the other, the conv 5%
 * longer than an even split. */
#include "stax_unit_grid.h"

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

int64_t stax_most_slices(int64_t threads) {
    return 4 * (threads > 1 ? threads : 1);
}

bool stax_units_split_evenly(int64_t units, int64_t threads) {
    if (threads <= 1) return true;
    if (units <= 0) return false;
    int64_t grain = ceil_div(units, stax_most_slices(threads));
    return units % threads == 0 && units % grain == 0 && units / grain % threads == 0;
}

bool stax_balance_unit_grid(int64_t columns, int64_t row_groups, int64_t threads,
                            int64_t *column_units, int64_t *row_units) {
    int64_t cu = *column_units, ru = *row_units;
    if (stax_units_split_evenly(cu * ru, threads)) return true;
    /* more row units first: fewer, wider column units keep each unit's
     * share of the weights in cache across more columns (a 14x14 conv's
     * 9 units as 12 of 3 x 4: 6% faster; as 4 x 3: 8% slower) */
    for (int64_t r = ru + 1; r <= row_groups && r <= 2 * ru + 8; r++)
        if (stax_units_split_evenly(cu * r, threads)) {
            *row_units = r;
            return true;
        }
    for (int64_t c = cu + 1; c <= columns && c <= 2 * cu; c++)
        if (stax_units_split_evenly(c * ru, threads)) {
            *column_units = c;
            return true;
        }
    return false;
}
