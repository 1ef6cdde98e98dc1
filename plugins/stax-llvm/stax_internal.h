/* stax-llvm — what the backend's files share: the compiled program (slots,
 * views, steps), the IR emitter's entry points, the JIT, the disk cache and
 * the matmul driver. Internal to the plugin; built only on plugin.h and the
 * LLVM C API. */
#ifndef STAX_INTERNAL_H
#define STAX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"
#include "tpcommon_fusion.h"
#include "tpcommon_graph.h"
#include "tpcommon_options.h"
#include "tpcommon_text.h"

#include "stax_unit_grid.h"

#ifndef STAX_VERSION
#define STAX_VERSION "0.1.0"
#endif
#define STAX_MAX_DIMS TP_PLUGIN_MAX_DIMS

extern const char *const stax_mathlib_ir;

/* ---- memory: slots and strided views ---- */

typedef enum stax_slot_kind {
    STAX_SLOT_INPUT = 0, /* run()'s input buffer `index` */
    STAX_SLOT_OUTPUT,    /* run()'s output buffer `index` */
    STAX_SLOT_SCRATCH,   /* owned by the executable, in its arena (stax_arena.c) */
    STAX_SLOT_CONST,     /* owned by the executable, filled at compile time */
} stax_slot_kind;

typedef struct stax_slot {
    stax_slot_kind kind;
    int32_t index;
    size_t bytes;
    void *data;           /* SCRATCH, CONST (NULL: a constant no run reads, not kept) */
    int64_t arena_offset; /* SCRATCH in the arena (stax_arena.c): its first byte; -1: own buffer */
    bool borrowed;        /* CONST: data is the graph's payload, read in place while planning */
} stax_slot;

/* Slot numbers (a kernel's: the slots its functions read or write). */
typedef struct stax_slot_list {
    int32_t count, capacity;
    int32_t *slots;
} stax_slot_list;

/* Elements of `slot` (of the value's dtype) at offset + sum(i_d * strides[d]). */
typedef struct stax_view {
    int32_t slot; /* -1: not stored (computed inside a kernel) */
    int64_t offset;
    int32_t ndim;
    int64_t dims[STAX_MAX_DIMS];
    int64_t strides[STAX_MAX_DIMS];
} stax_view;

/* What the planner knows about one graph value. */
typedef struct stax_value {
    tp_plugin_type type; /* concrete (symbols bound) */
    int32_t compute;     /* dtype the node computes in */
    stax_view view;      /* where the value lives; slot -1 when inlined */
    stax_view raw;       /* matmul/linear: where the product is written (before bias) */
} stax_value;

/* ---- steps ---- */

typedef enum stax_step_kind {
    STAX_STEP_KERNEL = 0,  /* kernels[kernel](slots, begin, end) over [0, count) */
    STAX_STEP_GEMM,        /* f32 blocked matmul (stax_gemm.c) + optional epilogue kernel */
    STAX_STEP_WINDOW,      /* f32 conv / conv_transpose / pool (stax_window.c) */
    STAX_STEP_PACKED_GEMM, /* f32 matmul through a micro-kernel family (stax_gemm_packed.c) */
    STAX_STEP_ATTENTION,   /* f32 softmax(Q.K^T * scale + mask).V, tiled (stax_attention.c) */
} stax_step_kind;

typedef struct stax_gemm {
    int64_t batch, m, n, k;
    int32_t batch_ndim;
    int64_t batch_dims[STAX_MAX_DIMS];
    int64_t a_batch_strides[STAX_MAX_DIMS], b_batch_strides[STAX_MAX_DIMS];
    int32_t a_slot, b_slot, c_slot;
    int64_t a_offset, b_offset, c_offset;
    int64_t a_rs, a_cs, b_rs, b_cs; /* element strides of the matrices */
    int32_t epilogue;               /* kernel over the output's flat range, or -1 */
    int32_t a_dtype, b_dtype;       /* TP_PLUGIN_F32, or F16/BF16 widened while packing */
    /* A constant B (shared by all batches) packed at compile by
     * stax_gemm_pack_whole_b into CONST slot packed_b_slot for the kernels of
     * packed_b_family with k blocks of packed_b_kc; packed_b_kc 0: not packed.
     * Kernels with another family or kc (max-autotune) pack B per call. */
    int32_t packed_b_slot;
    int64_t packed_b_kc;
    const struct stax_gemm_family *packed_b_family;
} stax_gemm;

/* How a window step runs (stax_window.c). */
typedef enum stax_window_method {
    STAX_WINDOW_GEMM_IM2COL = 0, /* conv: im2col into col_slot, then the packed gemm */
    STAX_WINDOW_GEMM_POINTWISE,  /* conv 1x1, stride 1, no pads: the input is the gemm's B */
    STAX_WINDOW_DEPTHWISE,       /* conv with one input channel per group: direct loop */
    STAX_WINDOW_TRANSPOSE,       /* conv_transpose: direct loop per output plane */
    STAX_WINDOW_POOL,            /* max_pool / avg_pool */
} stax_window_method;

typedef enum stax_window_kind {
    STAX_WINDOW_CONV = 0,
    STAX_WINDOW_CONV_TRANSPOSE,
    STAX_WINDOW_MAX_POOL,
    STAX_WINDOW_AVG_POOL,
} stax_window_kind;

/* One sliding-window op on contiguous f32 NCHW (1-D: height 1) operands. */
typedef struct stax_window {
    stax_window_kind kind;
    stax_window_method method;
    int64_t batch, in_channels, out_channels, group;
    int64_t in[2], out[2], kernel[2], stride[2], dilation[2], pad_begin[2], pad_end[2];
    bool count_include_pad;
    bool packed;     /* gemm methods: on the micro-kernel family, im2col packed into B's panels */
    bool pixel_rows; /* packed, group 1: the output pixels of all images as the product's rows
                      * (stax_conv_pixel_rows.c; C^T into col_slot, packed_w_slot holds W^T) */
    bool channels_last;    /* depthwise: sixteen channels at a time, channels-last blocks */
    bool direct_rows;      /* depthwise: rows read from the image itself (stax_depthwise_direct.c);
                            * max pool: across the taps sixteen outputs a vector (stax_pool.c) */
    bool shifted;          /* packed, group 1: one product over the padded input (phase planes at
                            * stride > 1) read in place by the offset tile kernels
                            * (stax_conv_shifted.c) */
    bool shifted_rows;     /* packed, group 1: the output pixels as the product's rows, read in
                            * place from the padded input by the offset-A tile kernels
                            * (stax_conv_shifted_rows.c; packed_w_slot holds W^T) */
    int32_t packed_w_slot; /* packed: constant weights packed at compile for k blocks of */
    int64_t packed_kc;     /* packed_kc (stax_gemm_pack_whole_a per group), or -1 */
    int32_t x_slot, w_slot, b_slot, out_slot, col_slot; /* -1: absent */
    int64_t x_offset, w_offset, b_offset, out_offset;
    /* conv + pointwise consumers: the kernel over the region root's flat
     * range, called on each block of the output once it is final (element i
     * of the root from element i of out), or -1 */
    int32_t epilogue;
    /* packed conv, STAX_CONV_STAGING: a block of C finished in one k block
     * is computed into a buffer in cache, finished there (bias, epilogue)
     * and then copied into out, with non-temporal stores when stream_c
     * (stax_gemm_source.stage); epilogue_slots is 1 + the highest slot the
     * epilogue kernel touches (0: no epilogue) */
    bool stage_c, stream_c;
    int32_t epilogue_slots;
} stax_window;

/* One fused attention: per batch index (the batch dims flattened), out =
 * softmax(Q K^T * scale + mask) V over the key axis; Q [queries, head_dim],
 * K [keys, head_dim], V [keys, value_dim], mask [queries, keys] (optional),
 * out [queries, value_dim], each through its strides. The scale is the
 * product of the f32 scalars in scale_slot[] (divided by where
 * scale_divides[]), read when the step runs. */
#define STAX_ATTENTION_MAX_SCALES 3
typedef struct stax_attention {
    int64_t batch, queries, keys, head_dim, value_dim;
    int32_t batch_ndim;
    int64_t batch_dims[STAX_MAX_DIMS];
    /* operands: 0 Q, 1 K, 2 V, 3 mask, 4 out */
    int32_t slot[5]; /* mask: -1 when absent */
    int64_t offset[5];
    int64_t batch_strides[5][STAX_MAX_DIMS];
    int64_t row_stride[5], col_stride[5]; /* K: row = key, col = head dim */
    int32_t num_scales;
    int32_t scale_slot[STAX_ATTENTION_MAX_SCALES];
    int64_t scale_offset[STAX_ATTENTION_MAX_SCALES];
    bool scale_divides[STAX_ATTENTION_MAX_SCALES];
} stax_attention;

/* A kernel step that reads run-time indices (gather, gather_elements): the
 * kernel lowers the u64 status word in status_slot to the first position
 * (in C order over the indices) whose index is out of range; run arms the
 * word before the step and reports it after (stax_index_check.c). */
typedef struct stax_index_check {
    char *where; /* "graph 'G', %node (gather)"; NULL: the step checks nothing */
    int32_t status_slot;
    int32_t indices_dtype; /* TP_PLUGIN_I32 or TP_PLUGIN_I64 */
    stax_view indices;
    int64_t axis, length; /* the data axis the indices address, and its size */
} stax_index_check;

typedef struct stax_step {
    stax_step_kind kind;
    int32_t kernel;
    int64_t count, grain;
    stax_gemm gemm;           /* GEMM; WINDOW with a gemm method: one image and group */
    stax_window window;       /* WINDOW */
    stax_index_check check;   /* KERNEL of gather / gather_elements */
    stax_attention attention; /* ATTENTION */
} stax_step;

#define STAX_INDEX_STATUS_CLEAR UINT64_MAX /* no index out of range */

/* Arms the status word of a step with an index check (before the step). */
void stax_index_check_arm(const stax_step *step, void **slots);
/* After the step: TP_PLUGIN_OK, or TP_PLUGIN_ERROR with a message naming the
 * node, the index, its position and the valid range in error[0..size). */
int32_t stax_index_check_report(const stax_step *step, void *const *slots, char *error,
                                size_t size);

/* Everything compile derives from the graph and the input metadata. */
typedef struct stax_program {
    int32_t num_slots;
    stax_slot *slots;
    int32_t num_steps;
    stax_step *steps;
    int32_t num_kernels;
    char **kernel_names;
    stax_slot_list *kernel_slots; /* per kernel: the slots it touches (stax_arena.c reads them) */
    void *arena;                  /* static: the scratch slots' shared buffer (NULL: none) */
    size_t arena_bytes;           /* the arena's size (0 when STAX_ARENA=off) */
    size_t scratch_bytes;         /* the scratch slots' bytes added up (64-byte aligned) */
    char *ir;                     /* the LLVM module's text */
    bool uses_gemm;
    const struct stax_gemm_family
        *packed_gemm;           /* the family of the PACKED_GEMM and ATTENTION steps, or NULL */
    const tp_plugin_host *host; /* allocates and frees the SCRATCH/CONST slots */
    int32_t constants_dropped;  /* graph constants not kept: only packed copies are read */
    size_t constant_bytes_dropped;
} stax_program;

/* Dynamic shapes (stax_dynamic.c). The planner and the emitters take some
 * decisions from sizes (skip a size-1 axis, collapse to a flat loop, skip an
 * empty kernel). To compile one object for every binding of the symbols,
 * those decisions are recorded while planning at generic sizes and replayed
 * when planning at the actual sizes, so the IR keeps the same structure and
 * only the size-derived integers change; those become kernel arguments. */
typedef struct stax_decisions {
    uint8_t *taken;
    int32_t count, capacity, cursor;
    int32_t mode; /* 0: decide from the sizes; 1: record; 2: replay */
    bool failed;  /* replay ran past the record, or out of memory */
} stax_decisions;

/* How a build binds symbols: NULL = from the input metadata, allocating
 * scratch (the static path). */
typedef struct stax_build_mode {
    const int64_t *symbols; /* the value of every graph symbol */
    stax_decisions *decisions;
} stax_build_mode;

/* Builds the program (and its IR text) for graph + inputs. With `mode`, the
 * symbols come from mode->symbols, inputs are not read and scratch slots are
 * left unallocated (the executable provides them). Constant weights are
 * packed on `threads` of host's pool (the executable's thread limit). */
int32_t stax_program_build(const tp_plugin_host *host, const tp_plugin_graph *graph,
                           const tp_plugin_tensor_meta *inputs, int32_t num_inputs, const char *cpu,
                           const char *features, const stax_build_mode *mode, int64_t threads,
                           stax_program *out, char *error, size_t error_size);
/* Builds the program keeping every graph constant (stax_program_build keeps
 * only those a run reads): max-autotune's candidates of other blocking pack
 * a conv's or matmul's raw weights at compile. */
int32_t stax_program_build_keeping_constants(const tp_plugin_host *host,
                                             const tp_plugin_graph *graph,
                                             const tp_plugin_tensor_meta *inputs,
                                             int32_t num_inputs, const char *cpu,
                                             const char *features, int64_t threads,
                                             stax_program *out, char *error, size_t error_size);
void stax_program_free(stax_program *program);

/* After planning (stax_arena.c): the scratch slots' live ranges from the
 * steps, their arena offsets (STAX_ARENA=on, the default) and, when
 * `allocate` (static builds), the arena, or with STAX_ARENA=off one zeroed
 * buffer per slot. Dynamic builds place them and leave the memory to the
 * executable (stax_backend.c's bind_program). */
int32_t stax_arena_place(stax_program *program, bool allocate, char *error, size_t error_size);
/* read[s] for every slot: whether some step of a run reads or writes slot
 * s. A conv's or matmul's raw weights whose packed copy the step reads are
 * not (they stay unread as long as the executable's blocking is the one
 * they were packed for: not so for max-autotune's candidates). */
void stax_program_slots_touched(const stax_program *program, bool *read);
/* Whether STAX_ARENA turns the arena off; an unknown value is an error. */
int32_t stax_arena_setting(const tp_plugin_host *host, bool *enabled, char *error,
                           size_t error_size);

/* ---- claims (stax_claims.c) ---- */

/* Whether stax lowers node `value` of `graph` natively (its op id and compute
 * dtype; composites with a native kernel included): TP_PLUGIN_OK, or
 * TP_PLUGIN_UNSUPPORTED with the reason in error[0..error_size). */
int32_t stax_node_supported(const tp_plugin_graph *graph, int32_t value, char *error,
                            size_t error_size);

/* ---- IR emission (stax_emit.c) ---- */

typedef struct stax_emit_graph {
    const tp_plugin_graph *graph;
    const tpcommon_fusion *fusion;
    stax_value *values;
    const stax_slot *slots;
    int32_t num_slots;
    tpcommon_buf *module;      /* functions are appended here */
    stax_slot_list *emitting;  /* the kernel being emitted: fn_finish adds its slots (or NULL) */
    stax_decisions *decisions; /* NULL: decide from the sizes */
    struct stax_kernel_bodies *bodies; /* kernels with equal bodies share one (NULL: none) */
    /* a flat pointwise kernel writing a graph output of at least this many
     * bytes streams its stores past the cache (stax_emit_stream.c); 0: none */
    double stream_min_bytes;
    char *error;
    size_t error_size;
} stax_emit_graph;

/* A cache level's bytes (2 or 3) as the C library reports them, 0 when it
 * does not (stax_window.c). */
double stax_cache_bytes(int level);

/* A size-dependent decision: `cond` itself, or recorded / replayed. */
bool stax_decide(stax_emit_graph *g, bool cond);

/* Kernel computing `root`'s expression (members of its region inlined) over
 * `target` (a view whose dims are the iteration space), `name`(slots, begin,
 * end) over flat indices. Returns the number of indices (the step count). */
int32_t stax_emit_pointwise(stax_emit_graph *g, const char *name, int32_t root,
                            const stax_view *target, int64_t *count);
/* Kernel for a reduction region rooted at `root`, over output indices. */
int32_t stax_emit_reduction(stax_emit_graph *g, const char *name, int32_t root, int64_t *count);
/* Kernel for softmax / log_softmax / layer_norm at `root`, over rows. */
int32_t stax_emit_row(stax_emit_graph *g, const char *name, int32_t root, int64_t *count);
/* Generic matmul kernel (any dtype) for `value` writing its raw view, over
 * batch*m output rows. */
int32_t stax_emit_matmul_generic(stax_emit_graph *g, const char *name, int32_t value,
                                 int64_t *count);
/* Kernel for pad, cumsum, topk, topk_indices or resize at `value` writing
 * its home (stax_emit_dedicated.c); *count: the step's index count. */
int32_t stax_emit_dedicated(stax_emit_graph *g, const char *name, int32_t value, int64_t *count);
/* Kernel converting contiguous elements [begin, end) of `from` (from_dtype)
 * into `to` (to_dtype): f16/bf16 <-> f32 around the window steps
 * (stax_emit_convert.c). */
int32_t stax_emit_convert(stax_emit_graph *g, const char *name, const stax_view *from,
                          int32_t from_dtype, const stax_view *to, int32_t to_dtype);
/* Kernel for gather or gather_elements at `value` writing its home, over
 * output rows (gather: one index each) or elements (gather_elements); an
 * out-of-range index lowers the u64 at `status_slot` to its position. */
int32_t stax_emit_gather(stax_emit_graph *g, const char *name, int32_t value, int32_t status_slot,
                         int64_t *count);
/* The f32 micro-kernel used by stax_gemm.c (one per module that needs it). */
void stax_emit_gemm_microkernel(tpcommon_buf *module);
#define STAX_GEMM_MR           6
#define STAX_GEMM_NR           16
#define STAX_GEMM_KERNEL_NAME  "STAXKEY_gemm_ukernel_f32"
#define STAX_GEMM_KERNEL4_NAME "STAXKEY_gemm_ukernel4_f32" /* 4 rows, for row edges */
#define STAX_GEMM_KC           256

/* ---- micro-kernel families of the packed matmul (stax_gemm_kernels.c) ---- */

/* A tile shape and its blocking: tile kernels of heights[] rows (heights[0]
 * == mr, then powers of two down to 1) by nr columns of vector_width-lane
 * vectors; kc the k block (a B micro-panel of kc * nr floats stays in L1),
 * mc the rows of A swept per panel (mc * kc floats stay in L2). */
typedef struct stax_gemm_family {
    const char *name;
    int32_t mr, nr, vector_width;
    bool fma;
    int64_t kc, mc;
    int32_t num_heights;
    int32_t heights[6];
} stax_gemm_family;

#define STAX_GEMM_MAX_HEIGHTS   6
#define STAX_GEMM_MAX_TILE_ROWS 16 /* at least the largest mr of any family */

const stax_gemm_family *stax_gemm_family_named(const char *name);
/* Whether LLVM's feature string ("+avx2,-avx512f,...") enables `feature`
 * ("avx512f"). */
bool stax_features_enable(const char *features, const char *feature);
/* The family for LLVM's host feature string: avx512 with +avx512f, avx2 with
 * +avx2 and +fma, else generic. */
const stax_gemm_family *stax_gemm_family_for_features(const char *features);
/* The host's family, or the one STAX_GEMM_KERNEL names (auto, avx512, avx2,
 * generic; legacy leaves *family NULL: the 6x16 pair of stax_gemm.c). */
int32_t stax_gemm_family_choose(const tp_plugin_host *host, const char *features,
                                const stax_gemm_family **family, char *error, size_t error_size);
/* kc and mc: the family's, or STAX_GEMM_KC / STAX_GEMM_MC when set. */
void stax_gemm_family_blocking(const tp_plugin_host *host, const stax_gemm_family *family,
                               int64_t *kc, int64_t *mc);
/* A tile kernel and its twins (stax_gemm_kernels.c): */
typedef enum stax_gemm_twin {
    STAX_GEMM_PACKED_B,    /* stax_gemm_tile_fn */
    STAX_GEMM_STRIDED_B,   /* B read in place: stax_gemm_strided_tile_fn */
    STAX_GEMM_OFFSET_B,    /* B's rows at a table of offsets: stax_gemm_offset_tile_fn */
    STAX_GEMM_STREAMING_B, /* prefetching the next panel: stax_gemm_streaming_tile_fn */
    STAX_GEMM_TWINS
} stax_gemm_twin;
/* The name of the `twin` tile kernel of `height` rows. */
void stax_gemm_family_kernel_name(const stax_gemm_family *family, int32_t height,
                                  stax_gemm_twin twin, char *name, size_t size);
/* The name of the offset-A tile kernel of `height` rows (1 to mr). */
void stax_gemm_family_offset_a_kernel_name(const stax_gemm_family *family, int32_t height,
                                           char *name, size_t size);
/* The family's tile kernels (and the intrinsics they need) into `module`. */
void stax_emit_gemm_family_kernels(tpcommon_buf *module, const stax_gemm_family *family);

/* ---- JIT and cache (stax_jit.c; the disk cache is plugins/common's) ---- */

typedef void (*stax_kernel_fn)(void **slots, int64_t begin, int64_t end);
typedef void (*stax_ukernel_fn)(const float *a, int64_t rsa, int64_t csa, const float *b, float *c,
                                int64_t ldc, int64_t kc, int64_t accumulate);

typedef struct stax_jit_options {
    int opt_level; /* 0..3 */
    const char *dump_ir, *dump_asm;
    const tp_plugin_host *host; /* the disk cache reads the environment through it */
} stax_jit_options;

typedef struct stax_module stax_module; /* a loaded object, shared and refcounted */

/* The JIT is one per process (an LLJIT and the loaded objects, behind a
 * lock), shared by every context: init takes a reference, shutdown drops it
 * and the last one disposes of the JIT. */
int32_t stax_jit_init(const tp_plugin_host *host, char *error, size_t error_size);
void stax_jit_shutdown(void);
const char *stax_jit_cpu(void);
double stax_clock_ms(void); /* CLOCK_MONOTONIC, for the compile's debug log */
const char *stax_jit_features(void);
/* Compiles (or finds in the memory/disk cache) `ir` and resolves `names`.
 * `cache_hit` says where it came from: 0 compiled, 1 memory, 2 disk (3, a
 * prebuilt object, is stax_gemm_library_load's). */
int32_t stax_jit_load(const char *ir, const stax_jit_options *options, const char *const *names,
                      int32_t num_names, void **addresses, stax_module **module, int *cache_hit,
                      char *error, size_t error_size);
/* What stax_jit_load_graph did: where the kernels came from (cache_hit as
 * stax_jit_load's: 0 when any part was compiled), in how many parts, how
 * many of them were compiled and on how many threads (0 when none was). */
typedef struct stax_jit_report {
    int cache_hit;
    int32_t parts, threads, compiled;
} stax_jit_report;
#define STAX_JIT_MAX_COMPILE_THREADS 64
/* A graph's module: as stax_jit_load, but split into up to `threads` parts
 * (stax_ir_split.c) compiled at once, each on a thread of its own, each
 * cached in memory and on disk by its own key; one module as before with
 * threads <= 1, a small module, or dump_ir/dump_asm. The module returned
 * holds every part; stax_module_release releases them. */
int32_t stax_jit_load_graph(const char *ir, const stax_jit_options *options, int32_t threads,
                            const char *const *names, int32_t num_names, void **addresses,
                            stax_module **module, stax_jit_report *report, char *error,
                            size_t error_size);
void stax_module_release(stax_module *module);
void stax_jit_drop_memory_cache(void);
/* The JIT's target triple ("" before init). */
const char *stax_jit_triple(void);
/* The 32-hex-digit key of `ir` at `opt_level` (it names the module's symbols:
 * STAXKEY in `ir` becomes "k" + its first 16 digits). */
void stax_jit_key(const char *ir, int opt_level, char key[40]);
/* Compiles `ir` (STAXKEY replaced as stax_jit_load does) into object bytes
 * (caller frees) for `cpu` with `features` instead of the host's: how the
 * prebuilt micro-kernel objects are made. Loads nothing. */
int32_t stax_jit_compile_for_target(const char *ir, const char *cpu, const char *features,
                                    const stax_jit_options *options, void **object,
                                    size_t *object_size, char *error, size_t error_size);
/* The module whose key (stax_jit_key of its IR) is `key` from the memory
 * cache, else `object` (the bytes stax_jit_compile_for_target made for that
 * IR) added to the JIT, and `names` resolved in it. With `object` NULL only
 * the memory cache is asked: TP_PLUGIN_UNAVAILABLE when the module is not
 * loaded. An object the JIT refuses, or one lacking a name, is an error and
 * stays unloaded. */
int32_t stax_jit_load_object(const char key[40], const void *object, size_t object_size,
                             const char *const *names, int32_t num_names, void **addresses,
                             stax_module **module, char *error, size_t error_size);

/* ---- running ---- */

/* `bytes` on a 64-byte boundary from the host's allocator (else C's), and
 * its release (NULL is ignored): every buffer of the plugin's own. */
void *stax_alloc_aligned(const tp_plugin_host *host, size_t bytes);
void stax_free_aligned(const tp_plugin_host *host, void *p);

/* The parallel_for grain for `count` indices on at most `threads` threads of
 * host's pool: stax_most_slices(threads) chunks, or `threads` chunks when
 * the pool has more threads than that. */
int64_t stax_grain(const tp_plugin_host *host, int64_t count, int64_t min_grain, int64_t threads);
/* A setting that is auto (or unset), on or off: environment variable
 * `name` read through host->getenv into *out; any other value is an error
 * naming the variable. */
typedef enum stax_switch { STAX_SWITCH_AUTO, STAX_SWITCH_ON, STAX_SWITCH_OFF } stax_switch;
int32_t stax_switch_setting(const tp_plugin_host *host, const char *name, stax_switch *out,
                            char *error, size_t error_size);
/* fn over [0, count) on at most `threads` threads of host's pool in chunks
 * of at least `min_grain` indices; inline when one chunk covers it, with one
 * thread, or without a pool. */
void stax_parallel_range(const tp_plugin_host *host, int64_t count, int64_t min_grain,
                         int64_t threads, tp_plugin_range_fn fn, void *context);
/* The same in exactly `threads` equal chunks (fewer when a chunk would be
 * under `min_grain`): the pool's caller takes the first and each worker one
 * more, so a thread reads the same share of its operands on every call. A
 * read-bound step whose operand fits the cores' L2 caches together (a
 * gemv's 5 MB weight on two cores of 2 MB each) then finds much of its
 * share still there; the finer dynamic chunks of stax_parallel_range mix
 * the shares from call to call, and the whole operand comes from L3. */
void stax_parallel_static(const tp_plugin_host *host, int64_t count, int64_t min_grain,
                          int64_t threads, tp_plugin_range_fn fn, void *context);
/* A generated kernel over its flat index range [0, count), split the same way. */
void stax_run_kernel(const tp_plugin_host *host, stax_kernel_fn fn, void **slots, int64_t count,
                     int64_t min_grain, int64_t threads);
size_t stax_gemm_workspace_bytes(const stax_gemm *gemm);
struct stax_gemm_kernels;
/* Runs a STAX_STEP_WINDOW step (stax_window.c); `workspace` and `ukernels`
 * (or `kernels`, the family's tile kernels, when window.packed) serve the
 * gemm methods. */
void stax_window_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                     float *workspace, const stax_ukernel_fn ukernels[2],
                     const struct stax_gemm_kernels *kernels, stax_kernel_fn epilogue,
                     int64_t threads);
/* Packs a packed conv step's weights (`weights`: its w slot's data) for
 * every group into `out` (out_channels * k floats), for `kernels`' blocking,
 * on `threads` of host's pool (host NULL or threads 1: the caller's thread). */
void stax_window_pack_weights(const tp_plugin_host *host, const stax_step *step,
                              const struct stax_gemm_kernels *kernels, int64_t threads,
                              void *weights, float *out);
/* The same at run, from the step's slots (weights that are an input, or
 * packed at compile for another kc), on `threads` of host's pool. */
void stax_window_pack_weights_now(const tp_plugin_host *host, const stax_step *step, void **slots,
                                  const struct stax_gemm_kernels *kernels, int64_t threads,
                                  float *out);
/* The input rows (a = 0) or columns (a = 1) that some tap of some output of
 * `w` reads, from the first padding row or column on. */
int64_t stax_padded_extent(const stax_window *w, int a);
/* padded[r][c] = image[r - pad_top][c - pad_left] for padded_h x padded_w,
 * zero outside the image (the padding made real, so window loops need no
 * bounds checks). */
void stax_fill_padded_plane(const stax_window *w, const float *image, int64_t padded_h,
                            int64_t padded_w, float *padded);
/* dst[o] = src[o * stride] for o in [lo, hi), zeros for the rest of
 * [0, length): contiguous copies for stride 1, SSE shuffles for stride 2
 * (stax_im2col.c). src is only read at those indices. */
void stax_copy_run(float *dst, const float *src, int64_t stride, int64_t lo, int64_t hi,
                   int64_t length);
/* The columns [*lo, *hi) of a padded row (padded_w wide) that come from the
 * image: image column c - pad_left for each. */
void stax_image_columns(const stax_window *w, int64_t padded_w, int64_t *lo, int64_t *hi);
/* Whether the depthwise conv `w` runs sixteen channels at a time in
 * channels-last blocks (stax_depthwise_channels_last.c; sets
 * w->channels_last): a multiplier of 1, by STAX_DEPTHWISE_CHANNELS_LAST
 * (on, off, or unset/auto: a bordered plane small enough for a block in L2,
 * at stride 1 only on maps narrower than 28); an error for any other value. */
int32_t stax_depthwise_choose_channels_last(const tp_plugin_host *host, stax_window *w, char *error,
                                            size_t error_size);
void stax_depthwise_channels_last_run(const tp_plugin_host *host, const stax_window *w,
                                      void **slots, stax_kernel_fn epilogue, int64_t threads);
/* Whether a max pool takes its taps across each row with AVX-512 (sets
 * w->direct_rows): stride 1 or 2 and dilation 1 along the row, on an AVX-512
 * host, unless STAX_POOL_DIRECT is off; an error for a value other than
 * auto, on or off. Leaves other windows' direct_rows false. */
int32_t stax_pool_choose_direct(const tp_plugin_host *host, stax_window *w, char *error,
                                size_t error_size);
/* Whether a max pool's rows come from stax_max_pool_direct_plane (sets
 * w->direct_rows): stride 1 or 2 and dilation 1 along the row, at most 4 taps
 * wide and 16 rows tall, on an AVX-512 host, unless STAX_POOL_DIRECT is off
 * (on, or unset/auto: where it can); an error for any other value. Leaves
 * other windows' direct_rows false. */
int32_t stax_pool_choose_direct(const tp_plugin_host *host, stax_window *w, char *error,
                                size_t error_size);
/* Every output row of one plane of a max pool with direct_rows
 * (stax_max_pool_direct.c) from its input plane `image` into `out`, except
 * those whose windows met a NaN: it lists those in nan_rows (out[0] entries)
 * and gives their number, for the portable rows to compute. */
int64_t stax_max_pool_direct_plane(const stax_window *w, const float *image, float *out,
                                   int64_t *nan_rows);
/* A max_pool / avg_pool (window.method STAX_WINDOW_POOL; stax_pool.c). */
void stax_pool_run(const tp_plugin_host *host, const stax_window *w, void **slots, int64_t threads);
/* x[0..count) += value; dst[i] = src[i] + value for i < count (dst and src
 * apart): vectorised for the host (stax_float_runs.c). */
void stax_add_to_floats(float *x, float value, int64_t count);
void stax_copy_floats_plus(float *dst, const float *src, float value, int64_t count);
/* dst[c * dst_stride + p] = src[p * ld + c] + bias[c] (bias NULL: + 0) for
 * c < columns (at most STAX_TRANSPOSE_MAX_COLUMNS), p < rows: a block of
 * a result with its pixels as rows into NCHW (stax_float_runs.c). */
#define STAX_TRANSPOSE_MAX_COLUMNS 16
void stax_transpose_plus(const float *src, int64_t ld, int64_t rows, int64_t columns,
                         const float *bias, float *dst, int64_t dst_stride);
/* Whether stax_depthwise_direct_rows computes the depthwise conv `w`
 * (sets w->direct_rows): a 3x3 kernel at stride 1 or 2, dilation 1, on an
 * AVX-512 host, unless STAX_DEPTHWISE_DIRECT is off (on, or unset/auto:
 * where it can); an error for any other value. Before
 * stax_depthwise_choose_channels_last, which reads it. */
int32_t stax_depthwise_choose_direct(const tp_plugin_host *host, stax_window *w, char *error,
                                     size_t error_size);
/* Output rows [oh0, oh1) of one plane of a depthwise conv with
 * direct_rows, read from its input plane `image` itself
 * (stax_depthwise_direct.c): the nine taps k, the bias, into the plane out.
 * A row in the padding reads `zeros`, STAX_DEPTHWISE_DIRECT_ZEROS(w)
 * floats of 0. */
#define STAX_DEPTHWISE_DIRECT_ZEROS(w) ((w)->in[1] + 64)
void stax_depthwise_direct_rows(const stax_window *w, const float *image, const float *zeros,
                                const float *k, float bias, int64_t oh0, int64_t oh1, float *out);
/* A depthwise conv (window.method STAX_WINDOW_DEPTHWISE; stax_depthwise.c). */
void stax_depthwise_run(const tp_plugin_host *host, const stax_window *w, void **slots,
                        stax_kernel_fn epilogue, int64_t threads);
/* The im2col matrix of one image and group of a conv, as B of its packed
 * product (stax_im2col.c): x_image is image 0's first channel of the group. */
typedef struct stax_im2col_source {
    const stax_window *w;
    const float *x_image;
} stax_im2col_source;
/* stax_gemm_source.pack_b for a stax_im2col_source context. */
void stax_im2col_pack_panel(const void *context, int64_t batch, int64_t k0, int64_t kc, int64_t j0,
                            int64_t cols, int64_t nr, float *out);
/* The pixel-rows product's A (stax_conv_pixel_rows.c; stax_pixel_rows_pack.c).
 * The floats of the bordered copy of the input it gathers from (0: it
 * reads the input itself), and planes [begin, end) (image * C_in +
 * channel) of that copy made from the input x. */
int64_t stax_pixel_rows_bordered_floats(const stax_window *w);
void stax_pixel_rows_border(const stax_window *w, const float *x, int64_t begin, int64_t end,
                            float *bordered);
/* Rows [row0, row1) (tile boundaries) of im2col^T, the pixels of all
 * images, packed for all k blocks of kc_max in stax_gemm_pack_whole_a's
 * layout, from x or its bordered copy. */
void stax_pixel_rows_pack(const stax_window *w, const float *x, const float *bordered,
                          const struct stax_gemm_family *family, int64_t m, int64_t k,
                          int64_t kc_max, int64_t row0, int64_t row1, float *out);
/* stax_gemm_source.pack_b_panels for a stax_im2col_source context. */
void stax_im2col_pack_panels(const void *context, int64_t batch, int64_t k0, int64_t kc, int64_t p0,
                             int64_t p1, int64_t nr, int64_t n, int64_t panel_stride, float *out);
/* A conv on a small output map with its pixels as the product's rows
 * (stax_conv_pixel_rows.c). Whether `w` (planned packed) runs so: by
 * STAX_CONV_PIXEL_ROWS (on, off, or unset: where fewer of the family's
 * panel columns go to waste); an error for any other value. */
int32_t stax_conv_choose_pixel_rows(const tp_plugin_host *host, const stax_window *w,
                                    const struct stax_gemm_family *family, bool *chosen,
                                    char *error, size_t error_size);
/* Whether the packed conv `w` stages its finished blocks and streams them
 * into its output (stax_gemm_source.stage; stax_window.c): a 1x1 conv whose
 * k is one k block of `family`, by STAX_CONV_STAGING (unset or auto,
 * stream, cache, off); an error for any other value. `epilogue` lists the
 * slots its epilogue kernel touches (NULL: none). */
int32_t stax_conv_choose_staging(const tp_plugin_host *host, stax_window *w,
                                 const struct stax_gemm_family *family,
                                 const stax_slot_list *epilogue, char *error, size_t error_size);
/* The floats of a pixel-rows step's packed weights (W^T as whole B). */
size_t stax_conv_pixel_rows_weight_floats(const stax_step *step,
                                          const struct stax_gemm_family *family);
/* Packs them (`weights`: its w slot's data) on `threads` of host's pool. */
void stax_conv_pixel_rows_pack_weights(const tp_plugin_host *host, const stax_step *step,
                                       const struct stax_gemm_kernels *kernels, int64_t threads,
                                       void *weights, float *out);
/* The floats of col_slot (C^T) of a pixel-rows step. */
int64_t stax_conv_pixel_rows_result_floats(const stax_window *w);
size_t stax_conv_pixel_rows_workspace_bytes(const stax_step *step,
                                            const struct stax_gemm_kernels *kernels,
                                            int64_t threads);
void stax_conv_pixel_rows_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                              float *workspace, const struct stax_gemm_kernels *kernels,
                              stax_kernel_fn epilogue, int64_t threads);
/* A conv's input padded once and read in place, one offset per tap
 * (stax_conv_padded_input.c): phase planes of hp x wp, `phases` per
 * channel (stride[0] * stride[1]; 1 at stride 1), `floats` in all. */
/* The largest stride the convs over it take (phase planes per channel: its square). */
#define STAX_PADDED_MAX_STRIDE 4
typedef struct stax_padded_input {
    int64_t hp, wp, plane, phases, floats;
} stax_padded_input;
stax_padded_input stax_padded_input_of(const stax_window *w);
/* Whether the conv `w` (planned packed on `family`) can run over its
 * padded input: one group, a kernel larger than 1x1, stride at most
 * STAX_PADDED_MAX_STRIDE. */
bool stax_conv_can_read_padded_input(const stax_window *w, const struct stax_gemm_family *family);
/* Planes [begin, end) (channel * phases + phase) of `image` (NCHW, one
 * image) into `padded`. */
void stax_pad_input_planes(const stax_window *w, const stax_padded_input *p, const float *image,
                           int64_t begin, int64_t end, float *padded);
/* Rows [row0, row0 + rows) of every phase plane of `image` into `band`,
 * `rows` rows a plane (zeros past the plane's hp rows): the part of the
 * padded image that output rows [row0, row0 + rows - (rows the taps reach
 * below)) read. */
void stax_pad_input_band(const stax_window *w, const stax_padded_input *p, const float *image,
                         int64_t row0, int64_t rows, float *band);
/* offsets[k] for tap k = (c, i, j) (the im2col's row order) in a padded
 * image (or band) of `rows` rows a plane: the element that output pixel
 * (0, 0) (of the band's first row) reads; pixel (oh, ow) reads it
 * oh * wp + ow further on. */
void stax_padded_tap_offsets(const stax_window *w, const stax_padded_input *p, int64_t rows,
                             int64_t *offsets);

/* How a conv over its padded input shares a batch between threads
 * (stax_conv_padded_run.c): whole images, one per thread at a time, or an
 * image at a time with its units claimed in slices. */
typedef struct stax_padded_image {
    float *padded; /* the image, padded */
    float *out;    /* its output, NCHW */
    int64_t first; /* the flat index of its first output element */
} stax_padded_image;
/* Computes unit `unit` of `image` in `stage`: of an image split between
 * the threads, or (whole) of one that a thread runs whole. */
typedef void (*stax_padded_unit_fn)(const void *method, const stax_padded_image *image, bool whole,
                                    int64_t unit, float *stage);
/* Computes share `share` of `shares` of an image split between the
 * threads (one a thread) in `stage`: padding what it reads of `input`
 * itself into image->padded (the share's own buffer), or, with the
 * runner's shared_padding, reading the image padded there by all threads. */
typedef void (*stax_padded_share_fn)(const void *method, const float *input,
                                     const stax_padded_image *image, int64_t share, int64_t shares,
                                     float *stage);
typedef struct stax_padded_runner {
    const stax_window *w;
    const stax_padded_input *pad;
    int64_t image_floats;             /* a padded image and what the method reads past it (zeros) */
    int64_t split_units, whole_units; /* an image's units either way */
    int64_t split_stage, whole_stage; /* a unit's stage floats either way */
    stax_padded_unit_fn run_unit;
    /* or NULL: where set, an image split between the threads runs in
     * shares (split_units unused) instead of padded by all threads and
     * computed in units claimed in turn */
    stax_padded_share_fn run_share;
    bool shared_padding; /* run_share: the split image padded by all threads first */
    const void *method;
} stax_padded_runner;
/* The shares of an image split between `threads` threads of host's pool:
 * one a thread (1 without a pool). */
int64_t stax_padded_shares(const tp_plugin_host *host, int64_t threads);
/* The threads that run whole images of `w` (0: each image is split):
 * all, with at least as many images as threads and k of 64 or more. */
int64_t stax_padded_whole_image_threads(const stax_window *w, int64_t threads);
/* The workspace floats of the padded images and the stages (a multiple of 16). */
size_t stax_padded_run_floats(const stax_padded_runner *r, int64_t threads);
/* Padded image p in that workspace (p = 0: the split image's). */
float *stax_padded_run_image(const stax_padded_runner *r, float *space, int64_t p);
/* Runs every image of the batch, `space` holding stax_padded_run_floats. */
void stax_padded_run(const tp_plugin_host *host, const stax_padded_runner *r, void **slots,
                     float *space, int64_t threads);
/* A conv as one product over its zero-padded input (split into phase
 * planes at stride > 1) read in place by the offset tile kernels
 * (stax_conv_shifted.c). Whether `w` (planned packed) runs so: by
 * STAX_CONV_SHIFTED (on, off, or unset/auto: where at most a tenth of the
 * columns it computes are dropped); an error for any other value. */
int32_t stax_conv_choose_shifted(const tp_plugin_host *host, const stax_window *w,
                                 const struct stax_gemm_family *family, bool *chosen, char *error,
                                 size_t error_size);
size_t stax_conv_shifted_workspace_bytes(const stax_step *step,
                                         const struct stax_gemm_kernels *kernels, int64_t threads);
void stax_conv_shifted_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                           float *workspace, const struct stax_gemm_kernels *kernels,
                           stax_kernel_fn epilogue, int64_t threads);
/* A conv with its output pixels as the product's rows read in place from
 * its padded input by the offset-A tile kernels (stax_conv_shifted_rows.c).
 * Whether `w` (planned packed) runs so: by STAX_CONV_SHIFTED_ROWS (on, off,
 * or unset/auto); an error for any other value. Its weights are W^T, packed
 * as the pixel-rows conv's (stax_conv_pixel_rows_pack_weights). */
int32_t stax_conv_choose_shifted_rows(const tp_plugin_host *host, const stax_window *w,
                                      const struct stax_gemm_family *family, bool *chosen,
                                      char *error, size_t error_size);
size_t stax_conv_shifted_rows_weight_floats(const stax_step *step,
                                            const struct stax_gemm_family *family);
size_t stax_conv_shifted_rows_workspace_bytes(const stax_step *step,
                                              const struct stax_gemm_kernels *kernels,
                                              int64_t threads);
void stax_conv_shifted_rows_run(const tp_plugin_host *host, const stax_step *step, void **slots,
                                float *workspace, const struct stax_gemm_kernels *kernels,
                                stax_kernel_fn epilogue, int64_t threads);
/* The workspace a window step on the micro-kernel family needs (window.packed). */
size_t stax_window_packed_workspace_bytes(const stax_step *step,
                                          const struct stax_gemm_kernels *kernels, int64_t threads);
/* ukernels: [0] the 6-row micro-kernel, [1] the 4-row one. */
void stax_gemm_run(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                   float *workspace, const stax_ukernel_fn ukernels[2], stax_kernel_fn epilogue,
                   int64_t threads);

/* ---- the packed matmul (stax_gemm_packed.c) ---- */

/* C[0..h)[0..cols) (+)= packed A (kc x h, k-major) * packed B panel (kc x nr):
 * accumulate 1 adds to C; 0 stores; any other value is the address of the
 * tile's h row biases, added to row r as it is stored. */
typedef void (*stax_gemm_tile_fn)(const float *a, const float *b, float *c, int64_t ldc, int64_t kc,
                                  int64_t accumulate, int64_t cols);

/* As stax_gemm_tile_fn, prefetching into L2 the kc / 2 cache lines from
 * `prefetch` on, one every second k step (any address: a prefetch never
 * faults): the part of the next panel of a B streamed from memory that
 * this tile's turn fetches. */
typedef void (*stax_gemm_streaming_tile_fn)(const float *a, const float *b, float *c, int64_t ldc,
                                            int64_t kc, int64_t accumulate, int64_t cols,
                                            const float *prefetch);

/* As stax_gemm_tile_fn with B read in place: kc rows of (at least) nr
 * floats, ldb floats apart (a row-major B, unpacked). */
typedef void (*stax_gemm_strided_tile_fn)(const float *a, const float *b, float *c, int64_t ldc,
                                          int64_t kc, int64_t accumulate, int64_t cols,
                                          int64_t ldb);

/* A family's loaded tile kernels (tile[i] has family->heights[i] rows);
 * strided[i]: its twin reading B in place, or NULL (B is then packed). */
/* C[r][0..cols) = sum over p < k of a[r * lda + p * acs] * b[p * ldb + j]
 * for the kernel's rows r: a product of a few rows that streams B row by
 * row, in place (stax_gemv_kernels.c, stax_gemv.c). */
#define STAX_GEMV_MAX_ROWS 3
typedef void (*stax_gemv_fn)(const float *a, int64_t lda, int64_t acs, const float *b, int64_t ldb,
                             float *c, int64_t ldc, int64_t k, int64_t cols);

/* As stax_gemm_tile_fn with B row k read in place at b + boff[k] (nr
 * floats from there): any rows in any order. */
typedef void (*stax_gemm_offset_tile_fn)(const float *a, const float *b, float *c, int64_t ldc,
                                         int64_t kc, int64_t accumulate, int64_t cols,
                                         const int64_t *boff);

/* As stax_gemm_tile_fn with A's h values of step k read in place at a +
 * aoff[k] (h consecutive floats from there), B packed. */
typedef void (*stax_gemm_offset_a_tile_fn)(const float *a, const float *b, float *c, int64_t ldc,
                                           int64_t kc, int64_t accumulate, int64_t cols,
                                           const int64_t *aoff);

typedef struct stax_gemm_kernels {
    const stax_gemm_family *family;
    stax_gemm_tile_fn tile[STAX_GEMM_MAX_HEIGHTS];
    stax_gemm_strided_tile_fn strided[STAX_GEMM_MAX_HEIGHTS];
    stax_gemm_offset_tile_fn offset[STAX_GEMM_MAX_HEIGHTS];       /* B rows at a table's offsets */
    stax_gemm_streaming_tile_fn streaming[STAX_GEMM_MAX_HEIGHTS]; /* prefetching the next panel */
    stax_gemm_offset_a_tile_fn
        offset_a[STAX_GEMM_MAX_TILE_ROWS + 1]; /* [h]: h rows, A by offsets */
    int64_t kc, mc;
    stax_gemv_fn gemv[STAX_GEMV_MAX_ROWS];     /* gemv[r - 1]: r rows; NULL: none loaded */
    stax_gemv_fn gemv_dot[STAX_GEMV_MAX_ROWS]; /* the same with B read by columns (ldb: the
                                                * column stride; A rows contiguous) */
    void *attention_rows[2];                   /* [masked]: the fused attention's softmax update */
} stax_gemm_kernels;

/* The matmul micro-kernels of a program, compiled once per process and
 * family in a module of their own (stax_gemm_library.c). */
typedef struct stax_gemm_library {
    stax_module *module;                            /* NULL when the program has no matmul */
    stax_ukernel_fn ukernels[2];                    /* legacy: 6-row, 4-row */
    stax_gemm_tile_fn tiles[STAX_GEMM_MAX_HEIGHTS]; /* family->heights[i] rows */
    stax_gemm_strided_tile_fn strided[STAX_GEMM_MAX_HEIGHTS];         /* their in-place-B twins */
    stax_gemm_offset_tile_fn offset[STAX_GEMM_MAX_HEIGHTS];           /* their B-by-offsets twins */
    stax_gemm_streaming_tile_fn streaming[STAX_GEMM_MAX_HEIGHTS];     /* their prefetching twins */
    stax_gemm_offset_a_tile_fn offset_a[STAX_GEMM_MAX_TILE_ROWS + 1]; /* [h]: h rows (1..mr) */
    stax_gemv_fn gemv[STAX_GEMV_MAX_ROWS];                            /* gemv[r - 1]: r rows */
    stax_gemv_fn gemv_dot[STAX_GEMV_MAX_ROWS];                        /* B read by columns */
    void *attention_rows[2]; /* [masked]: stax_emit_attention_rows's kernel */
    int cache_hit;           /* as stax_jit_load's, or 3: the prebuilt object beside the plugin */
} stax_gemm_library;

/* A family's kernels as the drivers take them: the library's tile kernels,
 * their twins and gemv kernels, with the family's blocking (kc, mc). */
void stax_gemm_kernels_from_library(const tp_plugin_host *host, const stax_gemm_family *family,
                                    const stax_gemm_library *library, stax_gemm_kernels *out);

/* Loads the legacy pair (`legacy`) and/or `family`'s tile kernels; a module
 * reference goes to out->module (stax_module_release drops it). With the
 * graph's dump_ir path (`graph`: the graph's JIT options, or NULL), the
 * library's optimised IR goes next to it, with ".gemm" before the extension;
 * dumping never uses a prebuilt object. */
int32_t stax_gemm_library_load(const tp_plugin_host *host, bool legacy,
                               const stax_gemm_family *family, const stax_jit_options *graph,
                               stax_gemm_library *out, char *error, size_t error_size);
/* The library's IR (caller frees) with `cpu` and `features` as its target. */
char *stax_gemm_library_ir(bool legacy, const stax_gemm_family *family, const char *cpu,
                           const char *features);
/* The prebuilt object of the library (stax_gemm_prebuilt.c) when it may be
 * used: from memory (*cache_hit 1) or the file beside the plugin (3), names
 * resolved into `addresses`; else *module stays NULL (why is logged) and the
 * caller compiles. Errors only for a bad STAX_PREBUILT_KERNELS. */
int32_t stax_gemm_prebuilt_load(const tp_plugin_host *host, bool legacy,
                                const stax_gemm_family *family, bool dumping,
                                const char *const *names, int32_t count, void **addresses,
                                stax_module **module, int *cache_hit, char *error,
                                size_t error_size);

size_t stax_gemm_packed_workspace_bytes(const stax_gemm *gemm, const stax_gemm_kernels *kernels,
                                        int64_t threads);
/* The matmul `gemm` (then its epilogue) on at most `threads` threads of the
 * host's pool; workspace of stax_gemm_packed_workspace_bytes. */
void stax_gemm_packed_run(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                          float *workspace, const stax_gemm_kernels *kernels,
                          stax_kernel_fn epilogue, int64_t threads);

/* ---- fused attention (stax_attention_match.c, stax_attention.c) ---- */

/* The nodes of one attention pattern found in the graph: scores =
 * matmul(q', k_t') where q' is q or mul(q, scalar) and k_t' likewise;
 * then optionally mul/div by scalars and an add of `mask`; softmax on the
 * last axis; output = matmul(softmax, v). `members`: every node the fused
 * step computes (output last); none but the output is used elsewhere. */
#define STAX_ATTENTION_MAX_MEMBERS 8
typedef struct stax_attention_match {
    int32_t q, k_t, v, mask; /* operand values; mask -1 when absent */
    int32_t output;          /* the second matmul */
    int32_t num_scales;
    int32_t scales[STAX_ATTENTION_MAX_SCALES]; /* f32 scalar values */
    bool scale_divides[STAX_ATTENTION_MAX_SCALES];
    int32_t num_members;
    int32_t members[STAX_ATTENTION_MAX_MEMBERS];
} stax_attention_match;

/* The attention patterns of `graph` whose intermediates no other node reads
 * and whose regions hold only pattern nodes (f32, static shapes given by
 * `values`). *matches is malloc'd (free it); returns the count, -1 when out
 * of memory. */
int32_t stax_attention_find(const tp_plugin_graph *graph, const tpcommon_fusion *fusion,
                            const stax_value *values, stax_attention_match **matches);
/* The softmax-update kernel for a block of scores (stax_attention.c): every
 * size is an argument, so it is the same for every graph and lives in the
 * micro-kernel library (stax_gemm_library.c), once with a mask and once
 * without. Its IR calls the float math routines (stax_mathlib_ir) and uses
 * attribute group STAX_ATTRS_WIDE. */
#define STAX_ATTENTION_ROWS_NAME        "STAXKEY_attention_rows"
#define STAX_ATTENTION_ROWS_MASKED_NAME "STAXKEY_attention_rows_masked"
void stax_emit_attention_rows(tpcommon_buf *module, const char *name, bool has_mask);
size_t stax_attention_workspace_bytes(const stax_attention *attention,
                                      const stax_gemm_kernels *kernels, int64_t threads);
/* Runs a STAX_STEP_ATTENTION step on at most `threads` threads of the pool,
 * with the family's tile kernels and softmax-update kernel from `kernels`. */
void stax_attention_run(const tp_plugin_host *host, const stax_attention *attention, void **slots,
                        float *workspace, const stax_gemm_kernels *kernels, int64_t threads);

/* How the packed matmul cuts its work between slices (see stax_gemm_packed.c);
 * AUTO lets the driver pick from the shape and the thread count. */
typedef enum stax_gemm_split {
    STAX_GEMM_SPLIT_AUTO = 0,
    STAX_GEMM_SPLIT_COLUMNS,
    STAX_GEMM_SPLIT_ROWS,
    STAX_GEMM_SPLIT_BATCHES,
} stax_gemm_split;

/* The split AUTO resolves to for `gemm` on `threads` threads of host's pool. */
stax_gemm_split stax_gemm_packed_default_split(const tp_plugin_host *host, const stax_gemm *gemm,
                                               const stax_gemm_kernels *kernels, int64_t threads);
/* stax_gemm_packed_run with the split chosen by the caller (max-autotune). */
void stax_gemm_packed_run_split(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                                float *workspace, const stax_gemm_kernels *kernels,
                                stax_kernel_fn epilogue, int64_t threads, stax_gemm_split split);

/* Fills rows [k0, k0 + kc) x columns [j0, j0 + cols) of product `batch`'s
 * B as kc rows of nr floats each, zeros past cols (one panel of one k block). */
typedef void (*stax_gemm_pack_b_fn)(const void *context, int64_t batch, int64_t k0, int64_t kc,
                                    int64_t j0, int64_t cols, int64_t nr, float *out);
/* The same for panels [p0, p1) at once (columns [p0 * nr, min(p1 * nr, n))),
 * panel p at out + (p - p0) * panel_stride: a source whose rows are cheaper
 * to read across many panels than one panel at a time (conv's im2col). */
typedef void (*stax_gemm_pack_b_panels_fn)(const void *context, int64_t batch, int64_t k0,
                                           int64_t kc, int64_t p0, int64_t p1, int64_t nr,
                                           int64_t n, int64_t panel_stride, float *out);

/* Where a packed matmul's B comes from and what is added before the epilogue. */
typedef struct stax_gemm_source {
    stax_gemm_pack_b_fn pack_b; /* NULL: B read through the gemm's slot and strides */
    const void *b_context;
    const float *row_bias;   /* C[i][j] += row_bias[i] (per product), or NULL */
    const float *a_packed;   /* A already packed (stax_gemm_pack_whole_a; one A for every
                              * product), or NULL */
    const float *b_packed;   /* B already packed (stax_gemm_pack_whole_b; one B for every
                              * product), or NULL: the gemm's packed_b_slot when its kernels
                              * match, else B packed per k block */
    int64_t epilogue_offset; /* added to the flat range the epilogue is called on (a conv's
                              * image and group within its output) */
    stax_gemm_pack_b_panels_fn pack_b_panels; /* with pack_b: packs a range of panels, or NULL */
    bool b_in_place; /* B (row-major f32) read in place by the strided kernels whatever m is
                      * (1x1 convs: their image rows, faster than packing them on
                      * MobileNetV2's shapes) */
    /* A block of C that one k block makes final (k <= kc) is computed into
     * stage (STAX_GEMM_STAGE_FLOATS per slice, in cache), gets the bias and
     * the epilogue there, then is copied into C row by row, with
     * non-temporal stores when stream_c: C is written once, without the
     * read for ownership of each line, in whole runs along its rows. The
     * epilogue reads the block from stage through a copy of the first
     * epilogue_slots slots whose C slot points there. NULL: C is written
     * in place by the tiles. */
    float *stage;
    bool stream_c;
    int32_t epilogue_slots;
    /* Called instead of the epilogue on each block of C that the last k
     * block makes final (rows [r0, r1) x columns [j0, j1) of product
     * `batch`), by the thread that computed it, while it is in cache; or
     * NULL. A row_bias is still added by the tiles. The pixel-rows conv
     * transposes C^T's block into its NCHW output there. Not with stage. */
    void (*finish)(const void *context, int64_t batch, int64_t r0, int64_t r1, int64_t j0,
                   int64_t j1);
    const void *finish_context;
} stax_gemm_source;

/* Floats of one slice's stage (stax_gemm_source.stage): a finished block. */
#define STAX_GEMM_STAGE_FLOATS 32768
/* The most slots an epilogue of a staged product may touch (their copy is
 * on the stack). */
#define STAX_GEMM_STAGE_MAX_SLOTS 512
/* Stage space for a product on `threads` threads (every slice's). */
size_t stax_gemm_stage_bytes(int64_t threads);

/* The height of the driver's row tile of an m-row product that starts at
 * `row`, or 0 when no tile starts there. */
int32_t stax_gemm_tile_rows(const stax_gemm_family *family, int64_t m, int64_t row);
/* The row tiles of an m-row product: `full` tiles of mr rows, then at most
 * one tile of each smaller height for the rest (no row padded). Tile t
 * starts at stax_gemm_tile_row (m past the last) and runs the family's
 * heights[stax_gemm_tile_kernel] kernel. */
typedef struct stax_gemm_row_tiles {
    int64_t m, full, count;
    int32_t mr, tails;
    int64_t tail_row[STAX_GEMM_MAX_HEIGHTS];
    int32_t tail_kernel[STAX_GEMM_MAX_HEIGHTS]; /* index into heights[] */
} stax_gemm_row_tiles;
stax_gemm_row_tiles stax_gemm_split_rows(const stax_gemm_family *family, int64_t m);
int64_t stax_gemm_tile_row(const stax_gemm_row_tiles *rt, int64_t tile);
int32_t stax_gemm_tile_kernel(const stax_gemm_row_tiles *rt, int64_t tile);
/* The floats stax_gemm_pack_whole_b writes for `gemm` with `kernels`. */
size_t stax_gemm_whole_b_floats(const stax_gemm *gemm, const stax_gemm_kernels *kernels);
/* Whether every product of `gemm` reads the same B (no batch stride of B). */
bool stax_gemm_b_shared_by_batches(const stax_gemm *gemm);
/* Panels [begin, end) of one k block of a row-major f32 B (b at the block's
 * first row, column 0; ldb floats per row, n columns) into `out` (panel
 * `begin`; panels panel_stride floats apart, kc rows of nr floats, zeros
 * past n), a few rows at a time across the panels
 * (stax_gemm_pack_rows.c); skip_whole leaves the whole panels out (read in
 * place). */
void stax_gemm_pack_row_major_panels(const float *b, int64_t ldb, int64_t n, int64_t kc, int64_t nr,
                                     int64_t begin, int64_t end, bool skip_whole, float *out,
                                     int64_t panel_stride);
/* out[k * h + r] = rows[r][k] for r < h, k < length: h contiguous rows into
 * one k-major strip (an A tile; also a transposed B's whole panel, its
 * columns as rows, and attention's packed operands), with 4x4 transposes
 * (stax_gemm_pack_rows.c). */
void stax_pack_rows_k_major(const float *const *rows, int64_t h, int64_t length, float *out);
/* Element offsets of A and B for product `batch` of `gemm` (its batch strides). */
void stax_gemm_batch_offsets(const stax_gemm *gemm, int64_t batch, int64_t *a_offset,
                             int64_t *b_offset);
/* Packs B of `gemm` (shared by its batches) for all its k blocks into `out`
 * in the layout the driver reads a prepacked B in: k block pc at
 * pc * panels * nr, its panels kc * nr floats apart, zeros past n; f16/bf16
 * are widened here. Done at compile for a constant B, on `threads` of host's
 * pool (host NULL or threads 1: on the caller's thread). */
void stax_gemm_pack_whole_b(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                            const stax_gemm_kernels *kernels, int64_t threads, float *out);

/* Packs A of a batch-1 `gemm` for all its k blocks into `out` (m * k floats),
 * in the layout the driver's tiles read: k block pc at m * pc, tiles in row
 * order. Done once, it serves every product that shares A (a conv's images)
 * and every thread, instead of each slice packing its own copy. */
void stax_gemm_pack_whole_a(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                            const stax_gemm_kernels *kernels, int64_t threads, float *out);

/* stax_gemm_packed_run with B packed by source->pack_b (if set) and the row
 * bias added after each product's last k block, before the epilogue. */
void stax_gemm_packed_run_from(const tp_plugin_host *host, const stax_gemm *gemm, void **slots,
                               float *workspace, const stax_gemm_kernels *kernels,
                               stax_kernel_fn epilogue, int64_t threads,
                               const stax_gemm_source *source);

#endif
