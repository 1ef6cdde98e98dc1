/* TensorPlay — the backend plugin contract, revision 1.
 *
 * This header is the whole interface between the TensorPlay core and a
 * compiler backend. It stands alone (only <stdint.h> and <stddef.h>): a
 * plugin includes nothing else from TensorPlay and links nothing from it.
 *
 * How a plugin is found and loaded
 * --------------------------------
 * An INI entry (see DESIGN section 6 and `tp-backends paths`) names the shared
 * object, its entry symbol and the contract revision it speaks. On the first
 * lookup of the backend the core:
 *   1. dlopen()s the library (RTLD_NOW | RTLD_LOCAL);
 *   2. resolves the entry symbol, a tp_plugin_entry_fn, and calls it;
 *   3. checks the returned table: struct_size >= the revision-1 size,
 *      contract_version equal to the INI's `contract`, name equal to the INI
 *      section name;
 *   4. calls probe() (is the device usable now?) and then init(host table).
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
 * must not start its own thread pool: use host->parallel_for (DESIGN
 * section 10: two pools on the same cores make everything slower).
 *
 * Errors and "unsupported"
 * -------------------------
 * compile writes its reason into `error`; init and run call host->set_error.
 * A backend that cannot lower something it is given (an op, a dtype, a
 * shape) says so at compile, never at run, with an error text that starts
 * with "unsupported:" and names the op and the dtype, e.g.
 *   "unsupported: op 'matmul' (%y) on i64 operands"
 * Callers (the conformance kit of `tp-backends check NAME --conformance`)
 * count such a refusal as "unsupported", not as a failure; any other compile
 * error is a failure. Never crash or abort on input you do not handle.
 *
 * Memory
 * ------
 * Everything the core passes (graph view, metadata, buffers, options) is
 * borrowed for the duration of the call. Strings the plugin returns in its
 * table must live until shutdown() returns.
 */
#ifndef TENSORPLAY_PLUGIN_H
#define TENSORPLAY_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The contract revision this header describes. */
#define TP_BACKEND_CONTRACT_VERSION 1

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

#define TP_PLUGIN_OK          0 /* success */
#define TP_PLUGIN_ERROR       1 /* failure; the reason is in the error text */
#define TP_PLUGIN_UNAVAILABLE 2 /* probe only: no usable device right now */

/* ---- dtypes (same codes as tp_dtype in tensor.h) ------------------------ */

#define TP_PLUGIN_F32  0
#define TP_PLUGIN_F64  1
#define TP_PLUGIN_I32  2
#define TP_PLUGIN_I64  3
#define TP_PLUGIN_BOOL 4 /* one byte per element, 0 or 1 */

#define TP_PLUGIN_MAX_DIMS 8

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
    /* Fusion region from the core's fusion pass: nodes with the same id >= 0
     * form one region (pointwise ops connected by producer edges with
     * compatible shapes, possibly closed by one reduction that consumes
     * them); -1 for nodes in no region and for inputs. A hint: a backend may
     * merge regions further (a matmul epilogue) or ignore them. */
    int32_t fusion_region;
} tp_plugin_value;

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
} tp_plugin_graph;

/* ---- tensors crossing the boundary -------------------------------------- */

/* Where a tensor lives: revision 1 only moves host memory. Revision 2 plans
 * device-resident tensors, identified by backend-defined device numbers. */
#define TP_PLUGIN_DEVICE_HOST 0

/* Metadata of one concrete input, given to compile: an executable is
 * specialized for exactly these dtypes and shapes. */
typedef struct tp_plugin_tensor_meta {
    int32_t dtype;
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS]; /* all >= 0 */
    int32_t device;                   /* TP_PLUGIN_DEVICE_HOST in revision 1 */
} tp_plugin_tensor_meta;

/* A dense C-order buffer in host memory (TP_TENSOR_ALIGNMENT = 64-byte aligned). */
typedef struct tp_plugin_buffer {
    void *data;
    size_t nbytes;
    int32_t dtype;
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS];
    int32_t device; /* TP_PLUGIN_DEVICE_HOST in revision 1 */
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
} tp_plugin_host;

/* ---- the backend table (plugin -> core) --------------------------------- */

/* An executable: a compiled graph, opaque to the core. */
typedef struct tp_plugin_executable tp_plugin_executable;

typedef struct tp_plugin_backend {
    uint32_t struct_size;      /* sizeof(tp_plugin_backend) the plugin was built with */
    uint32_t contract_version; /* TP_BACKEND_CONTRACT_VERSION the plugin was built with */
    const char *name;          /* must equal the INI section name */
    const char *version;       /* the plugin's own version, free form */
    const char *description;   /* one line */

    /* Whether the backend can work now (driver present, device found).
     * Returns TP_PLUGIN_OK, or TP_PLUGIN_UNAVAILABLE with the reason written
     * into `why` (NUL-terminated, at most `why_size` bytes). Called before
     * init, and may be called again later; must not need init. May be NULL
     * (always available). */
    int32_t (*probe)(char *why, size_t why_size);

    /* Called once after a successful probe, before any other call. `host`
     * stays valid until shutdown returns. On failure return TP_PLUGIN_ERROR
     * after host->set_error. */
    int32_t (*init)(const tp_plugin_host *host);

    /* Compiles `graph` for inputs of exactly the types in `inputs`
     * (graph->num_inputs entries, in graph input order; symbols in the graph
     * types are bound by them). A backend may serve other sizes for the same
     * symbols: its executable may then be run with any inputs whose sizes
     * bind the symbols consistently (it reads them from the buffers' dims).
     * `options` are the caller's key=value pairs.
     * On success stores a new executable in *executable and returns
     * TP_PLUGIN_OK. On failure writes what went wrong (naming the op, option
     * or type) into `error` (NUL-terminated, at most `error_size` bytes) and
     * returns TP_PLUGIN_ERROR. */
    int32_t (*compile)(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                       int32_t num_inputs, const tp_plugin_option *options, int32_t num_options,
                       tp_plugin_executable **executable, char *error, size_t error_size);

    /* Runs an executable. Inputs match the metadata given to compile; the
     * output buffers are allocated by the core with the outputs' concrete
     * types and must be filled completely. Buffers never alias. On failure
     * call host->set_error and return TP_PLUGIN_ERROR. */
    int32_t (*run)(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                   int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs);

    /* Frees an executable (never NULL). */
    void (*release)(tp_plugin_executable *executable);

    /* Drops process-wide caches (kernel pools, captured device graphs).
     * Executables stay valid. May be NULL. */
    void (*reset)(void);

    /* Called once before the library is unloaded, after every executable is
     * released. May be NULL. */
    void (*shutdown)(void);
} tp_plugin_backend;

/* The entry symbol named in the INI (`entry = ...`) has this type. It returns
 * the plugin's table (static storage), or NULL when the plugin cannot run in
 * this process at all. */
typedef const tp_plugin_backend *(*tp_plugin_entry_fn)(void);

/* Size of a revision-1 table: the core refuses a smaller struct_size. */
#define TP_PLUGIN_BACKEND_SIZE_V1 (offsetof(tp_plugin_backend, shutdown) + sizeof(void (*)(void)))
#define TP_PLUGIN_HOST_SIZE_V1    (offsetof(tp_plugin_host, aligned_free) + sizeof(void (*)(void *)))
#define TP_PLUGIN_GRAPH_SIZE_V1   (offsetof(tp_plugin_graph, symbols) + sizeof(const char *const *))

#ifdef __cplusplus
}
#endif
#endif
