/* stax-llvm — splitting a grid of work units evenly between threads
 * (stax_unit_grid.h). The pool hands slices out one at a time, so slices
 * of unequal size, or a count of slices that is no multiple of the
 * threads, leave one thread working while the others wait: a 56x56 conv's
 * 13 units on 2 threads went 7 to one and 6 to the other, the conv 5%
 * longer than an even split. An even count is not enough where the units
 * differ by an item: its 16 units of 6 or 7 column tiles gave one thread
 * 4% more tiles than the other, and 18 units (slices of 17 tiles) ran 4%
 * faster; a 28x28 conv to 128 channels, 4 x 2 units (threads' work 154
 * and 143) against 6 x 2 (153 and 144), 3.6%. */
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

/* Items of part i when `items` are cut into `parts` as the units take them. */
static int64_t part_items(int64_t items, int64_t parts, int64_t i) {
    return (i + 1) * items / parts - i * items / parts;
}

double stax_grid_imbalance(int64_t columns, int64_t row_groups, int64_t column_units,
                           int64_t row_units, int64_t threads) {
    enum { MOST_THREADS = 256 };
    int64_t units = column_units * row_units;
    if (threads <= 1 || threads > MOST_THREADS || units <= 0) return 1.0;
    int64_t work[MOST_THREADS] = {0};
    int64_t grain = ceil_div(units, stax_most_slices(threads));
    for (int64_t unit = 0; unit < units; unit++) {
        int64_t slice = unit / grain;
        work[slice % threads] += part_items(columns, column_units, unit % column_units) *
                                 part_items(row_groups, row_units, unit / column_units);
    }
    int64_t most = work[0], least = work[0];
    for (int64_t t = 1; t < threads; t++) {
        most = work[t] > most ? work[t] : most;
        least = work[t] < least ? work[t] : least;
    }
    return least > 0 ? (double)most / (double)least : (double)most + 1.0;
}

/* The grid to take from (cu, ru): the one of least imbalance so far among
 * those whose count splits evenly (the first such on a tie). */
typedef struct grid_choice {
    int64_t columns, row_groups, threads;
    int64_t column_units, row_units;
    double imbalance;
    bool found;
} grid_choice;

static void consider(grid_choice *choice, int64_t cu, int64_t ru) {
    if (!stax_units_split_evenly(cu * ru, choice->threads)) return;
    double imbalance =
        stax_grid_imbalance(choice->columns, choice->row_groups, cu, ru, choice->threads);
    if (choice->found && imbalance >= choice->imbalance - 1e-9) return;
    choice->column_units = cu, choice->row_units = ru;
    choice->imbalance = imbalance;
    choice->found = true;
}

bool stax_balance_unit_grid(int64_t columns, int64_t row_groups, int64_t threads,
                            int64_t *column_units, int64_t *row_units) {
    int64_t cu = *column_units, ru = *row_units;
    grid_choice choice = {columns, row_groups, threads, cu, ru, 0.0, false};
    consider(&choice, cu, ru);
    /* more row units first: fewer, wider column units keep each unit's
     * share of the weights in cache across more columns (a 14x14 conv's
     * 9 units as 12 of 3 x 4: 6% faster; as 4 x 3: 8% slower) */
    for (int64_t r = ru + 1; r <= row_groups && r <= 2 * ru + 8; r++) consider(&choice, cu, r);
    for (int64_t c = cu + 1; c <= columns && c <= 2 * cu; c++) consider(&choice, c, ru);
    if (!choice.found) return false;
    *column_units = choice.column_units, *row_units = choice.row_units;
    return true;
}
