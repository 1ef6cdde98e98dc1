/* tensorplay._speedups.PreparedCall: a compiled function's cache hits, one
 * tp_prepared_call per thread, run with the GIL released. */
#include "speedups.h"

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
    tp_status status = speedups_host.prepared_create(self->compiled, self->num_args, &call);
    if (status != TP_OK) {
        *failed = 1;
        speedups_raise_status(status);
        return NULL;
    }
    self->threads[self->num_threads].thread = thread;
    self->threads[self->num_threads].call = call;
    self->num_threads++;
    return call;
}

PyObject *speedups_prepared_run(PyObject *object, PyObject *args) {
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
    int filled = speedups_fill_records(args, self->num_args, records, views, &num_views);
    tp_status status = TP_OK;
    if (filled) {
        Py_BEGIN_ALLOW_THREADS status = speedups_host.prepared_run(call, records, outputs);
        Py_END_ALLOW_THREADS
    }
    for (int v = 0; v < num_views; v++) PyBuffer_Release(&views[v]);
    if (!filled) Py_RETURN_NONE;
    if (status != TP_OK) return speedups_raise_status(status);
    if (!outputs[0]) Py_RETURN_NONE; /* not a hit: tp_call compiles */
    self->hits++;
    return speedups_wrap_outputs(self, outputs);
}

static int prepared_init(PyObject *object, PyObject *args, PyObject *kwargs) {
    PreparedCallObject *self = (PreparedCallObject *)object;
    PyObject *handle;
    int num_args, num_outputs, single_output;
    static char *keywords[] = {"compiled", "num_args", "num_outputs", "single_output", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oiip", keywords, &handle, &num_args,
                                     &num_outputs, &single_output))
        return -1;
    if (!speedups_host.bound) {
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
    for (int t = 0; t < self->num_threads; t++) speedups_host.prepared_free(self->threads[t].call);
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
    for (int t = 0; t < self->num_threads; t++) speedups_host.prepared_free(self->threads[t].call);
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

static PyObject *get_num_threads(PyObject *object, void *closure) {
    return PyLong_FromLong(((PreparedCallObject *)object)->num_threads);
}

static PyMethodDef prepared_methods[] = {
    {"run", speedups_prepared_run, METH_O,
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

PyType_Spec speedups_prepared_spec = {
    .name = "tensorplay._speedups.PreparedCall",
    .basicsize = sizeof(PreparedCallObject),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = prepared_slots,
};
