/* tensorplay._speedups: bind_library/bind (the host table) and the module. */
#include "speedups.h"

struct speedups_host speedups_host;

static PyObject *speedups_reads_arrays_directly(PyObject *module, PyObject *unused) {
    return PyBool_FromLong(speedups_host.direct_arrays);
}

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
    for (int d = 0; d < speedups_host.num_descrs; d++) Py_CLEAR(speedups_host.descrs[d].descr);
    speedups_host.num_descrs = 0;
    for (Py_ssize_t i = 0; i < PyList_Size(descrs); i++) {
        PyObject *key;
        int dtype;
        if (!PyArg_ParseTuple(PyList_GetItem(descrs, i), "Oi", &key, &dtype)) return -1;
        if (speedups_host.num_descrs == MAX_DESCRS || dtype < 0 || dtype > 254) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError,
                             "tensorplay._speedups.bind: descrs maps at most %d NumPy dtypes "
                             "to tp_dtype codes",
                             MAX_DESCRS);
            return -1;
        }
        Py_INCREF(key);
        speedups_host.descrs[speedups_host.num_descrs].descr = key;
        speedups_host.descrs[speedups_host.num_descrs].dtype = (int)dtype;
        speedups_host.num_descrs++;
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
    speedups_host.prepared_create = (prepared_create_fn)create;
    speedups_host.prepared_free = (prepared_free_fn)free_call;
    speedups_host.prepared_run = (prepared_run_fn)run;
    speedups_host.last_error = (last_error_fn)last_error;
    speedups_host.tensor_release = (tensor_release_fn)release;
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
    if (!speedups_host.tensor_release) {
        PyErr_SetString(PyExc_RuntimeError, "tensorplay._speedups.bind: call bind_library() first");
        return NULL;
    }
    if (!PyType_Check(tensor_type) ||
        !PyType_IsSubtype((PyTypeObject *)tensor_type,
                          (PyTypeObject *)speedups_host.tensor_base_type) ||
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
    memcpy(speedups_host.dtype_of_format, table, sizeof table);
    PyObject *old[3] = {speedups_host.tensor_type, speedups_host.ndarray_type,
                        speedups_host.error_for};
    Py_INCREF(tensor_type);
    Py_INCREF(ndarray_type);
    Py_INCREF(error_for);
    speedups_host.tensor_type = tensor_type;
    speedups_host.ndarray_type = ndarray_type;
    speedups_host.error_for = error_for;
    for (int i = 0; i < 3; i++) Py_XDECREF(old[i]);
    if (bind_descrs(descrs) != 0) return NULL;
    speedups_host.direct_arrays = 0;
    int direct = probes_read_directly(probes, (PyTypeObject *)ndarray_type);
    if (direct < 0) return NULL;
    speedups_host.direct_arrays = direct;
    speedups_host.bound = 1;
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
    speedups_host.name_call_slow = PyUnicode_InternFromString("_call_slow");
    if (!speedups_host.name_call_slow) return NULL;
    PyObject *module = PyModule_Create(&speedups_module);
    if (!module) return NULL;
    PyObject *prepared = PyType_FromSpec(&speedups_prepared_spec);
    if (!prepared || PyModule_AddObject(module, "PreparedCall", prepared) != 0) {
        Py_XDECREF(prepared);
        Py_DECREF(module);
        return NULL;
    }
    speedups_host.prepared_type = prepared; /* borrowed: the module holds it */
    PyObject *tensor_base = PyType_FromSpec(&speedups_tensor_spec);
    if (!tensor_base || PyModule_AddObject(module, "TensorBase", tensor_base) != 0) {
        Py_XDECREF(tensor_base);
        Py_DECREF(module);
        return NULL;
    }
    speedups_host.tensor_base_type = tensor_base;
    PyObject *compiled = PyType_FromSpec(&speedups_compiled_spec);
    if (!compiled || PyModule_AddObject(module, "CompiledCallBase", compiled) != 0 ||
        PyModule_AddIntConstant(module, "INTERFACE_VERSION", SPEEDUPS_INTERFACE_VERSION) != 0) {
        Py_XDECREF(compiled);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
