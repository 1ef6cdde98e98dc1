/* TensorPlay — the backend plugin contract, revision 2.
 *
 * This header is the whole interface between the TensorPlay core and a
 * compiler backend. It stands alone (only <stdint.h> and <stddef.h>): a
 * plugin includes nothing else from TensorPlay and links nothing from it.
 *
 * How a plugin is found and loaded
 * --------------------------------
 * An INI entry (`tp-backends paths` lists the folders searched) names the
 * shared object, its entry symbol and the contract revisions it speaks:
 * `contract` is the highest, `min_contract` (default: `contract`) the lowest.
 * On the first lookup of the backend the core:
 *   1. refuses, without loading, an entry whose revisions do not meet the
 *      core's (1 .. TP_BACKEND_CONTRACT_VERSION), saying which side to
 *      upgrade;
 *   2. dlopen()s the library (RTLD_NOW | RTLD_LOCAL);
 *   3. resolves the entry symbol and calls it: with `contract = 1` as a
 *      tp_plugin_entry_fn (no arguments, as revision-1 plugins were built);
 *      from `contract = 2` on as a tp_plugin_entry2_fn that receives the
 *      highest revision both sides speak — the entry returns the table of
 *      that revision or of a lower one it also speaks (the Vulkan loader and
 *      its drivers negotiate the same way);
 *   4. checks the returned table: struct_size at least its revision's size,
 *      contract_version within the negotiated range, name equal to the INI
 *      section name, the required functions present;
 *   5. revision 2: calls calls.probe (is the device usable now?) and then
 *      calls.init, which returns the per-instance context every later call
 *      receives. Revision 1: probe() and init(host).
 * Any failure leaves the backend "failed" with the reason kept; the process
 * is never aborted.
 *
 * Versioning rules
 * ----------------
 * - TP_BACKEND_CONTRACT_VERSION is the revision this header describes.
 *   Revisions are additive: a core implementing revision N runs plugins of
 *   revisions 1..N.
 * - The tables (tp_plugin_host, tp_plugin_backend, tp_plugin_graph) start
 *   with struct_size and only ever grow at the end. Read a field added in a
 *   later revision only after checking struct_size covers it
 *   (TP_PLUGIN_HAS_FIELD).
 * - Element structs that come in arrays (tp_plugin_value, tp_plugin_attr,
 *   tp_plugin_tensor_meta, tp_plugin_buffer, tp_plugin_option) never change
 *   layout; a later revision adds parallel arrays at the end of the table
 *   that holds them.
 *
 * Threads
 * -------
 * probe, init, reset and shutdown are called once at a time. compile, run and
 * release may be called from several threads at once, for different
 * executables; one executable is never run by two threads at once. A plugin
 * must not start its own thread pool: use host->parallel_for (two pools
 * spinning on the same cores make everything slower).
 *
 * Partial backends (revision 2)
 * -----------------------------
 * A backend need not handle every op. The core asks calls.supports for each
 * node of a graph (after its passes); it decomposes a composite op the
 * backend does not claim into simpler ops and asks again for those, then
 * splits the graph into the largest convex regions the backend claims. Each
 * region is compiled by this backend as a graph of its own; the rest runs on
 * the fallback backend (config `fallback_backend`). A backend that claims
 * every node of a graph receives that graph whole, exactly as in revision 1.
 *
 * Fusion is the backend's own business: the view carries no fusion plan
 * (tp_plugin_value.fusion_region is always -1 from revision 2 on). Each
 * backend groups nodes into kernels as its hardware wants (matmul
 * epilogues, row kernels, fusion after lowering).
 *
 * Errors and "unsupported"
 * -------------------------
 * Revision 2 has one error channel: a call that fails calls host->set_error
 * (on the calling thread) with a message naming the op, option or type and
 * what to do, then returns TP_PLUGIN_ERROR. A backend that does not handle
 * something it is given (an op, a dtype, a shape) returns
 * TP_PLUGIN_UNSUPPORTED, from supports or at the latest from compile (never
 * from run), with the reason through host->set_error, e.g.
 *   "op 'matmul' (%y) on i64 operands"
 * The conformance kit of `tp-backends check NAME --conformance` counts such a
 * refusal as "unsupported", not as a failure. Never crash or abort on input
 * you do not handle.
 *
 * Revision 1 (still loaded): compile wrote its reason into `error`, init and
 * run called host->set_error, and an "unsupported" refusal was a compile
 * error whose text starts with "unsupported:".
 *
 * Memory
 * ------
 * Everything the core passes (graph view, metadata, buffers, options) is
 * borrowed for the duration of the call. Strings the plugin returns in its
 * table, and extension structs, must live until shutdown returns.
 *
 * Op knowledge
 * ------------
 * Every node of the view carries its op id (TP_PLUGIN_OP_* from
 * <tensorplay/plugin_ops.h>, generated from the core's op table), its kind
 * and its compute and result dtypes (tp_plugin_graph.nodes): a plugin never
 * re-derives them from op names. Op ids are stable: a new core only adds
 * ids at the end, so a plugin meets ids >= TP_PLUGIN_OP_COUNT of its header
 * only for ops newer than itself (refuse those in supports).
 */
#ifndef TENSORPLAY_PLUGIN_H
#define TENSORPLAY_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The highest contract revision this header describes. */
#define TP_BACKEND_CONTRACT_VERSION 2

/* Marks the entry symbol as exported even under -fvisibility=hidden. */
#if defined(__GNUC__)
#define TP_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TP_PLUGIN_EXPORT
#endif

/* True when a table of `struct_size` bytes contains `field` of `type`. */
#define TP_PLUGIN_HAS_FIELD(table, type, field)                                                    \
    ((table)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ---- result codes ------------------------------------------------------ */

#define TP_PLUGIN_OK          0 /* success (supports: the node is claimed) */
#define TP_PLUGIN_ERROR       1 /* failure; the reason is in the error text */
#define TP_PLUGIN_UNAVAILABLE 2 /* probe only: no usable device right now */
#define TP_PLUGIN_UNSUPPORTED 3 /* revision 2, supports and compile: not handled here */

/* ---- dtypes (same codes as tp_dtype in tensor.h) ------------------------ */

#define TP_PLUGIN_F32  0
#define TP_PLUGIN_F64  1
#define TP_PLUGIN_I32  2
#define TP_PLUGIN_I64  3
#define TP_PLUGIN_BOOL 4 /* one byte per element, 0 or 1 */

#define TP_PLUGIN_MAX_DIMS 8

/* Op kinds (tp_plugin_node.kind), as in the core's op table. */
#define TP_PLUGIN_KIND_POINTWISE 0
#define TP_PLUGIN_KIND_REDUCTION 1
#define TP_PLUGIN_KIND_MATMUL    2
#define TP_PLUGIN_KIND_SHAPE     3
#define TP_PLUGIN_KIND_CREATION  4
#define TP_PLUGIN_KIND_COMPOSITE 5 /* has a decomposition into the kinds above */

/* Log levels for host->log (same codes as tp_log_level in status.h). */
#define TP_PLUGIN_LOG_ERROR 0
#define TP_PLUGIN_LOG_WARN  1
#define TP_PLUGIN_LOG_INFO  2
#define TP_PLUGIN_LOG_DEBUG 3

/* ---- the graph view ------------------------------------------------------ */

/* A value's type: dtype code and shape. A dimension >= 0 is a size; a
 * dimension < 0 is symbol number (-dim - 1) of tp_plugin_graph.symbols (a size
 * only known from the input metadata at compile time). */
typedef struct tp_plugin_type {
    int32_t dtype; /* TP_PLUGIN_F32 ... */
    int32_t ndim;  /* 0 .. TP_PLUGIN_MAX_DIMS; 0 is a scalar */
    int64_t dims[TP_PLUGIN_MAX_DIMS];
} tp_plugin_type;

/* Attribute value types. */
#define TP_PLUGIN_ATTR_INT   0 /* `i` */
#define TP_PLUGIN_ATTR_FLOAT 1 /* `f` */
#define TP_PLUGIN_ATTR_INTS  2 /* `count` elements at `ints` */
#define TP_PLUGIN_ATTR_DTYPE 3 /* `i` is a TP_PLUGIN_* dtype code */
#define TP_PLUGIN_ATTR_TENSOR                                                                      \
    4                         /* constant payload: `dtype`-typed elements, C order, `nbytes`       \
                                 bytes at `data`; shape: `count` dims at `ints` */
#define TP_PLUGIN_ATTR_BOOL 5 /* `i` is 0 or 1 */

/* Values of the "approximate" attribute of gelu (TP_PLUGIN_ATTR_INT). */
#define TP_PLUGIN_GELU_NONE 0
#define TP_PLUGIN_GELU_TANH 1

/* "end" of the slice `stop` attribute: slice to the end of the axis. */
#define TP_PLUGIN_SLICE_END INT64_MAX

/* One attribute of a node. Names and meanings are those of the .tpir text
 * form ("axes", "keepdim", "shape", "perm", "axis", "dim0", "dim1", "start",
 * "stop", "step", "dtype", "value", "eps", "approximate", "beta",
 * "threshold"); a node lists every attribute its op declares, in a fixed order. */
typedef struct tp_plugin_attr {
    const char *name;
    int32_t type;        /* TP_PLUGIN_ATTR_* */
    int32_t count;       /* INTS: elements; TENSOR: ndim of the payload */
    int64_t i;           /* INT, BOOL, DTYPE */
    double f;            /* FLOAT */
    const int64_t *ints; /* INTS: the elements; TENSOR: the payload's dims */
    int32_t dtype;       /* TENSOR: payload dtype */
    const void *data;    /* TENSOR: payload bytes */
    size_t nbytes;       /* TENSOR: payload size in bytes */
} tp_plugin_attr;

/* One SSA value: a graph input (op == NULL) or the result of one node. */
typedef struct tp_plugin_value {
    const char *name;        /* as in .tpir, without '%' */
    const char *op;          /* op name ("add", "matmul", ...); NULL for an input */
    tp_plugin_type type;     /* the result type */
    int32_t num_operands;    /* 0 for inputs */
    const int32_t *operands; /* indices into tp_plugin_graph.values, all < this value's */
    int32_t num_attrs;       /* 0 when the op has no attributes */
    const tp_plugin_attr *attrs;
    /* Always -1 from revision 2 on: fusion is the backend's own (see "Partial
     * backends" above). Kept so the element layout never changes. */
    int32_t fusion_region;
} tp_plugin_value;

/* What the core's op table says of one value (revision 2; the array
 * tp_plugin_graph.nodes runs parallel to tp_plugin_graph.values). */
typedef struct tp_plugin_node {
    int32_t op_id;         /* TP_PLUGIN_OP_* (plugin_ops.h); -1 for a graph input */
    int32_t kind;          /* TP_PLUGIN_KIND_*; -1 for a graph input */
    int32_t compute_dtype; /* the dtype the op computes in, from its operands'
                              dtypes (NumPy-style promotion); for an input, its dtype */
    int32_t result_dtype;  /* the value's dtype (equals values[i].type.dtype) */
} tp_plugin_node;

/* The read-only view of one graph. Values are in SSA order (operands come
 * first); inputs and outputs are indices into `values`. */
typedef struct tp_plugin_graph {
    uint32_t struct_size; /* sizeof(tp_plugin_graph) of the core's revision */
    const char *name;
    int32_t num_values;
    const tp_plugin_value *values;
    int32_t num_inputs;
    const int32_t *inputs; /* in the order run() receives input buffers */
    int32_t num_outputs;
    const int32_t *outputs; /* in the order run() receives output buffers; may repeat */
    int32_t num_symbols;
    const char *const *symbols; /* names of the dimension symbols */
    /* ---- revision 2 ---- */
    const tp_plugin_node *nodes; /* num_values entries, parallel to `values` */
} tp_plugin_graph;

/* ---- tensors crossing the boundary -------------------------------------- */

/* Where a tensor lives: revisions 1 and 2 only move host memory. Revision 3
 * plans device-resident tensors, identified by backend-defined numbers. */
#define TP_PLUGIN_DEVICE_HOST 0

/* Metadata of one concrete input, given to compile: an executable is
 * specialized for exactly these dtypes and shapes. */
typedef struct tp_plugin_tensor_meta {
    int32_t dtype;
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS]; /* all >= 0 */
    int32_t device;                   /* TP_PLUGIN_DEVICE_HOST (revisions 1, 2) */
} tp_plugin_tensor_meta;

/* A dense C-order buffer in host memory (TP_TENSOR_ALIGNMENT = 64-byte aligned). */
typedef struct tp_plugin_buffer {
    void *data;
    size_t nbytes;
    int32_t dtype;
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS];
    int32_t device; /* TP_PLUGIN_DEVICE_HOST (revisions 1, 2) */
} tp_plugin_buffer;

/* One compile option, from "key=value" (the value may be ""). A backend
 * rejects a key it does not know, naming it and listing the ones it does. */
typedef struct tp_plugin_option {
    const char *key;
    const char *value;
} tp_plugin_option;

/* ---- the host table (core -> plugin) ------------------------------------ */

/* Work item for parallel_for: process indices [begin, end). */
typedef void (*tp_plugin_range_fn)(void *context, int64_t begin, int64_t end);

typedef struct tp_plugin_host {
    uint32_t struct_size;      /* sizeof(tp_plugin_host) of the core's revision */
    uint32_t contract_version; /* the core's TP_BACKEND_CONTRACT_VERSION */
    const char *core_version;  /* "MAJOR.MINOR.PATCH" */
    /* Opaque to the plugin; identifies the backend to the core. Pass `host`
     * back as the first argument of log and set_error. */
    void *core_private;

    /* Logs one line (no trailing newline) through the core's log handler,
     * prefixed with the backend name. `level`: TP_PLUGIN_LOG_*. */
    void (*log)(const struct tp_plugin_host *host, int32_t level, const char *message);
    /* Records why the current call fails (init, compile, run, ...); the core
     * reports it with the backend name. Call it on the thread that makes the
     * call, before returning TP_PLUGIN_ERROR. */
    void (*set_error)(const struct tp_plugin_host *host, const char *message);

    /* Runs fn(context, begin, end) over [0, n) in chunks of at least `grain`
     * indices on the core's thread pool; the calling thread takes part.
     * Returns when every chunk is done. Nested calls run serially. */
    void (*parallel_for)(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *context);
    /* Threads parallel_for may use (>= 1). */
    int32_t (*num_threads)(void);

    /* 64-byte-aligned memory (2 MiB-aligned with huge-page advice from
     * 2 MiB up); NULL when out of memory. Free with aligned_free. */
    void *(*aligned_alloc)(size_t size);
    void (*aligned_free)(void *pointer);

    /* ---- revision 2 ---- */
    /* The value of environment variable `name` as the core reads it: NULL in
     * a privileged (setuid/setgid) process, where no override is honoured,
     * and when unset. Plugins read the environment only through this. */
    const char *(*getenv)(const char *name);

    /* ---- revision 2, appended: kernel times for the core's profile ----
     * Optional on both sides: a core older than these fields has a shorter
     * table, so check TP_PLUGIN_HAS_FIELD(host, tp_plugin_host,
     * report_kernel) once (init) before using them; a plugin that never
     * reports is as valid as before. */
    /* Nonzero when a profile is being collected now (tensorplay/profile.h
     * handler installed). Ask once at the start of a run; when it answers 0,
     * time nothing and report nothing, so a run costs what it did. */
    int32_t (*profiling)(const struct tp_plugin_host *host);
    /* Monotonic nanoseconds: the clock report_kernel's times are read on. */
    uint64_t (*now_ns)(void);
    /* Reports one kernel execution of the current run: `name` (the kernel's
     * name, borrowed for the call), started and ended at now_ns() readings
     * (a device's own timestamps mapped onto that clock are fine). Call it
     * on the thread that called run, before run returns; only in a run for
     * which profiling() answered nonzero. */
    void (*report_kernel)(const struct tp_plugin_host *host, const char *name, uint64_t start_ns,
                          uint64_t end_ns);
} tp_plugin_host;

/* ---- the backend table (plugin -> core) --------------------------------- */

/* An executable: a compiled graph, opaque to the core. */
typedef struct tp_plugin_executable tp_plugin_executable;

/* Every extension struct starts with this header. get_extension(name)
 * returns one, or NULL when the backend has no extension of that name; the
 * caller checks struct_size before reading a field, and the struct lives
 * until shutdown returns. Extension names are "backend.what" (e.g.
 * "cuda.testing"); what each one holds is the backend's documented business. */
typedef struct tp_plugin_extension {
    uint32_t struct_size; /* sizeof the whole extension struct */
    uint32_t version;     /* the extension's own revision, from 1 */
} tp_plugin_extension;

/* What probe may tell the core besides "available" (revision 2). */
typedef struct tp_plugin_probe_info {
    uint32_t struct_size; /* set by the core */
    /* In: the INI entry's `priority` (or the backend's default). Out: a
     * backend may lower it for the device it found (an OpenCL CPU device
     * rather than a GPU); `auto` picks the highest. Never raise it. */
    int32_t priority;
    /* Out: one line naming the device, or "" (at most 255 bytes + NUL). */
    char device[256];
} tp_plugin_probe_info;

/* The calls of a revision-2 backend. Each receives the context init made. */
typedef struct tp_plugin_calls {
    /* Whether the backend can work now (driver present, device found).
     * Returns TP_PLUGIN_OK, or TP_PLUGIN_UNAVAILABLE after
     * host->set_error(reason). Called before init and may be called again
     * later; must not need init. `info` may be filled (see above). May be
     * NULL (always available). */
    int32_t (*probe)(const tp_plugin_host *host, tp_plugin_probe_info *info);

    /* Called once after a successful probe, before any other call. Stores
     * the backend's per-instance context in *context (may be NULL); every
     * later call receives it. `host` stays valid until shutdown returns: keep
     * it in the context, not in a global. On failure returns TP_PLUGIN_ERROR
     * after host->set_error. */
    int32_t (*init)(const tp_plugin_host *host, void **context);

    /* Claims: whether this backend computes value `value` (a node, never a
     * graph input) of `graph`, with the operand types the view gives.
     * Returns TP_PLUGIN_OK to claim it, or TP_PLUGIN_UNSUPPORTED (the reason
     * through host->set_error is optional but shown to users). Must not
     * depend on other nodes' claims; may be called from several threads.
     * May be NULL: the backend claims every node (a whole-graph backend). */
    int32_t (*supports)(void *context, const tp_plugin_graph *graph, int32_t value);

    /* Compiles `graph` — only nodes this backend claimed — for inputs of
     * exactly the types in `inputs` (graph->num_inputs entries, in graph
     * input order; symbols in the graph's types are bound by them). A backend
     * may serve other sizes for the same symbols: its executable may then be
     * run with any inputs whose sizes bind the symbols consistently (it reads
     * them from the buffers' dims). `options` are the caller's key=value
     * pairs: reject an unknown key, naming it and listing the known ones.
     * Returns TP_PLUGIN_OK with a new executable in *executable;
     * TP_PLUGIN_UNSUPPORTED or TP_PLUGIN_ERROR after host->set_error. */
    int32_t (*compile)(void *context, const tp_plugin_graph *graph,
                       const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                       const tp_plugin_option *options, int32_t num_options,
                       tp_plugin_executable **executable);

    /* Runs an executable. Inputs match the metadata given to compile; the
     * output buffers are allocated by the core with the outputs' concrete
     * types and must be filled completely. Buffers never alias. On failure
     * returns TP_PLUGIN_ERROR after host->set_error. */
    int32_t (*run)(void *context, tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                   int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs);

    /* Frees an executable (never NULL). */
    void (*release)(void *context, tp_plugin_executable *executable);

    /* Drops process-wide caches (kernel pools, captured device graphs).
     * Executables stay valid. May be NULL. */
    void (*reset)(void *context);

    /* Called once before the library is unloaded, after every executable is
     * released; frees the context. May be NULL. */
    void (*shutdown)(void *context);

    /* Optional features (test hooks, vendor extras) by name; see
     * tp_plugin_extension. NULL when unknown. May be NULL (no extensions). */
    const tp_plugin_extension *(*get_extension)(void *context, const char *name);
} tp_plugin_calls;

typedef struct tp_plugin_backend {
    uint32_t struct_size;      /* sizeof(tp_plugin_backend) the plugin was built with */
    uint32_t contract_version; /* the revision of this table (1 or 2) */
    const char *name;          /* must equal the INI section name */
    const char *version;       /* the plugin's own version, free form */
    const char *description;   /* one line */

    /* ---- revision 1 calls: a revision-2 table leaves them NULL ---- */

    /* Whether the backend can work now; TP_PLUGIN_OK, or
     * TP_PLUGIN_UNAVAILABLE with the reason written into `why`. May be NULL. */
    int32_t (*probe)(char *why, size_t why_size);
    /* Called once after a successful probe. `host` stays valid until shutdown. */
    int32_t (*init)(const tp_plugin_host *host);
    /* Compiles the whole graph or fails, with the reason in `error` ("unsupported:
     * ..." for what it does not handle). */
    int32_t (*compile)(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                       int32_t num_inputs, const tp_plugin_option *options, int32_t num_options,
                       tp_plugin_executable **executable, char *error, size_t error_size);
    int32_t (*run)(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                   int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs);
    void (*release)(tp_plugin_executable *executable);
    void (*reset)(void);
    void (*shutdown)(void);

    /* ---- revision 2 ---- */
    tp_plugin_calls calls;
} tp_plugin_backend;

/* The entry symbol named in the INI (`entry = ...`). It returns the plugin's
 * table (static storage), or NULL when the plugin cannot run in this process
 * at all.
 *   contract = 1 in the INI: called as tp_plugin_entry_fn, with no argument.
 *   contract >= 2: called as tp_plugin_entry2_fn with `revision`, the highest
 *   revision both the core and the INI entry speak; return a table of that
 *   revision or of a lower one you also speak, never a higher one. */
typedef const tp_plugin_backend *(*tp_plugin_entry_fn)(void);
typedef const tp_plugin_backend *(*tp_plugin_entry2_fn)(uint32_t revision);

/* Smallest struct_size the core accepts for each table of each revision. */
#define TP_PLUGIN_BACKEND_SIZE_V1 (offsetof(tp_plugin_backend, shutdown) + sizeof(void (*)(void)))
#define TP_PLUGIN_HOST_SIZE_V1    (offsetof(tp_plugin_host, aligned_free) + sizeof(void (*)(void *)))
#define TP_PLUGIN_GRAPH_SIZE_V1   (offsetof(tp_plugin_graph, symbols) + sizeof(const char *const *))
#define TP_PLUGIN_BACKEND_SIZE_V2 (offsetof(tp_plugin_backend, calls) + sizeof(tp_plugin_calls))
#define TP_PLUGIN_HOST_SIZE_V2    (offsetof(tp_plugin_host, getenv) + sizeof(void *))
#define TP_PLUGIN_GRAPH_SIZE_V2   (offsetof(tp_plugin_graph, nodes) + sizeof(void *))

#ifdef __cplusplus
}
#endif
#endif
