/* Shared by the stax suites: run a graph on a backend through the public
 * registry API (exactly as a user would), random inputs per dtype, and
 * comparison against the `eager` reference backend within a tolerance. */
#ifndef TP_TESTS_STAX_HARNESS_H
#define TP_TESTS_STAX_HARNESS_H

#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"
#include "tensorplay/tensor.h"
#include "tp_test.h"

/* Points the disk cache at this process's temp folder. */
static inline void stax_test_cache_dir(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/cache", tp_test_temp_dir());
    setenv("TP_CACHE_DIR", path, 1);
}

static inline tp_backend *stax_test_backend(const char *name) {
    tp_backend *backend = NULL;
    tp_status status = tp_backend_lookup(name, &backend);
    ck_assert_msg(status == TP_OK, "lookup %s: %s", name, tp_last_error());
    return backend;
}

/* Deterministic pseudo-random values: floats in [-lo, hi], ints in [-5, 5], bools. */
static inline uint64_t stax_test_next(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 11;
}

static inline tp_tensor *stax_test_random(tp_dtype dtype, int ndim, const int64_t *shape,
                                          uint64_t seed) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    uint64_t state = seed * 2654435761u + 17;
    void *data = tp_tensor_data_mut(t);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) {
        double u = (double)(stax_test_next(&state) % 1000003) / 1000003.0; /* [0, 1) */
        switch (dtype) {
        case TP_F32:
            ((float *)data)[i] = (float)(u * 4.0 - 2.0);
            break;
        case TP_F64:
            ((double *)data)[i] = u * 4.0 - 2.0;
            break;
        case TP_I32:
            ((int32_t *)data)[i] = (int32_t)(u * 11.0) - 5;
            break;
        case TP_I64:
            ((int64_t *)data)[i] = (int64_t)(u * 11.0) - 5;
            break;
        default:
            ((uint8_t *)data)[i] = u < 0.5;
            break;
        }
    }
    return t;
}

/* stax_test_random's f32 values in [-2, 2), rounded to f16 or bf16 for
 * those dtypes. */
static inline tp_tensor *stax_test_random_rounded(tp_dtype dtype, int ndim, const int64_t *dims,
                                                  uint64_t seed) {
    tp_tensor *f32 = stax_test_random(TP_F32, ndim, dims, seed);
    if (dtype == TP_F32) return f32;
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, dims, &t), TP_OK);
    const float *from = tp_tensor_data(f32);
    uint16_t *to = tp_tensor_data_mut(t);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++)
        to[i] = dtype == TP_F16 ? tp_f16_from_f32(from[i]) : tp_bf16_from_f32(from[i]);
    tp_tensor_release(f32);
    return t;
}

/* The whole text of the file at `path` (a dumped IR or assembly; caller
 * frees); fails the test when it cannot be read. */
static inline char *stax_test_read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    ck_assert_msg(file != NULL, "cannot open %s", path);
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    fclose(file);
    return text;
}

/* Compiles and runs `graph` on `backend_name`; stores the outputs. Returns
 * the compile status (run must succeed when compile did). */
/* Graph building for tests: a node (failing the test with the library's
 * message when it is refused) and an input of the given type. */
/* A node named `name` (NULL: the graph names it); fails the test on error. */
/* The function definitions in the IR file at `path` (a dump_ir output)
 * whose "define" line contains `needle`. */
static inline int stax_test_ir_definitions(const char *path, const char *needle) {
    FILE *file = fopen(path, "r");
    ck_assert_msg(file != NULL, "%s was not written", path);
    char line[4096];
    int count = 0;
    while (fgets(line, sizeof line, file))
        count += strncmp(line, "define", 6) == 0 && strstr(line, needle) != NULL;
    fclose(file);
    return count;
}

static inline tp_value_id stax_test_named_node(tp_graph *g, const char *op, const tp_value_id *in,
                                               int n, const tp_attrs *attrs, const char *name) {
    tp_value_id id;
    tp_status status = tp_graph_add_node(g, op, in, n, attrs, name, &id);
    ck_assert_msg(status == TP_OK, "%s: %s", op, tp_last_error());
    return id;
}

static inline tp_value_id stax_test_node(tp_graph *g, const char *op, const tp_value_id *in, int n,
                                         const tp_attrs *attrs) {
    return stax_test_named_node(g, op, in, n, attrs, NULL);
}

/* x with its last two axes swapped (a transpose node). */
static inline tp_value_id stax_test_swap_last_two(tp_graph *g, tp_value_id x, int ndim) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = ndim - 2, attrs.dim1 = ndim - 1;
    return stax_test_node(g, "transpose", &x, 1, &attrs);
}

/* How a batched product y[q] = x[q] @ w (+ bias, then relu) lies in its
 * operands (x, w[, bias]), for stax_test_check_product. */
typedef struct stax_test_product {
    int64_t batch, m, k, n;
    tp_dtype dtype;    /* of the operands and the result */
    bool x_transposed; /* x stored [batch, k, m] */
    bool w_transposed; /* w stored [n, k] */
    bool w_batched;    /* w [batch, k, n], one per product (else shared) */
    bool bias, relu;   /* operands[2] is a bias [n]; relu after */
} stax_test_product;

/* y against the product in double: |y - exact| <= the f32 accumulation's
 * bound + the result's rounding in its dtype. */
static inline void stax_test_check_product(const stax_test_product *c, tp_tensor *const *operands,
                                           const tp_tensor *y, const char *what) {
    ck_assert_int_eq(tp_tensor_numel(y), c->batch * c->m * c->n);
    ck_assert_int_eq(tp_tensor_dtype(y), c->dtype);
    double unit = c->dtype == TP_F16 ? 0x1p-10 : c->dtype == TP_BF16 ? 0x1p-7 : 0.0;
    for (int64_t q = 0; q < c->batch; q++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double sum = c->bias ? tp_tensor_get_f64(operands[2], j) : 0.0;
                double magnitude = fabs(sum);
                for (int64_t p = 0; p < c->k; p++) {
                    int64_t xi =
                        c->x_transposed ? (q * c->k + p) * c->m + i : (q * c->m + i) * c->k + p;
                    int64_t wi = c->w_transposed ? j * c->k + p : p * c->n + j;
                    if (c->w_batched) wi += q * c->k * c->n;
                    double term =
                        tp_tensor_get_f64(operands[0], xi) * tp_tensor_get_f64(operands[1], wi);
                    sum += term;
                    magnitude += fabs(term);
                }
                if (c->relu && sum < 0) sum = 0;
                double got = tp_tensor_get_f64(y, (q * c->m + i) * c->n + j);
                double bound = 1e-5 * magnitude + 1e-6 + unit * fabs(sum);
                ck_assert_msg(fabs(got - sum) <= bound,
                              "%s: batch %lld, y[%lld][%lld] is %.9g, the double product gives "
                              "%.9g",
                              what, (long long)q, (long long)i, (long long)j, got, sum);
            }
}

/* A tensor as the plugin table sees it, for tests that call the table directly. */
static inline tp_plugin_tensor_meta stax_test_meta(const tp_tensor *t) {
    tp_plugin_tensor_meta m = {.dtype = (int32_t)tp_tensor_dtype(t), .ndim = tp_tensor_ndim(t)};
    for (int d = 0; d < m.ndim; d++) m.dims[d] = tp_tensor_dim(t, d);
    return m;
}

static inline tp_plugin_buffer stax_test_buffer(tp_tensor *t) {
    tp_plugin_buffer b = {.data = tp_tensor_data_mut(t),
                          .nbytes = (size_t)tp_tensor_numel(t) * tp_dtype_size(tp_tensor_dtype(t)),
                          .dtype = (int32_t)tp_tensor_dtype(t),
                          .ndim = tp_tensor_ndim(t)};
    for (int d = 0; d < b.ndim; d++) b.dims[d] = tp_tensor_dim(t, d);
    return b;
}

static inline tp_value_id stax_test_input(tp_graph *g, const char *name, tp_dtype dtype, int ndim,
                                          const int64_t *dims) {
    tp_type type = {.dtype = dtype, .ndim = ndim};
    for (int d = 0; d < ndim; d++) type.dims[d] = dims[d];
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_input(g, name, &type, &id), TP_OK);
    return id;
}

static inline tp_status stax_test_run(const char *backend_name, const tp_graph *graph,
                                      tp_tensor *const *inputs, int num_inputs,
                                      const char *const *options, int num_options,
                                      tp_tensor **outputs) {
    tp_backend *backend = stax_test_backend(backend_name);
    tp_executable *exe = NULL;
    tp_status status =
        tp_backend_compile(backend, graph, inputs, num_inputs, options, num_options, &exe);
    if (status != TP_OK) return status;
    int n = tp_executable_num_outputs(exe);
    for (int i = 0; i < n; i++) outputs[i] = NULL;
    status = tp_executable_run(exe, inputs, num_inputs, outputs);
    ck_assert_msg(status == TP_OK, "run on %s: %s", backend_name, tp_last_error());
    tp_executable_destroy(exe);
    return TP_OK;
}

typedef struct stax_test_log_count {
    const char *needle;
    int count;
} stax_test_log_count;

static inline void stax_test_count_line(tp_log_level level, const char *message, void *user) {
    (void)level;
    stax_test_log_count *c = user;
    if (strstr(message, c->needle)) c->count++;
}

/* stax_test_run on stax with the debug log on; *lines is how many of the
 * compile's log lines contain `needle` (a path taken, a weight packed). */
static inline tp_status stax_test_run_counting(const char *needle, const tp_graph *graph,
                                               tp_tensor *const *inputs, int num_inputs,
                                               const char *const *options, int num_options,
                                               tp_tensor **outputs, int *lines) {
    stax_test_log_count counted = {needle, 0};
    tp_log_level level = tp_get_log_level();
    tp_set_log_handler(stax_test_count_line, &counted);
    tp_set_log_level(TP_LOG_DEBUG);
    tp_status status =
        stax_test_run("stax", graph, inputs, num_inputs, options, num_options, outputs);
    tp_set_log_handler(NULL, NULL);
    tp_set_log_level(level);
    *lines = counted.count;
    return status;
}

/* Element-wise comparison: exact for integers/bools, |a-b| <= atol + rtol|b|
 * for floats, NaN matching NaN and infinities matching exactly. */
static inline void stax_test_expect_close(const tp_tensor *got, const tp_tensor *want, double rtol,
                                          double atol, const char *what) {
    char g[128], w[128];
    ck_assert_msg(tp_tensor_dtype(got) == tp_tensor_dtype(want) &&
                      tp_tensor_ndim(got) == tp_tensor_ndim(want) &&
                      tp_tensor_numel(got) == tp_tensor_numel(want),
                  "%s: got %s, want %s", what, tp_tensor_describe(got, g, sizeof g),
                  tp_tensor_describe(want, w, sizeof w));
    for (int d = 0; d < tp_tensor_ndim(got); d++)
        ck_assert_int_eq(tp_tensor_dim(got, d), tp_tensor_dim(want, d));
    bool floating = tp_dtype_is_float(tp_tensor_dtype(want));
    for (int64_t i = 0; i < tp_tensor_numel(want); i++) {
        double a = tp_tensor_get_f64(got, i), b = tp_tensor_get_f64(want, i);
        bool ok;
        if (!floating)
            ok = a == b;
        else if (isnan(b))
            ok = isnan(a);
        else if (isinf(b))
            ok = a == b;
        else
            ok = fabs(a - b) <= atol + rtol * fabs(b);
        ck_assert_msg(ok, "%s: element %lld is %.9g, eager gives %.9g (%s)", what, (long long)i, a,
                      b, tp_tensor_describe(want, w, sizeof w));
    }
}

/* Runs `graph` on stax and eager and compares every output. */
static inline void stax_test_compare(const tp_graph *graph, tp_tensor *const *inputs,
                                     int num_inputs, double rtol, double atol, const char *what) {
    tp_tensor *got[16] = {0}, *want[16] = {0};
    tp_status status = stax_test_run("eager", graph, inputs, num_inputs, NULL, 0, want);
    ck_assert_msg(status == TP_OK, "%s: eager: %s", what, tp_last_error());
    status = stax_test_run("stax", graph, inputs, num_inputs, NULL, 0, got);
    ck_assert_msg(status == TP_OK, "%s: stax: %s", what, tp_last_error());
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) {
        char label[256];
        snprintf(label, sizeof label, "%s, output %d", what, i);
        stax_test_expect_close(got[i], want[i], rtol, atol, label);
        tp_tensor_release(got[i]);
        tp_tensor_release(want[i]);
    }
}

/* Tolerances by result dtype: f32 results allow a few ulp of the vectorized
 * approximations; f64 results allow FMA contraction differences. */
static inline double stax_test_rtol(tp_dtype dtype) {
    return dtype == TP_F32 ? 2e-5 : 1e-11;
}
static inline double stax_test_atol(tp_dtype dtype) {
    return dtype == TP_F32 ? 2e-6 : 1e-12;
}

/* ---- the plugin table directly (hand-made views, dynamic runs) ---------- */

/* The last error the plugin reported through the direct host table. */
static char stax_direct_error[1024];
static inline void stax_direct_log(const tp_plugin_host *host, int32_t level, const char *message) {
    (void)host, (void)level, (void)message;
}
static inline void stax_direct_set_error(const tp_plugin_host *host, const char *message) {
    (void)host;
    snprintf(stax_direct_error, sizeof stax_direct_error, "%s", message);
}
static inline const char *stax_direct_getenv(const char *name) {
    return getenv(name);
}
static inline void *stax_direct_alloc(size_t size) {
    return aligned_alloc(64, (size + 63) / 64 * 64);
}

/* One opened plugin: the library, its revision-2 table, the context its
 * init made and the host table that context was given. */
typedef struct stax_direct {
    void *handle;
    const tp_plugin_backend *table;
    void *context;
    tp_plugin_host host;
} stax_direct;

/* Opens stax-llvm.so with dlopen (not through the registry), negotiates
 * revision 2 and inits it with a minimal host table whose parallel_for and
 * num_threads the test chooses. `d` must stay put while open (the context
 * keeps &d->host). */
static inline void
stax_open_direct(stax_direct *d, void (*parallel_for)(int64_t, int64_t, tp_plugin_range_fn, void *),
                 int32_t (*num_threads)(void)) {
    char path[4300];
    snprintf(path, sizeof path, "%s/plugins/stax-llvm.so", tp_test_build_dir());
    d->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(d->handle != NULL, "%s", dlerror());
    tp_plugin_entry2_fn entry = (tp_plugin_entry2_fn)dlsym(d->handle, "tp_stax_backend");
    ck_assert_ptr_nonnull(entry);
    d->host = (tp_plugin_host){.struct_size = sizeof(tp_plugin_host),
                               .contract_version = 2,
                               .core_version = "0.1.0",
                               .log = stax_direct_log,
                               .set_error = stax_direct_set_error,
                               .parallel_for = parallel_for,
                               .num_threads = num_threads,
                               .aligned_alloc = stax_direct_alloc,
                               .aligned_free = free,
                               .getenv = stax_direct_getenv};
    d->table = entry(2);
    ck_assert_ptr_nonnull(d->table);
    ck_assert_int_eq(d->table->contract_version, 2);
    ck_assert_int_eq(d->table->calls.init(&d->host, &d->context), TP_PLUGIN_OK);
}

static inline void stax_close_direct(stax_direct *d) {
    if (d->table->calls.shutdown) d->table->calls.shutdown(d->context);
    dlclose(d->handle);
}

/* calls.compile; on failure the reason the plugin set is copied to `error`. */
static inline int32_t stax_direct_compile(stax_direct *d, const tp_plugin_graph *graph,
                                          const tp_plugin_tensor_meta *meta, int32_t num_inputs,
                                          tp_plugin_executable **exe, char *error, size_t size) {
    stax_direct_error[0] = 0;
    int32_t status = d->table->calls.compile(d->context, graph, meta, num_inputs, NULL, 0, exe);
    if (status != TP_PLUGIN_OK && size) snprintf(error, size, "%s", stax_direct_error);
    return status;
}

static inline int32_t stax_direct_run(stax_direct *d, tp_plugin_executable *exe,
                                      const tp_plugin_buffer *inputs, int32_t num_inputs,
                                      tp_plugin_buffer *outputs, int32_t num_outputs) {
    stax_direct_error[0] = 0;
    return d->table->calls.run(d->context, exe, inputs, num_inputs, outputs, num_outputs);
}

static inline void stax_direct_release(stax_direct *d, tp_plugin_executable *exe) {
    d->table->calls.release(d->context, exe);
}

/* The op id of an op name, as the core's view would give it; an unknown
 * name gets TP_PLUGIN_OP_COUNT (an op newer than this plugin_ops.h). */
static inline int32_t stax_direct_op_id(const char *name) {
#define STAX_DIRECT_OP_NAME(ID, NAME, KIND, MIN, MAX) NAME,
    static const char *const names[] = {TP_PLUGIN_OP_LIST(STAX_DIRECT_OP_NAME)};
#undef STAX_DIRECT_OP_NAME
    for (int32_t op = 0; op < TP_PLUGIN_OP_COUNT; op++)
        if (strcmp(names[op], name) == 0) return op;
    return TP_PLUGIN_OP_COUNT;
}

/* Fills nodes[] for a hand-made view whose nodes compute in their result
 * dtype (true of every view these tests build). */
static inline void stax_direct_fill_nodes(const tp_plugin_value *values, int32_t num_values,
                                          tp_plugin_node *nodes) {
    for (int32_t v = 0; v < num_values; v++) {
        bool input = values[v].op == NULL;
        nodes[v] = (tp_plugin_node){.op_id = input ? -1 : stax_direct_op_id(values[v].op),
                                    .kind = -1,
                                    .compute_dtype = values[v].type.dtype,
                                    .result_dtype = values[v].type.dtype};
    }
}

#endif
