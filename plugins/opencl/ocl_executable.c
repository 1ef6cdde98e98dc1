/* Creating and running opencl executables (see ocl_executable.h): device
 * buffers (checked against CL_DEVICE_MAX_MEM_ALLOC_SIZE), constants
 * uploaded once, kernel arguments, and the copy-in / launch / copy-out of
 * a call. Owns nothing process-wide. */
#include "ocl_executable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cache.h"
#include "ocl_errors.h"

struct tp_plugin_executable {
    ocl_device *device;
    cl_command_queue queue;
    cl_program program;
    int32_t num_kernels;
    cl_kernel *kernels;
    ocl_launch *launches;
    int32_t num_values;
    cl_mem *buffers;
    size_t *nbytes;
    int32_t num_inputs, num_outputs;
    int32_t *inputs, *outputs; /* value ids */
    bool cache_hit;
};

static size_t value_bytes(const ocl_codegen *codegen, int32_t v) {
    return (size_t)codegen->graph.numel[v] * tpc_dtype_size(codegen->graph.types[v].dtype);
}

static int make_buffers(tp_plugin_executable *executable, const ocl_codegen *codegen, char *error,
                        size_t size) {
    const tp_plugin_graph *view = codegen->graph.view;
    for (int32_t v = 0; v < executable->num_values; v++) {
        executable->nbytes[v] = value_bytes(codegen, v);
        if (!codegen->needs_buffer[v] || executable->nbytes[v] == 0) continue;
        const tp_plugin_value *value = &view->values[v];
        char type_text[160];
        tpc_type_text(NULL, &codegen->graph.types[v], type_text, sizeof type_text);
        if (executable->nbytes[v] > executable->device->max_alloc)
            return tpc_error(error, size,
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
            return tpc_error(error, size, "allocating %zu bytes for %%%s (%s) failed: %s",
                             executable->nbytes[v], value->name, type_text, ocl_error_name(status));
    }
    return TP_PLUGIN_OK;
}

static int make_kernels(tp_plugin_executable *executable, char *error, size_t size) {
    for (int32_t k = 0; k < executable->num_kernels; k++) {
        const ocl_launch *launch = &executable->launches[k];
        cl_int status = CL_SUCCESS;
        executable->kernels[k] = clCreateKernel(executable->program, launch->name, &status);
        if (status != CL_SUCCESS)
            return tpc_error(error, size, "clCreateKernel(%s) failed: %s", launch->name,
                             ocl_error_name(status));
        for (int32_t a = 0; a < launch->num_args; a++) {
            cl_mem buffer = executable->buffers[launch->args[a]];
            status = clSetKernelArg(executable->kernels[k], (cl_uint)a, sizeof buffer, &buffer);
            if (status != CL_SUCCESS)
                return tpc_error(error, size, "clSetKernelArg(%s, %d) failed: %s", launch->name,
                                 (int)a, ocl_error_name(status));
        }
    }
    return TP_PLUGIN_OK;
}

int ocl_executable_create(ocl_codegen *codegen, ocl_device *device, tp_plugin_executable **out,
                          char *error, size_t error_size) {
    const tp_plugin_graph *view = codegen->graph.view;
    tp_plugin_executable *executable = calloc(1, sizeof *executable);
    if (!executable) return tpc_error(error, error_size, "out of memory");
    executable->device = device;
    executable->num_values = view->num_values;
    executable->buffers = calloc((size_t)view->num_values + 1, sizeof(cl_mem));
    executable->nbytes = calloc((size_t)view->num_values + 1, sizeof(size_t));
    executable->kernels = calloc((size_t)codegen->num_launches + 1, sizeof(cl_kernel));
    executable->inputs = malloc(sizeof(int32_t) * ((size_t)view->num_inputs + 1));
    executable->outputs = malloc(sizeof(int32_t) * ((size_t)view->num_outputs + 1));
    executable->launches = codegen->launches;
    executable->num_kernels = codegen->num_launches;
    codegen->launches = NULL;
    codegen->num_launches = 0;
    if (!executable->buffers || !executable->nbytes || !executable->kernels ||
        !executable->inputs || !executable->outputs) {
        ocl_executable_destroy(executable);
        return tpc_error(error, error_size, "out of memory");
    }
    executable->num_inputs = view->num_inputs;
    memcpy(executable->inputs, view->inputs, sizeof(int32_t) * (size_t)view->num_inputs);
    executable->num_outputs = view->num_outputs;
    memcpy(executable->outputs, view->outputs, sizeof(int32_t) * (size_t)view->num_outputs);
    cl_int status = CL_SUCCESS;
    executable->queue = clCreateCommandQueue(device->context, device->id, 0, &status);
    int result = TP_PLUGIN_OK;
    if (status != CL_SUCCESS)
        result =
            tpc_error(error, error_size, "clCreateCommandQueue failed: %s", ocl_error_name(status));
    if (result == TP_PLUGIN_OK) result = make_buffers(executable, codegen, error, error_size);
    ocl_build_info info = {0};
    if (result == TP_PLUGIN_OK && executable->num_kernels > 0)
        result = ocl_program_build(device, codegen->source, &executable->program, &info, error,
                                   error_size) == 0
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
    return tpc_error(error, size, "%s failed: %s", what, ocl_error_name(status));
}

int ocl_executable_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                       int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs,
                       char *error, size_t error_size) {
    if (num_inputs != executable->num_inputs || num_outputs != executable->num_outputs)
        return tpc_error(error, error_size, "run got %d inputs and %d outputs, expected %d and %d",
                         (int)num_inputs, (int)num_outputs, (int)executable->num_inputs,
                         (int)executable->num_outputs);
    cl_command_queue queue = executable->queue;
    cl_int status = CL_SUCCESS;
    for (int32_t i = 0; i < num_inputs; i++) {
        int32_t v = executable->inputs[i];
        if (!executable->buffers[v]) continue;
        if (inputs[i].nbytes != executable->nbytes[v])
            return tpc_error(error, error_size, "input %d has %zu bytes, compiled for %zu", (int)i,
                             inputs[i].nbytes, executable->nbytes[v]);
        status = clEnqueueWriteBuffer(queue, executable->buffers[v], CL_FALSE, 0,
                                      executable->nbytes[v], inputs[i].data, 0, NULL, NULL);
        if (status != CL_SUCCESS)
            return fail_call(status, "clEnqueueWriteBuffer", error, error_size);
    }
    for (int32_t k = 0; k < executable->num_kernels; k++) {
        const ocl_launch *launch = &executable->launches[k];
        status = clEnqueueNDRangeKernel(queue, executable->kernels[k], launch->work_dim, NULL,
                                        launch->global, launch->local, 0, NULL, NULL);
        if (status != CL_SUCCESS) {
            clFinish(queue);
            char what[160];
            snprintf(what, sizeof what, "launching kernel %s", launch->name);
            return fail_call(status, what, error, error_size);
        }
    }
    for (int32_t o = 0; o < num_outputs; o++) {
        int32_t v = executable->outputs[o];
        size_t nbytes = executable->nbytes[v];
        if (outputs[o].nbytes != nbytes) {
            clFinish(queue);
            return tpc_error(error, error_size, "output %d has %zu bytes, compiled for %zu", (int)o,
                             outputs[o].nbytes, nbytes);
        }
        if (nbytes == 0) continue;
        int32_t input = -1;
        for (int32_t i = 0; i < num_inputs && input < 0; i++)
            if (executable->inputs[i] == v) input = i;
        if (input >= 0) {
            memcpy(outputs[o].data, inputs[input].data, nbytes);
            continue;
        }
        status = clEnqueueReadBuffer(queue, executable->buffers[v], CL_FALSE, 0, nbytes,
                                     outputs[o].data, 0, NULL, NULL);
        if (status != CL_SUCCESS) {
            clFinish(queue);
            return fail_call(status, "clEnqueueReadBuffer", error, error_size);
        }
    }
    status = clFinish(queue);
    if (status != CL_SUCCESS) return fail_call(status, "clFinish", error, error_size);
    return TP_PLUGIN_OK;
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
    free(executable->nbytes);
    free(executable->inputs);
    free(executable->outputs);
    free(executable);
}

int ocl_executable_cache_hit(const tp_plugin_executable *executable) {
    return executable->cache_hit;
}
