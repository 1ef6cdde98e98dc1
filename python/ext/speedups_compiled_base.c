/* tensorplay._speedups.CompiledCallBase: CompiledFunction's C tp_call. */
#include "speedups.h"

/* ---- CompiledCallBase ------------------------------------------------------------
 *
 * The base class of tensorplay.CompiledFunction when this module is loaded:
 * calling the function is this tp_call, so a cache hit runs no Python code.
 * `_fast` is the function's PreparedCall (None until a first call succeeds);
 * everything else is self._call_slow(*args, **kwargs), the Python path. */

static PyObject *compiled_call(PyObject *object, PyObject *args, PyObject *kwargs) {
    PyObject *fast = ((CompiledCallBaseObject *)object)->fast;
    if (fast && (PyObject *)Py_TYPE(fast) == speedups_host.prepared_type &&
        (!kwargs || PyDict_Size(kwargs) == 0)) {
        Py_INCREF(fast); /* the call may replace self._fast */
        PyObject *result = speedups_prepared_run(fast, args);
        Py_DECREF(fast);
        if (result != Py_None) return result; /* outputs, or NULL: the exception */
        Py_DECREF(result);
    }
    PyObject *slow = PyObject_GetAttr(object, speedups_host.name_call_slow);
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

PyType_Spec speedups_compiled_spec = {
    .name = "tensorplay._speedups.CompiledCallBase",
    .basicsize = sizeof(CompiledCallBaseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = compiled_slots,
};
