/* The miss path's work: capture → (dynamic: symbolic inputs) → pass
 * pipeline → backend compile, producing one cache entry; and the per-shape
 * executables (variants) of an entry (compile_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/log.h"
#include "../base/profile.h"
#include "../tensor/tensor_internal.h"
#include "compile_internal.h"
#include "ops/op_table.h"
#include "registry/registry_internal.h"
#include "tensorplay/passes.h"

static void entry_free(tp_cache_entry *entry) {
    if (!entry) return;
    for (int i = 0; i < entry->num_variants; i++) {
        tp_executable_destroy(entry->variants[i].executable);
        tp_partitioned_destroy(entry->variants[i].partitioned);
        pthread_mutex_destroy(&entry->variants[i].run_lock);
        free(entry->variants[i].shapes);
    }
    free(entry->variants);
    pthread_mutex_destroy(&entry->variants_lock);
    tp_gate_program_free(entry->gates);
    tp_graph_destroy(entry->graph);
    free(entry->signature);
    free(entry->shape_guarded);
    free(entry->guarded_shapes);
    free(entry);
}

void tp_entry_retain(tp_cache_entry *entry) {
    atomic_fetch_add_explicit(&entry->refcount, 1, memory_order_relaxed);
}

void tp_entry_release(tp_cache_entry *entry) {
    if (entry && atomic_fetch_sub_explicit(&entry->refcount, 1, memory_order_acq_rel) == 1)
        entry_free(entry);
}

static tp_cache_entry *entry_alloc(int num_args) {
    tp_cache_entry *entry = calloc(1, sizeof *entry);
    if (!entry) return NULL;
    size_t slots = (size_t)(num_args ? num_args : 1);
    entry->signature = calloc(slots, sizeof *entry->signature);
    entry->shape_guarded = calloc(slots, sizeof *entry->shape_guarded);
    entry->guarded_shapes = calloc(slots * TP_MAX_DIMS, sizeof *entry->guarded_shapes);
    if (!entry->signature || !entry->shape_guarded || !entry->guarded_shapes) {
        free(entry->signature);
        free(entry->shape_guarded);
        free(entry->guarded_shapes);
        free(entry);
        return NULL;
    }
    atomic_init(&entry->refcount, 1);
    entry->num_args = num_args;
    pthread_mutex_init(&entry->variants_lock, NULL);
    return entry;
}

static int count_tensors(const tp_arg *args, int num_args) {
    int count = 0;
    for (int i = 0; i < num_args; i++) count += args[i].kind == TP_ARG_TENSOR;
    return count;
}

/* Dynamic mode: swap the entry's graphs for symbolic ones. When a shape rule
 * cannot decide on symbols, every tensor keeps its exact shape as a guard
 * instead (always correct, only less general). */
static void make_symbolic(tp_compiled *compiled, tp_cache_entry *entry, const tp_arg *args) {
    tp_graph *graph = NULL, *gate_graph = NULL;
    tp_status status = tp_graph_symbolize(entry->graph, entry->signature, entry->shape_guarded,
                                          entry->num_args, &graph);
    if (status == TP_OK && entry->gates)
        status = tp_graph_symbolize(entry->gates->graph, entry->signature, entry->shape_guarded,
                                    entry->num_args, &gate_graph);
    if (status == TP_OK) {
        tp_graph_destroy(entry->graph);
        entry->graph = graph;
        if (gate_graph) {
            tp_graph_destroy(entry->gates->graph);
            entry->gates->graph = gate_graph;
        }
        return;
    }
    tp_graph_destroy(graph);
    tp_graph_destroy(gate_graph);
    tp_log_message(TP_LOG_DEBUG,
                   "'%s': dynamic shapes not possible for this capture (%s); "
                   "keying on exact shapes",
                   compiled->name, tp_last_error());
    for (int i = 0; i < entry->num_args; i++)
        if (args[i].kind == TP_ARG_TENSOR) entry->shape_guarded[i] = true;
}

/* decompose keeps the composites the chosen backend claims (a backend
 * without claims, revision 1, gets every composite decomposed as before). */
static tp_status keep_claimed_composites(const tp_graph *graph, bool *keep, void *user) {
    tp_backend *backend = user;
    TP_TRY(tp_backend_claims(backend, graph, keep, NULL));
    int count = tp_graph_num_values(graph);
    for (tp_value_id v = 0; v < count; v++) {
        const char *name = tp_graph_value_op(graph, v);
        const tp_op_def *op = name ? tp_op_find(name) : NULL;
        if (!op || op->kind != TP_KIND_COMPOSITE) keep[v] = false;
    }
    return TP_OK;
}

void tp_pass_options_for_backend(tp_backend *backend, tp_pass_options *options) {
    *options = (tp_pass_options)TP_PASS_OPTIONS_INIT;
    if (tp_backend_has_claims(backend)) {
        options->keep_composites = keep_claimed_composites;
        options->keep_user = backend;
    }
}

static tp_status run_passes(tp_compiled *compiled, tp_cache_entry *entry) {
    tp_graph *optimized = NULL;
    tp_pass_options options;
    tp_pass_options_for_backend(compiled->backend, &options);
    tp_status status = tp_pass_pipeline_run(entry->graph, &options, &optimized);
    if (status != TP_OK) return status;
    tp_graph_destroy(entry->graph);
    entry->graph = optimized;
    return TP_OK;
}

tp_status tp_pipeline_build_entry(tp_compiled *compiled, const tp_arg *args, int num_args,
                                  const tp_arg_signature *signature, tp_cache_entry **out,
                                  char **uncompiled_reason) {
    *out = NULL;
    *uncompiled_reason = NULL;
    char **names = malloc((size_t)(num_args ? num_args : 1) * sizeof *names);
    char(*generated)[32] = malloc((size_t)(num_args ? num_args : 1) * sizeof *generated);
    tp_cache_entry *entry = entry_alloc(num_args);
    if (!names || !generated || !entry) {
        free(names);
        free(generated);
        entry_free(entry);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory compiling", compiled->name);
    }
    for (int i = 0; i < num_args; i++)
        names[i] = (char *)tp_compiled_param_name(compiled, i, generated[i], sizeof generated[i]);
    tp_capture_result capture;
    uint64_t start = tp_profile_start();
    tp_status status = tp_compiled_is_graph(compiled)
                           ? tp_graph_function_capture(compiled, args, num_args, &capture)
                           : tp_capture_run(compiled->fn, compiled->user_data, compiled->name,
                                            (const char *const *)names, args, num_args,
                                            compiled->num_outputs, &capture);
    tp_profile_end(start, "capture", compiled->name, -1);
    free(names);
    free(generated);
    if (status != TP_OK) {
        entry_free(entry);
        return status;
    }
    if (capture.raw_access_reason) {
        *uncompiled_reason = capture.raw_access_reason;
        capture.raw_access_reason = NULL;
        tp_capture_result_clear(&capture);
        entry_free(entry);
        return tp_error_set(TP_ERR_UNSUPPORTED, "%s", *uncompiled_reason);
    }
    memcpy(entry->signature, signature, (size_t)num_args * sizeof *signature);
    for (int i = 0; i < num_args; i++) {
        entry->shape_guarded[i] = capture.shape_touched[i];
        if (args[i].kind == TP_ARG_TENSOR)
            memcpy(&entry->guarded_shapes[i * TP_MAX_DIMS], args[i].tensor->shape,
                   (size_t)args[i].tensor->ndim * sizeof(int64_t));
    }
    entry->graph = capture.graph;
    entry->gates = capture.gates;
    capture.graph = NULL;
    capture.gates = NULL;
    tp_capture_result_clear(&capture);

    if (compiled->dynamic) make_symbolic(compiled, entry, args);
    status = run_passes(compiled, entry);
    tp_variant *variant;
    if (status == TP_OK) status = tp_entry_variant(compiled, entry, args, num_args, &variant);
    if (status != TP_OK) {
        entry_free(entry);
        return status;
    }
    *out = entry;
    return TP_OK;
}

static void collect_tensors(const tp_arg *args, int num_args, tp_tensor **inputs) {
    int count = 0;
    for (int i = 0; i < num_args; i++)
        if (args[i].kind == TP_ARG_TENSOR) inputs[count++] = args[i].tensor;
}

static bool variant_fits(const tp_variant *variant, tp_tensor *const *inputs, int num_inputs) {
    for (int i = 0; i < num_inputs; i++)
        if (memcmp(&variant->shapes[i * TP_MAX_DIMS], inputs[i]->shape,
                   (size_t)inputs[i]->ndim * sizeof(int64_t)) != 0)
            return false;
    return true;
}

static tp_status add_variant(tp_compiled *compiled, tp_cache_entry *entry, tp_tensor *const *inputs,
                             int num_inputs, tp_variant **out) {
    if (entry->num_variants == entry->variant_capacity) {
        /* Variants never move once made (a call may hold a pointer to
         * one), so the array has a fixed capacity. */
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "'%s': more than %d input shapes for one dynamic entry", compiled->name,
                            entry->variant_capacity);
    }
    int64_t *shapes = calloc((size_t)(num_inputs ? num_inputs : 1) * TP_MAX_DIMS, sizeof *shapes);
    if (!shapes) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    for (int i = 0; i < num_inputs; i++)
        memcpy(&shapes[i * TP_MAX_DIMS], inputs[i]->shape,
               (size_t)inputs[i]->ndim * sizeof(int64_t));
    tp_executable *executable = NULL;
    tp_partitioned *partitioned = NULL;
    tp_partition_region_info *summary = NULL;
    int summary_count = 0;
    const char *fallback =
        compiled->fallback_backend ? compiled->fallback_backend : compiled->policy.fallback_backend;
    tp_partition_request request = {.function_name = compiled->name,
                                    .graph = entry->graph,
                                    .backend = compiled->backend,
                                    .fallback_name = fallback,
                                    .fullgraph = compiled->fullgraph,
                                    .inputs = inputs,
                                    .num_inputs = num_inputs,
                                    .options = (const char *const *)compiled->backend_options,
                                    .num_options = compiled->num_backend_options};
    tp_status status =
        tp_partitioned_compile(&request, &executable, &partitioned, &summary, &summary_count);
    if (status == TP_OK) { /* compiled->lock is held by the caller */
        free(compiled->last_partition);
        compiled->last_partition = summary;
        compiled->last_partition_count = summary_count;
    }
    if (status != TP_OK) {
        free(shapes);
        return tp_error_prefix(status, "'%s': backend '%s' failed to compile: ", compiled->name,
                               tp_backend_name(compiled->backend));
    }
    tp_variant *variant = &entry->variants[entry->num_variants++];
    variant->shapes = shapes;
    variant->executable = executable;
    variant->partitioned = partitioned;
    pthread_mutex_init(&variant->run_lock, NULL);
    *out = variant;
    return TP_OK;
}

#define TP_MAX_VARIANTS 64

tp_status tp_entry_variant(tp_compiled *compiled, tp_cache_entry *entry, const tp_arg *args,
                           int num_args, tp_variant **out) {
    int num_inputs = count_tensors(args, num_args);
    tp_tensor *small[16];
    tp_tensor **inputs = num_inputs <= 16 ? small : malloc((size_t)num_inputs * sizeof *inputs);
    if (!inputs) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    collect_tensors(args, num_args, inputs);
    tp_status status = TP_OK;
    pthread_mutex_lock(&entry->variants_lock);
    if (!entry->variants) {
        entry->variant_capacity = compiled->dynamic ? TP_MAX_VARIANTS : 1;
        entry->variants = calloc((size_t)entry->variant_capacity, sizeof *entry->variants);
        if (!entry->variants)
            status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    }
    *out = NULL;
    for (int i = 0; status == TP_OK && i < entry->num_variants && !*out; i++)
        if (variant_fits(&entry->variants[i], inputs, num_inputs)) *out = &entry->variants[i];
    if (status == TP_OK && !*out) status = add_variant(compiled, entry, inputs, num_inputs, out);
    pthread_mutex_unlock(&entry->variants_lock);
    if (inputs != small) free(inputs);
    return status;
}
