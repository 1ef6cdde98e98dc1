/* tensorplay._speedups: outputs as Tensors, C errors as the package's exceptions. */
#include "speedups.h"

/* ---- outputs ------------------------------------------------------------------ */

/* A Tensor owning `handle` (its reference is handed over, even on failure). */
static PyObject *new_tensor(tp_tensor *handle) {
    PyTypeObject *type = (PyTypeObject *)speedups_host.tensor_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    PyObject *tensor = alloc ? alloc(type, 0) : NULL;
    PyObject *pointer = tensor ? PyLong_FromVoidPtr(handle) : NULL;
    if (!pointer) {
        Py_XDECREF(tensor); /* no _ptr: releases nothing */
        speedups_host.tensor_release(handle);
        return NULL;
    }
    ((TensorBaseObject *)tensor)->ptr = pointer; /* _base, _capture: NULL reads as None */
    return tensor;
}

PyObject *speedups_wrap_outputs(PreparedCallObject *self, tp_tensor **outputs) {
    if (self->single_output) return new_tensor(outputs[0]);
    PyObject *result = PyTuple_New(self->num_outputs);
    int o = 0;
    for (; result && o < self->num_outputs; o++) {
        PyObject *tensor = new_tensor(outputs[o]);
        if (!tensor || PyTuple_SetItem(result, o, tensor) != 0) {
            Py_CLEAR(result);
            o++;
        }
    }
    for (; o < self->num_outputs; o++) speedups_host.tensor_release(outputs[o]);
    return result;
}

PyObject *speedups_raise_status(tp_status status) {
    /* bytes: the package decodes the message as the ctypes path does */
    PyObject *error = PyObject_CallFunction(speedups_host.error_for, "iy", (int)status,
                                            speedups_host.last_error());
    if (error) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return NULL;
}
