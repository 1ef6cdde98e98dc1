/* stax-llvm — the IR text emitter's building blocks, shared by the kernel
 * emitters (stax_emit.c) and the scalar op lowering (stax_lower.c): SSA
 * temporaries, literals, conversions, loops over allocas, strided loads and
 * stores. Internal. */
#ifndef STAX_EMIT_CORE_H
#define STAX_EMIT_CORE_H

#include "stax_internal.h"

#define STAX_I1            7               /* after TP_PLUGIN_BF16 */
#define STAX_PARAMS_MARKER "  ;STAXPARAMS" /* pseudo dtype of comparison results */

typedef struct ir_val {
    char s[48];
    int32_t t; /* TP_PLUGIN_* dtype or STAX_I1 */
} ir_val;

/* Loop metadata the graph module defines once (stax_plan.c): LLVM neither
 * interleaves nor unrolls a loop whose latch is tagged with it (its loop
 * vectorizer reads llvm.loop.unroll.disable as an interleave count of one).
 * Interleaved and then unrolled, a vectorized loop is several copies of its
 * vector body, which the rest of the pipeline and the code generator work
 * through: 10-25% of a model's compile, for loops that stream memory or run
 * a few vector iterations. Not tagged: a loop that carries a value from one
 * iteration to the next (a sum, a maximum: a reduction's chain of
 * dependent adds is what interleaving splits, and layer_norm ran 1.3-1.5x
 * slower without it), and a loop over a few taps (a 3x3 window, up to
 * STAX_UNROLL_MAX_TRIPS iterations known at compile), whose taps unrolled
 * become straight-line code. */
#define STAX_LOOP_NO_UNROLL "!llvm.loop !9000"
#define STAX_LOOP_METADATA                                                                         \
    "!9000 = distinct !{!9000, !9001}\n!9001 = !{!\"llvm.loop.unroll.disable\"}\n"
#define STAX_UNROLL_MAX_TRIPS 16
#define STAX_MAX_TAGGED_LOOPS 256

/* One function being emitted. */
typedef struct fn_ctx {
    stax_emit_graph *g;
    tpcommon_buf body, allocas;
    int next_tmp, next_label;
    bool *slot_used;
    int32_t ndim; /* iteration space */
    int64_t dims[STAX_MAX_DIMS];
    bool flat; /* space collapsed to one flat dim over contiguous views */
    char idx[STAX_MAX_DIMS][48];
    int32_t region_matmul; /* the matmul computed as raw product in this kernel (-1) */
    /* The node being lowered rounds its result into f16/bf16: its float ops
     * carry no `contract`. On a CPU with f16 arithmetic (AVX512-FP16) LLVM
     * narrows fptrunc(fop(fpext a, fpext b)) to an f16 op, and the flag would
     * then let it fuse that op with the next node's across the rounding. */
    bool rounds_to_storage_float;
    /* loop ids (below STAX_MAX_TAGGED_LOOPS) that LLVM may unroll */
    uint64_t unrollable[STAX_MAX_TAGGED_LOOPS / 64];
    /* the loops open now, innermost last, and the first variable number
       (var_new) each one's body made: a variable below it that the body
       sets carries a value across the loop's iterations */
    int open_loops[STAX_MAX_TAGGED_LOOPS], open_first_var[STAX_MAX_TAGGED_LOOPS];
    int num_open_loops;
    bool failed;
} fn_ctx;

const char *stax_ty(int32_t t);
void fn_init(fn_ctx *f, stax_emit_graph *g);
void fn_free(fn_ctx *f);
/* Appends `define internal void @NAME_body(...)` + the wrapper @NAME. */
int32_t fn_finish(fn_ctx *f, const char *name);
__attribute__((format(printf, 2, 3))) void emit(fn_ctx *f, const char *format, ...);
ir_val fresh(fn_ctx *f, int32_t t);
ir_val lit_float(int32_t t, double value);
ir_val lit_int(int32_t t, int64_t value);
/* A float of dtype t equal to the integer `value` (a size: an integer literal
 * converted in the IR, so that it can become a size argument). */
ir_val size_float(fn_ctx *f, int32_t t, int64_t value);
ir_val conv(fn_ctx *f, ir_val v, int32_t to);
ir_val to_i1(fn_ctx *f, ir_val v);    /* nonzero test */
ir_val bool_of(fn_ctx *f, ir_val i1); /* i1 -> i8 0/1 */
ir_val bin(fn_ctx *f, const char *opcode, ir_val a, ir_val b);
ir_val cmp(fn_ctx *f, const char *predicate, ir_val a, ir_val b);
ir_val sel(fn_ctx *f, ir_val c, ir_val a, ir_val b);
ir_val call1(fn_ctx *f, const char *fn, ir_val a);
ir_val call2(fn_ctx *f, const char *fn, ir_val a, ir_val b);
/* Loops over [lo, hi) with an alloca counter; the index name is written to
 * `index` (at least 32 bytes). Returns the loop id for loop_close, which
 * tags the loop STAX_LOOP_NO_UNROLL unless it runs a few times known at
 * compile, a variable made outside it is set inside it (var_set), or
 * loop_keep_unrolling was called for it. */
int loop_open(fn_ctx *f, const char *lo, const char *hi, char *index);
/* loop_open for a loop known to run at most max_trips times (its bounds
 * computed in the IR: a chunk's part of a row of max_trips elements). */
int loop_open_at_most(fn_ctx *f, const char *lo, const char *hi, int64_t max_trips, char *index);
void loop_close(fn_ctx *f, int id);
/* Leaves loop `id` (open) to LLVM's interleaving and unrolling: a loop whose
 * speed was measured to need them (stax_emit_stream.c's runs into and out
 * of the stack buffer: add over 16M floats 5% slower without). */
void loop_keep_unrolling(fn_ctx *f, int id);
/* An alloca'd variable of dtype t initialised to `init`; its name is returned. */
ir_val var_new(fn_ctx *f, int32_t t, ir_val init);
ir_val var_get(fn_ctx *f, ir_val var);
void var_set(fn_ctx *f, ir_val var, ir_val v);
/* Element index (i64 text) of `view` at the current iteration indices (the
 * view's dims right-aligned with the space; size-1 dims broadcast). */
ir_val view_index(fn_ctx *f, const stax_view *view);
ir_val load_view(fn_ctx *f, const stax_view *view, int32_t dtype);
void store_view(fn_ctx *f, const stax_view *view, ir_val value);
/* Pointer to element `index` of slot. */
ir_val slot_gep(fn_ctx *f, int32_t slot, int32_t dtype, const char *index);

/* stax_emit_stream.c: whether the flat pointwise kernel writing `target`
 * (numel elements of dtype) streams its stores past the cache, and the loop
 * over [begin, end) that does, computing value v (a load of it: copy). */
int32_t stax_stream_threshold(const tp_plugin_host *host, int64_t threads, double *min_bytes,
                              char *error, size_t error_size);
bool stax_streams_output(stax_emit_graph *g, const stax_view *target, int64_t numel, int32_t dtype);
void stax_emit_streamed_flat_loop(fn_ctx *f, int32_t v, bool copy, const stax_view *target,
                                  int32_t dtype);

/* stax_lower.c: value `v` at the current indices, converted to nothing. */
ir_val lower_value(fn_ctx *f, int32_t v);
/* The node's own result (not a load), for roots. */
ir_val lower_compute(fn_ctx *f, int32_t v);
/* Scalar math helpers the row kernels share. */
ir_val lower_exp(fn_ctx *f, ir_val x);
/* exp of x <= 0 (softmax's x - max): f32 results below 2^-125 are 0 */
ir_val lower_exp_nonpositive(fn_ctx *f, ir_val x);
ir_val lower_log(fn_ctx *f, ir_val x);

#endif
