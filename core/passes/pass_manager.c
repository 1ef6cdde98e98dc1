/* The pass manager: the pipeline's order, pass names, options, the per-pass
 * callback (what `tpc print --passes` shows) and the hand-over of the final
 * graph. Owns no rewrite itself.
 *
 * Each pass is functional (graph in, new graph out, a changed flag), so the
 * manager keeps only the current graph and destroys the previous one after
 * each step; the caller's graph is never touched.
 */
#include "pass_internal.h"

#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/profile.h"

#define TP_CONSTFOLD_DEFAULT_MAX_ELEMENTS 65536

static const char *const pass_names[TP_PASS_COUNT] = {
    [TP_PASS_NORMALIZE] = "normalize",
    [TP_PASS_CONSTFOLD] = "constfold",
    [TP_PASS_DECOMPOSE] = "decompose",
    [TP_PASS_CSE] = "cse",
    [TP_PASS_DCE] = "dce",
    [TP_PASS_SHAPEPROP] = "shapeprop",
};

const char *tp_pass_name(tp_pass_id pass) {
    return (unsigned)pass < TP_PASS_COUNT ? pass_names[pass] : "?";
}

tp_status tp_pass_from_name(const char *name, tp_pass_id *out) {
    for (int i = 0; name && i < TP_PASS_COUNT; i++) {
        if (strcmp(pass_names[i], name) == 0) {
            *out = (tp_pass_id)i;
            return TP_OK;
        }
    }
    return tp_error_set(TP_ERR_NOT_FOUND,
                        "unknown pass '%s' (passes: normalize, constfold, decompose, cse, dce, "
                        "shapeprop)",
                        name ? name : "(null)");
}

/* The options a caller passed, read only as far as its struct_size covers. */
static tp_status read_options(const tp_pass_options *given, tp_pass_options *options) {
    *options = (tp_pass_options)TP_PASS_OPTIONS_INIT;
    if (!given) return TP_OK;
    if (given->struct_size < offsetof(tp_pass_options, skip) + sizeof given->skip ||
        given->struct_size > sizeof *options)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT,
                            "tp_pass_options: struct_size %zu is not one this library knows "
                            "(expected %zu; initialise with TP_PASS_OPTIONS_INIT)",
                            given->struct_size, sizeof *options);
    memcpy(options, given, given->struct_size);
    options->struct_size = sizeof *options;
    return TP_OK;
}

static tp_pass_context make_context(const tp_pass_options *options) {
    tp_pass_context context = {.constfold_max_elements = options->constfold_max_elements,
                               .keep_composites = options->keep_composites,
                               .keep_user = options->keep_user};
    if (context.constfold_max_elements <= 0)
        context.constfold_max_elements = TP_CONSTFOLD_DEFAULT_MAX_ELEMENTS;
    return context;
}

static const tp_pass_fn pass_functions[TP_PASS_COUNT] = {
    [TP_PASS_NORMALIZE] = tp_pass_normalize,
    [TP_PASS_CONSTFOLD] = tp_pass_constfold,
    [TP_PASS_DECOMPOSE] = tp_pass_decompose,
    [TP_PASS_CSE] = tp_pass_cse,
    [TP_PASS_DCE] = tp_pass_dce,
    [TP_PASS_SHAPEPROP] = tp_pass_shapeprop,
};

/* Runs one pass and, if asked, verifies its result. */
static tp_status run_pass(tp_pass_id pass, const tp_graph *in, const tp_pass_options *options,
                          const tp_pass_context *context, tp_graph **out, bool *changed) {
    *out = NULL;
    *changed = false;
    TP_TRY(pass_functions[pass](in, context, out, changed));
    if (options->verify_each_pass) {
        tp_status status = tp_graph_verify(*out);
        if (status != TP_OK) {
            tp_graph_destroy(*out);
            *out = NULL;
            return tp_error_prefix(
                status, "after pass %s (a TensorPlay bug: please report it): ", tp_pass_name(pass));
        }
    }
    tp_log_message(TP_LOG_DEBUG, "pass %s: %s (%d values)", tp_pass_name(pass),
                   *changed ? "changed" : "unchanged", tp_graph_num_values(*out));
    return TP_OK;
}

tp_status tp_pass_run(tp_pass_id pass, const tp_graph *in, const tp_pass_options *options,
                      tp_graph **out, bool *changed_out) {
    if (out) *out = NULL;
    if (!in || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_pass_run: graph or out is NULL");
    if ((unsigned)pass >= TP_PASS_COUNT)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_pass_run: pass id %d is out of range",
                            (int)pass);
    tp_pass_options resolved;
    TP_TRY(read_options(options, &resolved));
    tp_pass_context context = make_context(&resolved);
    bool changed = false;
    TP_TRY(run_pass(pass, in, &resolved, &context, out, &changed));
    if (changed_out) *changed_out = changed;
    return TP_OK;
}

tp_status tp_pass_pipeline_run(const tp_graph *in, const tp_pass_options *options, tp_graph **out) {
    if (out) *out = NULL;
    if (!in || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_pass_pipeline_run: graph or out is NULL");
    tp_pass_options resolved;
    TP_TRY(read_options(options, &resolved));
    tp_pass_context context = make_context(&resolved);

    /* `current` is the latest graph; `owned` is it when the pipeline made
     * it (NULL while it is still the caller's `in`). */
    const tp_graph *current = in;
    tp_graph *owned = NULL;
    tp_status status = TP_OK;
    for (int pass = 0; pass < TP_PASS_COUNT && status == TP_OK; pass++) {
        if (resolved.skip & TP_PASS_BIT(pass)) continue;
        bool changed = false;
        tp_graph *next = NULL;
        uint64_t start = tp_profile_start();
        status = run_pass((tp_pass_id)pass, current, &resolved, &context, &next, &changed);
        tp_profile_end(start, "pass", tp_pass_name((tp_pass_id)pass), -1);
        if (status != TP_OK) break;
        tp_graph_destroy(owned);
        current = owned = next;
        if (resolved.after_pass)
            resolved.after_pass(tp_pass_name((tp_pass_id)pass), current, changed, resolved.user);
    }
    if (status == TP_OK && !owned) status = tp_graph_clone(in, &owned);
    if (status != TP_OK) {
        tp_graph_destroy(owned);
        return status;
    }
    *out = owned;
    return TP_OK;
}
