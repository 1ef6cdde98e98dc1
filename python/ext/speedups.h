/* tensorplay._speedups, the Python package's optional C extension: what its
 * files share (python/ext/speedups_*.c). The module owns one thing, the
 * cache hit of a compiled function in C:
 *   speedups_records.c        Python arguments -> tp_prepared_arg records
 *   speedups_outputs.c        tp_tensor outputs -> Tensors; C errors -> exceptions
 *   speedups_prepared_call.c  PreparedCall: one tp_prepared_call per thread, the run
 *   speedups_tensor_base.c    TensorBase: Tensor's C base (handle released in C)
 *   speedups_compiled_base.c  CompiledCallBase: CompiledFunction's C tp_call
 *   speedups_module.c         bind_library/bind (the host table) and the module
 * Everything that is not a plain hit returns None and the package takes its
 * ordinary Python path, which compiles, explains and raises exactly as
 * without this module.
 *
 * The module never links libtensorplay: the package hands it the addresses
 * of the few functions it calls, taken from the library the package loaded
 * (bind_library()), so both always use the same copy of the library. It is
 * built for the stable ABI (Py_LIMITED_API 3.11: the buffer protocol entered
 * the limited API then), so one build serves every CPython from 3.11 on. */
#ifndef TENSORPLAY_SPEEDUPS_H
#define TENSORPLAY_SPEEDUPS_H
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
/* What bind_library() and bind() received; process-wide, written under the GIL. */
struct speedups_host {
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
};
extern struct speedups_host speedups_host;

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

/* The head of tensorplay.Tensor when this module is loaded (TensorBase
 * below): the three attributes the package keeps on every Tensor. */
typedef struct {
    PyObject ob_base;  /* PyObject_HEAD */
    PyObject *ptr;     /* _ptr: the tp_tensor handle as an int, or None once released */
    PyObject *base;    /* _base: the NumPy array it shares memory with, or None */
    PyObject *capture; /* _capture: the running capture it belongs to, or None */
} TensorBaseObject;

typedef struct {
    PyObject ob_base; /* PyObject_HEAD */
    PyObject *fast;
} CompiledCallBaseObject;

/* speedups_records.c: records[i] for every argument (buffers taken counted
 * in *num_views either way); 0: an argument only tp_call's path takes. */
int speedups_fill_records(PyObject *args, int num_args, tp_prepared_arg *records, Py_buffer *views,
                          int *num_views);
/* speedups_outputs.c */
PyObject *speedups_wrap_outputs(PreparedCallObject *self, tp_tensor **outputs);
PyObject *speedups_raise_status(tp_status status);
/* speedups_prepared_call.c: run(args) -> outputs, or None when not a plain hit. */
PyObject *speedups_prepared_run(PyObject *object, PyObject *args);
extern PyType_Spec speedups_prepared_spec;
/* speedups_tensor_base.c, speedups_compiled_base.c */
extern PyType_Spec speedups_tensor_spec;
extern PyType_Spec speedups_compiled_spec;

#endif
