/* stax-llvm — a graph module's IR text split into parts that compile
 * separately (stax_ir_split.c: plain C, no LLVM, so the tests compile it in
 * and check the split directly). Compiling the parts is stax_jit.c's. */
#ifndef STAX_IR_SPLIT_H
#define STAX_IR_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* Below this much IR of kernels (and the functions they call) a part is not
 * worth a thread of its own. */
#define STAX_IR_SPLIT_MIN_PART_BYTES 8192

typedef struct stax_ir_part {
    char *ir;           /* a module of its own: every declaration and attribute
                           group, the part's kernels and the internal functions
                           they call (copies of those another part calls too) */
    size_t weight;      /* bytes of function text in it: what the split balances */
    int32_t first_name; /* the first of `names` the part defines (-1: none) */
} stax_ir_part;

typedef struct stax_ir_parts {
    int32_t count;
    stax_ir_part *parts;
    int32_t *part_of_name; /* [num_names]: the part defining names[i] */
} stax_ir_parts;

/* Splits `ir` into at most `max_parts` parts, as many as its size allows
 * (one per STAX_IR_SPLIT_MIN_PART_BYTES of function text), balanced by the
 * bytes of function text each compiles. Every function not `internal` (a
 * kernel) is in exactly one part; an internal one is in every part whose
 * kernels call it, directly or not. The same text and `max_parts` give the
 * same parts. One part when max_parts <= 1 or the text is small: every
 * kernel and the internal functions they reach (`ir` without the functions
 * nothing calls); a copy of `ir` when it holds something the split does
 * not know how to divide (a global variable, a kernel calling another
 * kernel). Each of
 * `names` (kernels of `ir`) gets its part in part_of_name; a name `ir` does
 * not define is put in part 0. 0 on success, -1 when out of memory. */
int32_t stax_ir_split(const char *ir, const char *const *names, int32_t num_names,
                      int32_t max_parts, stax_ir_parts *out);

void stax_ir_parts_free(stax_ir_parts *parts);

#endif
