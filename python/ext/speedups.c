/* tensorplay._speedups: the cache hit of a compiled function in C.
 *
 * Owns one thing: turning a Python argument tuple into tp_prepared_arg
 * records, running tp_prepared_call_run with the GIL released and wrapping
 * the outputs as tensorplay Tensors. Everything that is not a plain hit
 * (a miss, an argument only tp_call takes, a busy prepared call) returns
 * None, and the Python package takes its ordinary path, which compiles,
 * explains and raises exactly as without this module.
 *
 * The module never links libtensorplay: the package hands it the addresses
 * of the few functions it calls, taken from the library the package loaded
 * (bind()), so both always use the same copy of the library. It is built
 * for the stable ABI (Py_LIMITED_API 3.11: the buffer protocol entered the
 * limited API then), so one build serves every CPython from 3.11 on. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include "tensorplay/compile.h"

/* Bumped whenever bind()'s arguments or PreparedCall's interface change;
 * the package refuses a module of another revision. */
#define SPEEDUPS_INTERFACE_VERSION 1
/* Arguments and outputs held on the C stack; more take the Python path. */
#define MAX_FAST_ARGS    16
#define MAX_FAST_OUTPUTS 16
/* Threads with their own prepared call (as the ctypes path); others take tp_call. */
#define MAX_PREPARED_THREADS 64
/* NumPy dtype objects the direct array read knows. */
#define MAX_DESCRS 32

/* The head of every NumPy array, PyArrayObject_fields in numpy/ndarraytypes.h
 * (the same from NumPy 1.7 to 2.x; what NumPy's own PyArray_DATA and
 * friends read). Read without NumPy's headers, and only after bind() has
 * checked it against probe arrays; otherwise the buffer protocol is used. */
typedef struct {
    PyObject ob_base; /* PyObject_HEAD */
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} numpy_array_head;
#define NUMPY_C_CONTIGUOUS 0x0001 /* NPY_ARRAY_C_CONTIGUOUS */
#define NUMPY_ALIGNED      0x0100 /* NPY_ARRAY_ALIGNED */

typedef tp_status (*prepared_create_fn)(tp_compiled *, int, tp_prepared_call **);
typedef void (*prepared_free_fn)(tp_prepared_call *);
typedef tp_status (*prepared_run_fn)(tp_prepared_call *, const tp_prepared_arg *, tp_tensor **);
typedef const char *(*last_error_fn)(void);
typedef void (*tensor_release_fn)(tp_tensor *);

/* What bind() received; process-wide, written once under the GIL. */
static struct {
    int bound;
    prepared_create_fn prepared_create;
    prepared_free_fn prepared_free;
    prepared_run_fn prepared_run;
    last_error_fn last_error;
    tensor_release_fn tensor_release;
    PyObject *tensor_type;  /* tensorplay.Tensor */
    PyObject *ndarray_type; /* numpy.ndarray */
    PyObject *error_for;    /* _errors.error_for(status, message) -> exception */
    /* tp_dtype + 1 of each single-character buffer format NumPy exports
     * for a dtype TensorPlay has; 0: not one (the Python path explains). */
    unsigned char dtype_of_format[128];
    PyObject *name_call_slow;
    PyObject *prepared_type;    /* PreparedCall (the module holds the reference) */
    PyObject *tensor_base_type; /* TensorBase (the same) */
    /* NumPy's dtype objects of TensorPlay's dtypes and their tp_dtype, for
     * reading arrays directly (numpy_array_head) once bind() verified it. */
    int direct_arrays;
    int num_descrs;
    struct {
        PyObject *descr;
        int dtype;
    } descrs[MAX_DESCRS];
} host;

typedef struct {
    unsigned long thread;
    tp_prepared_call *call;
} thread_call;

typedef struct {
    PyObject ob_base; /* PyObject_HEAD */
    tp_compiled *compiled;
    int num_args;
    int num_outputs;
    int single_output; /* return a Tensor, not a tuple */
    long long hits;    /* runs that returned outputs (tests prove the module is used) */
    int num_threads;
    thread_call threads[MAX_PREPARED_THREADS];
} PreparedCallObject;

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
        dtype_plus_one = host.dtype_of_format[(unsigned char)format[0]];
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
    for (int d = 0; d < host.num_descrs; d++)
        if (host.descrs[d].descr == head->descr) {
            dtype = host.descrs[d].dtype;
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

/* The head of tensorplay.Tensor when this module is loaded (TensorBase
 * below): the three attributes the package keeps on every Tensor. */
typedef struct {
    PyObject ob_base;  /* PyObject_HEAD */
    PyObject *ptr;     /* _ptr: the tp_tensor handle as an int, or None once released */
    PyObject *base;    /* _base: the NumPy array it shares memory with, or None */
    PyObject *capture; /* _capture: the running capture it belongs to, or None */
} TensorBaseObject;

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
static int fill_records(PyObject *args, int num_args, tp_prepared_arg *records, Py_buffer *views,
                        int *num_views) {
    *num_views = 0;
    for (int i = 0; i < num_args; i++) {
        PyObject *value = PyTuple_GetItem(args, i);
        tp_prepared_arg *record = &records[i];
        PyObject *type = (PyObject *)Py_TYPE(value);
        int ok;
        if (type == host.ndarray_type) {
            /* The arguments tuple holds the array through the run. */
            ok = host.direct_arrays ? array_record_direct(value, record) : -1;
            if (ok < 0) {
                ok = array_record(value, &views[*num_views], record);
                if (ok) ++*num_views;
            }
        } else {
            record->dtype = record->ndim = record->reserved = 0;
            ok = type == host.tensor_type ? tensor_record(value, record)
                                          : scalar_record(value, record);
        }
        if (!ok) return 0;
    }
    return 1;
}

/* ---- outputs ------------------------------------------------------------------ */

/* A Tensor owning `handle` (its reference is handed over, even on failure). */
static PyObject *new_tensor(tp_tensor *handle) {
    PyTypeObject *type = (PyTypeObject *)host.tensor_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    PyObject *tensor = alloc ? alloc(type, 0) : NULL;
    PyObject *pointer = tensor ? PyLong_FromVoidPtr(handle) : NULL;
    if (!pointer) {
        Py_XDECREF(tensor); /* no _ptr: releases nothing */
        host.tensor_release(handle);
        return NULL;
    }
    ((TensorBaseObject *)tensor)->ptr = pointer; /* _base, _capture: NULL reads as None */
    return tensor;
}

static PyObject *wrap_outputs(PreparedCallObject *self, tp_tensor **outputs) {
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
    for (; o < self->num_outputs; o++) host.tensor_release(outputs[o]);
    return result;
}

static PyObject *raise_status(tp_status status) {
    /* bytes: the package decodes the message as the ctypes path does */
    PyObject *error = PyObject_CallFunction(host.error_for, "iy", (int)status, host.last_error());
    if (error) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return NULL;
}

/* ---- PreparedCall ---------------------------------------------------------------- */

/* This thread's prepared call, made on its first hit; NULL past
 * MAX_PREPARED_THREADS threads (with an exception set only on failure). */
static tp_prepared_call *thread_prepared_call(PreparedCallObject *self, int *failed) {
    unsigned long thread = PyThread_get_thread_ident();
    *failed = 0;
    for (int t = 0; t < self->num_threads; t++)
        if (self->threads[t].thread == thread) return self->threads[t].call;
    if (self->num_threads == MAX_PREPARED_THREADS) return NULL;
    tp_prepared_call *call = NULL;
    tp_status status = host.prepared_create(self->compiled, self->num_args, &call);
    if (status != TP_OK) {
        *failed = 1;
        raise_status(status);
        return NULL;
    }
    self->threads[self->num_threads].thread = thread;
    self->threads[self->num_threads].call = call;
    self->num_threads++;
    return call;
}

static PyObject *prepared_run(PyObject *object, PyObject *args) {
    PreparedCallObject *self = (PreparedCallObject *)object;
    if (!PyTuple_Check(args) || PyTuple_Size(args) != self->num_args ||
        self->num_args > MAX_FAST_ARGS || self->num_outputs > MAX_FAST_OUTPUTS)
        Py_RETURN_NONE;
    int failed;
    tp_prepared_call *call = thread_prepared_call(self, &failed);
    if (!call) {
        if (failed) return NULL;
        Py_RETURN_NONE;
    }
    tp_prepared_arg records[MAX_FAST_ARGS];
    Py_buffer views[MAX_FAST_ARGS];
    tp_tensor *outputs[MAX_FAST_OUTPUTS];
    int num_views;
    int filled = fill_records(args, self->num_args, records, views, &num_views);
    tp_status status = TP_OK;
    if (filled) {
        Py_BEGIN_ALLOW_THREADS status = host.prepared_run(call, records, outputs);
        Py_END_ALLOW_THREADS
    }
    for (int v = 0; v < num_views; v++) PyBuffer_Release(&views[v]);
    if (!filled) Py_RETURN_NONE;
    if (status != TP_OK) return raise_status(status);
    if (!outputs[0]) Py_RETURN_NONE; /* not a hit: tp_call compiles */
    self->hits++;
    return wrap_outputs(self, outputs);
}

static int prepared_init(PyObject *object, PyObject *args, PyObject *kwargs) {
    PreparedCallObject *self = (PreparedCallObject *)object;
    PyObject *handle;
    int num_args, num_outputs, single_output;
    static char *keywords[] = {"compiled", "num_args", "num_outputs", "single_output", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oiip", keywords, &handle, &num_args,
                                     &num_outputs, &single_output))
        return -1;
    if (!host.bound) {
        PyErr_SetString(PyExc_RuntimeError,
                        "tensorplay._speedups: bind() was not called (the tensorplay package "
                        "binds it to the libtensorplay it loaded)");
        return -1;
    }
    void *compiled = PyLong_AsVoidPtr(handle);
    if (!compiled) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "tensorplay._speedups.PreparedCall: compiled is 0");
        return -1;
    }
    if (num_args < 0 || num_outputs < 1) {
        PyErr_Format(PyExc_ValueError,
                     "tensorplay._speedups.PreparedCall: %d arguments and %d outputs; a compiled "
                     "function has at least one output",
                     num_args, num_outputs);
        return -1;
    }
    for (int t = 0; t < self->num_threads; t++) host.prepared_free(self->threads[t].call);
    self->num_threads = 0;
    self->compiled = compiled;
    self->num_args = num_args;
    self->num_outputs = num_outputs;
    self->single_output = single_output;
    self->hits = 0;
    return 0;
}

static void prepared_dealloc(PyObject *object) {
    PreparedCallObject *self = (PreparedCallObject *)object;
    for (int t = 0; t < self->num_threads; t++) host.prepared_free(self->threads[t].call);
    PyTypeObject *type = Py_TYPE(object);
    freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_object(object);
    Py_DECREF(type);
}

static PyObject *get_hits(PyObject *object, void *closure) {
    return PyLong_FromLongLong(((PreparedCallObject *)object)->hits);
}

static PyObject *get_single_output(PyObject *object, void *closure) {
    return PyBool_FromLong(((PreparedCallObject *)object)->single_output);
}

static int set_single_output(PyObject *object, PyObject *value, void *closure) {
    int truth = value ? PyObject_IsTrue(value) : -1;
    if (truth < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_AttributeError, "cannot delete");
        return -1;
    }
    ((PreparedCallObject *)object)->single_output = truth;
    return 0;
}

static PyObject *speedups_reads_arrays_directly(PyObject *module, PyObject *unused) {
    return PyBool_FromLong(host.direct_arrays);
}

static PyObject *get_num_threads(PyObject *object, void *closure) {
    return PyLong_FromLong(((PreparedCallObject *)object)->num_threads);
}

static PyMethodDef prepared_methods[] = {
    {"run", prepared_run, METH_O,
     "run(args) -> Tensor, tuple of Tensors, or None when the call is not a plain cache hit "
     "(then make it through tp_call)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef prepared_getset[] = {
    {"hits", get_hits, NULL, "Runs that returned outputs.", NULL},
    {"single_output", get_single_output, set_single_output,
     "Whether a hit returns one Tensor rather than a tuple.", NULL},
    {"num_threads", get_num_threads, NULL, "Threads with their own tp_prepared_call.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot prepared_slots[] = {
    {Py_tp_doc, "PreparedCall(compiled, num_args, num_outputs, single_output): the cache hits "
                "of one compiled function, one tp_prepared_call per thread."},
    {Py_tp_init, prepared_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, prepared_dealloc},
    {Py_tp_methods, prepared_methods},
    {Py_tp_getset, prepared_getset},
    {0, NULL},
};

static PyType_Spec prepared_spec = {
    .name = "tensorplay._speedups.PreparedCall",
    .basicsize = sizeof(PreparedCallObject),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = prepared_slots,
};

/* ---- TensorBase -------------------------------------------------------------------
 *
 * The base class of tensorplay.Tensor when this module is loaded: it holds
 * _ptr, _base and _capture, and its dealloc releases the handle in C, so a
 * Tensor dies without running Python code (the ctypes package's Tensor has
 * the same three slots and a __del__ doing this). */
static int tensor_traverse(PyObject *object, visitproc visit, void *arg) {
    TensorBaseObject *self = (TensorBaseObject *)object;
    Py_VISIT(self->base);
    Py_VISIT(self->capture); /* a capture lists its Tensors until it ends */
    return 0;
}

static int tensor_clear(PyObject *object) {
    TensorBaseObject *self = (TensorBaseObject *)object;
    Py_CLEAR(self->base);
    Py_CLEAR(self->capture);
    return 0;
}

static void tensor_dealloc(PyObject *object) {
    TensorBaseObject *self = (TensorBaseObject *)object;
    PyObject_GC_UnTrack(object);
    PyObject *error_type, *error_value, *error_traceback; /* an exception in flight stays */
    PyErr_Fetch(&error_type, &error_value, &error_traceback);
    if (self->ptr && PyLong_Check(self->ptr)) {
        void *handle = PyLong_AsVoidPtr(self->ptr);
        if (handle && host.tensor_release) host.tensor_release(handle);
        PyErr_Clear();
    }
    Py_CLEAR(self->ptr);
    tensor_clear(object);
    PyErr_Restore(error_type, error_value, error_traceback);
    PyTypeObject *type = Py_TYPE(object);
    freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_object(object);
    Py_DECREF(type);
}

static PyMemberDef tensor_members[] = {
    {"_ptr", T_OBJECT, offsetof(TensorBaseObject, ptr), 0, "The tp_tensor handle, or None."},
    {"_base", T_OBJECT, offsetof(TensorBaseObject, base), 0, "The NumPy array shared, or None."},
    {"_capture", T_OBJECT, offsetof(TensorBaseObject, capture), 0,
     "The capture the Tensor belongs to, or None."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc, "The base of tensorplay.Tensor: its handle is released in C."},
    {Py_tp_traverse, tensor_traverse},
    {Py_tp_clear, tensor_clear},
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_members, tensor_members},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "tensorplay._speedups.TensorBase",
    .basicsize = sizeof(TensorBaseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_slots,
};

/* ---- CompiledCallBase ------------------------------------------------------------
 *
 * The base class of tensorplay.CompiledFunction when this module is loaded:
 * calling the function is this tp_call, so a cache hit runs no Python code.
 * `_fast` is the function's PreparedCall (None until a first call succeeds);
 * everything else is self._call_slow(*args, **kwargs), the Python path. */
typedef struct {
    PyObject ob_base; /* PyObject_HEAD */
    PyObject *fast;
} CompiledCallBaseObject;

static PyObject *compiled_call(PyObject *object, PyObject *args, PyObject *kwargs) {
    PyObject *fast = ((CompiledCallBaseObject *)object)->fast;
    if (fast && (PyObject *)Py_TYPE(fast) == host.prepared_type &&
        (!kwargs || PyDict_Size(kwargs) == 0)) {
        Py_INCREF(fast); /* the call may replace self._fast */
        PyObject *result = prepared_run(fast, args);
        Py_DECREF(fast);
        if (result != Py_None) return result; /* outputs, or NULL: the exception */
        Py_DECREF(result);
    }
    PyObject *slow = PyObject_GetAttr(object, host.name_call_slow);
    if (!slow) return NULL;
    PyObject *result = PyObject_Call(slow, args, kwargs);
    Py_DECREF(slow);
    return result;
}

static void compiled_dealloc(PyObject *object) {
    Py_CLEAR(((CompiledCallBaseObject *)object)->fast);
    PyTypeObject *type = Py_TYPE(object);
    freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_object(object);
    Py_DECREF(type);
}

static PyMemberDef compiled_members[] = {
    {"_fast", T_OBJECT, offsetof(CompiledCallBaseObject, fast), 0,
     "The PreparedCall of the function's cache hits, or None."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot compiled_slots[] = {
    {Py_tp_doc, "The base of tensorplay.CompiledFunction: cache hits are called in C."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_call, compiled_call},
    {Py_tp_dealloc, compiled_dealloc},
    {Py_tp_members, compiled_members},
    {0, NULL},
};

static PyType_Spec compiled_spec = {
    .name = "tensorplay._speedups.CompiledCallBase",
    .basicsize = sizeof(CompiledCallBaseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = compiled_slots,
};

/* ---- bind ------------------------------------------------------------------------- */

static int function_address(PyObject *functions, const char *name, void **out) {
    PyObject *address = PyDict_GetItemString(functions, name); /* borrowed */
    *out = address ? PyLong_AsVoidPtr(address) : NULL;
    if (*out) return 0;
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError,
                     "tensorplay._speedups.bind: functions has no address for '%s'", name);
    return -1;
}

/* descrs: [(numpy dtype object, tp_dtype)] of the direct array read (a
 * list: equal dtypes such as int64's 'l' and 'q' are distinct objects). */
static int bind_descrs(PyObject *descrs) {
    for (int d = 0; d < host.num_descrs; d++) Py_CLEAR(host.descrs[d].descr);
    host.num_descrs = 0;
    for (Py_ssize_t i = 0; i < PyList_Size(descrs); i++) {
        PyObject *key;
        int dtype;
        if (!PyArg_ParseTuple(PyList_GetItem(descrs, i), "Oi", &key, &dtype)) return -1;
        if (host.num_descrs == MAX_DESCRS || dtype < 0 || dtype > 254) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError,
                             "tensorplay._speedups.bind: descrs maps at most %d NumPy dtypes "
                             "to tp_dtype codes",
                             MAX_DESCRS);
            return -1;
        }
        Py_INCREF(key);
        host.descrs[host.num_descrs].descr = key;
        host.descrs[host.num_descrs].dtype = (int)dtype;
        host.num_descrs++;
    }
    return 0;
}

/* probes: [(array, data address, shape, strides, c_contiguous)], as NumPy
 * reports them; 1 when numpy_array_head reads every one the same (then
 * arrays are read directly), 0 when not, -1 on a malformed list. */
static int probes_read_directly(PyObject *probes, PyTypeObject *ndarray_type) {
    Py_ssize_t count = PyList_Size(probes);
    int same = count > 0;
    for (Py_ssize_t p = 0; p < count && same; p++) {
        PyObject *array, *shape, *strides;
        Py_ssize_t data;
        int c_contiguous;
        if (!PyArg_ParseTuple(PyList_GetItem(probes, p), "OnO!O!p", &array, &data, &PyTuple_Type,
                              &shape, &PyTuple_Type, &strides, &c_contiguous))
            return -1;
        if (Py_TYPE(array) != ndarray_type) return 0;
        const numpy_array_head *head = (const numpy_array_head *)array;
        same = (Py_ssize_t)head->data == data && head->nd == (int)PyTuple_Size(shape) &&
               head->nd == (int)PyTuple_Size(strides) &&
               !!(head->flags & NUMPY_C_CONTIGUOUS) == c_contiguous;
        for (int d = 0; same && d < head->nd; d++)
            same = head->dimensions[d] == PyLong_AsSsize_t(PyTuple_GetItem(shape, d)) &&
                   head->strides[d] == PyLong_AsSsize_t(PyTuple_GetItem(strides, d));
        if (PyErr_Occurred()) return -1;
    }
    return same;
}

/* bind_library(functions, record_size): the libtensorplay functions to call,
 * at import (before any Tensor, whose TensorBase releases through them). */
static PyObject *speedups_bind_library(PyObject *module, PyObject *args, PyObject *kwargs) {
    PyObject *functions;
    Py_ssize_t record_size;
    static char *keywords[] = {"functions", "record_size", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!n", keywords, &PyDict_Type, &functions,
                                     &record_size))
        return NULL;
    if (record_size != (Py_ssize_t)sizeof(tp_prepared_arg)) {
        PyErr_Format(PyExc_ValueError,
                     "tensorplay._speedups: the package's tp_prepared_arg is %zd bytes, this "
                     "module's %zu (rebuild TensorPlay so both come from one tree)",
                     record_size, sizeof(tp_prepared_arg));
        return NULL;
    }
    void *create, *free_call, *run, *last_error, *release;
    if (function_address(functions, "tp_prepared_call_create", &create) ||
        function_address(functions, "tp_prepared_call_free", &free_call) ||
        function_address(functions, "tp_prepared_call_run", &run) ||
        function_address(functions, "tp_last_error", &last_error) ||
        function_address(functions, "tp_tensor_release", &release))
        return NULL;
    host.prepared_create = (prepared_create_fn)create;
    host.prepared_free = (prepared_free_fn)free_call;
    host.prepared_run = (prepared_run_fn)run;
    host.last_error = (last_error_fn)last_error;
    host.tensor_release = (tensor_release_fn)release;
    Py_RETURN_NONE;
}

/* bind(tensor_type, ndarray_type, error_for, formats, descrs, probes): the
 * Python side, once tensorplay.Tensor exists (it must derive from TensorBase:
 * new_tensor writes its fields). */
static PyObject *speedups_bind(PyObject *module, PyObject *args, PyObject *kwargs) {
    PyObject *tensor_type, *ndarray_type, *error_for, *formats, *descrs, *probes;
    static char *keywords[] = {"tensor_type", "ndarray_type", "error_for", "formats",
                               "descrs",      "probes",       NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO!O!O!", keywords, &tensor_type,
                                     &ndarray_type, &error_for, &PyDict_Type, &formats,
                                     &PyList_Type, &descrs, &PyList_Type, &probes))
        return NULL;
    if (!host.tensor_release) {
        PyErr_SetString(PyExc_RuntimeError, "tensorplay._speedups.bind: call bind_library() first");
        return NULL;
    }
    if (!PyType_Check(tensor_type) ||
        !PyType_IsSubtype((PyTypeObject *)tensor_type, (PyTypeObject *)host.tensor_base_type) ||
        !PyType_Check(ndarray_type) || !PyCallable_Check(error_for)) {
        PyErr_SetString(PyExc_TypeError,
                        "tensorplay._speedups.bind: tensor_type derives from TensorBase, "
                        "ndarray_type is a type and error_for is callable");
        return NULL;
    }
    unsigned char table[128] = {0};
    PyObject *key, *value;
    Py_ssize_t position = 0;
    while (PyDict_Next(formats, &position, &key, &value)) {
        Py_ssize_t length = 0;
        const char *text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &length) : NULL;
        long code = PyLong_Check(value) ? PyLong_AsLong(value) : -1;
        if (!text || length != 1 || (unsigned char)text[0] >= 128 || code < 0 || code > 254) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError,
                                "tensorplay._speedups.bind: formats maps one-character buffer "
                                "formats to tp_dtype codes");
            return NULL;
        }
        table[(unsigned char)text[0]] = (unsigned char)(code + 1);
    }
    memcpy(host.dtype_of_format, table, sizeof table);
    PyObject *old[3] = {host.tensor_type, host.ndarray_type, host.error_for};
    Py_INCREF(tensor_type);
    Py_INCREF(ndarray_type);
    Py_INCREF(error_for);
    host.tensor_type = tensor_type;
    host.ndarray_type = ndarray_type;
    host.error_for = error_for;
    for (int i = 0; i < 3; i++) Py_XDECREF(old[i]);
    if (bind_descrs(descrs) != 0) return NULL;
    host.direct_arrays = 0;
    int direct = probes_read_directly(probes, (PyTypeObject *)ndarray_type);
    if (direct < 0) return NULL;
    host.direct_arrays = direct;
    host.bound = 1;
    Py_RETURN_NONE;
}

static PyMethodDef speedups_methods[] = {
    {"reads_arrays_directly", speedups_reads_arrays_directly, METH_NOARGS,
     "Whether bind() found NumPy's array head where this module reads it (else the buffer "
     "protocol is used)."},
    {"bind_library", (PyCFunction)(void (*)(void))speedups_bind_library,
     METH_VARARGS | METH_KEYWORDS,
     "bind_library(functions, record_size): the libtensorplay functions this module calls "
     "(name -> address, from the library the package loaded) and sizeof(tp_prepared_arg) as "
     "the package knows it."},
    {"bind", (PyCFunction)(void (*)(void))speedups_bind, METH_VARARGS | METH_KEYWORDS,
     "bind(tensor_type, ndarray_type, error_for, formats, descrs, probes): tensorplay.Tensor "
     "(a TensorBase), numpy.ndarray, the exception factory, the buffer formats of "
     "TensorPlay's dtypes (format -> tp_dtype), NumPy's dtype objects of them "
     "[(dtype, tp_dtype)] and probe arrays [(array, data, shape, strides, c_contiguous)] that "
     "check the direct array read."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tensorplay._speedups",
    .m_doc = "The cache hit of tensorplay.compile's functions in C (optional; the package "
             "works without it).",
    .m_size = -1,
    .m_methods = speedups_methods,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    host.name_call_slow = PyUnicode_InternFromString("_call_slow");
    if (!host.name_call_slow) return NULL;
    PyObject *module = PyModule_Create(&speedups_module);
    if (!module) return NULL;
    PyObject *prepared = PyType_FromSpec(&prepared_spec);
    if (!prepared || PyModule_AddObject(module, "PreparedCall", prepared) != 0) {
        Py_XDECREF(prepared);
        Py_DECREF(module);
        return NULL;
    }
    host.prepared_type = prepared; /* borrowed: the module holds it */
    PyObject *tensor_base = PyType_FromSpec(&tensor_spec);
    if (!tensor_base || PyModule_AddObject(module, "TensorBase", tensor_base) != 0) {
        Py_XDECREF(tensor_base);
        Py_DECREF(module);
        return NULL;
    }
    host.tensor_base_type = tensor_base;
    PyObject *compiled = PyType_FromSpec(&compiled_spec);
    if (!compiled || PyModule_AddObject(module, "CompiledCallBase", compiled) != 0 ||
        PyModule_AddIntConstant(module, "INTERFACE_VERSION", SPEEDUPS_INTERFACE_VERSION) != 0) {
        Py_XDECREF(compiled);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
