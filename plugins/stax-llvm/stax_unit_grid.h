/* stax-llvm — a grid of work units (column units x row units) split evenly
 * between threads (stax_unit_grid.c). Plain C, no LLVM and no other stax
 * header: the stax suite checks it on hand-made grids. */
#ifndef STAX_UNIT_GRID_H
#define STAX_UNIT_GRID_H

#include <stdbool.h>
#include <stdint.h>

/* The slices a split of `threads` threads makes at most: four per thread
 * (a late worker takes what is left instead of being waited for), as
 * stax_grain's. */
int64_t stax_most_slices(int64_t threads);

/* Whether `units` in slices of ceil(units / stax_most_slices(threads))
 * units give each thread as many slices of as many units, and so do
 * slices of units / threads (stax_grain's grain when the pool has more
 * threads than the step takes). */
bool stax_units_split_evenly(int64_t units, int64_t threads);

/* How unevenly the grid's work falls on `threads` threads: the most work
 * a thread gets over the least (1: even), a unit's work being its column
 * items times its row groups, the units numbered column unit fastest and
 * claimed in slices as stax_units_split_evenly counts them, slice s by
 * thread s % threads. */
double stax_grid_imbalance(int64_t columns, int64_t row_groups, int64_t column_units,
                           int64_t row_units, int64_t threads);

/* A grid of *column_units x *row_units over `columns` column items and
 * `row_groups` row items (unit (i, j) takes items [i * columns /
 * column_units, (i + 1) * columns / column_units), and so for rows: units
 * differ by at most one item). Of the grid as it is, more row units (up
 * to one per group, at most twice as many plus eight), and more column
 * units (up to one per item, at most twice as many), in that order: the
 * one of least imbalance among those whose count splits evenly on
 * `threads` threads (the first on a tie); unchanged when none does.
 * Returns whether the grid now splits evenly (always with one thread). */
bool stax_balance_unit_grid(int64_t columns, int64_t row_groups, int64_t threads,
                            int64_t *column_units, int64_t *row_units);

#endif
