/* stax-llvm — the plugin's entry point and backend table (plugin.h): probe,
 * init, compile (options, planning, JIT), run (binding buffers to slots,
 * stepping through kernels on the core's thread pool), release, reset,
 * shutdown. Options: threads=N (at most N threads per kernel; default the
 * core pool's size), opt_level=0..3 (default 3), dump_ir=PATH (optimised
 * LLVM IR), dump_asm=PATH (assembly). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"

const tp_plugin_host *stax_host;

struct tp_plugin_executable {
    stax_program program;
    stax_module *module;
    void **kernels;
    stax_ukernel_fn ukernel;
    void **slot_data;
    float *workspace;
    int64_t threads;
    int cache_hit;
};

static const char *const known_options[] = {"threads", "opt_level", "dump_ir", "dump_asm"};

static int32_t stax_probe(char *why, size_t why_size) {
    (void)why;
    (void)why_size;
    return TP_PLUGIN_OK;
}

static int32_t stax_init(const tp_plugin_host *host) {
    stax_host = host;
    char error[512] = "";
    if (stax_jit_init(error, sizeof error) != TP_PLUGIN_OK) {
        if (host && host->set_error) host->set_error(host, error);
        return TP_PLUGIN_ERROR;
    }
    return TP_PLUGIN_OK;
}

static void free_aligned(void *p) {
    if (!p) return;
    if (stax_host && stax_host->aligned_free)
        stax_host->aligned_free(p);
    else
        free(p);
}

static void stax_release(tp_plugin_executable *exe) {
    if (!exe) return;
    stax_module_release(exe->module);
    stax_program_free(&exe->program);
    free(exe->kernels);
    free(exe->slot_data);
    free_aligned(exe->workspace);
    free(exe);
}

static int32_t read_options(const tp_plugin_option *options, int32_t count, int64_t *threads,
                            stax_jit_options *jit, char *error, size_t size) {
    int32_t status = tpc_options_check(options, count, known_options, 4, error, size);
    if (status != TP_PLUGIN_OK) return status;
    int64_t opt_level = 3;
    status = tpc_option_int(options, count, "threads", 1, 4096, threads, error, size);
    if (status == TP_PLUGIN_OK)
        status = tpc_option_int(options, count, "opt_level", 0, 3, &opt_level, error, size);
    jit->opt_level = (int)opt_level;
    jit->dump_ir = tpc_option_get(options, count, "dump_ir");
    jit->dump_asm = tpc_option_get(options, count, "dump_asm");
    return status;
}

static int32_t stax_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                            int32_t num_inputs, const tp_plugin_option *options,
                            int32_t num_options, tp_plugin_executable **executable, char *error,
                            size_t error_size) {
    *executable = NULL;
    int64_t threads = stax_host && stax_host->num_threads ? stax_host->num_threads() : 1;
    stax_jit_options jit = {3, NULL, NULL};
    int32_t status = read_options(options, num_options, &threads, &jit, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    tp_plugin_executable *exe = calloc(1, sizeof *exe);
    if (!exe) return tpc_error(error, error_size, "stax: out of memory");
    exe->threads = threads;
    status = stax_program_build(graph, inputs, num_inputs, stax_jit_cpu(), stax_jit_features(),
                                &exe->program, error, error_size);
    stax_program *prog = &exe->program;
    int32_t num_names = prog->num_kernels + (prog->uses_gemm ? 1 : 0);
    const char **names = NULL;
    if (status == TP_PLUGIN_OK) {
        names = calloc((size_t)num_names + 1, sizeof *names);
        exe->kernels = calloc((size_t)num_names + 1, sizeof *exe->kernels);
        exe->slot_data = calloc((size_t)prog->num_slots + 1, sizeof *exe->slot_data);
        if (!names || !exe->kernels || !exe->slot_data)
            status = tpc_error(error, error_size, "stax: out of memory");
    }
    if (status == TP_PLUGIN_OK) {
        for (int32_t k = 0; k < prog->num_kernels; k++) names[k] = prog->kernel_names[k];
        if (prog->uses_gemm) names[prog->num_kernels] = STAX_GEMM_KERNEL_NAME;
        status = stax_jit_load(prog->ir, &jit, names, num_names, exe->kernels, &exe->module,
                               &exe->cache_hit, error, error_size);
    }
    if (status == TP_PLUGIN_OK && prog->uses_gemm) {
        exe->ukernel = (stax_ukernel_fn)(uintptr_t)exe->kernels[prog->num_kernels];
        size_t bytes = 64;
        for (int32_t s = 0; s < prog->num_steps; s++)
            if (prog->steps[s].kind == STAX_STEP_GEMM) {
                size_t need = stax_gemm_workspace_bytes(&prog->steps[s].gemm);
                if (need > bytes) bytes = need;
            }
        exe->workspace = stax_host && stax_host->aligned_alloc
                             ? stax_host->aligned_alloc(bytes)
                             : aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!exe->workspace) status = tpc_error(error, error_size, "stax: out of memory");
    }
    free(names);
    if (status == TP_PLUGIN_OK) {
        for (int32_t s = 0; s < prog->num_slots; s++) exe->slot_data[s] = prog->slots[s].data;
        /* the IR text is only needed to compile */
        free(prog->ir);
        prog->ir = NULL;
        *executable = exe;
    } else {
        stax_release(exe);
    }
    return status;
}

typedef struct kernel_call {
    stax_kernel_fn fn;
    void **slots;
} kernel_call;

static void kernel_range(void *context, int64_t begin, int64_t end) {
    const kernel_call *call = context;
    call->fn(call->slots, begin, end);
}

static int32_t run_error(const char *message) {
    if (stax_host && stax_host->set_error) stax_host->set_error(stax_host, message);
    return TP_PLUGIN_ERROR;
}

static int32_t stax_run(tp_plugin_executable *exe, const tp_plugin_buffer *inputs,
                        int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    stax_program *prog = &exe->program;
    for (int32_t s = 0; s < prog->num_slots; s++) {
        const stax_slot *slot = &prog->slots[s];
        if (slot->kind != STAX_SLOT_INPUT && slot->kind != STAX_SLOT_OUTPUT) continue;
        bool input = slot->kind == STAX_SLOT_INPUT;
        int32_t count = input ? num_inputs : num_outputs;
        if (slot->index >= count)
            return run_error("stax: run got fewer buffers than the graph has inputs/outputs");
        const tp_plugin_buffer *buffer = input ? &inputs[slot->index] : &outputs[slot->index];
        if (buffer->nbytes < (slot->bytes > 1 ? slot->bytes : 0)) {
            char message[160];
            snprintf(message, sizeof message, "stax: %s %d has %zu bytes, the executable needs %zu",
                     input ? "input" : "output", (int)slot->index, buffer->nbytes, slot->bytes);
            return run_error(message);
        }
        exe->slot_data[s] = buffer->data;
    }
    int64_t threads = exe->threads;
    for (int32_t i = 0; i < prog->num_steps; i++) {
        const stax_step *step = &prog->steps[i];
        if (step->kind == STAX_STEP_GEMM) {
            stax_kernel_fn epilogue =
                step->gemm.epilogue >= 0
                    ? (stax_kernel_fn)(uintptr_t)exe->kernels[step->gemm.epilogue]
                    : NULL;
            stax_gemm_run(&step->gemm, exe->slot_data, exe->workspace, exe->ukernel, epilogue,
                          threads);
            continue;
        }
        kernel_call call = {(stax_kernel_fn)(uintptr_t)exe->kernels[step->kernel], exe->slot_data};
        int64_t grain = step->grain;
        if (threads > 1 && grain * threads < step->count)
            grain = (step->count + threads - 1) / threads;
        if (threads <= 1 || step->count <= grain || !stax_host || !stax_host->parallel_for)
            call.fn(call.slots, 0, step->count);
        else
            stax_host->parallel_for(step->count, grain, kernel_range, &call);
    }
    return TP_PLUGIN_OK;
}

static void stax_reset(void) {
    stax_jit_drop_memory_cache();
}

static void stax_shutdown(void) {
    stax_jit_shutdown();
    stax_host = NULL;
}

static const tp_plugin_backend stax_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = TP_BACKEND_CONTRACT_VERSION,
    .name = "stax",
    .version = STAX_VERSION,
    .description = "LLVM 19 ORC JIT for CPUs: fused loop nests, packed AVX2/FMA matmul",
    .probe = stax_probe,
    .init = stax_init,
    .compile = stax_compile,
    .run = stax_run,
    .release = stax_release,
    .reset = stax_reset,
    .shutdown = stax_shutdown,
};

TP_PLUGIN_EXPORT const tp_plugin_backend *tp_stax_backend(void) {
    return &stax_table;
}
