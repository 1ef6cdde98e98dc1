/* The opencl suite's helpers (see ocl_harness.h); registers no tests. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_harness.h"
#include "tp_test.h"

void oclt_environment(void) {
    char path[4200];
    if (getenv("OCLT_KEEP_CACHE")) return; /* debugging: keep the caller's folders */
    snprintf(path, sizeof path, "%s/tp-cache", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", path, 1);
    /* PoCL's own kernel cache may be shared between runs (scripts/test.sh
     * shares it between the plain and the sanitizer suite): it only holds
     * PoCL's compilations of our generated source, which are the same in both
     * builds. Our binary cache (TP_CACHE_DIR) stays private to the run, since
     * the tests check its hits and misses. */
    const char *shared = getenv("TP_TEST_POCL_CACHE_DIR");
    if (shared && *shared)
        snprintf(path, sizeof path, "%s", shared);
    else
        snprintf(path, sizeof path, "%s/pocl-cache", tp_test_temp_dir());
    setenv("POCL_CACHE_DIR", path, 1);
}

bool oclt_available(void) {
    tp_backend *backend = NULL;
    return tp_backend_lookup("opencl", &backend) == TP_OK;
}

tp_graph *oclt_parse(const char *text) {
    tp_graph *graph = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "test.tpir", &graph);
    ck_assert_msg(status == TP_OK, "parse: %s", tp_last_error());
    return graph;
}

static uint32_t next_random(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

tp_tensor *oclt_random(tp_dtype dtype, int ndim, const int64_t *dims, uint32_t seed) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, dims, &tensor), TP_OK);
    uint32_t state = seed * 2654435761u + 17u;
    int64_t count = tp_tensor_numel(tensor);
    void *data = tp_tensor_data_mut(tensor);
    for (int64_t i = 0; i < count; i++) {
        uint32_t r = next_random(&state);
        double unit = (double)(r % 1000000u) / 1000000.0;
        switch (dtype) {
        case TP_F32:
            ((float *)data)[i] = (float)(unit * 4.0 - 2.0);
            break;
        case TP_F64:
            ((double *)data)[i] = unit * 4.0 - 2.0;
            break;
        case TP_I32:
            ((int32_t *)data)[i] = (int32_t)(r % 11u) - 5;
            break;
        case TP_I64:
            ((int64_t *)data)[i] = (int64_t)(r % 11u) - 5;
            break;
        default:
            ((uint8_t *)data)[i] = (uint8_t)(r & 1u);
            break;
        }
    }
    return tensor;
}

void oclt_random_inputs(const tp_graph *graph, tp_tensor **inputs, uint32_t seed) {
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) {
        const tp_type *type = tp_graph_value_type(graph, tp_graph_input(graph, i));
        inputs[i] = oclt_random(type->dtype, type->ndim, type->dims, seed + (uint32_t)i * 101u);
    }
}

static void compare(const tp_tensor *got, const tp_tensor *want, int output) {
    char got_text[96], want_text[96];
    tp_tensor_describe(got, got_text, sizeof got_text);
    tp_tensor_describe(want, want_text, sizeof want_text);
    ck_assert_msg(strcmp(got_text, want_text) == 0, "output %d: opencl %s, eager %s", output,
                  got_text, want_text);
    int64_t count = tp_tensor_numel(want);
    bool floating = tp_dtype_is_float(tp_tensor_dtype(want));
    double rtol = tp_tensor_dtype(want) == TP_F32 ? 2e-4 : 1e-9;
    double atol = tp_tensor_dtype(want) == TP_F32 ? 2e-5 : 1e-12;
    for (int64_t i = 0; i < count; i++) {
        double a = tp_tensor_get_f64(got, i), b = tp_tensor_get_f64(want, i);
        if (!floating) {
            ck_assert_msg(a == b, "output %d %s, element %lld: opencl %.17g, eager %.17g", output,
                          want_text, (long long)i, a, b);
            continue;
        }
        if (isnan(b)) {
            ck_assert_msg(isnan(a), "output %d %s, element %lld: opencl %.9g, eager NaN", output,
                          want_text, (long long)i, a);
            continue;
        }
        if (isinf(b)) {
            ck_assert_msg(a == b, "output %d %s, element %lld: opencl %.9g, eager %.9g", output,
                          want_text, (long long)i, a, b);
            continue;
        }
        ck_assert_msg(fabs(a - b) <= atol + rtol * fabs(b),
                      "output %d %s, element %lld: opencl %.9g, eager %.9g", output, want_text,
                      (long long)i, a, b);
    }
}

static tp_tensor **run_backend(const char *name, const tp_graph *graph, tp_tensor *const *inputs,
                               int num_inputs, const char *const *options, int num_options) {
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup(name, &backend) == TP_OK, "lookup %s: %s", name,
                  tp_last_error());
    tp_executable *executable = NULL;
    tp_status status =
        tp_backend_compile(backend, graph, inputs, num_inputs, options, num_options, &executable);
    ck_assert_msg(status == TP_OK, "%s compile: %s", name, tp_last_error());
    int count = tp_executable_num_outputs(executable);
    tp_tensor **outputs = calloc((size_t)count + 1, sizeof *outputs);
    status = tp_executable_run(executable, inputs, num_inputs, outputs);
    ck_assert_msg(status == TP_OK, "%s run: %s", name, tp_last_error());
    tp_executable_destroy(executable);
    return outputs;
}

void oclt_check_against_eager(const tp_graph *graph, tp_tensor *const *inputs, int num_inputs,
                              const char *const *options, int num_options) {
    tp_tensor **got = run_backend("opencl", graph, inputs, num_inputs, options, num_options);
    tp_tensor **want = run_backend("eager", graph, inputs, num_inputs, NULL, 0);
    int count = tp_graph_num_outputs(graph);
    for (int i = 0; i < count; i++) compare(got[i], want[i], i);
    for (int i = 0; i < count; i++) {
        tp_tensor_release(got[i]);
        tp_tensor_release(want[i]);
    }
    free(got);
    free(want);
}

void oclt_check_text(const char *text, uint32_t seed) {
    tp_graph *graph = oclt_parse(text);
    tp_tensor *inputs[16] = {NULL};
    oclt_random_inputs(graph, inputs, seed);
    oclt_check_against_eager(graph, inputs, tp_graph_num_inputs(graph), NULL, 0);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
    tp_graph_destroy(graph);
}

void oclt_check_graph(const tp_graph *graph, uint32_t seed) {
    tp_tensor *inputs[16] = {NULL};
    oclt_random_inputs(graph, inputs, seed);
    oclt_check_against_eager(graph, inputs, tp_graph_num_inputs(graph), NULL, 0);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
}

tp_graph *oclt_graph(const char *name) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_create(name, &graph), TP_OK);
    return graph;
}

tp_value_id oclt_input(tp_graph *graph, const char *name, tp_dtype dtype, int ndim,
                       const int64_t *dims) {
    tp_type type = {.dtype = dtype, .ndim = ndim};
    for (int d = 0; d < ndim; d++) type.dims[d] = dims[d];
    tp_value_id id = TP_NO_VALUE;
    ck_assert_msg(tp_graph_add_input(graph, name, &type, &id) == TP_OK, "input: %s",
                  tp_last_error());
    return id;
}

tp_value_id oclt_try_node(tp_graph *graph, const char *op, const tp_value_id *operands, int count,
                          const tp_attrs *attrs) {
    tp_value_id id = TP_NO_VALUE;
    tp_status status = tp_graph_add_node(graph, op, operands, count, attrs, NULL, &id);
    if (status == TP_ERR_DTYPE) {
        tp_clear_error();
        return TP_NO_VALUE;
    }
    ck_assert_msg(status == TP_OK, "%s: %s", op, tp_last_error());
    return id;
}

tp_value_id oclt_node(tp_graph *graph, const char *op, const tp_value_id *operands, int count,
                      const tp_attrs *attrs) {
    tp_value_id id = oclt_try_node(graph, op, operands, count, attrs);
    ck_assert_msg(id != TP_NO_VALUE, "%s refused its operand dtypes", op);
    return id;
}

tp_value_id oclt_unary(tp_graph *graph, const char *op, tp_value_id x) {
    return oclt_node(graph, op, &x, 1, NULL);
}

tp_value_id oclt_binary(tp_graph *graph, const char *op, tp_value_id a, tp_value_id b) {
    tp_value_id operands[2] = {a, b};
    return oclt_node(graph, op, operands, 2, NULL);
}

void oclt_outputs(tp_graph *graph, const tp_value_id *values, int count) {
    ck_assert_msg(tp_graph_set_outputs(graph, values, count) == TP_OK, "outputs: %s",
                  tp_last_error());
}

/* The OpenCL driver (PoCL and the LLVM it compiles with) keeps allocations
 * until the process ends; LeakSanitizer (sanitizer builds) would report
 * them. Only stacks that pass through those libraries are suppressed. */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libpocl.so\nleak:libLLVM\nleak:libOpenCL.so\nleak:libclang-cpp\n";
}
