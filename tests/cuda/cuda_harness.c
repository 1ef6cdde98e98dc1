/* See cuda_harness.h. Compiled into test_cuda only (tests/cuda/CMakeLists.txt). */
#include "cuda_harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/registry_internal.h"
#include "tensorplay/passes.h"

static cuda_plugin plugin;
static bool loaded;
static tp_plugin_host host;

const cuda_plugin *cuda_plugin_get(void) {
    if (loaded) return &plugin;
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/cuda.so", tp_test_build_dir());
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(library,
                  "cannot load %s (%s): was cuda.so built? CMake builds it only when the "
                  "CUDA toolkit headers are found",
                  path, dlerror());
    tp_plugin_entry2_fn entry = (tp_plugin_entry2_fn)dlsym(library, "tp_cuda_backend");
    ck_assert_msg(entry, "%s does not export tp_cuda_backend", path);
    plugin.table = entry(TP_BACKEND_CONTRACT_VERSION);
    ck_assert(plugin.table && plugin.table->contract_version == 2);
    tp_host_table_init(&host, NULL);
    ck_assert_int_eq(plugin.table->calls.init(&host, &plugin.context), TP_PLUGIN_OK);
    plugin.testing = (const tp_cuda_testing_extension *)plugin.table->calls.get_extension(
        plugin.context, TP_CUDA_TESTING_EXTENSION);
    ck_assert_msg(plugin.testing, "cuda.so has no \"%s\" extension", TP_CUDA_TESTING_EXTENSION);
    ck_assert_uint_ge(plugin.testing->header.struct_size, sizeof(tp_cuda_testing_extension));
    loaded = true; /* kept loaded for the process: executables may outlive a test */
    return &plugin;
}

/* Copies the reason the plugin set on this thread into `out`. */
static int32_t take_reason(int32_t status, char *out, size_t size) {
    const char *reason = tp_host_take_error();
    if (size) snprintf(out, size, "%s", reason ? reason : "");
    return status;
}

int32_t cuda_plugin_probe(char *why, size_t why_size) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_host_clear_error();
    tp_plugin_probe_info info = {.struct_size = sizeof info, .priority = 300};
    return take_reason(p->table->calls.probe(&host, &info), why, why_size);
}

int32_t cuda_plugin_supports(const tp_plugin_graph *graph, int32_t value, char *why,
                             size_t why_size) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_host_clear_error();
    return take_reason(p->table->calls.supports(p->context, graph, value), why, why_size);
}

int32_t cuda_plugin_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                            int32_t num_inputs, const tp_plugin_option *options,
                            int32_t num_options, tp_plugin_executable **executable, char *error,
                            size_t error_size) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_host_clear_error();
    return take_reason(p->table->calls.compile(p->context, graph, inputs, num_inputs, options,
                                               num_options, executable),
                       error, error_size);
}

int32_t cuda_plugin_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                        int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    const cuda_plugin *p = cuda_plugin_get();
    return p->table->calls.run(p->context, executable, inputs, num_inputs, outputs, num_outputs);
}

void cuda_plugin_release(tp_plugin_executable *executable) {
    const cuda_plugin *p = cuda_plugin_get();
    p->table->calls.release(p->context, executable);
}

/* The graph a backend that claims no composite receives: the core's
 * decompose pass applied. */
static tp_graph *decomposed(const tp_graph *graph) {
    tp_pass_options options = TP_PASS_OPTIONS_INIT;
    tp_graph *out = NULL;
    bool changed = false;
    ck_assert_msg(tp_pass_run(TP_PASS_DECOMPOSE, graph, &options, &out, &changed) == TP_OK, "%s",
                  tp_last_error());
    return out;
}

bool cuda_try_compile_ptx(tp_graph *graph, const char *arch, const char *const *options,
                          int num_options, char *error, size_t error_size, int *kernels,
                          char **source_out) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_graph *lowered = decomposed(graph);
    tp_graph_view *view = NULL;
    ck_assert_int_eq(tp_graph_view_create(lowered, &view), TP_OK);
    const tp_plugin_graph *g = tp_graph_view_get(view);
    tp_plugin_tensor_meta metas[64];
    ck_assert_int_le(g->num_inputs, 64);
    for (int i = 0; i < g->num_inputs; i++) {
        const tp_plugin_type *type = &g->values[g->inputs[i]].type;
        memset(&metas[i], 0, sizeof metas[i]);
        metas[i].dtype = type->dtype;
        metas[i].ndim = type->ndim;
        for (int d = 0; d < type->ndim; d++) metas[i].dims[d] = type->dims[d];
    }
    char target[64];
    snprintf(target, sizeof target, "ptx:%s", arch);
    tp_plugin_option opts[8] = {{"target", target}};
    int count = 1;
    for (int i = 0; i < num_options && count < 8; i++) {
        static char keys[8][64];
        const char *equals = strchr(options[i], '=');
        snprintf(keys[count], sizeof keys[count], "%.*s", (int)(equals - options[i]), options[i]);
        opts[count].key = keys[count];
        opts[count].value = equals + 1;
        count++;
    }
    tp_plugin_executable *exe = NULL;
    error[0] = '\0';
    int32_t result =
        cuda_plugin_compile(g, metas, g->num_inputs, opts, count, &exe, error, error_size);
    tp_graph_view_destroy(view);
    tp_graph_destroy(lowered);
    if (result != TP_PLUGIN_OK) return false;
    const char *ptx = p->testing->executable_ptx(exe);
    ck_assert_msg(ptx && strstr(ptx, ".entry"), "no kernel entry in the PTX");
    if (kernels) *kernels = p->testing->executable_kernels(exe);
    if (source_out) *source_out = strdup(p->testing->executable_source(exe));
    cuda_plugin_release(exe);
    return true;
}

int cuda_compile_ptx(tp_graph *graph, const char *arch) {
    char error[8192];
    int kernels = 0;
    bool ok = cuda_try_compile_ptx(graph, arch, NULL, 0, error, sizeof error, &kernels, NULL);
    ck_assert_msg(ok, "graph '%s' for %s: %s", tp_graph_name(graph), arch, error);
    return kernels;
}

void cuda_compile_both(tp_graph *graph) {
    cuda_compile_ptx(graph, "compute_75");
    cuda_compile_ptx(graph, "compute_90");
}
