/* TensorPlay — tp_compile: compile a C function written against the ops API.
 *
 * The function receives a tp_ctx and its arguments (tensors and scalars) and
 * writes its results into `outputs`:
 *
 *   static void mlp(tp_ctx *ctx, const tp_arg *args, int num_args,
 *                   tp_tensor **outputs, int num_outputs, void *user_data) {
 *       tp_tensor *h = tp_matmul(ctx, args[0].tensor, args[1].tensor);
 *       outputs[0] = tp_relu(ctx, tp_add(ctx, h, args[2].tensor));
 *   }
 *
 * tp_compile() wraps it; tp_call() runs the wrapper. On the first call with a
 * new input signature the function runs once with tracing tensors: every op
 * is recorded into a graph and its result carries shape and dtype only; a
 * value is computed (with the reference kernels, through the ops it derives
 * from and no others) only when the function reads it (tp_item_*, or a raw
 * read below). The graph goes through the pass pipeline, a backend compiles
 * it and runs it for this call: a first call costs the capture, the passes,
 * the backend compile and one run. Later calls with the same signature run
 * the backend's executable directly. A tracing tensor the function keeps
 * beyond its run (in a global, behind user_data) gets its values computed
 * when the capture ends.
 *
 * What the function may do:
 *   - call any op of ops.h on its arguments and on tensors it creates;
 *   - read sizes (tp_ndim, tp_dim, and tp_tensor_dim, tp_tensor_shape,
 *     tp_tensor_numel, tp_tensor_nbytes of a traced tensor): the inputs the
 *     tensor derives from then get an exact-shape guard, also in dynamic
 *     mode (tp_tensor_ndim needs none: the rank is always keyed);
 *   - branch on values (tp_item_bool, tp_item_i64): the outcome joins the
 *     cache key and is re-evaluated on every call; tp_item_f64 bakes the value
 *     into the graph and keys on it too;
 *   - call another compiled wrapper on traced tensors: its function runs on
 *     this capture's ctx, so its ops join this graph (its own cache is not
 *     used);
 *   - not read or write values behind the ops' back (tp_tensor_data,
 *     tp_tensor_data_mut, tp_tensor_get_f64, tp_tensor_copy_from,
 *     tp_tensor_fill, tp_tensor_clone, tp_npy_save, tp_graph_run,
 *     tp_executable_run or tp_call_into on a traced tensor): under
 *     fullgraph that is a capture error, otherwise the read sees the right
 *     values, the rest of that run computes as eagerly, and the function
 *     runs uncompiled from then on with the reason kept
 *     (tp_compiled_uncompiled_reason);
 *   - not run ops on, or read sizes or values (tp_ndim, tp_dim, tp_item_*)
 *     of, traced tensors with a tp_ctx other than the one it was given: that
 *     call fails and so does the capture (TP_ERR_STATE).
 * An op whose kernel fails on values (gather with an index out of range) is
 * an error of the capture when a read needed its value ("... failed during
 * capture: gather: ..."); otherwise the compiled run meets it, and what it
 * does then is the backend's (as on any later call with such values).
 * Tensors the function reaches other than its arguments (globals, data behind
 * user_data) are copied into the graph as constants at capture time, on every
 * backend: a later change to them is not seen by the compiled function.
 * Errors of the function go through the ctx (sticky errors, see ops.h); a
 * failing function makes tp_call fail with that error.
 *
 * Cache: every entry keeps its own guards (signature, exact shapes of inputs
 * whose shape was read, gate program and outcomes), so an entry is never
 * cleared when a later capture reveals new reads. The last hit is memoised
 * with references to its tensors (so their addresses cannot be reused); the
 * memo is dropped by the next different call, tp_compile_reset_all or
 * tp_compiled_free. A wrapper called from inside its own function (while
 * this thread captures or runs it) returns TP_ERR_STATE.
 *
 * Threads: one tp_compiled may be called from many threads at once.
 *
 * Ownership: tp_compile hands the caller a tp_compiled to free with
 * tp_compiled_free. tp_call hands the caller one new reference per output.
 */
#ifndef TENSORPLAY_COMPILE_H
#define TENSORPLAY_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "ops.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- arguments ------------------------------------------------------------ */

typedef enum tp_arg_kind {
    TP_ARG_TENSOR = 0, /* borrowed tp_tensor * */
    TP_ARG_INT = 1,
    TP_ARG_FLOAT = 2,
    TP_ARG_BOOL = 3,
} tp_arg_kind;

typedef struct tp_arg {
    tp_arg_kind kind;
    union {
        tp_tensor *tensor;
        int64_t i;
        double f;
        bool b;
    };
} tp_arg;

static inline tp_arg tp_arg_tensor(tp_tensor *tensor) {
    tp_arg arg = {.kind = TP_ARG_TENSOR, .tensor = tensor};
    return arg;
}
static inline tp_arg tp_arg_int(int64_t value) {
    tp_arg arg = {.kind = TP_ARG_INT, .i = value};
    return arg;
}
static inline tp_arg tp_arg_float(double value) {
    tp_arg arg = {.kind = TP_ARG_FLOAT, .f = value};
    return arg;
}
static inline tp_arg tp_arg_bool(bool value) {
    tp_arg arg = {.kind = TP_ARG_BOOL, .b = value};
    return arg;
}

/* The function being compiled. `outputs` has `num_outputs` slots, all NULL on
 * entry; store tensors of the ctx's scope (or the inputs themselves) there. */
typedef void (*tp_fn)(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                      int num_outputs, void *user_data);

/* ---- options --------------------------------------------------------------- */

typedef enum tp_dynamic {
    TP_DYNAMIC_UNSET = 0, /* from config: dynamic_shapes, else assume_static_by_default */
    TP_DYNAMIC_STATIC = 1,
    TP_DYNAMIC_DYNAMIC = 2, /* key tensors on rank, not sizes (below) */
} tp_dynamic;
/* What a dynamic entry still keys on, besides dtype, device and rank:
 *   - sizes 0 and 1 exactly (broadcasting and empty tensors depend on them),
 *     so a size moving between 0, 1 and >= 2 compiles a new entry;
 *   - which dimensions of the call have equal sizes (equal dimensions share
 *     one symbol, so ops whose shape rule needs them equal compile), so a
 *     call where two dimensions become equal or stop being equal compiles a
 *     new entry;
 *   - exact sizes of the inputs whose shape the function read (tp_dim, ...).
 * Each such new entry counts against recompile_limit and
 * accumulated_recompile_limit like any other compile. */

typedef struct tp_compile_options {
    size_t struct_size;
    /* Backend name; NULL: the default backend; "auto": the available backend
     * of highest priority (tp_backend_resolve_auto). Looked up by
     * tp_compile: an unknown name fails there, with suggestions. Nodes it
     * does not claim run on fallback_backend (below). */
    const char *backend;
    /* Either a mode ("default", "max-autotune", ... as the backend knows them;
     * stax's max-autotune measures its matmul choices at compile time and
     * caches them per machine, docs/stax.md) or key=value options, never
     * both. Both reach the backend untouched. */
    const char *mode;
    const char *const *options;
    int num_options;
    bool fullgraph; /* capture problems and limit hits are errors, never fallbacks */
    tp_dynamic dynamic;
    /* Live cache entries before calls compile uncached; 0: the config's
     * recompile_limit. Negative is an error. */
    int recompile_limit;
    bool disable;     /* run the function eagerly on every call; never compile */
    const char *name; /* used in logs and reasons; NULL: "fn" */
    /* Names of the parameters (graph inputs, guard reasons); NULL: "arg0",
     * "arg1", ...; when given, tp_call must pass exactly num_params args. */
    const char *const *param_names;
    int num_params;
    int num_outputs; /* 0 means 1 */
    void *user_data; /* passed to the function */
    /* Where nodes the backend does not claim run: a backend name, "none"
     * (an unclaimed node is an error naming each such op) or NULL (the
     * config's fallback_backend: stax, or eager where stax is unavailable). */
    const char *fallback_backend;
} tp_compile_options;

#define TP_COMPILE_OPTIONS_INIT                                                                    \
    { .struct_size = sizeof(tp_compile_options) }

typedef struct tp_compiled tp_compiled;

/* Validates in this order, failing at the first problem: the options struct
 * (struct_size); the config (a bad knob value in the environment or the ini
 * fails here, naming it); mode together with options; the options list; fn;
 * recompile_limit (not checked with disable); num_outputs; param_names; name;
 * the backend name (not looked up with disable). A mode the backend does not
 * know fails at the first call's backend compile, naming the mode and the
 * modes it knows. The wrapper keeps the config policy (limits, verbose,
 * force_disable_caches) in force now. */
TP_API tp_status tp_compile(tp_fn fn, const tp_compile_options *options, tp_compiled **out);
/* Compiles a graph (built with the builder or parsed from .tpir) through the
 * same frontend: its capture is the graph itself (no op runs to build it).
 * Parameters are the graph's inputs (options->param_names
 * and num_params are ignored; num_outputs comes from the graph); tp_call
 * takes one tensor per graph input. The wrapper keeps its own copy of the
 * graph. Other options as for tp_compile. */
TP_API tp_status tp_compile_graph(const tp_graph *graph, const tp_compile_options *options,
                                  tp_compiled **out);
/* NULL is a no-op. Must not race with calls on the same wrapper. */
TP_API void tp_compiled_free(tp_compiled *compiled);

/* Runs the wrapper. `outputs` receives num_outputs new references. */
TP_API tp_status tp_call(tp_compiled *compiled, const tp_arg *args, int num_args,
                         tp_tensor **outputs);
/* Same, but writes the results into caller-provided tensors of the right
 * dtype and shape (the executable's own buffers are not handed out). */
TP_API tp_status tp_call_into(tp_compiled *compiled, const tp_arg *args, int num_args,
                              tp_tensor *const *outputs);

/* ---- prepared calls: the cache hit of a language binding ------------------
 *
 * A binding whose every foreign call is expensive (Python's ctypes) makes one
 * call per cache hit with this: a prepared call holds one argument slot per
 * parameter; an array slot is a tensor the prepared call owns, re-pointed at
 * the caller's memory (dtype, shape, data) on every run, so the caller needs
 * no tp_tensor_wrap, no release callback and no tp_tensor_release of its
 * inputs. The run is exactly a tp_call cache hit: the same memo, guards and
 * gates (an array slot counts as a new write on every run, so gates are
 * always evaluated on the data given). What a hit does not do is left to
 * tp_call: a miss, disable, an uncompiled wrapper, a recompile-limit hit, a
 * nested or recursive call, and a run while another thread holds the same
 * prepared call, all return TP_OK with outputs[0] NULL and run nothing; the
 * caller then makes the call with tp_call, which compiles as always.
 *
 * The caller's memory is borrowed for the run only: no reference to it
 * outlives tp_prepared_call_run (the slots are emptied before it returns,
 * and an output that is one of the array arguments comes back as a copy). */

/* An argument record of tp_prepared_call_run; 88 bytes, no padding. */
typedef struct tp_prepared_arg {
    int32_t kind;     /* tp_arg_kind, or TP_PREPARED_ARRAY */
    int32_t dtype;    /* TP_PREPARED_ARRAY: a tp_dtype */
    int32_t ndim;     /* TP_PREPARED_ARRAY: 0 .. TP_MAX_DIMS */
    int32_t reserved; /* 0 */
    union {
        tp_tensor *tensor; /* TP_ARG_TENSOR: borrowed */
        int64_t i;         /* TP_ARG_INT; TP_ARG_BOOL: 0 or 1 */
        double f;          /* TP_ARG_FLOAT */
        void *data;        /* TP_PREPARED_ARRAY: C-order elements, aligned to the element size */
    } value;
    int64_t shape[TP_MAX_DIMS]; /* TP_PREPARED_ARRAY: the first ndim entries */
} tp_prepared_arg;

/* tp_prepared_arg.kind of caller memory described by dtype, ndim and shape. */
#define TP_PREPARED_ARRAY 16

typedef struct tp_prepared_call tp_prepared_call;

/* A prepared call of `compiled` with `num_args` arguments (checked against
 * the wrapper's parameters). Free it before the wrapper. */
TP_API tp_status tp_prepared_call_create(tp_compiled *compiled, int num_args,
                                         tp_prepared_call **out);
/* NULL is a no-op. */
TP_API void tp_prepared_call_free(tp_prepared_call *call);
/* Runs a cache hit on `args` (num_args records): `outputs` receives the
 * wrapper's num_outputs new references, or outputs[0] is NULL when nothing
 * ran (see above). A record that is malformed fails naming the argument. */
TP_API tp_status tp_prepared_call_run(tp_prepared_call *call, const tp_prepared_arg *args,
                                      tp_tensor **outputs);

/* Live cache entries. */
TP_API int tp_compiled_num_entries(const tp_compiled *compiled);
/* Compilations so far (capture + passes + backend compile, cached or not;
 * what accumulated_recompile_limit counts). In dynamic mode a new size for an
 * existing entry compiles the backend again but is not counted here. */
TP_API int tp_compiled_num_compiles(const tp_compiled *compiled);
/* Reasons of the last recompilation ("x.shape[0] == 4, got 5", ...), each
 * against one stored entry. *reasons_out is an array of *count_out strings;
 * release it with tp_free (one block). Zero reasons: NULL and 0. */
TP_API tp_status tp_compiled_last_recompile_reasons(const tp_compiled *compiled,
                                                    char ***reasons_out, int *count_out);
/* Why the wrapper runs uncompiled (raw data access during capture), or NULL. */
TP_API const char *tp_compiled_uncompiled_reason(const tp_compiled *compiled);

/* One region of a partitioned compile: a convex part of the graph that one
 * backend runs. */
typedef struct tp_partition_region_info {
    const char *backend; /* the backend's name (owned by the registry, lives forever) */
    int32_t num_nodes;
    int32_t num_inputs;  /* tensors entering: graph inputs or earlier regions' results */
    int32_t num_outputs; /* tensors leaving: returned, or read by a later region */
} tp_partition_region_info;

/* The partition of the wrapper's last backend compile, regions in execution
 * order: one region when the chosen backend claimed every node. The nodes
 * the backend does not claim go to the fallback backend (config knob
 * `fallback_backend`: default stax, or eager where stax is unavailable;
 * `none` makes an unclaimed node an error naming each such op, and
 * `fullgraph` refuses any split); a region the fallback refuses to compile
 * goes to eager, which takes every op. *regions_out is one block to release
 * with tp_free; NULL and 0 before the first compile. */
TP_API tp_status tp_compiled_last_partition(const tp_compiled *compiled,
                                            tp_partition_region_info **regions_out, int *count_out);

/* Text saying which node of `graph` goes to which backend and why, as
 * tp_compile_graph would split it (after the same pass pipeline, composites
 * the backend claims kept): a summary line, then each region with its
 * nodes; an unclaimed node carries the backend's reason. `backend` and
 * `fallback` as in tp_compile_options (NULL: the defaults). What
 * `tpc print --partition` prints. *text_out is released with tp_free. */
TP_API tp_status tp_partition_describe(const tp_graph *graph, const char *backend,
                                       const char *fallback, char **text_out);

/* The same split as data (what `tpc dot` draws): *optimized_out is the
 * graph after the backend's pass pipeline (tp_graph_destroy),
 * *region_of_out one region index per value of it, -1 for graph inputs
 * (tp_free), *regions_out the regions in execution order (tp_free). With
 * fallback `none` a region of unclaimed nodes has backend "unclaimed" (an
 * error when compiling). Compiles nothing. */
TP_API tp_status tp_partition_plan(const tp_graph *graph, const char *backend, const char *fallback,
                                   tp_graph **optimized_out, int32_t **region_of_out,
                                   tp_partition_region_info **regions_out, int *count_out);

/* Clears every live wrapper's cache and guard chains, and resets every loaded
 * backend. */
TP_API void tp_compile_reset_all(void);

/* ---- configuration ------------------------------------------------------- *
 * Knobs (type, default):
 *   recompile_limit              int  8
 *   accumulated_recompile_limit  int  256
 *   fail_on_recompile_limit_hit  bool false
 *   force_disable_caches         bool false
 *   assume_static_by_default     bool true
 *   verbose                      bool false
 *   dynamic_shapes               bool unset
 *   fallback_backend             text stax (eager where stax is unavailable);
 *                                     a backend name or "none" (no setter:
 *                                     tp_compile_options.fallback_backend
 *                                     is the per-call layer)
 * Precedence: per-call options > these setters > environment
 * (TP_RECOMPILE_LIMIT, TP_ACCUMULATED_RECOMPILE_LIMIT, TP_FALLBACK_BACKEND,
 * TP_FAIL_ON_RECOMPILE_LIMIT_HIT, TP_FORCE_DISABLE_CACHES,
 * TP_ASSUME_STATIC_BY_DEFAULT, TP_VERBOSE, TP_DYNAMIC_SHAPES) > the [compile]
 * section of tensorplay.ini (TP_CONFIG, else
 * $XDG_CONFIG_HOME/tensorplay/tensorplay.ini, else
 * /etc/tensorplay/tensorplay.ini) > defaults. Unknown knobs, wrong types and
 * out-of-range values are rejected naming the knob: by the setters at once,
 * and for the environment and the ini by tp_compile and every getter (the
 * error names the variable or file:line), never replaced by a default. */
TP_API tp_status tp_config_set_int(const char *knob, int64_t value);
TP_API tp_status tp_config_set_bool(const char *knob, bool value);
/* Removes the API setting of a knob (env/ini/default apply again). */
TP_API tp_status tp_config_unset(const char *knob);
TP_API tp_status tp_config_get_int(const char *knob, int64_t *value_out);
/* For dynamic_shapes, *is_set_out (may be NULL) says whether any source set it. */
TP_API tp_status tp_config_get_bool(const char *knob, bool *value_out, bool *is_set_out);
/* Forgets the environment and ini values read so far (they are read again at
 * the next use) and every API setting. For tests and long-lived processes. */
TP_API void tp_config_reload(void);

#ifdef __cplusplus
}
#endif
#endif
