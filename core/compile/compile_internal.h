/* The compiled wrapper, its cache entries and the per-call signature, shared
 * by the files of core/compile (compile.c: options and lifetime; call.c: the
 * call path; signature.c, guards.c, pipeline.c, symbolize.c). Internal.
 *
 * Locking: every field of tp_compiled below `lock` is read and written with
 * `lock` held. Entries are reference counted: the cache holds one reference,
 * the fast-path memo one, and a call holds one while it runs the entry's
 * executable outside the lock, so tp_compile_reset_all never frees an entry
 * under a running call. One executable is never run by two threads at once
 * (plugin contract): each variant has its own run lock.
 */
#ifndef TP_CORE_COMPILE_COMPILE_INTERNAL_H
#define TP_CORE_COMPILE_COMPILE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "config.h"
#include "partition.h"
#include "reasons.h"
#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/graph.h"
#include "tensorplay/passes.h"

/* Dynamic-mode dimension codes: size 0 and 1 are kept (broadcasting depends
 * on them); any other size is coded as TP_DIM_CODE_FIRST + the flat position
 * (param * TP_MAX_DIMS + axis) of the first dimension of the call with the
 * same size, so entries key on which sizes are equal, never on the sizes. */
#define TP_DIM_CODE_FIRST 2

/* One argument's part of the key. Unused fields are zero so signatures
 * compare with memcmp. */
typedef struct tp_arg_signature {
    int32_t kind; /* tp_arg_kind */
    int32_t dtype;
    int32_t device;
    int32_t ndim;
    int64_t dims[TP_MAX_DIMS]; /* sizes (static) or dimension codes (dynamic) */
    int64_t scalar_bits;       /* int value, double bits, or bool */
} tp_arg_signature;

/* An executable for one set of concrete input shapes (in dynamic mode one
 * entry compiles once per shape set; the backend contract makes every
 * executable shape-specialized). */
typedef struct tp_variant {
    int64_t *shapes;             /* num_tensor_inputs * TP_MAX_DIMS sizes */
    tp_executable *executable;   /* the backend claimed every node */
    tp_partitioned *partitioned; /* otherwise: one executable per region */
    pthread_mutex_t run_lock;
} tp_variant;

typedef struct tp_cache_entry {
    atomic_int refcount;
    int num_args;
    tp_arg_signature *signature; /* num_args */
    /* Exact-shape guards from metadata touches (or a graph that could not be
     * made symbolic): per param, whether its exact shape is part of the key,
     * and that shape. */
    bool *shape_guarded;     /* num_args */
    int64_t *guarded_shapes; /* num_args * TP_MAX_DIMS */
    tp_gate_program *gates;  /* NULL when the capture read no values */
    tp_graph *graph;         /* what the backend compiles (optimized) */
    pthread_mutex_t variants_lock;
    tp_variant *variants;
    int num_variants, variant_capacity;
    struct tp_cache_entry *next;
} tp_cache_entry;

/* The last call that hit, for the steady-state fast path: same tensor
 * objects (retained, so their addresses cannot be reused) at the same
 * versions, same scalars. */
typedef struct tp_call_memo {
    bool valid;
    int num_args;
    tp_arg *args;       /* tensors retained */
    uint64_t *versions; /* per arg (tensors only) */
    tp_cache_entry *entry;
    tp_variant *variant;
} tp_call_memo;

struct tp_compiled {
    tp_fn fn;
    void *user_data;
    /* Frees user_data with the wrapper (tp_compile_graph owns its graph copy);
     * NULL for tp_compile, where the caller owns user_data. */
    void (*user_data_free)(void *user_data);
    char *name;
    char **param_names; /* num_params (NULL when the caller gave none) */
    int num_params;
    int num_outputs;
    bool fullgraph;
    bool dynamic;
    bool disabled;
    tp_backend *backend;
    char **backend_options; /* "key=value", mode first as "mode=..." */
    int num_backend_options;
    tp_compile_policy policy;
    char *fallback_backend; /* per-call option, else NULL (policy.fallback_backend) */

    pthread_mutex_t lock;
    tp_cache_entry *entries; /* newest first */
    int num_entries;
    int compile_attempts;
    tp_reason_list last_reasons;
    char *uncompiled_reason; /* set once: the wrapper runs eagerly from then on */
    tp_call_memo memo;
    tp_partition_region_info *last_partition; /* of the last backend compile */
    int last_partition_count;

    struct tp_compiled *live_prev, *live_next; /* every live wrapper (reset_all) */
};

/* Name of parameter `index` ("x", or "arg2" when none were given). */
const char *tp_compiled_param_name(const tp_compiled *compiled, int index, char *buf, size_t size);

/* ---- signature.c ---- */

/* Validates the arguments and fills `out` (num_args entries). */
tp_status tp_signature_build(const tp_compiled *compiled, const tp_arg *args, int num_args,
                             tp_arg_signature *out);

/* ---- guards.c ---- */

/* True when `entry` serves this call. Gate programs are replayed only when
 * everything else matches. Errors (a failing replay) leave *match false. */
tp_status tp_entry_matches(const tp_cache_entry *entry, const tp_arg_signature *signature,
                           const tp_arg *args, int num_args, bool *match);
/* Appends to `reasons` every guard of `entry` this call fails, in words. */
void tp_entry_explain(const tp_compiled *compiled, const tp_cache_entry *entry,
                      const tp_arg_signature *signature, const tp_arg *args, int num_args,
                      tp_reason_list *reasons);

/* ---- entries (call.c) ---- */

void tp_entry_retain(tp_cache_entry *entry);
void tp_entry_release(tp_cache_entry *entry);

/* ---- pipeline.c ---- */

/* What a miss produced. On a capture the function could not pass (raw data
 * access) status is TP_ERR_UNSUPPORTED and `reason` says why. */
tp_status tp_pipeline_build_entry(tp_compiled *compiled, const tp_arg *args, int num_args,
                                  const tp_arg_signature *signature, tp_cache_entry **out,
                                  char **uncompiled_reason);
/* The entry's executable for these inputs' shapes, compiled on first use. */
tp_status tp_entry_variant(tp_compiled *compiled, tp_cache_entry *entry, const tp_arg *args,
                           int num_args, tp_variant **out);

/* ---- symbolize.c ---- */

/* A copy of `graph` whose input dims are symbols wherever the dynamic
 * signature codes allow (codes >= TP_DIM_CODE_FIRST; equal codes share a
 * symbol) and concrete[arg] (may be NULL) is false. Fails when an op's shape
 * rule cannot decide on symbols. */
tp_status tp_graph_symbolize(const tp_graph *graph, const tp_arg_signature *signature,
                             const bool *concrete, int num_args, tp_graph **out);

/* ---- call.c ---- */

/* tp_call restricted to a cache hit (the memo, or a stored entry whose guards
 * and gates pass): *ran tells whether it ran. A call that would capture,
 * compile or run the function eagerly (a miss, disable, an uncompiled
 * wrapper, a recompile-limit hit, a nested or recursive call) does nothing
 * and returns TP_OK with *ran false, so the caller can make it with tp_call. */
tp_status tp_call_if_cached(tp_compiled *compiled, const tp_arg *args, int num_args,
                            tp_tensor **outputs, bool *ran);

/* ---- compile.c ---- */

/* Runs the user's function eagerly on `args` (disable, uncompiled fallback). */
tp_status tp_compiled_run_eager(tp_compiled *compiled, const tp_arg *args, int num_args,
                                tp_tensor **outputs);
/* Runs the user's function on `ctx` (a capture's ctx: the wrapper was called
 * on traced tensors, so its ops join the outer graph). outputs receive new
 * references. */
tp_status tp_compiled_run_on_ctx(tp_compiled *compiled, tp_ctx *ctx, const tp_arg *args,
                                 int num_args, tp_tensor **outputs);

/* ---- graph_function.c ---- */

/* Whether the wrapper came from tp_compile_graph. */
bool tp_compiled_is_graph(const tp_compiled *compiled);
/* The capture of a tp_compile_graph wrapper for this call, built from the
 * graph itself (no op runs). */
tp_status tp_graph_function_capture(const tp_compiled *compiled, const tp_arg *args, int num_args,
                                    tp_capture_result *result);

/* ---- reentry.c ---- */

/* One wrapper whose function this thread is running. */
typedef struct tp_running_frame {
    const tp_compiled *compiled;
    struct tp_running_frame *outer;
} tp_running_frame;

void tp_running_enter(tp_running_frame *frame, const tp_compiled *compiled);
void tp_running_leave(tp_running_frame *frame);
/* Whether this thread is inside `compiled`'s function now. */
bool tp_running_inside(const tp_compiled *compiled);

#endif
