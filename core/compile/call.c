/* tp_call: the steady-state fast path (same tensors at the same versions as
 * the last hit), the cache lookup, the miss path with its limits, reasons and
 * logging, and running the chosen executable. */
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "../base/error.h"
#include "../base/log.h"
#include "../tensor/tensor_internal.h"
#include "compile_internal.h"

/* Called with compiled->lock held. */
static bool memo_matches(const tp_call_memo *memo, const tp_arg *args, int num_args) {
    if (!memo->valid || memo->num_args != num_args) return false;
    for (int i = 0; i < num_args; i++) {
        const tp_arg *before = &memo->args[i], *now = &args[i];
        if (before->kind != now->kind) return false;
        switch (now->kind) {
        case TP_ARG_TENSOR:
            if (before->tensor != now->tensor ||
                memo->versions[i] !=
                    atomic_load_explicit(&now->tensor->version, memory_order_acquire))
                return false;
            break;
        case TP_ARG_INT:
            if (before->i != now->i) return false;
            break;
        case TP_ARG_FLOAT:
            if (memcmp(&before->f, &now->f, sizeof now->f) != 0) return false;
            break;
        case TP_ARG_BOOL:
            if (before->b != now->b) return false;
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Called with compiled->lock held. `versions` were read before the signature
 * was built, so a write racing with this call can only make the memo miss. */
static void memo_store(tp_compiled *compiled, const tp_arg *args, int num_args,
                       const uint64_t *versions, tp_cache_entry *entry, tp_variant *variant) {
    tp_call_memo *memo = &compiled->memo;
    for (int i = 0; i < memo->num_args; i++)
        if (memo->args[i].kind == TP_ARG_TENSOR) tp_tensor_release(memo->args[i].tensor);
    if (memo->num_args != num_args || !memo->args) {
        free(memo->args);
        free(memo->versions);
        size_t slots = (size_t)(num_args ? num_args : 1);
        memo->args = malloc(slots * sizeof *memo->args);
        memo->versions = malloc(slots * sizeof *memo->versions);
    }
    tp_entry_release(memo->entry);
    memo->entry = NULL;
    memo->valid = false;
    memo->num_args = 0;
    if (!memo->args || !memo->versions) return; /* no memo: only slower */
    for (int i = 0; i < num_args; i++) {
        memo->args[i] = args[i];
        if (args[i].kind == TP_ARG_TENSOR) tp_tensor_retain(args[i].tensor);
    }
    memcpy(memo->versions, versions, (size_t)num_args * sizeof *versions);
    memo->num_args = num_args;
    tp_entry_retain(entry);
    memo->entry = entry;
    memo->variant = variant;
    memo->valid = true;
}

static bool recompiles_are_logged(const tp_compiled *compiled) {
    const char *flag = tp_env_get("TP_LOG_RECOMPILES");
    return compiled->policy.verbose || (flag && *flag && strcmp(flag, "0") != 0);
}

/* What the lookup decided. */
typedef enum call_plan { PLAN_RUN, PLAN_EAGER, PLAN_NOT_RUN } call_plan;

typedef struct call_state {
    const tp_arg *args;
    int num_args;
    const tp_arg_signature *signature;
    tp_cache_entry *entry; /* one reference for this call */
    tp_variant *variant;
    bool cached;
} call_state;

/* Called with compiled->lock held. */
static tp_status find_entry(tp_compiled *compiled, call_state *call) {
    for (tp_cache_entry *entry = compiled->entries; entry; entry = entry->next) {
        bool match;
        TP_TRY(tp_entry_matches(entry, call->signature, call->args, call->num_args, &match));
        if (!match) continue;
        TP_TRY(tp_entry_variant(compiled, entry, call->args, call->num_args, &call->variant));
        tp_entry_retain(entry);
        call->entry = entry;
        call->cached = true;
        return TP_OK;
    }
    return TP_OK;
}

/* The miss path, with compiled->lock held: limits, reasons, compile, store. */
static tp_status compile_miss(tp_compiled *compiled, call_state *call, call_plan *plan) {
    const tp_compile_policy *policy = &compiled->policy;
    bool store = !policy->force_disable_caches;
    tp_reason_list reasons = {0};
    for (tp_cache_entry *entry = compiled->entries; entry; entry = entry->next)
        tp_entry_explain(compiled, entry, call->signature, call->args, call->num_args, &reasons);
    char summary[1024];
    tp_reasons_summary(&reasons, summary, sizeof summary);
    if (compiled->num_entries >= policy->recompile_limit) {
        if (compiled->fullgraph || policy->fail_on_recompile_limit_hit) {
            tp_reasons_clear(&reasons);
            return tp_error_set(TP_ERR_STATE,
                                "'%s': recompile_limit (%d) reached%s%s; raise recompile_limit, "
                                "use dynamic shapes, or call with fewer distinct signatures",
                                compiled->name, policy->recompile_limit, *summary ? ": " : "",
                                summary);
        }
        store = false;
    }
    if (reasons.count > 0) {
        if (recompiles_are_logged(compiled))
            tp_log_message(TP_LOG_WARN, "recompiling '%s': %s", compiled->name, summary);
        tp_reasons_move(&compiled->last_reasons, &reasons);
    }
    if (compiled->compile_attempts >= policy->accumulated_recompile_limit)
        return tp_error_set(TP_ERR_STATE,
                            "'%s': accumulated recompilation limit reached (%d compilations; "
                            "config accumulated_recompile_limit)",
                            compiled->name, policy->accumulated_recompile_limit);
    compiled->compile_attempts++;
    char *uncompiled_reason = NULL;
    tp_cache_entry *entry = NULL;
    tp_running_frame frame;
    tp_running_enter(&frame, compiled); /* the capture runs the function */
    tp_status status = tp_pipeline_build_entry(compiled, call->args, call->num_args,
                                               call->signature, &entry, &uncompiled_reason);
    tp_running_leave(&frame);
    if (uncompiled_reason) {
        if (compiled->fullgraph) {
            tp_error_set(TP_ERR_UNSUPPORTED, "'%s' cannot be captured (fullgraph): %s",
                         compiled->name, uncompiled_reason);
            free(uncompiled_reason);
            return TP_ERR_UNSUPPORTED;
        }
        tp_log_message(TP_LOG_INFO, "'%s' runs uncompiled: %s", compiled->name, uncompiled_reason);
        compiled->uncompiled_reason = uncompiled_reason;
        *plan = PLAN_EAGER;
        return TP_OK;
    }
    TP_TRY(status);
    call->entry = entry; /* the build's reference */
    call->variant = &entry->variants[0];
    if (store) {
        tp_entry_retain(entry);
        entry->next = compiled->entries;
        compiled->entries = entry;
        compiled->num_entries++;
        call->cached = true;
    }
    return TP_OK;
}

static tp_status run_variant(tp_variant *variant, const tp_arg *args, int num_args,
                             tp_tensor **outputs) {
    tp_tensor *small[16];
    tp_tensor **inputs = small;
    if (num_args > 16 && !(inputs = malloc((size_t)num_args * sizeof *inputs)))
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_call: out of memory");
    int num_inputs = 0;
    for (int i = 0; i < num_args; i++)
        if (args[i].kind == TP_ARG_TENSOR) inputs[num_inputs++] = args[i].tensor;
    pthread_mutex_lock(&variant->run_lock);
    tp_status status = variant->partitioned
                           ? tp_partitioned_run(variant->partitioned, inputs, num_inputs, outputs)
                           : tp_executable_run(variant->executable, inputs, num_inputs, outputs);
    pthread_mutex_unlock(&variant->run_lock);
    if (inputs != small) free(inputs);
    return status;
}

static tp_status check_call(const tp_compiled *compiled, const tp_arg *args, int num_args,
                            const void *outputs) {
    if (!compiled) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_call: compiled is NULL");
    if (!outputs) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_call: outputs is NULL");
    if (num_args < 0 || (num_args > 0 && !args))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "'%s': %d arguments but args is NULL",
                            compiled->name, num_args);
    if (compiled->param_names && num_args != compiled->num_params)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "'%s' takes %d arguments, got %d",
                            compiled->name, compiled->num_params, num_args);
    return TP_OK;
}

/* Finds or builds the entry for this call; on return the call holds one
 * reference of call->entry, or *plan is PLAN_EAGER. With `cached_only`
 * nothing is built: a call without a cache entry leaves *plan PLAN_NOT_RUN. */
static tp_status resolve(tp_compiled *compiled, call_state *call, call_plan *plan,
                         bool cached_only) {
    int num_args = call->num_args;
    uint64_t small_versions[16];
    tp_arg_signature small_signature[8];
    size_t slots = (size_t)(num_args ? num_args : 1);
    uint64_t *versions = num_args <= 16 ? small_versions : malloc(slots * sizeof *versions);
    tp_arg_signature *signature =
        num_args <= 8 ? small_signature : malloc(slots * sizeof *signature);
    tp_status status = (!versions || !signature)
                           ? tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_call: out of memory")
                           : TP_OK;
    for (int i = 0; status == TP_OK && i < num_args; i++)
        versions[i] = call->args[i].kind == TP_ARG_TENSOR && call->args[i].tensor
                          ? tp_tensor_version(call->args[i].tensor)
                          : 0;
    if (status == TP_OK) status = tp_signature_build(compiled, call->args, num_args, signature);
    call->signature = signature;
    if (status == TP_OK) {
        pthread_mutex_lock(&compiled->lock);
        if (compiled->uncompiled_reason) {
            *plan = PLAN_EAGER;
        } else {
            if (!compiled->policy.force_disable_caches) status = find_entry(compiled, call);
            if (status == TP_OK && !call->entry) {
                if (cached_only)
                    *plan = PLAN_NOT_RUN;
                else
                    status = compile_miss(compiled, call, plan);
            }
            if (status == TP_OK && call->entry && call->cached)
                memo_store(compiled, call->args, num_args, versions, call->entry, call->variant);
        }
        pthread_mutex_unlock(&compiled->lock);
    }
    if (versions != small_versions) free(versions);
    if (signature != small_signature) free(signature);
    call->signature = NULL;
    return status;
}

/* The capture ctx when an argument is a traced tensor (the wrapper is called
 * from inside another wrapper's capture), else NULL. */
static tp_ctx *capturing_ctx(const tp_arg *args, int num_args) {
    for (int i = 0; i < num_args; i++) {
        if (args[i].kind != TP_ARG_TENSOR || !args[i].tensor || !args[i].tensor->trace) continue;
        tp_tensor_trace_hook *hook = args[i].tensor->trace;
        return hook->capture_ctx(hook);
    }
    return NULL;
}

/* With `cached_only`, runs only what a cache hit runs (the memo or a stored
 * entry, guards and gates checked as always) and sets *ran; anything else (a
 * miss, an eager run, a nested or recursive call) is left to tp_call. */
static tp_status call_common(tp_compiled *compiled, const tp_arg *args, int num_args,
                             tp_tensor **outputs, bool cached_only, bool *ran) {
    if (tp_running_inside(compiled)) {
        if (cached_only) return TP_OK;
        return tp_error_set(TP_ERR_STATE,
                            "'%s' was called from inside its own function; a compiled wrapper "
                            "cannot call itself (call the C function directly instead)",
                            compiled->name);
    }
    /* Inside another capture: trace this function into the outer graph, so
     * no value of the traced inputs is frozen into a result. */
    tp_ctx *outer = capturing_ctx(args, num_args);
    if (outer) {
        if (cached_only) return TP_OK;
        return tp_compiled_run_on_ctx(compiled, outer, args, num_args, outputs);
    }
    if (compiled->disabled) {
        if (cached_only) return TP_OK;
        return tp_compiled_run_eager(compiled, args, num_args, outputs);
    }
    call_state call = {.args = args, .num_args = num_args};
    call_plan plan = PLAN_RUN;
    pthread_mutex_lock(&compiled->lock);
    if (compiled->uncompiled_reason) {
        plan = PLAN_EAGER;
    } else if (memo_matches(&compiled->memo, args, num_args)) {
        call.entry = compiled->memo.entry;
        call.variant = compiled->memo.variant;
        tp_entry_retain(call.entry);
    }
    pthread_mutex_unlock(&compiled->lock);
    if (plan == PLAN_RUN && !call.entry) TP_TRY(resolve(compiled, &call, &plan, cached_only));
    if (plan == PLAN_NOT_RUN || (plan == PLAN_EAGER && cached_only)) return TP_OK;
    if (plan == PLAN_EAGER) return tp_compiled_run_eager(compiled, args, num_args, outputs);
    tp_status status = run_variant(call.variant, args, num_args, outputs);
    tp_entry_release(call.entry);
    if (ran) *ran = true;
    return status;
}

tp_status tp_call(tp_compiled *compiled, const tp_arg *args, int num_args, tp_tensor **outputs) {
    TP_TRY(check_call(compiled, args, num_args, outputs));
    for (int i = 0; i < compiled->num_outputs; i++) outputs[i] = NULL;
    tp_status status = call_common(compiled, args, num_args, outputs, false, NULL);
    if (status != TP_OK)
        for (int i = 0; i < compiled->num_outputs; i++) {
            tp_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
    return status;
}

tp_status tp_call_if_cached(tp_compiled *compiled, const tp_arg *args, int num_args,
                            tp_tensor **outputs, bool *ran) {
    *ran = false;
    TP_TRY(check_call(compiled, args, num_args, outputs));
    for (int i = 0; i < compiled->num_outputs; i++) outputs[i] = NULL;
    tp_status status = call_common(compiled, args, num_args, outputs, true, ran);
    if (status != TP_OK)
        for (int i = 0; i < compiled->num_outputs; i++) {
            tp_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
    return status;
}

/* Copies `result` into the caller's `target` (same dtype and shape). */
static tp_status copy_into(const tp_compiled *compiled, int index, tp_tensor *target,
                           const tp_tensor *result) {
    if (target->dtype != result->dtype || target->ndim != result->ndim ||
        memcmp(target->shape, result->shape, (size_t)result->ndim * sizeof(int64_t)) != 0) {
        char want[96], got[96];
        return tp_error_set(TP_ERR_SHAPE, "'%s': output %d is %s, but the tensor given is %s",
                            compiled->name, index, tp_tensor_describe(result, want, sizeof want),
                            tp_tensor_describe(target, got, sizeof got));
    }
    /* Inside a capture both may be traced: copying is a raw read and write. */
    tp_tensor_note_raw_access(result, "tp_call_into");
    tp_tensor_note_raw_access(target, "tp_call_into");
    memcpy(target->data, result->data, result->nbytes);
    tp_tensor_bump_version(target);
    return TP_OK;
}

tp_status tp_call_into(tp_compiled *compiled, const tp_arg *args, int num_args,
                       tp_tensor *const *outputs) {
    TP_TRY(check_call(compiled, args, num_args, outputs));
    int count = compiled->num_outputs;
    for (int i = 0; i < count; i++)
        if (!outputs[i])
            return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_call_into: outputs[%d] is NULL", i);
    tp_tensor *small[8];
    tp_tensor **results = count <= 8 ? small : calloc((size_t)count, sizeof *results);
    if (!results) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_call_into: out of memory");
    for (int i = 0; i < count; i++) results[i] = NULL;
    tp_status status = call_common(compiled, args, num_args, results, false, NULL);
    for (int i = 0; status == TP_OK && i < count; i++)
        status = copy_into(compiled, i, outputs[i], results[i]);
    for (int i = 0; i < count; i++) tp_tensor_release(results[i]);
    if (results != small) free(results);
    return status;
}
