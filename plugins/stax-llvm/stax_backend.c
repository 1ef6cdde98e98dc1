/* stax-llvm — the plugin's entry point and revision-2 backend table
 * (plugin.h): init (the context: the host table, a reference on the
 * process's JIT), supports (stax_claims.c), compile (options, planning, JIT),
 * run (binding buffers to slots, stepping through kernels on the core's
 * thread pool; kernel times for the core's profile when it asks), release,
 * reset, shutdown. Options: threads=N (at most N threads per kernel; default
 * the core pool's size), opt_level=0..3 (default 3), dump_ir=PATH (optimised LLVM IR),
 * dump_asm=PATH (assembly), mode=default|max-autotune (tp_compile's mode:
 * max-autotune measures each packed matmul's choices, stax_autotune.c),
 * autotune_budget_ms=N (max-autotune's measuring time per compile, default
 * 3000).
 *
 * Dynamic shapes: when the graph has symbolic dimensions, the executable is
 * compiled once with the sizes as kernel arguments (stax_dynamic.c) and
 * serves any sizes bound consistently to the symbols, not only those of the
 * compile metadata: run() reads the sizes from the input buffers' dims,
 * checks them against the declared types and passes them to the kernels
 * (plugin.h allows this: "a backend may serve other sizes for the same
 * symbols"). Scratch buffers then belong to the executable and grow as
 * needed; they are reused across calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stax_autotune.h"
#include "stax_dynamic.h"
#include "stax_gemv.h"
#include "tpcommon_profile.h"

/* What init makes and every call receives: no global holds the host. */
typedef struct stax_context {
    const tp_plugin_host *host;
} stax_context;

struct tp_plugin_executable {
    const tp_plugin_host *host; /* the compiling context's */
    stax_program program;
    stax_module *module;
    stax_gemm_library gemm_library; /* the matmul micro-kernels' module */
    void **kernels;
    stax_ukernel_fn ukernels[2];    /* 6-row, 4-row */
    stax_gemm_kernels gemm_kernels; /* the packed matmul's tile kernels */
    void **slot_data;               /* slot_mem + 1 */
    void **slot_mem; /* [0]: the size arguments (stax_dynamic.c), then one per slot */
    float *workspace;
    size_t workspace_bytes;
    int64_t threads;
    int cache_hit;
    stax_dynamic *dyn; /* NULL: sizes fixed at compile */
    void *arena;       /* dynamic: the scratch arena, grown to the largest sizes yet */
    size_t arena_capacity;
    void **scratch; /* dynamic with STAX_ARENA=off: per slot, owned here */
    size_t *scratch_bytes;
    int32_t scratch_count;
    int64_t *bind;          /* dynamic: symbols bound by the current call */
    stax_autotune autotune; /* max-autotune: per-step choices (steps NULL otherwise) */
};

static const char *const known_options[] = {"threads",  "opt_level", "dump_ir",
                                            "dump_asm", "mode",      "autotune_budget_ms"};

static int32_t stax_init(const tp_plugin_host *host, void **context) {
    *context = NULL;
    char error[512] = "";
    stax_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        host->set_error(host, "stax: out of memory creating the backend context");
        return TP_PLUGIN_ERROR;
    }
    if (stax_jit_init(host, error, sizeof error) != TP_PLUGIN_OK) {
        free(ctx);
        host->set_error(host, error);
        return TP_PLUGIN_ERROR;
    }
    ctx->host = host;
    *context = ctx;
    return TP_PLUGIN_OK;
}

static int32_t stax_supports(void *context, const tp_plugin_graph *graph, int32_t value) {
    const stax_context *ctx = context;
    char reason[512] = "";
    int32_t status = stax_node_supported(graph, value, reason, sizeof reason);
    if (status != TP_PLUGIN_OK) ctx->host->set_error(ctx->host, reason);
    return status;
}

void stax_free_aligned(const tp_plugin_host *host, void *p) {
    if (!p) return;
    if (host && host->aligned_free)
        host->aligned_free(p);
    else
        free(p);
}

int32_t stax_switch_setting(const tp_plugin_host *host, const char *name, stax_switch *out,
                            char *error, size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv(name) : NULL;
    *out = STAX_SWITCH_AUTO;
    if (!setting || !*setting || !strcmp(setting, "auto")) return TP_PLUGIN_OK;
    if (!strcmp(setting, "on") || !strcmp(setting, "off")) {
        *out = !strcmp(setting, "on") ? STAX_SWITCH_ON : STAX_SWITCH_OFF;
        return TP_PLUGIN_OK;
    }
    return tpcommon_error(error, error_size, "stax: %s is '%s'; use auto, on or off (or unset it)",
                          name, setting);
}

int64_t stax_grain(const tp_plugin_host *host, int64_t count, int64_t min_grain, int64_t threads) {
    int64_t pool = host && host->num_threads ? host->num_threads() : 1;
    if (threads <= 1) return count > min_grain ? count : min_grain;
    /* a few chunks per thread: the caller starts at once and a worker that
     * wakes late takes what is left instead of being waited for; with fewer
     * threads than the pool, exactly `threads` chunks keep the limit */
    int64_t chunks = threads >= pool ? stax_most_slices(threads) : threads;
    int64_t grain = (count + chunks - 1) / chunks;
    return grain > min_grain ? grain : min_grain;
}

/* fn over [0, count) in chunks of `grain` on the pool; inline when one
 * chunk covers it, with one thread, or without a pool. */
static void run_in_chunks(const tp_plugin_host *host, int64_t count, int64_t grain, int64_t threads,
                          tp_plugin_range_fn fn, void *context) {
    if (threads <= 1 || count <= grain || !host || !host->parallel_for)
        fn(context, 0, count);
    else
        host->parallel_for(count, grain, fn, context);
}

void stax_parallel_range(const tp_plugin_host *host, int64_t count, int64_t min_grain,
                         int64_t threads, tp_plugin_range_fn fn, void *context) {
    run_in_chunks(host, count, stax_grain(host, count, min_grain, threads), threads, fn, context);
}

void stax_parallel_static(const tp_plugin_host *host, int64_t count, int64_t min_grain,
                          int64_t threads, tp_plugin_range_fn fn, void *context) {
    int64_t pool = host && host->num_threads ? host->num_threads() : 1;
    if (threads > pool) threads = pool;
    int64_t grain = threads > 1 ? (count + threads - 1) / threads : count;
    run_in_chunks(host, count, grain > min_grain ? grain : min_grain, threads, fn, context);
}

typedef struct kernel_call {
    stax_kernel_fn fn;
    void **slots;
} kernel_call;

static void kernel_range(void *context, int64_t begin, int64_t end) {
    const kernel_call *call = context;
    call->fn(call->slots, begin, end);
}

void stax_run_kernel(const tp_plugin_host *host, stax_kernel_fn fn, void **slots, int64_t count,
                     int64_t min_grain, int64_t threads) {
    kernel_call call = {fn, slots};
    stax_parallel_range(host, count, min_grain, threads, kernel_range, &call);
}

static int32_t run_error(const tp_plugin_host *host, const char *message) {
    host->set_error(host, message);
    return TP_PLUGIN_ERROR;
}

void *stax_alloc_aligned(const tp_plugin_host *host, size_t bytes) {
    if (host && host->aligned_alloc) return host->aligned_alloc(bytes);
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static void release_executable(tp_plugin_executable *exe) {
    if (!exe) return;
    stax_autotune_free(&exe->autotune);
    stax_module_release(exe->module);
    stax_module_release(exe->gemm_library.module);
    stax_program_free(&exe->program);
    free(exe->kernels);
    free(exe->slot_mem);
    stax_free_aligned(exe->host, exe->workspace);
    stax_free_aligned(exe->host, exe->arena);
    for (int32_t s = 0; s < exe->scratch_count; s++) stax_free_aligned(exe->host, exe->scratch[s]);
    free(exe->scratch);
    free(exe->scratch_bytes);
    free(exe->bind);
    if (exe->dyn) stax_dynamic_free(exe->dyn);
    free(exe->dyn);
    free(exe);
}

/* Points slot_data at the current program's buffers; sizes the gemm
 * workspace and (dynamic) the scratch buffers, growing them when needed. */
static int32_t bind_program(tp_plugin_executable *exe) {
    stax_program *prog = &exe->program;
    void **slot_mem = realloc(exe->slot_mem, sizeof *slot_mem * ((size_t)prog->num_slots + 1));
    if (!slot_mem) return TP_PLUGIN_ERROR;
    exe->slot_mem = slot_mem;
    void **slot_data = exe->slot_data = slot_mem + 1;
    slot_mem[0] = exe->dyn ? exe->dyn->params : NULL;
    if (exe->dyn && exe->scratch_count < prog->num_slots) {
        void **scratch = realloc(exe->scratch, sizeof *scratch * (size_t)prog->num_slots);
        if (scratch) exe->scratch = scratch;
        size_t *bytes = realloc(exe->scratch_bytes, sizeof *bytes * (size_t)prog->num_slots);
        if (bytes) exe->scratch_bytes = bytes;
        if (!scratch || !bytes) return TP_PLUGIN_ERROR;
        for (int32_t s = exe->scratch_count; s < prog->num_slots; s++) {
            exe->scratch[s] = NULL;
            exe->scratch_bytes[s] = 0;
        }
        exe->scratch_count = prog->num_slots;
    }
    if (exe->dyn && prog->arena_bytes > exe->arena_capacity) {
        /* not cleared: no step reads scratch before writing it (stax_arena.c) */
        stax_free_aligned(exe->host, exe->arena);
        exe->arena_capacity = 0;
        exe->arena = stax_alloc_aligned(exe->host, prog->arena_bytes);
        if (!exe->arena) return TP_PLUGIN_ERROR;
        exe->arena_capacity = prog->arena_bytes;
    }
    for (int32_t s = 0; s < prog->num_slots; s++) {
        const stax_slot *slot = &prog->slots[s];
        slot_data[s] = slot->data;
        if (!exe->dyn || slot->kind != STAX_SLOT_SCRATCH) continue;
        if (slot->arena_offset >= 0) {
            slot_data[s] = (char *)exe->arena + slot->arena_offset;
            continue;
        }
        if (exe->scratch_bytes[s] < slot->bytes) {
            stax_free_aligned(exe->host, exe->scratch[s]);
            exe->scratch_bytes[s] = 0;
            exe->scratch[s] = stax_alloc_aligned(exe->host, slot->bytes);
            if (!exe->scratch[s]) return TP_PLUGIN_ERROR;
            memset(exe->scratch[s], 0, slot->bytes);
            exe->scratch_bytes[s] = slot->bytes;
        }
        slot_data[s] = exe->scratch[s];
    }
    if (prog->uses_gemm || prog->packed_gemm) {
        size_t bytes = 64;
        for (int32_t s = 0; s < prog->num_steps; s++) {
            size_t need = 0;
            const stax_gemm_tuned *tuned = exe->autotune.steps ? &exe->autotune.steps[s] : NULL;
            if (prog->steps[s].kind == STAX_STEP_WINDOW && prog->steps[s].window.packed)
                need = stax_window_packed_workspace_bytes(&prog->steps[s], &exe->gemm_kernels,
                                                          exe->threads);
            else if (prog->steps[s].kind == STAX_STEP_PACKED_GEMM)
                need = stax_gemm_packed_workspace_bytes(
                    &prog->steps[s].gemm, tuned ? &tuned->kernels : &exe->gemm_kernels,
                    tuned ? tuned->threads : exe->threads);
            else if (prog->steps[s].kind == STAX_STEP_ATTENTION)
                need = stax_attention_workspace_bytes(&prog->steps[s].attention, &exe->gemm_kernels,
                                                      exe->threads);
            else if (prog->steps[s].kind != STAX_STEP_KERNEL) /* GEMM, WINDOW (gemm or not) */
                need = stax_gemm_workspace_bytes(&prog->steps[s].gemm);
            if (need > bytes) bytes = need;
        }
        if (bytes > exe->workspace_bytes) {
            stax_free_aligned(exe->host, exe->workspace);
            exe->workspace_bytes = 0;
            exe->workspace = stax_alloc_aligned(exe->host, bytes);
            if (!exe->workspace) return TP_PLUGIN_ERROR;
            exe->workspace_bytes = bytes;
        }
    }
    return TP_PLUGIN_OK;
}

static void log_line(const tp_plugin_host *host, int32_t level, const char *graph,
                     const char *what) {
    if (!host->log) return;
    char line[256];
    snprintf(line, sizeof line, "dynamic graph '%s': %s", graph ? graph : "?", what);
    host->log(host, level, line);
}

/* Binds the symbols from compile's metadata; a symbol no input names gets
 * 1 (planning ignores it). */
static int32_t bind_symbols(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                            int32_t num_inputs, int64_t *symbols, char *error, size_t error_size) {
    int32_t status =
        tpcommon_bind_symbols_from_metas(graph, inputs, num_inputs, symbols, error, error_size);
    for (int32_t s = 0; status == TP_PLUGIN_OK && s < graph->num_symbols; s++)
        if (symbols[s] < 0) symbols[s] = 1;
    return status;
}

/* Dynamic compile: the template IR and the program for the metadata's
 * sizes. TP_PLUGIN_UNAVAILABLE: use the static path. */
static int32_t compile_dynamic(tp_plugin_executable *exe, const tp_plugin_graph *graph,
                               const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                               char **template_ir, char *error, size_t error_size) {
    exe->dyn = calloc(1, sizeof *exe->dyn);
    if (!exe->dyn) return tpcommon_error(error, error_size, "stax: out of memory");
    exe->dyn->host = exe->host;
    int32_t status = stax_dynamic_prepare(graph, stax_jit_cpu(), stax_jit_features(), exe->dyn,
                                          template_ir, error, error_size);
    if (status != TP_PLUGIN_OK) {
        free(exe->dyn);
        exe->dyn = NULL;
        if (status == TP_PLUGIN_UNAVAILABLE)
            log_line(exe->host, TP_PLUGIN_LOG_DEBUG, graph->name,
                     "sizes change its structure: compiled for "
                     "the metadata's sizes only");
        return status;
    }
    log_line(exe->host, TP_PLUGIN_LOG_DEBUG, graph->name,
             "one object for every size of its symbols");
    exe->bind = calloc((size_t)graph->num_symbols + 1, sizeof *exe->bind);
    if (!exe->bind) status = tpcommon_error(error, error_size, "stax: out of memory");
    if (status == TP_PLUGIN_OK)
        status = bind_symbols(&exe->dyn->graph, inputs, num_inputs, exe->bind, error, error_size);
    if (status == TP_PLUGIN_OK)
        status = stax_dynamic_plan(exe->dyn, exe->bind, stax_jit_cpu(), stax_jit_features(),
                                   &exe->program, error, error_size);
    return status;
}

static int32_t read_options(const tp_plugin_option *options, int32_t count, int64_t *threads,
                            stax_jit_options *jit, bool *autotune, int64_t *budget_ms, char *error,
                            size_t size) {
    int32_t status = tpcommon_options_check(options, count, known_options, 6, error, size);
    if (status != TP_PLUGIN_OK) return status;
    const char *mode = tpcommon_option_get(options, count, "mode");
    *autotune = mode && strcmp(mode, "max-autotune") == 0;
    if (mode && !*autotune && strcmp(mode, "default") != 0)
        return tpcommon_error(error, size, "unknown mode '%s' (known modes: default, max-autotune)",
                              mode);
    int64_t opt_level = 3;
    status = tpcommon_option_int(options, count, "threads", 1, 4096, threads, error, size);
    if (status == TP_PLUGIN_OK)
        status = tpcommon_option_int(options, count, "opt_level", 0, 3, &opt_level, error, size);
    if (status == TP_PLUGIN_OK)
        status = tpcommon_option_int(options, count, "autotune_budget_ms", 1, 3600000, budget_ms,
                                     error, size);
    jit->opt_level = (int)opt_level;
    jit->dump_ir = tpcommon_option_get(options, count, "dump_ir");
    jit->dump_asm = tpcommon_option_get(options, count, "dump_asm");
    return status;
}

/* The name a step's kernel time is reported under: the kernel's own name,
 * or "gemm_MxNxK" for a blocked matmul, "conv_METHOD_NxCxHxW" for a window
 * step (each with "+EPILOGUE" when it has one). */
static const char *readable_kernel_name(const char *name) {
    size_t placeholder = strlen("STAXKEY_"); /* the JIT's per-module key (stax_jit.c) */
    return strncmp(name, "STAXKEY_", placeholder) == 0 ? name + placeholder : name;
}

static const char *step_name(const stax_program *prog, const stax_step *step, char *buffer,
                             size_t size) {
    if (step->kind == STAX_STEP_WINDOW) {
        static const char *const kinds[] = {"conv", "conv_transpose", "max_pool", "avg_pool"};
        static const char *const methods[] = {"im2col_gemm", "pointwise_gemm", "depthwise",
                                              "direct", "direct"};
        const stax_window *w = &step->window;
        snprintf(buffer, size, "%s_%s_%lldx%lldx%lldx%lld%s%s", kinds[w->kind],
                 w->pixel_rows     ? "pixel_rows_gemm"
                 : w->shifted_rows ? "shifted_rows_gemm"
                 : w->shifted      ? "shifted_gemm"
                                   : methods[w->method],
                 (long long)w->batch, (long long)w->out_channels, (long long)w->out[0],
                 (long long)w->out[1], w->epilogue >= 0 ? "+" : "",
                 w->epilogue >= 0 ? readable_kernel_name(prog->kernel_names[w->epilogue]) : "");
        return buffer;
    }
    if (step->kind == STAX_STEP_ATTENTION) {
        const stax_attention *at = &step->attention;
        snprintf(buffer, size, "attention_%lldx%lldx%lldx%lld", (long long)at->batch,
                 (long long)at->queries, (long long)at->keys, (long long)at->head_dim);
        return buffer;
    }
    if (step->kind != STAX_STEP_GEMM && step->kind != STAX_STEP_PACKED_GEMM)
        return readable_kernel_name(prog->kernel_names[step->kernel]);
    const stax_gemm *gemm = &step->gemm;
    snprintf(buffer, size, "gemm_%lldx%lldx%lld%s%s", (long long)gemm->m, (long long)gemm->n,
             (long long)gemm->k, gemm->epilogue >= 0 ? "+" : "",
             gemm->epilogue >= 0 ? readable_kernel_name(prog->kernel_names[gemm->epilogue]) : "");
    return buffer;
}

/* TP_LOG=debug: each packed matmul whose constant B was packed at compile. */
static void log_prepacked_b(const tp_plugin_host *host, const tp_plugin_graph *graph,
                            const stax_program *prog) {
    char line[512], name[256];
    for (int32_t i = 0; i < prog->num_steps; i++) {
        const stax_step *step = &prog->steps[i];
        if (step->kind != STAX_STEP_PACKED_GEMM || step->gemm.packed_b_kc <= 0) continue;
        snprintf(line, sizeof line,
                 "graph '%s': %s: constant B packed at compile for %s, kc %lld (%zu bytes)",
                 graph->name ? graph->name : "?", step_name(prog, step, name, sizeof name),
                 step->gemm.packed_b_family->name, (long long)step->gemm.packed_b_kc,
                 prog->slots[step->gemm.packed_b_slot].bytes);
        host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    }
}

/* TP_LOG=debug: each packed matmul of a few rows that streams B row by row
 * (stax_gemv.c) instead of packing it. */
static void log_gemv_steps(const tp_plugin_host *host, const tp_plugin_graph *graph,
                           const stax_program *prog) {
    static const stax_gemm_source from_slots = {0};
    char line[512], name[256];
    for (int32_t i = 0; i < prog->num_steps; i++) {
        const stax_step *step = &prog->steps[i];
        if (step->kind != STAX_STEP_PACKED_GEMM ||
            !stax_gemv_suits_operands(&step->gemm, &from_slots))
            continue;
        snprintf(line, sizeof line,
                 "graph '%s': %s: %lld row(s) through the gemv kernels, B streamed %s%s",
                 graph->name ? graph->name : "?", step_name(prog, step, name, sizeof name),
                 (long long)step->gemm.m, step->gemm.b_cs == 1 ? "row-major" : "by columns",
                 prog->slots[step->gemm.b_slot].kind == STAX_SLOT_CONST ? " (constant)" : "");
        host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    }
}

/* TP_LOG=debug: each 1x1 conv whose finished blocks are staged in cache
 * (stax_gemm_source.stage), and whether they are streamed into the output. */
static void log_staged_convs(const tp_plugin_host *host, const tp_plugin_graph *graph,
                             const stax_program *prog) {
    char line[512], name[256];
    for (int32_t i = 0; i < prog->num_steps; i++) {
        const stax_step *step = &prog->steps[i];
        if (step->kind != STAX_STEP_WINDOW || !step->window.stage_c) continue;
        snprintf(line, sizeof line,
                 "graph '%s': %s: blocks finished in a stage, copied into the output with %s",
                 graph->name ? graph->name : "?", step_name(prog, step, name, sizeof name),
                 step->window.stream_c ? "non-temporal stores" : "plain stores");
        host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    }
}

/* TP_LOG=debug: the steps a run executes, under the names profiles use. */
static void log_steps(const tp_plugin_host *host, const tp_plugin_graph *graph,
                      const stax_program *prog) {
    if (!host->log) return;
    char line[2048], name[256];
    int used =
        snprintf(line, sizeof line, "graph '%s': %d kernels:", graph->name ? graph->name : "?",
                 (int)prog->num_steps);
    for (int32_t i = 0; i < prog->num_steps && used > 0 && (size_t)used < sizeof line; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " %s",
                         step_name(prog, &prog->steps[i], name, sizeof name));
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    log_prepacked_b(host, graph, prog);
    log_gemv_steps(host, graph, prog);
    log_staged_convs(host, graph, prog);
}

/* TP_LOG=debug: the scratch memory the executable holds. */
static void log_arena(const tp_plugin_host *host, const tp_plugin_graph *graph,
                      const stax_program *prog) {
    if (!host->log) return;
    int32_t scratch = 0;
    for (int32_t s = 0; s < prog->num_slots; s++)
        scratch += prog->slots[s].kind == STAX_SLOT_SCRATCH;
    char line[256];
    if (prog->arena_bytes > 0 || prog->scratch_bytes == 0)
        snprintf(line, sizeof line,
                 "graph '%s': scratch arena %zu bytes for %d scratch slots of %zu bytes",
                 graph->name ? graph->name : "?", prog->arena_bytes, (int)scratch,
                 prog->scratch_bytes);
    else
        snprintf(line, sizeof line,
                 "graph '%s': STAX_ARENA=off: %d scratch buffers of %zu bytes in all",
                 graph->name ? graph->name : "?", (int)scratch, prog->scratch_bytes);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    if (prog->constants_dropped == 0) return;
    snprintf(line, sizeof line,
             "graph '%s': %d constant%s (%zu bytes) not kept: only packed copies are read",
             graph->name ? graph->name : "?", (int)prog->constants_dropped,
             prog->constants_dropped == 1 ? "" : "s", prog->constant_bytes_dropped);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
}

/* STAX_COMPILE_THREADS: how many threads compile a graph's kernels (in as
 * many parts, at most; stax_jit_load_graph). Unset or empty: the online
 * CPUs, at most STAX_DEFAULT_COMPILE_THREADS; an integer from 1 to 4096:
 * that many (more than STAX_JIT_MAX_COMPILE_THREADS compile on that many;
 * 1: one module compiled on the calling thread); anything else is an error
 * naming the variable. Independent of the run threads (TP_NUM_THREADS). */
#define STAX_DEFAULT_COMPILE_THREADS 8

static int32_t compile_threads(const tp_plugin_host *host, int32_t *threads, char *error,
                               size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_COMPILE_THREADS") : NULL;
    if (!setting || !*setting) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        *threads = online < 1                              ? 1
                   : online > STAX_DEFAULT_COMPILE_THREADS ? STAX_DEFAULT_COMPILE_THREADS
                                                           : (int32_t)online;
        return TP_PLUGIN_OK;
    }
    char *end = NULL;
    long value = strtol(setting, &end, 10);
    if (end == setting || *end || value < 1 || value > 4096 || setting[0] == '+' ||
        setting[0] == ' ')
        return tpcommon_error(error, error_size,
                              "stax: STAX_COMPILE_THREADS is '%s'; use an integer from 1 to 4096 "
                              "(1 compiles on the calling thread) or unset it for the online "
                              "CPUs",
                              setting);
    *threads = (int32_t)value;
    return TP_PLUGIN_OK;
}

/* TP_LOG=debug: where a compile's time went, and where its objects came from. */
static void log_compile_phases(const tp_plugin_host *host, const tp_plugin_graph *graph,
                               const tp_plugin_executable *exe, const stax_jit_report *kernels,
                               double plan_ms, double kernels_ms, double library_ms) {
    if (!host->log) return;
    static const char *const sources[] = {"compiled", "from memory", "from the disk cache",
                                          "prebuilt"};
    int library_hit = exe->gemm_library.module ? exe->gemm_library.cache_hit : -1;
    const char *source =
        sources[kernels->cache_hit >= 0 && kernels->cache_hit <= 2 ? kernels->cache_hit : 0];
    char how[160];
    if (kernels->parts <= 1)
        snprintf(how, sizeof how, "%s", source);
    else if (kernels->compiled == 0)
        snprintf(how, sizeof how, "%s, %d parts", source, (int)kernels->parts);
    else if (kernels->compiled == kernels->parts)
        snprintf(how, sizeof how, "compiled in %d parts on %d thread%s", (int)kernels->parts,
                 (int)kernels->threads, kernels->threads == 1 ? "" : "s");
    else
        snprintf(how, sizeof how, "%d of %d parts compiled on %d thread%s, the others cached",
                 (int)kernels->compiled, (int)kernels->parts, (int)kernels->threads,
                 kernels->threads == 1 ? "" : "s");
    char line[640];
    snprintf(line, sizeof line,
             "compile phases of graph '%s'; plan %.1f ms (weights packed, constants kept), "
             "%d kernels %.1f ms (%s), micro-kernel library %.1f ms (%s)",
             graph->name ? graph->name : "?", plan_ms, (int)exe->program.num_kernels, kernels_ms,
             how, library_ms,
             library_hit < 0 ? "none" : sources[library_hit <= 3 ? library_hit : 0]);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
}

/* max-autotune: measured choices per packed matmul step, then the workspace
 * they need. A dynamic graph keeps the defaults (its sizes change per call). */
static int32_t autotune_program(tp_plugin_executable *exe, int64_t budget_ms, char *error,
                                size_t error_size) {
    if (exe->dyn) {
        if (exe->host->log)
            exe->host->log(exe->host, TP_PLUGIN_LOG_INFO,
                           "max-autotune: a dynamic graph keeps the default matmul choices");
        return TP_PLUGIN_OK;
    }
    int32_t status =
        stax_autotune_program(exe->host, &exe->program, exe->slot_data, exe->kernels,
                              exe->program.packed_gemm ? &exe->gemm_kernels : NULL, exe->threads,
                              budget_ms, &exe->autotune, error, error_size);
    if (status == TP_PLUGIN_OK && bind_program(exe) != TP_PLUGIN_OK)
        status = tpcommon_error(error, error_size, "stax: out of memory");
    return status;
}

static int32_t compile_graph(const tp_plugin_host *host, const tp_plugin_graph *graph,
                             const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                             const tp_plugin_option *options, int32_t num_options,
                             tp_plugin_executable **executable, char *error, size_t error_size) {
    *executable = NULL;
    int64_t threads = host->num_threads ? host->num_threads() : 1;
    stax_jit_options jit = {3, NULL, NULL, host};
    bool autotune = false;
    int64_t budget_ms = STAX_AUTOTUNE_DEFAULT_BUDGET_MS;
    int32_t status = read_options(options, num_options, &threads, &jit, &autotune, &budget_ms,
                                  error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    tp_plugin_executable *exe = calloc(1, sizeof *exe);
    if (!exe) return tpcommon_error(error, error_size, "stax: out of memory");
    exe->host = host;
    exe->threads = threads;
    char *template_ir = NULL;
    double started = stax_clock_ms(), planned = started, kernels_done = started,
           library_done = started;
    status = TP_PLUGIN_UNAVAILABLE;
    if (stax_graph_is_dynamic(graph))
        status = compile_dynamic(exe, graph, inputs, num_inputs, &template_ir, error, error_size);
    if (status == TP_PLUGIN_UNAVAILABLE && autotune) /* candidates pack raw weights */
        status = stax_program_build_keeping_constants(host, graph, inputs, num_inputs,
                                                      stax_jit_cpu(), stax_jit_features(), threads,
                                                      &exe->program, error, error_size);
    else if (status == TP_PLUGIN_UNAVAILABLE)
        status =
            stax_program_build(host, graph, inputs, num_inputs, stax_jit_cpu(), stax_jit_features(),
                               NULL, threads, &exe->program, error, error_size);
    stax_program *prog = &exe->program;
    const stax_gemm_family *family = status == TP_PLUGIN_OK ? prog->packed_gemm : NULL;
    if (status == TP_PLUGIN_OK) {
        exe->kernels = calloc((size_t)prog->num_kernels + 1, sizeof *exe->kernels);
        if (!exe->kernels) status = tpcommon_error(error, error_size, "stax: out of memory");
    }
    planned = stax_clock_ms();
    int32_t threads_to_compile = 1;
    stax_jit_report kernels = {0};
    if (status == TP_PLUGIN_OK)
        status = compile_threads(host, &threads_to_compile, error, error_size);
    /* a dynamic graph's template stays one module (stax_dynamic.c binds its sizes) */
    if (template_ir) threads_to_compile = 1;
    if (status == TP_PLUGIN_OK)
        status = stax_jit_load_graph(template_ir ? template_ir : prog->ir, &jit, threads_to_compile,
                                     (const char *const *)prog->kernel_names, prog->num_kernels,
                                     exe->kernels, &exe->module, &kernels, error, error_size);
    exe->cache_hit = kernels.cache_hit;
    kernels_done = stax_clock_ms();
    if (status == TP_PLUGIN_OK)
        status = stax_gemm_library_load(host, prog->uses_gemm, family, &jit, &exe->gemm_library,
                                        error, error_size);
    if (status == TP_PLUGIN_OK && prog->uses_gemm)
        for (int i = 0; i < 2; i++) exe->ukernels[i] = exe->gemm_library.ukernels[i];
    if (status == TP_PLUGIN_OK && family)
        stax_gemm_kernels_from_library(host, family, &exe->gemm_library, &exe->gemm_kernels);
    library_done = stax_clock_ms();
    if (status == TP_PLUGIN_OK && bind_program(exe) != TP_PLUGIN_OK)
        status = tpcommon_error(error, error_size, "stax: out of memory");
    if (status == TP_PLUGIN_OK)
        log_compile_phases(host, graph, exe, &kernels, planned - started, kernels_done - planned,
                           library_done - kernels_done);
    if (status == TP_PLUGIN_OK && autotune)
        status = autotune_program(exe, budget_ms, error, error_size);
    free(template_ir);
    if (status == TP_PLUGIN_OK) log_steps(host, graph, prog);
    if (status == TP_PLUGIN_OK) log_arena(host, graph, prog);
    if (status == TP_PLUGIN_OK) {
        /* the IR text is only needed to compile */
        free(prog->ir);
        prog->ir = NULL;
        *executable = exe;
    } else {
        release_executable(exe);
    }
    return status;
}

static int32_t stax_compile(void *context, const tp_plugin_graph *graph,
                            const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                            const tp_plugin_option *options, int32_t num_options,
                            tp_plugin_executable **executable) {
    const stax_context *ctx = context;
    char error[1024] = "";
    int32_t status = compile_graph(ctx->host, graph, inputs, num_inputs, options, num_options,
                                   executable, error, sizeof error);
    if (status != TP_PLUGIN_OK) ctx->host->set_error(ctx->host, error);
    return status;
}

/* Dynamic: binds the symbols from the buffers; replans when they changed. */
static int32_t rebind(tp_plugin_executable *exe, const tp_plugin_buffer *inputs,
                      int32_t num_inputs) {
    stax_dynamic *d = exe->dyn;
    char error[512] = "";
    if (tpcommon_bind_symbols_from_buffers(&d->graph, inputs, num_inputs, exe->bind, error,
                                           sizeof error) != TP_PLUGIN_OK)
        return run_error(exe->host, error);
    for (int32_t s = 0; s < d->graph.num_symbols; s++)
        if (exe->bind[s] < 0) exe->bind[s] = 1; /* as at compile */
    size_t bytes = sizeof *exe->bind * (size_t)d->graph.num_symbols;
    if (d->bound && !memcmp(exe->bind, d->symbols, bytes)) return TP_PLUGIN_OK;
    stax_program program;
    if (stax_dynamic_plan(d, exe->bind, stax_jit_cpu(), stax_jit_features(), &program, error,
                          sizeof error) != TP_PLUGIN_OK) {
        d->bound = false;
        return run_error(exe->host, error);
    }
    if (program.packed_gemm != exe->gemm_kernels.family ||
        (program.uses_gemm && !exe->ukernels[0])) {
        stax_program_free(&program);
        d->bound = false;
        return run_error(exe->host, "stax: STAX_GEMM_KERNEL changed since this dynamic graph was "
                                    "compiled; set it back, or compile the graph again");
    }
    stax_program_free(&exe->program);
    exe->program = program;
    if (bind_program(exe) != TP_PLUGIN_OK) {
        d->bound = false;
        return run_error(exe->host, "stax: out of memory sizing buffers for new sizes");
    }
    return TP_PLUGIN_OK;
}

static int32_t run_step(tp_plugin_executable *exe, const stax_step *step, int64_t threads);

static int32_t stax_run(void *context, tp_plugin_executable *exe, const tp_plugin_buffer *inputs,
                        int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context; /* the executable keeps its context's host */
    if (exe->dyn && rebind(exe, inputs, num_inputs) != TP_PLUGIN_OK) return TP_PLUGIN_ERROR;
    stax_program *prog = &exe->program;
    for (int32_t s = 0; s < prog->num_slots; s++) {
        const stax_slot *slot = &prog->slots[s];
        if (slot->kind != STAX_SLOT_INPUT && slot->kind != STAX_SLOT_OUTPUT) continue;
        bool input = slot->kind == STAX_SLOT_INPUT;
        int32_t count = input ? num_inputs : num_outputs;
        if (slot->index >= count)
            return run_error(exe->host,
                             "stax: run got fewer buffers than the graph has inputs/outputs");
        const tp_plugin_buffer *buffer = input ? &inputs[slot->index] : &outputs[slot->index];
        if (buffer->nbytes < (slot->bytes > 1 ? slot->bytes : 0)) {
            char message[160];
            snprintf(message, sizeof message, "stax: %s %d has %zu bytes, the executable needs %zu",
                     input ? "input" : "output", (int)slot->index, buffer->nbytes, slot->bytes);
            return run_error(exe->host, message);
        }
        exe->slot_data[s] = buffer->data;
    }
    int64_t threads = exe->threads;
    tpcommon_kernel_timer timer = tpcommon_kernel_timer_begin(exe->host);
    for (int32_t i = 0; i < prog->num_steps; i++) {
        const stax_step *step = &prog->steps[i];
        uint64_t start = tpcommon_kernel_timer_now(&timer);
        int32_t status = run_step(exe, step, threads);
        if (timer.host) {
            char name[256];
            tpcommon_kernel_timer_report(&timer, step_name(prog, step, name, sizeof name), start);
        }
        if (status != TP_PLUGIN_OK) return status;
    }
    return TP_PLUGIN_OK;
}

/* One step: a blocked matmul, or a kernel over its range on the pool; a
 * kernel that checks indices reports an out-of-range one through set_error. */
static int32_t run_step(tp_plugin_executable *exe, const stax_step *step, int64_t threads) {
    if (step->kind == STAX_STEP_WINDOW) {
        stax_kernel_fn epilogue =
            step->window.epilogue >= 0
                ? (stax_kernel_fn)(uintptr_t)exe->kernels[step->window.epilogue]
                : NULL;
        stax_window_run(exe->host, step, exe->slot_data, exe->workspace, exe->ukernels,
                        &exe->gemm_kernels, epilogue, threads);
        return TP_PLUGIN_OK;
    }
    if (step->kind == STAX_STEP_ATTENTION) {
        stax_attention_run(exe->host, &step->attention, exe->slot_data, exe->workspace,
                           &exe->gemm_kernels, threads);
        return TP_PLUGIN_OK;
    }
    if (step->kind == STAX_STEP_GEMM || step->kind == STAX_STEP_PACKED_GEMM) {
        stax_kernel_fn epilogue = step->gemm.epilogue >= 0
                                      ? (stax_kernel_fn)(uintptr_t)exe->kernels[step->gemm.epilogue]
                                      : NULL;
        const stax_gemm_tuned *tuned =
            exe->autotune.steps ? &exe->autotune.steps[step - exe->program.steps] : NULL;
        if (step->kind == STAX_STEP_PACKED_GEMM && tuned)
            stax_gemm_packed_run_split(exe->host, &step->gemm, exe->slot_data, exe->workspace,
                                       &tuned->kernels, epilogue, tuned->threads, tuned->split);
        else if (step->kind == STAX_STEP_PACKED_GEMM)
            stax_gemm_packed_run(exe->host, &step->gemm, exe->slot_data, exe->workspace,
                                 &exe->gemm_kernels, epilogue, threads);
        else
            stax_gemm_run(exe->host, &step->gemm, exe->slot_data, exe->workspace, exe->ukernels,
                          epilogue, threads);
        return TP_PLUGIN_OK;
    }
    stax_index_check_arm(step, exe->slot_data);
    stax_run_kernel(exe->host, (stax_kernel_fn)(uintptr_t)exe->kernels[step->kernel],
                    exe->slot_data, step->count, step->grain, threads);
    if (!step->check.where) return TP_PLUGIN_OK;
    char error[1024];
    if (stax_index_check_report(step, exe->slot_data, error, sizeof error) == TP_PLUGIN_OK)
        return TP_PLUGIN_OK;
    return run_error(exe->host, error);
}

static void stax_release(void *context, tp_plugin_executable *exe) {
    (void)context;
    release_executable(exe);
}

static void stax_reset(void *context) {
    (void)context;
    stax_jit_drop_memory_cache();
}

static void stax_shutdown(void *context) {
    stax_jit_shutdown();
    free(context);
}

static const tp_plugin_backend stax_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "stax",
    .version = STAX_VERSION,
    .description = "LLVM 19 ORC JIT for CPUs: fused loop nests, packed AVX2/FMA matmul",
    .calls =
        {
            .probe = NULL, /* always available: LLVM is linked in */
            .init = stax_init,
            .supports = stax_supports,
            .compile = stax_compile,
            .run = stax_run,
            .release = stax_release,
            .reset = stax_reset,
            .shutdown = stax_shutdown,
            .get_extension = NULL,
        },
};

/* The core passes the highest revision both sides speak; stax speaks only
 * revision 2 (the INI says contract = 2, min_contract = 2). */
TP_PLUGIN_EXPORT const tp_plugin_backend *tp_stax_backend(uint32_t revision) {
    return revision >= 2 ? &stax_table : NULL;
}
