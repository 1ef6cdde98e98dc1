/* stax-llvm — the scratch arena: the executable's scratch slots share one
 * buffer, two slots overlapping in bytes only when no step needs both.
 * stax_arena_layout.c places live ranges (plain C, no LLVM: the stax suite
 * compiles it in); stax_arena.c derives the ranges from a program's steps
 * and allocates. Internal to the plugin. */
#ifndef STAX_ARENA_H
#define STAX_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define STAX_ARENA_ALIGN 64 /* every slot starts on a cache line */

/* One scratch slot's life: written first by step `first`, read last by step
 * `last` (inclusive; one step's slots are all live at once). */
typedef struct stax_live_range {
    int32_t first, last;
    size_t bytes;
} stax_live_range;

/* Whether two ranges are live at some common step. */
static inline int stax_live_ranges_overlap(const stax_live_range *a, const stax_live_range *b) {
    return a->first <= b->last && b->first <= a->last;
}

/* Byte offsets (multiples of STAX_ARENA_ALIGN) for `count` ranges such that
 * ranges live at a common step never share a byte: largest first, each in
 * the smallest gap left by the already placed ranges it overlaps in time
 * (else above them). *total: the arena's bytes. Returns 0, or -1 when out of
 * memory. */
int stax_arena_assign_offsets(const stax_live_range *ranges, int32_t count, size_t *offsets,
                              size_t *total);

#endif
