/* stax-llvm — the max-autotune mode: per packed-matmul step, choices measured
 * at compile time (stax_autotune.c) and remembered per machine in the disk
 * cache (entries named and parsed by stax_autotune_entry.c). */
#ifndef STAX_AUTOTUNE_H
#define STAX_AUTOTUNE_H

#include "stax_internal.h"

/* At most this much measuring per compile unless the option
 * autotune_budget_ms says otherwise (wall time, all steps together); a step
 * whose search the budget cuts short is not cached, so a later compile
 * measures it again, and a step reached after it keeps the defaults. */
#define STAX_AUTOTUNE_DEFAULT_BUDGET_MS 3000
/* Timed runs per candidate after one warm-up run: at least MIN, more (up to
 * MAX) until they add up to SPAN; the median counts. */
#define STAX_AUTOTUNE_MIN_REPETITIONS 3
#define STAX_AUTOTUNE_MAX_REPETITIONS 64
#define STAX_AUTOTUNE_SPAN_NS         ((uint64_t)2 * 1000 * 1000)
/* The winner replaces the defaults only when it is at least this much
 * faster (its time over the defaults', median of CONFIRM_ROUNDS rounds
 * that alternate the two), so that noise never makes a step slower. */
#define STAX_AUTOTUNE_CONFIRM_ROUNDS 5
#define STAX_AUTOTUNE_REQUIRED_RATIO 0.97
#define STAX_AUTOTUNE_MAX_FAMILIES   3

/* One step's choices as the cache stores them. */
typedef struct stax_gemm_choice {
    char family[16];
    int64_t kc, mc, threads;
    stax_gemm_split split; /* never AUTO */
} stax_gemm_choice;

const char *stax_gemm_split_name(stax_gemm_split split);

/* The cache key of a step's choices: the tuner's format version, stax's
 * version, LLVM's host CPU name and features, the families it may choose
 * from, the thread limit, and the step's shape (batch, m, n, k), layout
 * class of each operand (rows, columns or strided; broadcast batches) and
 * whether it has an epilogue. False when `out` is too small. */
bool stax_autotune_key(const char *cpu, const char *features, const char *families, int64_t threads,
                       const stax_gemm *gemm, char *out, size_t size);

/* "family avx2; kc 256; mc 240; split columns; threads 2\n". */
void stax_gemm_choice_format(const stax_gemm_choice *choice, char *out, size_t size);
/* Parses exactly what stax_gemm_choice_format writes, with every number in
 * range; false with the reason in `why` otherwise. */
bool stax_gemm_choice_parse(const char *text, size_t length, stax_gemm_choice *choice, char *why,
                            size_t why_size);

/* How one step runs: the tile kernels with their blocking, the split and
 * the thread count. */
typedef struct stax_gemm_tuned {
    stax_gemm_kernels kernels;
    stax_gemm_split split;
    int64_t threads;
} stax_gemm_tuned;

/* What an executable compiled in max-autotune keeps. */
typedef struct stax_autotune {
    stax_gemm_tuned *steps; /* one per program step; used for PACKED_GEMM steps */
    int32_t num_steps;
    int32_t num_families;
    stax_gemm_kernels families[STAX_AUTOTUNE_MAX_FAMILIES]; /* [0]: the program's */
    stax_module *modules[STAX_AUTOTUNE_MAX_FAMILIES];       /* [0] NULL: in the program's module */
} stax_autotune;

/* Chooses every PACKED_GEMM step's kernels, blocking, split and threads (at
 * most `threads`): from the disk cache, else by measuring candidates on
 * scratch copies of the step's inputs and outputs (`slot_data`: the bound
 * slots; constants and scratch slots are used as they are; `kernels`: the
 * program's loaded kernels, for the epilogues). `program_kernels`: the
 * program's family's tile kernels. */
int32_t stax_autotune_program(const tp_plugin_host *host, const stax_program *program,
                              void **slot_data, void *const *kernels,
                              const stax_gemm_kernels *program_kernels, int64_t threads,
                              int64_t budget_ms, stax_autotune *out, char *error,
                              size_t error_size);
void stax_autotune_free(stax_autotune *tune);

#endif
