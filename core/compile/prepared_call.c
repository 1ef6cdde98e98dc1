/* Prepared calls (compile.h): argument slots reused across cache hits, so a
 * language binding makes one foreign call per hit. Owns the slot tensors and
 * the re-pointing of them at the caller's memory; the hit itself is
 * tp_call_if_cached (call.c), which keeps every guard, gate and memo rule of
 * tp_call. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../tensor/shape_text.h"
#include "../tensor/tensor_internal.h"
#include "compile_internal.h"

_Static_assert(sizeof(tp_prepared_arg) == 88, "tp_prepared_arg is 88 bytes without padding");

struct tp_prepared_call {
    tp_compiled *compiled;
    int num_args;
    tp_arg *args;         /* what the hit receives: the caller's handles or our slots */
    tp_tensor **slots;    /* one per argument, made when an array first comes in it */
    pthread_mutex_t lock; /* one run at a time; a second thread is sent to tp_call */
};

tp_status tp_prepared_call_create(tp_compiled *compiled, int num_args, tp_prepared_call **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_prepared_call_create: out is NULL");
    *out = NULL;
    if (!compiled)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_prepared_call_create: compiled is NULL");
    if (num_args < 0 || (compiled->param_names && num_args != compiled->num_params))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "'%s' takes %d arguments, not %d",
                            compiled->name, compiled->num_params, num_args);
    tp_prepared_call *call = calloc(1, sizeof *call);
    size_t slots = (size_t)(num_args ? num_args : 1);
    if (call) {
        call->args = calloc(slots, sizeof *call->args);
        call->slots = calloc(slots, sizeof *call->slots);
    }
    if (!call || !call->args || !call->slots) {
        tp_prepared_call_free(call);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_prepared_call_create: out of memory");
    }
    call->compiled = compiled;
    call->num_args = num_args;
    pthread_mutex_init(&call->lock, NULL);
    *out = call;
    return TP_OK;
}

void tp_prepared_call_free(tp_prepared_call *call) {
    if (!call) return;
    if (call->slots) {
        for (int i = 0; i < call->num_args; i++) tp_tensor_release(call->slots[i]);
        pthread_mutex_destroy(&call->lock);
    }
    free(call->slots);
    free(call->args);
    free(call);
}

/* A slot with no memory behind it: what the memo may keep after a run. */
static void empty_slot(tp_tensor *slot) {
    slot->ndim = 0;
    slot->numel = 0;
    slot->nbytes = 0;
    slot->data = NULL;
}

static tp_status new_slot(tp_tensor **out) {
    static int64_t no_memory; /* a valid, aligned address for the 0-d placeholder */
    TP_TRY(tp_tensor_wrap(TP_F32, 0, NULL, &no_memory, NULL, NULL, out));
    empty_slot(*out);
    return TP_OK;
}

/* Points slot `index` at the caller's memory: a new write (version + 1). */
static tp_status point_slot(tp_prepared_call *call, int index, const tp_prepared_arg *record) {
    char name[64];
    const tp_compiled *compiled = call->compiled;
    tp_dtype dtype = (tp_dtype)record->dtype;
    if (record->dtype < TP_F32 || record->dtype > TP_BOOL)
        return tp_error_set(
            TP_ERR_DTYPE, "'%s' argument '%s': dtype code %d is not a tp_dtype", compiled->name,
            tp_compiled_param_name(compiled, index, name, sizeof name), (int)record->dtype);
    int64_t numel;
    size_t nbytes;
    tp_status status = tp_shape_check(dtype, record->ndim, record->shape, &numel, &nbytes);
    if (status != TP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", tp_last_error());
        return tp_error_set(status, "'%s' argument '%s': %s", compiled->name,
                            tp_compiled_param_name(compiled, index, name, sizeof name), why);
    }
    void *data = record->value.data;
    if ((nbytes > 0 && !data) || (uintptr_t)data % tp_dtype_size(dtype) != 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "'%s' argument '%s': data %p is NULL or not aligned to the %s "
                            "element size",
                            compiled->name,
                            tp_compiled_param_name(compiled, index, name, sizeof name), data,
                            tp_dtype_name(dtype));
    if (!call->slots[index]) TP_TRY(new_slot(&call->slots[index]));
    tp_tensor *slot = call->slots[index];
    slot->dtype = dtype;
    slot->ndim = record->ndim;
    memcpy(slot->shape, record->shape, (size_t)record->ndim * sizeof *record->shape);
    slot->numel = numel;
    slot->nbytes = nbytes;
    slot->data = data;
    tp_tensor_bump_version(slot);
    call->args[index] = tp_arg_tensor(slot);
    return TP_OK;
}

static tp_status read_records(tp_prepared_call *call, const tp_prepared_arg *args) {
    for (int i = 0; i < call->num_args; i++) {
        const tp_prepared_arg *record = &args[i];
        tp_arg *arg = &call->args[i];
        switch (record->kind) {
        case TP_PREPARED_ARRAY:
            TP_TRY(point_slot(call, i, record));
            break;
        case TP_ARG_TENSOR:
            *arg = tp_arg_tensor(record->value.tensor);
            break;
        case TP_ARG_INT:
            *arg = tp_arg_int(record->value.i);
            break;
        case TP_ARG_FLOAT:
            *arg = tp_arg_float(record->value.f);
            break;
        case TP_ARG_BOOL:
            *arg = tp_arg_bool(record->value.i != 0);
            break;
        default: {
            char name[64];
            return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                                "'%s' argument '%s': record kind %d is not a tp_arg_kind or "
                                "TP_PREPARED_ARRAY",
                                call->compiled->name,
                                tp_compiled_param_name(call->compiled, i, name, sizeof name),
                                (int)record->kind);
        }
        }
    }
    return TP_OK;
}

/* An output that is one of our slots (the function returned an argument)
 * would carry the caller's memory past the run: hand out a copy instead. */
static tp_status detach_outputs(tp_prepared_call *call, tp_tensor **outputs) {
    for (int o = 0; o < call->compiled->num_outputs; o++)
        for (int i = 0; i < call->num_args; i++) {
            if (!outputs[o] || outputs[o] != call->slots[i]) continue;
            tp_tensor *copy = NULL;
            TP_TRY(tp_tensor_clone(outputs[o], &copy));
            tp_tensor_release(outputs[o]);
            outputs[o] = copy;
        }
    return TP_OK;
}

tp_status tp_prepared_call_run(tp_prepared_call *call, const tp_prepared_arg *args,
                               tp_tensor **outputs) {
    if (!call) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_prepared_call_run: call is NULL");
    if (!outputs)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_prepared_call_run: outputs is NULL");
    for (int o = 0; o < call->compiled->num_outputs; o++) outputs[o] = NULL;
    if (call->num_args > 0 && !args)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_prepared_call_run: args is NULL");
    if (pthread_mutex_trylock(&call->lock) != 0) return TP_OK; /* busy: tp_call it */
    tp_status status = read_records(call, args);
    bool ran = false;
    if (status == TP_OK)
        status = tp_call_if_cached(call->compiled, call->args, call->num_args, outputs, &ran);
    if (status == TP_OK && ran) status = detach_outputs(call, outputs);
    if (status != TP_OK || !ran)
        for (int o = 0; o < call->compiled->num_outputs; o++) {
            tp_tensor_release(outputs[o]);
            outputs[o] = NULL;
        }
    for (int i = 0; i < call->num_args; i++)
        if (call->slots[i]) empty_slot(call->slots[i]);
    pthread_mutex_unlock(&call->lock);
    return status;
}
