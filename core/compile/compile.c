/* tp_compile: option checks (in the reference's order), the wrapper's
 * lifetime, the list of live wrappers for tp_compile_reset_all, the eager
 * path (disable, uncompiled fallback) and the wrapper's read-only queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/log.h"
#include "../tensor/tensor_internal.h"
#include "compile_internal.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_compiled *live_wrappers;

static bool is_identifier(const char *name) {
    if (!name || !*name ||
        !((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_'))
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return false;
    return strlen(name) < 120;
}

/* Copies the caller's options over the defaults, honouring struct_size. */
static tp_status read_options(const tp_compile_options *given, tp_compile_options *out) {
    tp_compile_options defaults = TP_COMPILE_OPTIONS_INIT;
    *out = defaults;
    if (!given) return TP_OK;
    if (given->struct_size < sizeof(size_t) || given->struct_size > sizeof *out + 4096)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: options.struct_size is %zu; initialise the options "
                            "with TP_COMPILE_OPTIONS_INIT",
                            given->struct_size);
    size_t size = given->struct_size < sizeof *out ? given->struct_size : sizeof *out;
    memcpy(out, given, size);
    out->struct_size = sizeof *out;
    return TP_OK;
}

static tp_status check_params(const tp_compile_options *options) {
    if (options->num_params < 0 || (options->num_params > 0 && !options->param_names))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: %d parameter names but param_names is %s",
                            options->num_params, options->param_names ? "set" : "NULL");
    for (int i = 0; i < options->num_params; i++) {
        const char *name = options->param_names[i];
        if (!is_identifier(name))
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "tp_compile: parameter name %d ('%s') is not an identifier "
                                "([A-Za-z_][A-Za-z0-9_]*)",
                                i, name ? name : "(null)");
        for (int j = 0; j < i; j++)
            if (strcmp(options->param_names[j], name) == 0)
                return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                    "tp_compile: parameter name '%s' is given twice (%d and %d)",
                                    name, j, i);
    }
    return TP_OK;
}

static tp_status check_backend_options(const tp_compile_options *options) {
    if (options->num_options < 0 || (options->num_options > 0 && !options->options))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: num_options is %d but options is %s", options->num_options,
                            options->options ? "set" : "NULL");
    for (int i = 0; i < options->num_options; i++) {
        const char *option = options->options[i];
        if (!option || !strchr(option, '=') || option[0] == '=')
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "tp_compile: option %d ('%s') is not of the form key=value", i,
                                option ? option : "(null)");
    }
    return TP_OK;
}

static bool resolve_dynamic(tp_dynamic dynamic, const tp_compile_policy *policy) {
    if (dynamic == TP_DYNAMIC_DYNAMIC) return true;
    if (dynamic == TP_DYNAMIC_STATIC) return false;
    if (policy->dynamic_shapes >= 0) return policy->dynamic_shapes == 1;
    return !policy->assume_static_by_default;
}

static char *dup_or_null(const char *text) {
    return text ? strdup(text) : NULL;
}

static tp_status copy_strings(tp_compiled *compiled, const tp_compile_options *options) {
    compiled->name = strdup(options->name && *options->name ? options->name : "fn");
    bool ok = compiled->name != NULL;
    if (options->num_params > 0) {
        compiled->param_names = calloc((size_t)options->num_params, sizeof(char *));
        ok = ok && compiled->param_names;
        for (int i = 0; ok && i < options->num_params; i++)
            ok = (compiled->param_names[i] = strdup(options->param_names[i])) != NULL;
        compiled->num_params = options->num_params;
    }
    bool has_mode = options->mode && strcmp(options->mode, "default") != 0;
    int count = options->num_options + (has_mode ? 1 : 0);
    if (ok && count > 0) {
        compiled->backend_options = calloc((size_t)count, sizeof(char *));
        ok = compiled->backend_options != NULL;
        if (ok && has_mode) {
            size_t length = strlen(options->mode) + 6;
            compiled->backend_options[0] = malloc(length);
            ok = compiled->backend_options[0] != NULL;
            if (ok) snprintf(compiled->backend_options[0], length, "mode=%s", options->mode);
        }
        for (int i = 0; ok && i < options->num_options; i++)
            ok = (compiled->backend_options[i + has_mode] = dup_or_null(options->options[i])) !=
                 NULL;
        compiled->num_backend_options = count;
    }
    if (ok && options->fallback_backend)
        ok = (compiled->fallback_backend = strdup(options->fallback_backend)) != NULL;
    return ok ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_compile: out of memory");
}

static void free_strings(tp_compiled *compiled) {
    free(compiled->name);
    for (int i = 0; compiled->param_names && i < compiled->num_params; i++)
        free(compiled->param_names[i]);
    free(compiled->param_names);
    for (int i = 0; compiled->backend_options && i < compiled->num_backend_options; i++)
        free(compiled->backend_options[i]);
    free(compiled->backend_options);
    free(compiled->fallback_backend);
    free(compiled->last_partition);
}

tp_status tp_compile(tp_fn fn, const tp_compile_options *given, tp_compiled **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_compile: out is NULL");
    *out = NULL;
    tp_compile_options options;
    TP_TRY(read_options(given, &options));
    tp_compile_policy policy;
    TP_TRY(tp_config_snapshot(&policy));
    if (options.mode && options.num_options > 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "Either mode or options can be specified, but not both");
    TP_TRY(check_backend_options(&options));
    if (!fn)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: expected a function (tp_fn), got NULL");
    if (!options.disable && options.recompile_limit < 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: recompile_limit must be positive, got %d (0 uses the "
                            "config's recompile_limit)",
                            options.recompile_limit);
    if (options.num_outputs < 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: num_outputs must be >= 1 (0 means 1), got %d",
                            options.num_outputs);
    TP_TRY(check_params(&options));
    if (options.name && *options.name && !is_identifier(options.name))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compile: name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                            options.name);
    tp_backend *backend = NULL;
    if (!options.disable) TP_TRY(tp_backend_lookup(options.backend, &backend));

    tp_compiled *compiled = calloc(1, sizeof *compiled);
    if (!compiled) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_compile: out of memory");
    compiled->fn = fn;
    compiled->user_data = options.user_data;
    compiled->num_outputs = options.num_outputs ? options.num_outputs : 1;
    compiled->fullgraph = options.fullgraph;
    compiled->dynamic = resolve_dynamic(options.dynamic, &policy);
    compiled->disabled = options.disable;
    compiled->backend = backend;
    compiled->policy = policy;
    if (options.recompile_limit > 0) compiled->policy.recompile_limit = options.recompile_limit;
    tp_status status = copy_strings(compiled, &options);
    if (status != TP_OK) {
        free_strings(compiled);
        free(compiled);
        return status;
    }
    pthread_mutex_init(&compiled->lock, NULL);
    pthread_mutex_lock(&live_lock);
    compiled->live_next = live_wrappers;
    if (live_wrappers) live_wrappers->live_prev = compiled;
    live_wrappers = compiled;
    pthread_mutex_unlock(&live_lock);
    *out = compiled;
    return TP_OK;
}

static void memo_clear(tp_call_memo *memo) {
    for (int i = 0; i < memo->num_args; i++)
        if (memo->args[i].kind == TP_ARG_TENSOR) tp_tensor_release(memo->args[i].tensor);
    free(memo->args);
    free(memo->versions);
    tp_entry_release(memo->entry);
    *memo = (tp_call_memo){0};
}

/* Called with compiled->lock held. */
static void clear_cache(tp_compiled *compiled) {
    memo_clear(&compiled->memo);
    tp_cache_entry *entry = compiled->entries;
    while (entry) {
        tp_cache_entry *next = entry->next;
        tp_entry_release(entry);
        entry = next;
    }
    compiled->entries = NULL;
    compiled->num_entries = 0;
    tp_reasons_clear(&compiled->last_reasons);
}

void tp_compiled_free(tp_compiled *compiled) {
    if (!compiled) return;
    pthread_mutex_lock(&live_lock);
    if (compiled->live_prev)
        compiled->live_prev->live_next = compiled->live_next;
    else
        live_wrappers = compiled->live_next;
    if (compiled->live_next) compiled->live_next->live_prev = compiled->live_prev;
    pthread_mutex_unlock(&live_lock);
    pthread_mutex_lock(&compiled->lock);
    clear_cache(compiled);
    pthread_mutex_unlock(&compiled->lock);
    pthread_mutex_destroy(&compiled->lock);
    free(compiled->uncompiled_reason);
    free_strings(compiled);
    if (compiled->user_data_free) compiled->user_data_free(compiled->user_data);
    free(compiled);
}

void tp_compile_reset_all(void) {
    pthread_mutex_lock(&live_lock);
    for (tp_compiled *compiled = live_wrappers; compiled; compiled = compiled->live_next) {
        pthread_mutex_lock(&compiled->lock);
        clear_cache(compiled);
        pthread_mutex_unlock(&compiled->lock);
    }
    pthread_mutex_unlock(&live_lock);
    tp_backend_reset_all();
}

int tp_compiled_num_entries(const tp_compiled *compiled) {
    if (!compiled) return 0;
    tp_compiled *mutable_compiled = (tp_compiled *)compiled;
    pthread_mutex_lock(&mutable_compiled->lock);
    int count = compiled->num_entries;
    pthread_mutex_unlock(&mutable_compiled->lock);
    return count;
}

int tp_compiled_num_compiles(const tp_compiled *compiled) {
    if (!compiled) return 0;
    tp_compiled *mutable_compiled = (tp_compiled *)compiled;
    pthread_mutex_lock(&mutable_compiled->lock);
    int count = compiled->compile_attempts;
    pthread_mutex_unlock(&mutable_compiled->lock);
    return count;
}

tp_status tp_compiled_last_recompile_reasons(const tp_compiled *compiled, char ***reasons_out,
                                             int *count_out) {
    if (!compiled || !reasons_out || !count_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_compiled_last_recompile_reasons: NULL argument");
    tp_compiled *mutable_compiled = (tp_compiled *)compiled;
    pthread_mutex_lock(&mutable_compiled->lock);
    tp_status status = tp_reasons_copy_out(&compiled->last_reasons, reasons_out, count_out);
    pthread_mutex_unlock(&mutable_compiled->lock);
    return status;
}

tp_status tp_compiled_last_partition(const tp_compiled *compiled,
                                     tp_partition_region_info **regions_out, int *count_out) {
    if (!compiled || !regions_out || !count_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_compiled_last_partition: NULL argument");
    *regions_out = NULL;
    *count_out = 0;
    tp_compiled *mutable_compiled = (tp_compiled *)compiled;
    pthread_mutex_lock(&mutable_compiled->lock);
    int count = compiled->last_partition_count;
    tp_partition_region_info *copy = count ? malloc((size_t)count * sizeof *copy) : NULL;
    if (copy) memcpy(copy, compiled->last_partition, (size_t)count * sizeof *copy);
    pthread_mutex_unlock(&mutable_compiled->lock);
    if (count && !copy)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_compiled_last_partition: out of memory");
    *regions_out = copy;
    *count_out = count;
    return TP_OK;
}

const char *tp_compiled_uncompiled_reason(const tp_compiled *compiled) {
    if (!compiled) return NULL;
    tp_compiled *mutable_compiled = (tp_compiled *)compiled;
    pthread_mutex_lock(&mutable_compiled->lock);
    const char *reason = compiled->uncompiled_reason;
    pthread_mutex_unlock(&mutable_compiled->lock);
    return reason; /* set once, never freed before the wrapper */
}

tp_status tp_compiled_run_on_ctx(tp_compiled *compiled, tp_ctx *ctx, const tp_arg *args,
                                 int num_args, tp_tensor **outputs) {
    tp_tensor *small[8] = {0};
    tp_tensor **results =
        compiled->num_outputs <= 8 ? small : calloc((size_t)compiled->num_outputs, sizeof *results);
    if (!results) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    tp_running_frame frame;
    tp_running_enter(&frame, compiled);
    compiled->fn(ctx, args, num_args, results, compiled->num_outputs, compiled->user_data);
    tp_running_leave(&frame);
    tp_status status = tp_ctx_status(ctx);
    if (status != TP_OK) tp_error_set(status, "'%s' failed: %s", compiled->name, tp_ctx_error(ctx));
    for (int i = 0; status == TP_OK && i < compiled->num_outputs; i++)
        if (!results[i])
            status = tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                  "'%s' did not set output %d of %d (store a tensor in "
                                  "outputs[%d])",
                                  compiled->name, i, compiled->num_outputs, i);
    for (int i = 0; status == TP_OK && i < compiled->num_outputs; i++)
        outputs[i] = tp_tensor_retain(results[i]);
    if (results != small) free(results);
    return status;
}

tp_status tp_compiled_run_eager(tp_compiled *compiled, const tp_arg *args, int num_args,
                                tp_tensor **outputs) {
    tp_ctx *ctx = tp_ctx_create();
    if (!ctx) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "'%s': out of memory", compiled->name);
    tp_status status = tp_compiled_run_on_ctx(compiled, ctx, args, num_args, outputs);
    tp_ctx_destroy(ctx);
    return status;
}
