/* Guard chains: whether a cache entry serves a call, and, when it does not,
 * which of its guards fail, in words that name the parameter
 * ("x.shape[0] == 4, got 5", "w.dtype == f32, got f64", "gate #1 took the
 * other branch"). An entry's guards are its signature, its exact-shape
 * guards and its gate program with the outcomes its capture saw. */
#include <stdlib.h>
#include <string.h>

#include "../tensor/tensor_internal.h"
#include "compile_internal.h"

static bool shapes_equal(const tp_tensor *tensor, const int64_t *dims) {
    return memcmp(tensor->shape, dims, (size_t)tensor->ndim * sizeof *dims) == 0;
}

tp_status tp_entry_matches(const tp_cache_entry *entry, const tp_arg_signature *signature,
                           const tp_arg *args, int num_args, bool *match) {
    *match = false;
    if (num_args != entry->num_args ||
        memcmp(signature, entry->signature, (size_t)num_args * sizeof *signature) != 0)
        return TP_OK;
    for (int i = 0; i < num_args; i++)
        if (entry->shape_guarded[i] &&
            !shapes_equal(args[i].tensor, &entry->guarded_shapes[i * TP_MAX_DIMS]))
            return TP_OK;
    if (!entry->gates) {
        *match = true;
        return TP_OK;
    }
    int64_t small[16];
    int64_t *outcomes = entry->gates->num_gates <= 16
                            ? small
                            : malloc((size_t)entry->gates->num_gates * sizeof *outcomes);
    if (!outcomes) return TP_ERR_OUT_OF_MEMORY;
    tp_status status = tp_gate_program_evaluate(entry->gates, args, num_args, outcomes);
    if (status == TP_OK)
        *match = memcmp(outcomes, entry->gates->outcomes,
                        (size_t)entry->gates->num_gates * sizeof *outcomes) == 0;
    if (outcomes != small) free(outcomes);
    return status;
}

/* The kind with its article ("an int"). */
static const char *kind_name(int kind) {
    switch (kind) {
    case TP_ARG_TENSOR:
        return "a tensor";
    case TP_ARG_INT:
        return "an int";
    case TP_ARG_FLOAT:
        return "a float";
    case TP_ARG_BOOL:
        return "a bool";
    default:
        return "an unknown kind";
    }
}

/* Parameter and axis a dynamic dimension code points at. */
static void code_position(int64_t code, int *param, int *axis) {
    int64_t flat = code - TP_DIM_CODE_FIRST;
    *param = (int)(flat / TP_MAX_DIMS);
    *axis = (int)(flat % TP_MAX_DIMS);
}

static void explain_dynamic_dim(const tp_compiled *compiled, const tp_arg *args, int param,
                                int axis, int64_t stored, int64_t now, tp_reason_list *reasons) {
    char name[32], other_name[32];
    const char *param_name = tp_compiled_param_name(compiled, param, name, sizeof name);
    int64_t size = args[param].tensor->shape[axis];
    if (stored < TP_DIM_CODE_FIRST) {
        tp_reasons_add(reasons, "%s.shape[%d] == %lld, got %lld", param_name, axis,
                       (long long)stored, (long long)size);
        return;
    }
    if (now < TP_DIM_CODE_FIRST) {
        tp_reasons_add(reasons, "%s.shape[%d] >= 2, got %lld", param_name, axis, (long long)size);
        return;
    }
    int own = (int)(TP_DIM_CODE_FIRST + param * TP_MAX_DIMS + axis);
    int other_param, other_axis;
    if (stored != own) code_position(stored, &other_param, &other_axis);
    /* The stored code says "equal to that dimension and to none before it";
     * when the equality still holds, what broke is the second half: the
     * dimension now first equals an earlier one (`now`), reported below. */
    bool other_exists = stored != own && args[other_param].kind == TP_ARG_TENSOR &&
                        args[other_param].tensor && other_axis < args[other_param].tensor->ndim;
    if (stored != own && !other_exists) {
        tp_reasons_add(reasons, "%s.shape[%d] == %s.shape[%d], which is gone", param_name, axis,
                       tp_compiled_param_name(compiled, other_param, other_name, sizeof other_name),
                       other_axis);
        return;
    }
    bool equality_holds = other_exists && args[other_param].tensor->shape[other_axis] == size;
    if (stored != own && !equality_holds) { /* was equal to an earlier dimension, now is not */
        tp_reasons_add(reasons, "%s.shape[%d] == %s.shape[%d], got %lld and %lld", param_name, axis,
                       tp_compiled_param_name(compiled, other_param, other_name, sizeof other_name),
                       other_axis, (long long)size,
                       (long long)args[other_param].tensor->shape[other_axis]);
    } else { /* was distinct, now equals an earlier dimension */
        code_position(now, &other_param, &other_axis);
        tp_reasons_add(reasons, "%s.shape[%d] != %s.shape[%d], got %lld for both", param_name, axis,
                       tp_compiled_param_name(compiled, other_param, other_name, sizeof other_name),
                       other_axis, (long long)size);
    }
}

static void explain_tensor(const tp_compiled *compiled, const tp_cache_entry *entry,
                           const tp_arg_signature *stored, const tp_arg_signature *now,
                           const tp_arg *args, int param, tp_reason_list *reasons) {
    char name[32];
    const char *param_name = tp_compiled_param_name(compiled, param, name, sizeof name);
    const tp_tensor *tensor = args[param].tensor;
    if (stored->dtype != now->dtype)
        tp_reasons_add(reasons, "%s.dtype == %s, got %s", param_name,
                       tp_dtype_name((tp_dtype)stored->dtype), tp_dtype_name(tensor->dtype));
    if (stored->device != now->device)
        tp_reasons_add(reasons, "%s.device == %s, got %s", param_name,
                       stored->device ? "device" : "cpu", tp_tensor_device(tensor));
    if (stored->ndim != now->ndim) {
        tp_reasons_add(reasons, "%s.ndim == %d, got %d", param_name, stored->ndim, now->ndim);
        return;
    }
    for (int axis = 0; axis < stored->ndim; axis++) {
        if (stored->dims[axis] == now->dims[axis]) continue;
        if (compiled->dynamic)
            explain_dynamic_dim(compiled, args, param, axis, stored->dims[axis], now->dims[axis],
                                reasons);
        else
            tp_reasons_add(reasons, "%s.shape[%d] == %lld, got %lld", param_name, axis,
                           (long long)stored->dims[axis], (long long)tensor->shape[axis]);
    }
    if (!compiled->dynamic || !entry->shape_guarded[param]) return;
    const int64_t *dims = &entry->guarded_shapes[param * TP_MAX_DIMS];
    for (int axis = 0; axis < stored->ndim; axis++)
        if (dims[axis] != tensor->shape[axis])
            tp_reasons_add(reasons, "%s.shape[%d] == %lld, got %lld (its shape was read)",
                           param_name, axis, (long long)dims[axis], (long long)tensor->shape[axis]);
}

static void explain_scalar(const tp_compiled *compiled, const tp_arg_signature *stored,
                           const tp_arg *arg, int param, tp_reason_list *reasons) {
    char name[32];
    const char *param_name = tp_compiled_param_name(compiled, param, name, sizeof name);
    double before;
    switch (arg->kind) {
    case TP_ARG_INT:
        if (stored->scalar_bits != arg->i)
            tp_reasons_add(reasons, "%s == %lld, got %lld", param_name,
                           (long long)stored->scalar_bits, (long long)arg->i);
        break;
    case TP_ARG_FLOAT:
        memcpy(&before, &stored->scalar_bits, sizeof before);
        if (memcmp(&before, &arg->f, sizeof before) != 0)
            tp_reasons_add(reasons, "%s == %.17g, got %.17g", param_name, before, arg->f);
        break;
    case TP_ARG_BOOL:
        if ((stored->scalar_bits != 0) != arg->b)
            tp_reasons_add(reasons, "%s == %s, got %s", param_name,
                           stored->scalar_bits ? "true" : "false", arg->b ? "true" : "false");
        break;
    default:
        break;
    }
}

static void explain_gates(const tp_gate_program *gates, const tp_arg *args, int num_args,
                          tp_reason_list *reasons) {
    int64_t *outcomes = malloc((size_t)gates->num_gates * sizeof *outcomes);
    if (!outcomes || tp_gate_program_evaluate(gates, args, num_args, outcomes) != TP_OK) {
        tp_reasons_add(reasons, "gates could not be re-evaluated: %s", tp_last_error());
        free(outcomes);
        return;
    }
    for (int i = 0; i < gates->num_gates; i++) {
        int64_t before = gates->outcomes[i], now = outcomes[i];
        if (before == now) continue;
        double before_value, now_value;
        switch (gates->kinds[i]) {
        case TP_ITEM_BOOL:
            tp_reasons_add(reasons, "gate #%d took the other branch", i + 1);
            break;
        case TP_ITEM_I64:
            tp_reasons_add(reasons, "gate #%d (tp_item_i64) == %lld, got %lld", i + 1,
                           (long long)before, (long long)now);
            break;
        case TP_ITEM_F64:
            memcpy(&before_value, &before, sizeof before_value);
            memcpy(&now_value, &now, sizeof now_value);
            tp_reasons_add(reasons, "gate #%d (tp_item_f64) == %.17g, got %.17g", i + 1,
                           before_value, now_value);
            break;
        }
    }
    free(outcomes);
}

void tp_entry_explain(const tp_compiled *compiled, const tp_cache_entry *entry,
                      const tp_arg_signature *signature, const tp_arg *args, int num_args,
                      tp_reason_list *reasons) {
    if (num_args != entry->num_args) {
        tp_reasons_add(reasons, "number of arguments == %d, got %d", entry->num_args, num_args);
        return;
    }
    int before = reasons->count;
    char name[32];
    for (int i = 0; i < num_args; i++) {
        const tp_arg_signature *stored = &entry->signature[i];
        if (stored->kind != signature[i].kind) {
            tp_reasons_add(reasons, "%s is %s, got %s",
                           tp_compiled_param_name(compiled, i, name, sizeof name),
                           kind_name(stored->kind), kind_name(signature[i].kind));
            continue;
        }
        if (stored->kind == TP_ARG_TENSOR)
            explain_tensor(compiled, entry, stored, &signature[i], args, i, reasons);
        else
            explain_scalar(compiled, stored, &args[i], i, reasons);
    }
    /* Gates are only meaningful on inputs every other guard accepts. */
    if (reasons->count == before && entry->gates)
        explain_gates(entry->gates, args, num_args, reasons);
}
