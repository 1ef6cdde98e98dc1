/* One conformance case, run in the child process: retype the graph for the
 * case's dtype, make its inputs, run it on `eager` (the oracle, whole graph)
 * and on the backend, then classify.
 *
 * A backend that claims nodes (contract revision 2: `supports`) runs the
 * case through the partitioner, as a user's tp_compile would: tp_compile_graph
 * with the backend and the default fallback_backend, so the nodes it does
 * not claim run elsewhere and a partial backend must pass end to end. A
 * revision-1 backend has no claims: it compiles the whole graph and may
 * refuse it (the last release's classification, kept so its figures stay).
 *
 * A refusal (TP_ERR_UNSUPPORTED: the core's status for a backend's
 * "unsupported" result) that names an op of the graph is UNSUPPORTED; any
 * other error, a wrong type or a value outside the dtype's tolerance is FAIL;
 * a case that `eager` itself cannot run is BROKEN (a corpus problem). Cases
 * with `@expect error TEXT` pass when the backend's compile fails with TEXT
 * in the reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "tensorplay/compile.h"

const char *conformance_status_name(conformance_status status) {
    static const char *const names[] = {"pass", "FAIL", "unsupported", "BROKEN", "not run"};
    return status < CONFORMANCE_STATUS_COUNT ? names[status] : "?";
}

void conformance_tolerance(tp_dtype dtype, double *atol, double *rtol) {
    switch (dtype) {
    case TP_F32:
        *atol = 1e-5;
        *rtol = 1e-4;
        break;
    case TP_F64:
        *atol = 1e-12;
        *rtol = 1e-10;
        break;
    /* f16/bf16: each op's f32 result rounded once, but a backend that runs a
     * composite as its decomposition rounds every intermediate to the dtype
     * too (layer_norm's mean, variance, ...): up to about 16 units of the
     * last place (2^-11 for f16, 2^-8 for bf16) */
    case TP_F16:
        *atol = 4e-3;
        *rtol = 8e-3;
        break;
    case TP_BF16:
        *atol = 3.2e-2;
        *rtol = 3.2e-2;
        break;
    default: /* integers and bool: exact */
        *atol = 0;
        *rtol = 0;
        break;
    }
}

/* An op of `graph` named in `reason` (as 'op' or as a word), or NULL. */
static const char *named_op(const tp_graph *graph, const char *reason) {
    for (int v = 0; v < tp_graph_num_values(graph); v++) {
        const char *op = tp_graph_value_op(graph, v);
        if (!op) continue;
        size_t length = strlen(op);
        for (const char *at = strstr(reason, op); at; at = strstr(at + 1, op)) {
            bool start = at == reason || !(at[-1] == '_' || (at[-1] >= 'a' && at[-1] <= 'z'));
            char after = at[length];
            bool end = !(after == '_' || (after >= 'a' && after <= 'z'));
            if (start && end) return op;
        }
    }
    return NULL;
}

static void set_result(conformance_result *result, conformance_status status, const char *format,
                       const char *a, const char *b) {
    result->status = status;
    snprintf(result->detail, sizeof result->detail, format, a, b);
    for (char *c = result->detail; *c; c++)
        if (*c == '\n') *c = ' ';
}

/* Compares one output; false (with the detail) on the first mismatch. */
static bool compare_output(int index, const tp_tensor *got, const tp_tensor *want,
                           conformance_result *result) {
    char got_text[96], want_text[96];
    tp_tensor_describe(got, got_text, sizeof got_text);
    tp_tensor_describe(want, want_text, sizeof want_text);
    if (strcmp(got_text, want_text) != 0) {
        snprintf(result->detail, sizeof result->detail, "output %d is %s, eager gives %s", index,
                 got_text, want_text);
        return false;
    }
    double atol, rtol;
    conformance_tolerance(tp_tensor_dtype(want), &atol, &rtol);
    for (int64_t i = 0; i < tp_tensor_numel(want); i++) {
        double g = tp_tensor_get_f64(got, i), w = tp_tensor_get_f64(want, i);
        if (isnan(g) && isnan(w)) continue;
        if (isinf(w) && g == w) continue;
        double error = fabs(g - w);
        if (error > result->max_error || isnan(error)) result->max_error = error;
        if (error <= atol + rtol * fabs(w)) continue;
        snprintf(result->detail, sizeof result->detail,
                 "output %d element %lld is %.9g, eager gives %.9g (|error| %.3g > %.3g for %s)",
                 index, (long long)i, g, w, error, atol + rtol * fabs(w),
                 tp_dtype_name(tp_tensor_dtype(want)));
        return false;
    }
    return true;
}

typedef struct case_run {
    const conformance_case *item;
    tp_graph *graph;
    int num_inputs, num_outputs;
    tp_tensor **inputs, **got, **want;
    const char *options[CONFORMANCE_MAX_OPTIONS];
} case_run;

/* TP_ERR_STATE: compiled, failed to run. */
static tp_status compile_whole_and_run(tp_backend *backend, case_run *run, bool with_options,
                                       tp_tensor **outputs) {
    tp_executable *executable = NULL;
    int num_options = with_options ? run->item->file->num_options : 0;
    tp_status status =
        tp_backend_compile(backend, run->graph, run->inputs, run->num_inputs,
                           num_options ? run->options : NULL, num_options, &executable);
    if (status != TP_OK) return status;
    status = tp_executable_run(executable, run->inputs, run->num_inputs, outputs);
    tp_executable_destroy(executable);
    return status == TP_OK ? TP_OK : TP_ERR_STATE;
}

/* Through the frontend and the partitioner, the default fallback taking the
 * nodes the backend does not claim. Compile and run are one tp_call. */
static tp_status compile_partitioned_and_run(tp_backend *backend, case_run *run,
                                             tp_tensor **outputs) {
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = tp_backend_name(backend);
    options.options = run->item->file->num_options ? run->options : NULL;
    options.num_options = run->item->file->num_options;
    tp_compiled *compiled = NULL;
    tp_status status = tp_compile_graph(run->graph, &options, &compiled);
    if (status != TP_OK) return status;
    tp_arg *args = calloc((size_t)run->num_inputs + 1, sizeof *args);
    if (!args) {
        tp_compiled_free(compiled);
        return TP_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < run->num_inputs; i++) args[i] = tp_arg_tensor(run->inputs[i]);
    status = tp_call(compiled, args, run->num_inputs, outputs);
    free(args);
    tp_compiled_free(compiled);
    return status;
}

static void expect_compile_error(tp_backend *backend, case_run *run, conformance_result *result) {
    const char *text = run->item->file->expect_error;
    tp_executable *executable = NULL;
    tp_status status = tp_backend_compile(backend, run->graph, run->inputs, run->num_inputs,
                                          run->options, run->item->file->num_options, &executable);
    if (status == TP_OK) {
        tp_executable_destroy(executable);
        set_result(result, CONFORMANCE_FAIL, "compile succeeded; it must fail naming '%s'%s", text,
                   "");
    } else if (!strstr(tp_last_error(), text)) {
        set_result(result, CONFORMANCE_FAIL, "compile failed without naming '%s': %s", text,
                   tp_last_error());
    } else {
        set_result(result, CONFORMANCE_PASS, "compile failed as expected: %s%s", tp_last_error(),
                   "");
    }
}

static void classify_refusal(const case_run *run, tp_status status, conformance_result *result) {
    const char *reason = tp_last_error();
    if (status != TP_ERR_UNSUPPORTED) {
        set_result(result, CONFORMANCE_FAIL, "failed: %s%s", reason, "");
        return;
    }
    if (!named_op(run->graph, reason)) {
        set_result(result, CONFORMANCE_FAIL,
                   "refused as unsupported without naming an op of the graph: %s%s", reason, "");
        return;
    }
    set_result(result, CONFORMANCE_UNSUPPORTED, "%s%s", reason, "");
}

static void run_case(tp_backend *backend, tp_backend *eager, bool partitioned, case_run *run,
                     conformance_result *result) {
    if (run->item->file->expect_error) {
        expect_compile_error(backend, run, result);
        return;
    }
    if (compile_whole_and_run(eager, run, false, run->want) != TP_OK) {
        set_result(result, CONFORMANCE_BROKEN, "eager cannot run this case: %s%s", tp_last_error(),
                   "");
        return;
    }
    tp_status status = partitioned ? compile_partitioned_and_run(backend, run, run->got)
                                   : compile_whole_and_run(backend, run, true, run->got);
    if (status == TP_ERR_STATE && !partitioned) {
        set_result(result, CONFORMANCE_FAIL, "run failed: %s%s", tp_last_error(), "");
        return;
    }
    if (status != TP_OK) {
        classify_refusal(run, status, result);
        return;
    }
    result->status = CONFORMANCE_PASS;
    for (int i = 0; i < run->num_outputs; i++)
        if (!compare_output(i, run->got[i], run->want[i], result)) {
            result->status = CONFORMANCE_FAIL;
            return;
        }
    snprintf(result->detail, sizeof result->detail, "%d output%s within tolerance",
             run->num_outputs, run->num_outputs == 1 ? "" : "s");
}

void conformance_run_case(tp_backend *backend, tp_backend *eager, bool partitioned,
                          const conformance_case *item, conformance_result *result) {
    memset(result, 0, sizeof *result);
    case_run run = {.item = item};
    for (int o = 0; o < item->file->num_options; o++) run.options[o] = item->file->options[o];
    bool changed;
    if (conformance_retype(item->file, item->dtype, &run.graph, &changed) != TP_OK) {
        set_result(result, CONFORMANCE_BROKEN, "cannot build the %s variant: %s",
                   tp_dtype_name(item->dtype), tp_last_error());
        return;
    }
    run.num_inputs = tp_graph_num_inputs(run.graph);
    run.num_outputs = tp_graph_num_outputs(run.graph);
    run.inputs = calloc((size_t)run.num_inputs + 1, sizeof *run.inputs);
    run.got = calloc((size_t)run.num_outputs + 1, sizeof *run.got);
    run.want = calloc((size_t)run.num_outputs + 1, sizeof *run.want);
    if (!run.inputs || !run.got || !run.want) {
        set_result(result, CONFORMANCE_BROKEN, "out of memory%s%s", "", "");
    } else if (conformance_make_inputs(item, run.graph, run.inputs) != TP_OK) {
        set_result(result, CONFORMANCE_BROKEN,
                   "cannot make the inputs (is every symbol bound by @bind?)%s%s", "", "");
    } else {
        conformance_count_claims(backend, run.graph, result);
        run_case(backend, eager, partitioned, &run, result);
    }
    for (int i = 0; run.inputs && i < run.num_inputs; i++) tp_tensor_release(run.inputs[i]);
    for (int i = 0; run.got && run.want && i < run.num_outputs; i++) {
        tp_tensor_release(run.got[i]);
        tp_tensor_release(run.want[i]);
    }
    free(run.inputs);
    free(run.got);
    free(run.want);
    tp_graph_destroy(run.graph);
}
