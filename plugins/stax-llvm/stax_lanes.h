/* stax-llvm — which of sixteen lanes a vector of a row may touch, for the
 * direct rows (stax_depthwise_direct.c, stax_max_pool_direct.c): bit l set
 * for lane l, as an AVX-512 __mmask16 takes it. Internal. */
#ifndef STAX_LANES_H
#define STAX_LANES_H

#include <stdint.h>

/* Lanes l of sixteen columns from `first` on with 0 <= first + l < width:
 * the columns a masked load may read from a row of `width` floats. */
static inline uint16_t stax_lanes_in_row(int64_t first, int64_t width) {
    int64_t lo = first < 0 ? -first : 0, hi = width - first;
    if (hi > 16) hi = 16;
    if (hi <= lo) return 0;
    return (uint16_t)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* The first `count` lanes (all sixteen from 16 on): a row's last vector of
 * outputs. */
static inline uint16_t stax_lanes_below(int64_t count) {
    return count >= 16 ? 0xFFFF : (uint16_t)((1u << count) - 1u);
}

#endif
