/* tensorplay._speedups: a Python argument tuple as tp_prepared_arg records
 * (NumPy arrays from their head or the buffer protocol, Tensors, bool/int/float). */
#include "speedups.h"

/* ---- arguments ------------------------------------------------------------------ */

/* The record of a NumPy array: its buffer is held in `view` until the run is
 * over (NumPy then refuses to resize it under us). 0: not a plain array. */
static int array_record(PyObject *array, Py_buffer *view, tp_prepared_arg *record) {
    if (PyObject_GetBuffer(array, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear(); /* not C-contiguous or no buffer: tp_call's path copies */
        return 0;
    }
    const char *format = view->format;
    int dtype_plus_one = 0;
    if (format && format[0] && !format[1] && (unsigned char)format[0] < 128)
        dtype_plus_one = speedups_host.dtype_of_format[(unsigned char)format[0]];
    if (!dtype_plus_one || view->ndim > TP_MAX_DIMS ||
        (view->itemsize > 0 && (uintptr_t)view->buf % (uintptr_t)view->itemsize != 0)) {
        PyBuffer_Release(view);
        return 0;
    }
    memset(record, 0, sizeof *record);
    record->kind = TP_PREPARED_ARRAY;
    record->dtype = dtype_plus_one - 1;
    record->ndim = view->ndim;
    record->value.data = view->buf;
    for (int d = 0; d < view->ndim; d++) record->shape[d] = (int64_t)view->shape[d];
    return 1;
}

/* The record of a NumPy array read from its head: 1 done, 0 an array only
 * tp_call's path takes, -1 a dtype object this read does not know (the
 * buffer protocol decides). */
static int array_record_direct(PyObject *array, tp_prepared_arg *record) {
    const numpy_array_head *head = (const numpy_array_head *)array;
    int dtype = -1;
    for (int d = 0; d < speedups_host.num_descrs; d++)
        if (speedups_host.descrs[d].descr == head->descr) {
            dtype = speedups_host.descrs[d].dtype;
            break;
        }
    if (dtype < 0) return -1;
    if ((head->flags & (NUMPY_C_CONTIGUOUS | NUMPY_ALIGNED)) !=
            (NUMPY_C_CONTIGUOUS | NUMPY_ALIGNED) ||
        head->nd < 0 || head->nd > TP_MAX_DIMS)
        return 0;
    memset(record, 0, sizeof *record);
    record->kind = TP_PREPARED_ARRAY;
    record->dtype = dtype;
    record->ndim = head->nd;
    record->value.data = head->data;
    for (int d = 0; d < head->nd; d++) record->shape[d] = (int64_t)head->dimensions[d];
    return 1;
}

/* The record of a Tensor (a TensorBase): its handle, borrowed for the run. */
static int tensor_record(PyObject *tensor, tp_prepared_arg *record) {
    PyObject *pointer = ((TensorBaseObject *)tensor)->ptr;
    void *handle = pointer && PyLong_Check(pointer) ? PyLong_AsVoidPtr(pointer) : NULL;
    if (!handle) {
        PyErr_Clear();
        return 0; /* a released Tensor: tp_call's path explains */
    }
    record->kind = TP_ARG_TENSOR;
    record->value.tensor = handle;
    return 1;
}

/* The record of a Python bool, int or float (exact types, as the ctypes path). */
static int scalar_record(PyObject *value, tp_prepared_arg *record) {
    if (PyBool_Check(value)) {
        record->kind = TP_ARG_BOOL;
        record->value.i = value == Py_True;
        return 1;
    }
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (number == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0; /* beyond int64: tp_call's path explains */
        }
        record->kind = TP_ARG_INT;
        record->value.i = number;
        return 1;
    }
    if (PyFloat_CheckExact(value)) {
        record->kind = TP_ARG_FLOAT;
        record->value.f = PyFloat_AsDouble(value);
        return 1;
    }
    return 0;
}

/* Fills records[i] for every argument; the number of buffers taken goes to
 * *num_views either way. 0: an argument only tp_call's path takes. */
int speedups_fill_records(PyObject *args, int num_args, tp_prepared_arg *records, Py_buffer *views,
                          int *num_views) {
    *num_views = 0;
    for (int i = 0; i < num_args; i++) {
        PyObject *value = PyTuple_GetItem(args, i);
        tp_prepared_arg *record = &records[i];
        PyObject *type = (PyObject *)Py_TYPE(value);
        int ok;
        if (type == speedups_host.ndarray_type) {
            /* The arguments tuple holds the array through the run. */
            ok = speedups_host.direct_arrays ? array_record_direct(value, record) : -1;
            if (ok < 0) {
                ok = array_record(value, &views[*num_views], record);
                if (ok) ++*num_views;
            }
        } else {
            record->dtype = record->ndim = record->reserved = 0;
            ok = type == speedups_host.tensor_type ? tensor_record(value, record)
                                                   : scalar_record(value, record);
        }
        if (!ok) return 0;
    }
    return 1;
}
