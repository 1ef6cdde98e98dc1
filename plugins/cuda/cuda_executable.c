/* Device resources and runs of a cuda executable (see cuda_executable.h).
 * Every driver error names the call, the driver's error name and text, and
 * the kernel or buffer involved. */
#include "cuda_executable.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpcommon_profile.h"

static bool check(const tp_plugin_executable *exe, CUresult result, const char *call,
                  const char *what, char *error, size_t error_size) {
    if (result == CUDA_SUCCESS) return true;
    char text[512];
    cuda_driver_error_text(exe->device->driver, result, call, text, sizeof text);
    snprintf(error, error_size, "%s (%s, graph '%s')", text, what,
             exe->graph.name ? exe->graph.name : "?");
    return false;
}

static bool allocate_buffers(tp_plugin_executable *exe, char *error, size_t error_size) {
    const cuda_driver *driver = exe->device->driver;
    int count = exe->graph.num_buffers;
    exe->buffers = calloc((size_t)count + 1, sizeof *exe->buffers);
    exe->params = calloc((size_t)count + 1, sizeof *exe->params);
    if (!exe->buffers || !exe->params) return snprintf(error, error_size, "out of memory"), false;
    for (int b = 0; b < count; b++) {
        const cu_buffer *buffer = &exe->graph.buffers[b];
        size_t nbytes = buffer->nbytes ? buffer->nbytes : 16;
        char what[160];
        snprintf(what, sizeof what, "%zu bytes for %%%s", nbytes,
                 exe->graph.nodes[buffer->node].name ? exe->graph.nodes[buffer->node].name : "?");
        if (!check(exe, driver->mem_alloc(&exe->buffers[b], nbytes), "cuMemAlloc", what, error,
                   error_size))
            return false;
        exe->params[b] = &exe->buffers[b];
    }
    for (int b = 0; b < count; b++) {
        const cu_buffer *buffer = &exe->graph.buffers[b];
        if (buffer->role != CU_BUFFER_CONSTANT || buffer->nbytes == 0) continue;
        const cu_node *node = &exe->graph.nodes[buffer->node];
        if (!check(
                exe,
                driver->memcpy_htod_async(exe->buffers[b], node->data, buffer->nbytes, exe->stream),
                "cuMemcpyHtoDAsync", "uploading a constant", error, error_size))
            return false;
    }
    return check(exe, driver->stream_synchronize(exe->stream), "cuStreamSynchronize",
                 "uploading constants", error, error_size);
}

bool cu_executable_load(tp_plugin_executable *exe, const cu_device *device, const void *image,
                        char *error, size_t error_size) {
    exe->device = device;
    const cuda_driver *driver = device->driver;
    if (!cu_device_make_current(device, error, error_size)) return false;
    if (!check(exe, driver->module_load_data(&exe->module, image), "cuModuleLoadData",
               "loading the compiled module", error, error_size))
        return false;
    exe->functions = calloc((size_t)exe->graph.num_kernels + 1, sizeof *exe->functions);
    if (!exe->functions) return snprintf(error, error_size, "out of memory"), false;
    for (int k = 0; k < exe->graph.num_kernels; k++) {
        const char *name = exe->graph.kernels[k].name;
        if (!check(exe, driver->module_get_function(&exe->functions[k], exe->module, name),
                   "cuModuleGetFunction", name, error, error_size))
            return false;
    }
    if (!check(exe, driver->stream_create(&exe->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
               "the executable's stream", error, error_size))
        return false;
    return allocate_buffers(exe, error, error_size);
}

/* Kernel times (profiling only): events[k] is recorded before kernel k,
 * events[num_kernels] after the last one, events[num_kernels + 1] after the
 * outputs are copied back, just before the stream is synchronized. */
typedef struct kernel_events {
    CUevent *events;
    int count;
} kernel_events;

static void kernel_events_destroy(const cuda_driver *driver, kernel_events *timing) {
    for (int i = 0; i < timing->count; i++)
        if (timing->events[i]) driver->event_destroy(timing->events[i]);
    free(timing->events);
    timing->events = NULL;
    timing->count = 0;
}

/* False (and no timing) when the events cannot be made: the run goes on. */
static bool kernel_events_create(const cuda_driver *driver, int num_kernels,
                                 kernel_events *timing) {
    timing->events = calloc((size_t)num_kernels + 2, sizeof *timing->events);
    if (!timing->events) return false;
    timing->count = num_kernels + 2;
    for (int i = 0; i < timing->count; i++)
        if (driver->event_create(&timing->events[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            kernel_events_destroy(driver, timing);
            return false;
        }
    return true;
}

static void record_event(const tp_plugin_executable *exe, const kernel_events *timing, int index) {
    if (timing->count) exe->device->driver->event_record(timing->events[index], exe->stream);
}

/* After the stream is done at host time `synced_ns`: each kernel's events,
 * placed on the host clock by their distance to the last event. */
static void report_kernel_times(const tp_plugin_executable *exe, const tpcommon_kernel_timer *timer,
                                const kernel_events *timing, uint64_t synced_ns) {
    const cuda_driver *driver = exe->device->driver;
    CUevent last = timing->events[timing->count - 1];
    for (int k = 0; k < exe->graph.num_kernels; k++) {
        float before_start = 0, before_end = 0;
        if (exe->graph.kernels[k].work == 0 ||
            driver->event_elapsed_time(&before_start, timing->events[k], last) != CUDA_SUCCESS ||
            driver->event_elapsed_time(&before_end, timing->events[k + 1], last) != CUDA_SUCCESS)
            continue;
        uint64_t start = synced_ns - (uint64_t)((double)before_start * 1e6);
        uint64_t end = synced_ns - (uint64_t)((double)before_end * 1e6);
        tpcommon_kernel_timer_report_span(timer, exe->graph.kernels[k].name, start, end);
    }
}

bool cu_executable_run(tp_plugin_executable *exe, const tp_plugin_host *host,
                       const tp_plugin_buffer *inputs, tp_plugin_buffer *outputs, char *error,
                       size_t error_size) {
    const cuda_driver *driver = exe->device->driver;
    const cu_graph *graph = &exe->graph;
    if (!cu_device_make_current(exe->device, error, error_size)) return false;
    tpcommon_kernel_timer timer = tpcommon_kernel_timer_begin(host);
    kernel_events timing = {NULL, 0};
    if (timer.host && !kernel_events_create(driver, graph->num_kernels, &timing)) timer.host = NULL;
    bool ok = true;
    for (int b = 0; b < graph->num_buffers && ok; b++) {
        const cu_buffer *buffer = &graph->buffers[b];
        if (buffer->role != CU_BUFFER_INPUT || buffer->nbytes == 0) continue;
        char what[96];
        snprintf(what, sizeof what, "input %d", buffer->input);
        ok = check(exe,
                   driver->memcpy_htod_async(exe->buffers[b], inputs[buffer->input].data,
                                             buffer->nbytes, exe->stream),
                   "cuMemcpyHtoDAsync", what, error, error_size);
    }
    for (int k = 0; k < graph->num_kernels && ok; k++) {
        const cu_kernel *kernel = &graph->kernels[k];
        record_event(exe, &timing, k);
        if (kernel->work == 0) continue;
        ok = check(exe,
                   driver->launch_kernel(exe->functions[k], kernel->grid[0], kernel->grid[1],
                                         kernel->grid[2], kernel->block, 1, 1, 0, exe->stream,
                                         exe->params, NULL),
                   "cuLaunchKernel", kernel->name, error, error_size);
    }
    record_event(exe, &timing, graph->num_kernels);
    for (int o = 0; o < graph->num_outputs && ok; o++) {
        const cu_node *node = &graph->nodes[graph->outputs[o]];
        size_t nbytes = graph->buffers[node->where.buffer].nbytes;
        if (nbytes == 0) continue;
        char what[96];
        snprintf(what, sizeof what, "output %d", o);
        ok = check(exe,
                   driver->memcpy_dtoh_async(outputs[o].data, exe->buffers[node->where.buffer],
                                             nbytes, exe->stream),
                   "cuMemcpyDtoHAsync", what, error, error_size);
    }
    record_event(exe, &timing, graph->num_kernels + 1);
    /* Always wait: the host buffers must not be touched by the device after return. */
    CUresult synced = driver->stream_synchronize(exe->stream);
    if (ok) ok = check(exe, synced, "cuStreamSynchronize", "finishing the run", error, error_size);
    if (ok && timing.count)
        report_kernel_times(exe, &timer, &timing, tpcommon_kernel_timer_now(&timer));
    if (timing.count) kernel_events_destroy(driver, &timing);
    return ok;
}

void cu_executable_free(tp_plugin_executable *exe) {
    if (!exe) return;
    if (exe->device) {
        const cuda_driver *driver = exe->device->driver;
        char ignored[64];
        cu_device_make_current(exe->device, ignored, sizeof ignored);
        if (exe->stream) driver->stream_synchronize(exe->stream);
        for (int b = 0; exe->buffers && b < exe->graph.num_buffers; b++)
            if (exe->buffers[b]) driver->mem_free(exe->buffers[b]);
        if (exe->stream) driver->stream_destroy(exe->stream);
        if (exe->module) driver->module_unload(exe->module);
    }
    free(exe->buffers);
    free(exe->params);
    free(exe->functions);
    free(exe->source);
    free(exe->ptx);
    cu_graph_free(&exe->graph);
    free(exe);
}
