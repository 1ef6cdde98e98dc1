/* tensorplay._speedups.TensorBase: the C base of tensorplay.Tensor. */
#include "speedups.h"

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
        if (handle && speedups_host.tensor_release) speedups_host.tensor_release(handle);
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

PyType_Spec speedups_tensor_spec = {
    .name = "tensorplay._speedups.TensorBase",
    .basicsize = sizeof(TensorBaseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_slots,
};
