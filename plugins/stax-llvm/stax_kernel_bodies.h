/* stax-llvm — kernel bodies shared between kernels whose code is the same
 * (see stax_kernel_bodies.c). */
#ifndef STAX_KERNEL_BODIES_H
#define STAX_KERNEL_BODIES_H

#include <stdbool.h>
#include <stdint.h>

#include "tpcommon_text.h"

typedef struct stax_kernel_bodies {
    int32_t count, capacity;
    char **texts;     /* each body's code, its slot pointers named %arg0, %arg1, ... */
    uint64_t *hashes; /* of texts[i] */
    int32_t *num_args;
    int32_t *uses; /* kernels calling body i */
} stax_kernel_bodies;

/* The body `text` (slot pointers %sN of the slots `used` marks, renamed
 * %arg0, %arg1, ... in the order they first appear): the index of an equal
 * body found before, or of a new one; -1 when out of memory. order[K] is
 * the slot the kernel passes as %argK (room for every used slot). */
int32_t stax_kernel_bodies_add(stax_kernel_bodies *bodies, const char *text, const bool *used,
                               int32_t num_slots, int32_t *order);

/* The name of body `index` ("STAXKEY_body7"). */
void stax_kernel_body_name(int32_t index, char *out, size_t size);

/* Appends every body's definition to `module`: a body called by one kernel
 * with attribute group #1 (always inlined into its wrapper, as unshared
 * bodies are), one shared by several with group #2 (never inlined, so it is
 * optimised and compiled once). False when out of memory. */
bool stax_kernel_bodies_emit(const stax_kernel_bodies *bodies, tpcommon_buf *module);

void stax_kernel_bodies_free(stax_kernel_bodies *bodies);

/* The graph module's attribute groups (stax_plan.c): #0 kernels, #1 bodies
 * inlined into them, #2 bodies kernels share (not inlined), and #0 and #2
 * again preferring 512-bit vectors on AVX-512 hosts, for the loops that
 * call the float math routines (stax_mathlib.c): there wide vectors pay,
 * and elsewhere they only lengthen the compile. */
#define STAX_ATTRS_WIDE          3
#define STAX_ATTRS_WIDE_NOINLINE 4
/* Whether kernel IR text calls one of the float math routines. */
bool stax_ir_calls_float_math(const char *text);

#endif
