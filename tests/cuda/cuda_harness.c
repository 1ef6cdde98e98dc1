/* See cuda_harness.h. Compiled into test_cuda only (tests/cuda/CMakeLists.txt). */
#include "cuda_harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/registry_internal.h"

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
    tp_plugin_entry_fn entry = (tp_plugin_entry_fn)dlsym(library, "tp_cuda_backend");
    ck_assert_msg(entry, "%s does not export tp_cuda_backend", path);
    plugin.table = entry();
    plugin.source = (tp_cuda_executable_source_fn)dlsym(library, TP_CUDA_EXECUTABLE_SOURCE_SYMBOL);
    plugin.ptx = (tp_cuda_executable_ptx_fn)dlsym(library, TP_CUDA_EXECUTABLE_PTX_SYMBOL);
    plugin.kernels =
        (tp_cuda_executable_kernels_fn)dlsym(library, TP_CUDA_EXECUTABLE_KERNELS_SYMBOL);
    plugin.compile_source =
        (tp_cuda_compile_source_fn)dlsym(library, TP_CUDA_COMPILE_SOURCE_SYMBOL);
    ck_assert(plugin.table && plugin.source && plugin.ptx && plugin.kernels &&
              plugin.compile_source);
    tp_host_table_init(&host, NULL);
    ck_assert_int_eq(plugin.table->init(&host), TP_PLUGIN_OK);
    loaded = true; /* kept loaded for the process: executables may outlive a test */
    return &plugin;
}

bool cuda_try_compile_ptx(tp_graph *graph, const char *arch, const char *const *options,
                          int num_options, char *error, size_t error_size, int *kernels,
                          char **source_out) {
    const cuda_plugin *p = cuda_plugin_get();
    tp_graph_view *view = NULL;
    ck_assert_int_eq(tp_graph_view_create(graph, &view), TP_OK);
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
        p->table->compile(g, metas, g->num_inputs, opts, count, &exe, error, error_size);
    tp_graph_view_destroy(view);
    if (result != TP_PLUGIN_OK) return false;
    const char *ptx = p->ptx(exe);
    ck_assert_msg(ptx && strstr(ptx, ".entry"), "no kernel entry in the PTX");
    if (kernels) *kernels = p->kernels(exe);
    if (source_out) *source_out = strdup(p->source(exe));
    p->table->release(exe);
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
