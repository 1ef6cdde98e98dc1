/* stax-llvm — placing live ranges in one arena (stax_arena.h): a greedy
 * best fit, largest range first. Plain C on stax_arena.h only, so that the
 * stax suite can test it on hand-made ranges. */
#include <stdlib.h>

#include "stax_arena.h"

/* A slot's bytes rounded up to the alignment (an empty slot takes one line). */
static size_t aligned_bytes(size_t bytes) {
    if (bytes == 0) bytes = 1;
    return (bytes + STAX_ARENA_ALIGN - 1) / STAX_ARENA_ALIGN * STAX_ARENA_ALIGN;
}

typedef struct placed_block {
    size_t begin, end;
} placed_block;

/* The sort key of one range (qsort has no context argument, and compiles
 * may run on several threads at once: no global). */
typedef struct range_key {
    size_t bytes;
    int32_t first, index;
} range_key;

static int larger_first(const void *a, const void *b) {
    const range_key *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->index - y->index;
}

static int by_begin(const void *a, const void *b) {
    const placed_block *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The smallest gap of at least `bytes` between the blocks (sorted by begin,
 * possibly overlapping one another), else the end of the highest one. */
static size_t best_fit(const placed_block *blocks, int32_t count, size_t bytes) {
    size_t best = 0, best_gap = SIZE_MAX, cursor = 0;
    for (int32_t i = 0; i < count; i++) {
        if (blocks[i].begin > cursor) {
            size_t gap = blocks[i].begin - cursor;
            if (gap >= bytes && gap < best_gap) best = cursor, best_gap = gap;
        }
        if (blocks[i].end > cursor) cursor = blocks[i].end;
    }
    return best_gap != SIZE_MAX ? best : cursor;
}

int stax_arena_assign_offsets(const stax_live_range *ranges, int32_t count, size_t *offsets,
                              size_t *total) {
    *total = 0;
    if (count <= 0) return 0;
    range_key *order = malloc(sizeof *order * (size_t)count);
    int32_t *placed = malloc(sizeof *placed * (size_t)count);
    placed_block *blocks = malloc(sizeof *blocks * (size_t)count);
    if (!order || !placed || !blocks) {
        free(order), free(placed), free(blocks);
        return -1;
    }
    for (int32_t i = 0; i < count; i++)
        order[i] = (range_key){aligned_bytes(ranges[i].bytes), ranges[i].first, i};
    qsort(order, (size_t)count, sizeof *order, larger_first);
    int32_t num_placed = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t index = order[i].index;
        const stax_live_range *range = &ranges[index];
        size_t bytes = order[i].bytes;
        int32_t num_blocks = 0;
        for (int32_t j = 0; j < num_placed; j++)
            if (stax_live_ranges_overlap(range, &ranges[placed[j]]))
                blocks[num_blocks++] =
                    (placed_block){offsets[placed[j]],
                                   offsets[placed[j]] + aligned_bytes(ranges[placed[j]].bytes)};
        qsort(blocks, (size_t)num_blocks, sizeof *blocks, by_begin);
        size_t offset = best_fit(blocks, num_blocks, bytes);
        offsets[index] = offset;
        placed[num_placed++] = index;
        if (offset + bytes > *total) *total = offset + bytes;
    }
    free(order), free(placed), free(blocks);
    return 0;
}
