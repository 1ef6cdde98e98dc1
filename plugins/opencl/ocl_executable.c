/* Creating and running opencl executables (see ocl_executable.h): device
 * buffers (checked against CL_DEVICE_MAX_MEM_ALLOC_SIZE), constants
 * uploaded once, kernel arguments, and the copy-in / launch / copy-out of
 * a call (kernel times for the core's profile when it asks). Owns nothing
 * process-wide. */
#include "ocl_executable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cache.h"
#include "ocl_errors.h"
#include "tpcommon_profile.h"

struct tp_plugin_executable {
    const tp_plugin_host *host; /* the compiling context's: kernel times go to its profile */
    ocl_device *device;
    cl_command_queue queue;
    cl_program program;
    int32_t num_kernels;
    cl_kernel *kernels;
    ocl_launch *launches;
    int32_t num_values;
    cl_mem *buffers;
    cl_mem *call_buffers; /* per call: buffers, with wrapped host memory swapped in */
    bool *stored;         /* per value: some kernel writes it */
    size_t *nbytes;
    int32_t num_inputs, num_outputs;
    int32_t *inputs, *outputs; /* value ids */
    bool cache_hit;
};

static size_t value_bytes(const ocl_codegen *codegen, int32_t v) {
    return (size_t)codegen->graph.numel[v] * tpcommon_dtype_size(codegen->graph.types[v].dtype);
}

static int make_buffers(tp_plugin_executable *executable, const ocl_codegen *codegen, char *error,
                        size_t size) {
    const tp_plugin_graph *view = codegen->graph.view;
    for (int32_t v = 0; v < executable->num_values; v++) {
        executable->nbytes[v] = value_bytes(codegen, v);
        if (!codegen->needs_buffer[v] || executable->nbytes[v] == 0) continue;
        const tp_plugin_value *value = &view->values[v];
        char type_text[160];
        tpcommon_type_text(NULL, &codegen->graph.types[v], type_text, sizeof type_text);
        if (executable->nbytes[v] > executable->device->max_alloc)
            return tpcommon_error(error, size,
                                  "%%%s (%s) needs %zu bytes, but device '%s' allows at most %llu "
                                  "bytes in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                                  value->name, type_text, executable->nbytes[v],
                                  executable->device->name,
                                  (unsigned long long)executable->device->max_alloc);
        const tp_plugin_attr *payload = NULL; /* a constant's data, uploaded once */
        for (int32_t a = 0; value->op && a < value->num_attrs; a++)
            if (value->attrs[a].type == TP_PLUGIN_ATTR_TENSOR) payload = &value->attrs[a];
        cl_int status = CL_SUCCESS;
        cl_mem_flags flags = CL_MEM_READ_WRITE;
        void *host = NULL;
        if (payload && payload->data && payload->nbytes == executable->nbytes[v]) {
            flags |= CL_MEM_COPY_HOST_PTR;
            host = (void *)payload->data;
        }
        executable->buffers[v] = clCreateBuffer(executable->device->context, flags,
                                                executable->nbytes[v], host, &status);
        if (status != CL_SUCCESS || !executable->buffers[v])
            return tpcommon_error(error, size, "allocating %zu bytes for %%%s (%s) failed: %s",
                                  executable->nbytes[v], value->name, type_text,
                                  ocl_error_name(status));
    }
    return TP_PLUGIN_OK;
}

static int make_kernels(tp_plugin_executable *executable, char *error, size_t size) {
    for (int32_t k = 0; k < executable->num_kernels; k++) {
        const ocl_launch *launch = &executable->launches[k];
        cl_int status = CL_SUCCESS;
        executable->kernels[k] = clCreateKernel(executable->program, launch->name, &status);
        if (status != CL_SUCCESS)
            return tpcommon_error(error, size, "clCreateKernel(%s) failed: %s", launch->name,
                                  ocl_error_name(status));
        for (int32_t a = 0; a < launch->num_args; a++) {
            cl_mem buffer = executable->buffers[launch->args[a]];
            status = clSetKernelArg(executable->kernels[k], (cl_uint)a, sizeof buffer, &buffer);
            if (status != CL_SUCCESS)
                return tpcommon_error(error, size, "clSetKernelArg(%s, %d) failed: %s",
                                      launch->name, (int)a, ocl_error_name(status));
        }
    }
    return TP_PLUGIN_OK;
}

int ocl_executable_create(const tp_plugin_host *host, ocl_codegen *codegen, ocl_device *device,
                          tp_plugin_executable **out, char *error, size_t error_size) {
    const tp_plugin_graph *view = codegen->graph.view;
    tp_plugin_executable *executable = calloc(1, sizeof *executable);
    if (!executable) return tpcommon_error(error, error_size, "out of memory");
    executable->host = host;
    executable->device = device;
    executable->num_values = view->num_values;
    executable->buffers = calloc((size_t)view->num_values + 1, sizeof(cl_mem));
    executable->nbytes = calloc((size_t)view->num_values + 1, sizeof(size_t));
    executable->call_buffers = calloc((size_t)view->num_values + 1, sizeof(cl_mem));
    executable->stored = calloc((size_t)view->num_values + 1, sizeof(bool));
    executable->kernels = calloc((size_t)codegen->num_launches + 1, sizeof(cl_kernel));
    executable->inputs = malloc(sizeof(int32_t) * ((size_t)view->num_inputs + 1));
    executable->outputs = malloc(sizeof(int32_t) * ((size_t)view->num_outputs + 1));
    executable->launches = codegen->launches;
    executable->num_kernels = codegen->num_launches;
    codegen->launches = NULL;
    codegen->num_launches = 0;
    if (!executable->buffers || !executable->nbytes || !executable->kernels ||
        !executable->call_buffers || !executable->stored || !executable->inputs ||
        !executable->outputs) {
        ocl_executable_destroy(executable);
        return tpcommon_error(error, error_size, "out of memory");
    }
    for (int32_t k = 0; k < executable->num_kernels; k++)
        executable->stored[executable->launches[k].root] = true;
    executable->num_inputs = view->num_inputs;
    memcpy(executable->inputs, view->inputs, sizeof(int32_t) * (size_t)view->num_inputs);
    executable->num_outputs = view->num_outputs;
    memcpy(executable->outputs, view->outputs, sizeof(int32_t) * (size_t)view->num_outputs);
    cl_int status = CL_SUCCESS;
    executable->queue = clCreateCommandQueue(device->context, device->id, 0, &status);
    int result = TP_PLUGIN_OK;
    if (status != CL_SUCCESS)
        result = tpcommon_error(error, error_size, "clCreateCommandQueue failed: %s",
                                ocl_error_name(status));
    if (result == TP_PLUGIN_OK) result = make_buffers(executable, codegen, error, error_size);
    ocl_build_info info = {0};
    if (result == TP_PLUGIN_OK && executable->num_kernels > 0)
        result = ocl_program_build(host, device, codegen->source, &executable->program, &info,
                                   error, error_size) == 0
                     ? TP_PLUGIN_OK
                     : TP_PLUGIN_ERROR;
    executable->cache_hit = info.cache_hit;
    if (result == TP_PLUGIN_OK) result = make_kernels(executable, error, error_size);
    if (result != TP_PLUGIN_OK) {
        ocl_executable_destroy(executable);
        return TP_PLUGIN_ERROR;
    }
    *out = executable;
    return TP_PLUGIN_OK;
}

static int fail_call(cl_int status, const char *what, char *error, size_t size) {
    return tpcommon_error(error, size, "%s failed: %s", what, ocl_error_name(status));
}

/* Host memory used in place on a device that shares it (CL_DEVICE_HOST_
 * UNIFIED_MEMORY, e.g. a CPU device): no copy in or out. */
static cl_mem wrap_host(tp_plugin_executable *executable, void *data, size_t nbytes,
                        cl_mem_flags access) {
    cl_int status = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(executable->device->context, access | CL_MEM_USE_HOST_PTR,
                                   nbytes, data, &status);
    return status == CL_SUCCESS ? buffer : NULL;
}

static int set_arguments(tp_plugin_executable *executable, char *error, size_t size) {
    for (int32_t k = 0; k < executable->num_kernels; k++) {
        const ocl_launch *launch = &executable->launches[k];
        for (int32_t a = 0; a < launch->num_args; a++) {
            cl_mem buffer = executable->call_buffers[launch->args[a]];
            cl_int status =
                clSetKernelArg(executable->kernels[k], (cl_uint)a, sizeof buffer, &buffer);
            if (status != CL_SUCCESS) return fail_call(status, "clSetKernelArg", error, size);
        }
    }
    return TP_PLUGIN_OK;
}

/* Copies inputs in (or wraps them), and wraps the outputs kernels write
 * straight into (first occurrence only); `direct[o]` marks those. */
static int bind_call(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                     tp_plugin_buffer *outputs, bool *direct, cl_mem *wrapped, int32_t *num_wrapped,
                     char *error, size_t size) {
    bool zero_copy = executable->device->unified_memory;
    memcpy(executable->call_buffers, executable->buffers,
           sizeof(cl_mem) * (size_t)executable->num_values);
    for (int32_t i = 0; i < executable->num_inputs; i++) {
        int32_t v = executable->inputs[i];
        if (!executable->buffers[v]) continue;
        if (inputs[i].nbytes != executable->nbytes[v])
            return tpcommon_error(error, size, "input %d has %zu bytes, compiled for %zu", (int)i,
                                  inputs[i].nbytes, executable->nbytes[v]);
        cl_mem host =
            zero_copy ? wrap_host(executable, inputs[i].data, inputs[i].nbytes, CL_MEM_READ_ONLY)
                      : NULL;
        if (host) {
            executable->call_buffers[v] = wrapped[(*num_wrapped)++] = host;
            continue;
        }
        cl_int status = clEnqueueWriteBuffer(executable->queue, executable->buffers[v], CL_FALSE, 0,
                                             executable->nbytes[v], inputs[i].data, 0, NULL, NULL);
        if (status != CL_SUCCESS) return fail_call(status, "clEnqueueWriteBuffer", error, size);
    }
    for (int32_t o = 0; o < executable->num_outputs; o++) {
        int32_t v = executable->outputs[o];
        if (outputs[o].nbytes != executable->nbytes[v])
            return tpcommon_error(error, size, "output %d has %zu bytes, compiled for %zu", (int)o,
                                  outputs[o].nbytes, executable->nbytes[v]);
        bool first = true;
        for (int32_t p = 0; p < o; p++) first = first && executable->outputs[p] != v;
        direct[o] = false;
        if (!zero_copy || !first || !executable->stored[v] || executable->nbytes[v] == 0) continue;
        cl_mem host = wrap_host(executable, outputs[o].data, outputs[o].nbytes, CL_MEM_READ_WRITE);
        if (!host) continue;
        executable->call_buffers[v] = wrapped[(*num_wrapped)++] = host;
        direct[o] = true;
    }
    return set_arguments(executable, error, size);
}

/* Enqueues every kernel. While the core profiles, each kernel is waited for
 * (clFinish before and after it), so the host clock around it measures that
 * kernel alone; otherwise the queue runs them back to back. */
static int launch_kernels(tp_plugin_executable *executable, char *error, size_t size) {
    tpcommon_kernel_timer timer = tpcommon_kernel_timer_begin(executable->host);
    for (int32_t k = 0; k < executable->num_kernels; k++) {
        const ocl_launch *launch = &executable->launches[k];
        cl_int status = timer.host ? clFinish(executable->queue) : CL_SUCCESS;
        uint64_t start = tpcommon_kernel_timer_now(&timer);
        if (status == CL_SUCCESS)
            status =
                clEnqueueNDRangeKernel(executable->queue, executable->kernels[k], launch->work_dim,
                                       NULL, launch->global, launch->local, 0, NULL, NULL);
        if (status == CL_SUCCESS && timer.host) status = clFinish(executable->queue);
        if (status != CL_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "launching kernel %s", launch->name);
            return fail_call(status, what, error, size);
        }
        tpcommon_kernel_timer_report(&timer, launch->name, start);
    }
    return TP_PLUGIN_OK;
}

/* Brings every output to the host: mapped (direct), copied from an input,
 * or read from its device buffer. */
static int collect_outputs(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                           tp_plugin_buffer *outputs, const bool *direct, char *error,
                           size_t size) {
    for (int32_t o = 0; o < executable->num_outputs; o++) {
        int32_t v = executable->outputs[o];
        size_t nbytes = executable->nbytes[v];
        if (nbytes == 0) continue;
        int32_t input = -1;
        for (int32_t i = 0; i < executable->num_inputs && input < 0; i++)
            if (executable->inputs[i] == v) input = i;
        cl_int status = CL_SUCCESS;
        if (input >= 0) {
            memcpy(outputs[o].data, inputs[input].data, nbytes);
        } else if (direct[o]) { /* map + unmap makes the host memory current */
            void *mapped =
                clEnqueueMapBuffer(executable->queue, executable->call_buffers[v], CL_TRUE,
                                   CL_MAP_READ, 0, nbytes, 0, NULL, NULL, &status);
            if (status == CL_SUCCESS)
                status = clEnqueueUnmapMemObject(executable->queue, executable->call_buffers[v],
                                                 mapped, 0, NULL, NULL);
        } else {
            status = clEnqueueReadBuffer(executable->queue, executable->call_buffers[v], CL_FALSE,
                                         0, nbytes, outputs[o].data, 0, NULL, NULL);
        }
        if (status != CL_SUCCESS) return fail_call(status, "reading an output", error, size);
    }
    return TP_PLUGIN_OK;
}

int ocl_executable_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                       int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs,
                       char *error, size_t error_size) {
    if (num_inputs != executable->num_inputs || num_outputs != executable->num_outputs)
        return tpcommon_error(error, error_size,
                              "run got %d inputs and %d outputs, expected %d and %d",
                              (int)num_inputs, (int)num_outputs, (int)executable->num_inputs,
                              (int)executable->num_outputs);
    size_t slots = (size_t)num_inputs + (size_t)num_outputs + 1;
    cl_mem *wrapped = calloc(slots, sizeof(cl_mem));
    bool *direct = calloc(slots, sizeof(bool));
    int32_t num_wrapped = 0;
    int status =
        wrapped && direct ? TP_PLUGIN_OK : tpcommon_error(error, error_size, "out of memory");
    if (status == TP_PLUGIN_OK)
        status = bind_call(executable, inputs, outputs, direct, wrapped, &num_wrapped, error,
                           error_size);
    if (status == TP_PLUGIN_OK) status = launch_kernels(executable, error, error_size);
    if (status == TP_PLUGIN_OK)
        status = collect_outputs(executable, inputs, outputs, direct, error, error_size);
    cl_int finished = clFinish(executable->queue);
    if (status == TP_PLUGIN_OK && finished != CL_SUCCESS)
        status = fail_call(finished, "clFinish", error, error_size);
    for (int32_t w = 0; w < num_wrapped; w++) clReleaseMemObject(wrapped[w]);
    free(wrapped);
    free(direct);
    return status;
}

void ocl_executable_destroy(tp_plugin_executable *executable) {
    if (!executable) return;
    for (int32_t k = 0; executable->kernels && k < executable->num_kernels; k++)
        if (executable->kernels[k]) clReleaseKernel(executable->kernels[k]);
    for (int32_t v = 0; executable->buffers && v < executable->num_values; v++)
        if (executable->buffers[v]) clReleaseMemObject(executable->buffers[v]);
    for (int32_t k = 0; executable->launches && k < executable->num_kernels; k++)
        free(executable->launches[k].args);
    if (executable->program) clReleaseProgram(executable->program);
    if (executable->queue) clReleaseCommandQueue(executable->queue);
    free(executable->launches);
    free(executable->kernels);
    free(executable->buffers);
    free(executable->call_buffers);
    free(executable->stored);
    free(executable->nbytes);
    free(executable->inputs);
    free(executable->outputs);
    free(executable);
}

int ocl_executable_cache_hit(const tp_plugin_executable *executable) {
    return executable->cache_hit;
}
