"""Finding libtensorplay and declaring the C API for ctypes.

The bindings use ctypes (standard library, no C compiler at install, and a
CDLL call releases the GIL, so several Python threads can run compiled
functions at once). cffi's ABI mode would work the same way but is one more
dependency and brings nothing ctypes lacks for this API.

Where the library is looked for, in order (the first that loads wins):

1. ``TENSORPLAY_LIBRARY``: a path to ``libtensorplay.so`` (or the folder
   holding it);
2. next to the Python installation: ``<sys.prefix>/lib``, then
   ``<sys.base_prefix>/lib`` (a ``cmake --install --prefix`` into the venv);
3. the build tree of the checkout the package was installed from
   (``<checkout>/build``: setup.py records the checkout at install time; a
   package run from the source tree uses the tree it is in);
4. the system loader: ``libtensorplay.so.0`` through ``ld.so`` (the
   ``ldconfig`` cache, ``LD_LIBRARY_PATH``, ``/usr/local/lib``, ...).
"""
from __future__ import annotations

import ctypes
import os
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, Union, c_bool, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p)
from typing import List

MAX_DIMS = 8
SLICE_END = (1 << 63) - 1

_LIBRARY_NAMES = ("libtensorplay.so", "libtensorplay.so.0")


def _candidates() -> List[str]:
    found: List[str] = []
    explicit = os.environ.get("TENSORPLAY_LIBRARY")
    if explicit:
        if os.path.isdir(explicit):
            found += [os.path.join(explicit, name) for name in _LIBRARY_NAMES]
        else:
            found.append(explicit)
        return found  # an explicit choice is never second-guessed
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix]):
        for libdir in ("lib", "lib64"):
            found += [os.path.join(prefix, libdir, name) for name in _LIBRARY_NAMES]
    for checkout in _checkouts():
        found += [os.path.join(checkout, "build", name) for name in _LIBRARY_NAMES]
    found += list(_LIBRARY_NAMES[::-1])  # bare names: the system loader
    return found


def _checkouts() -> List[str]:
    """The source checkout: recorded by setup.py at install, or the tree this file is in."""
    places = []
    try:
        from ._origin import CHECKOUT  # written by setup.py when pip installs the package
        places.append(CHECKOUT)
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))  # <checkout>/python/src/tensorplay
    places.append(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    return list(dict.fromkeys(places))


def _load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            tried.append(f"{path} ({error})")
    raise ImportError(
        "tensorplay: libtensorplay was not found; tried:\n  " + "\n  ".join(tried) +
        "\nSet TENSORPLAY_LIBRARY to the path of libtensorplay.so (e.g. build/libtensorplay.so "
        "of a TensorPlay build) or install the C library (cmake --install build).")


lib = _load()
library_path: str = getattr(lib, "_name", "")

# ---- structs ----------------------------------------------------------------------


class ArgValue(Union):
    _fields_ = [("tensor", c_void_p), ("i", c_int64), ("f", c_double), ("b", c_bool)]


class Arg(Structure):
    """tp_arg."""
    _anonymous_ = ("value",)
    _fields_ = [("kind", c_int), ("value", ArgValue)]


ARG_TENSOR, ARG_INT, ARG_FLOAT, ARG_BOOL = 0, 1, 2, 3
DYNAMIC_UNSET, DYNAMIC_STATIC, DYNAMIC_DYNAMIC = 0, 1, 2


class CompileOptions(Structure):
    """tp_compile_options."""
    _fields_ = [("struct_size", c_size_t), ("backend", c_char_p), ("mode", c_char_p),
                ("options", POINTER(c_char_p)), ("num_options", c_int), ("fullgraph", c_bool),
                ("dynamic", c_int), ("recompile_limit", c_int), ("disable", c_bool),
                ("name", c_char_p), ("param_names", POINTER(c_char_p)), ("num_params", c_int),
                ("num_outputs", c_int), ("user_data", c_void_p),
                ("fallback_backend", c_char_p)]  # contract revision 2 (partitioning)


class Attrs(Structure):
    """tp_attrs."""
    _fields_ = [("naxes", c_int32), ("axes", c_int64 * MAX_DIMS), ("keepdim", c_bool),
                ("shape_ndim", c_int32), ("shape", c_int64 * MAX_DIMS), ("nperm", c_int32),
                ("perm", c_int64 * MAX_DIMS), ("axis", c_int64), ("dim0", c_int64),
                ("dim1", c_int64), ("start", c_int64), ("stop", c_int64), ("step", c_int64),
                ("range_start", c_double), ("range_stop", c_double), ("range_step", c_double),
                ("dtype", c_int), ("value", c_double), ("eps", c_double), ("approximate", c_int),
                ("beta", c_double), ("threshold", c_double), ("data", c_void_p),
                ("nkernel_shape", c_int32), ("nstrides", c_int32), ("npads", c_int32),
                ("ndilations", c_int32), ("noutput_padding", c_int32),
                ("kernel_shape", c_int64 * MAX_DIMS), ("strides", c_int64 * MAX_DIMS),
                ("pads", c_int64 * MAX_DIMS), ("dilations", c_int64 * MAX_DIMS),
                ("output_padding", c_int64 * MAX_DIMS), ("group", c_int64),
                ("ceil_mode", c_bool), ("count_include_pad", c_bool)]


class PartitionRegion(Structure):
    """tp_partition_region_info."""
    _fields_ = [("backend", c_char_p), ("num_nodes", c_int32), ("num_inputs", c_int32),
                ("num_outputs", c_int32)]


class OpInfo(Structure):
    """tp_op_info."""
    _fields_ = [("struct_size", c_size_t), ("name", c_char_p), ("kind", c_char_p),
                ("min_arity", c_int), ("max_arity", c_int), ("attr_mask", c_uint32)]


class BackendInfo(Structure):
    """tp_backend_info."""
    _fields_ = [("name", c_char_p), ("state", c_int), ("source", c_int), ("reason", c_char_p),
                ("description", c_char_p), ("tags", c_char_p), ("file", c_char_p),
                ("line", c_int), ("library", c_char_p), ("entry", c_char_p),
                ("contract", c_int), ("min_core", c_char_p), ("max_core", c_char_p),
                ("num_requires", c_int), ("requires", POINTER(c_char_p)),
                ("requires_found", POINTER(c_char_p)), ("num_warnings", c_int),
                ("warnings", POINTER(c_char_p)), ("version", c_char_p),
                # contract revision 2
                ("min_contract", c_int), ("priority", c_int), ("revision", c_int)]


class BackendListOptions(Structure):
    """tp_backend_list_options."""
    _fields_ = [("struct_size", c_uint32), ("exclude_tags", c_char_p),
                ("include_unavailable", c_bool), ("include_shadowed", c_bool)]


FN = CFUNCTYPE(None, c_void_p, POINTER(Arg), c_int, POINTER(c_void_p), c_int, c_void_p)
RELEASE_FN = CFUNCTYPE(None, c_void_p)


def _declare(name: str, restype, *argtypes) -> None:
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)


_P = c_void_p
_I64P = POINTER(c_int64)
for _name, _res, _args in [
    ("tp_status_name", c_char_p, [c_int]),
    ("tp_last_error", c_char_p, []),
    ("tp_clear_error", None, []),
    ("tp_version", c_char_p, []),
    ("tp_free", None, [_P]),
    ("tp_dtype_name", c_char_p, [c_int]),
    ("tp_tensor_create", c_int, [c_int, c_int, _I64P, POINTER(_P)]),
    # shape as c_void_p: the bindings pass it packed in bytes
    ("tp_tensor_wrap", c_int, [c_int, c_int, _P, _P, RELEASE_FN, _P, POINTER(_P)]),
    ("tp_tensor_retain", _P, [_P]),
    ("tp_tensor_release", None, [_P]),
    ("tp_tensor_dtype", c_int, [_P]),
    ("tp_tensor_ndim", c_int, [_P]),
    ("tp_tensor_shape", _I64P, [_P]),
    ("tp_tensor_numel", c_int64, [_P]),
    ("tp_tensor_nbytes", c_size_t, [_P]),
    ("tp_tensor_data", _P, [_P]),
    ("tp_tensor_data_mut", _P, [_P]),
    ("tp_tensor_version", c_uint64, [_P]),
    ("tp_tensor_get_f64", c_double, [_P, c_int64]),
    ("tp_npy_load", c_int, [c_char_p, POINTER(_P)]),
    ("tp_npy_save", c_int, [c_char_p, _P]),
    ("tp_ctx_create", _P, []),
    ("tp_ctx_destroy", None, [_P]),
    ("tp_ctx_status", c_int, [_P]),
    ("tp_ctx_error", c_char_p, [_P]),
    ("tp_ctx_clear_error", None, [_P]),
    ("tp_ctx_scope_begin", c_size_t, [_P]),
    ("tp_ctx_scope_end", None, [_P, c_size_t, POINTER(_P), c_int]),
    ("tp_ctx_adopt", _P, [_P, _P]),
    ("tp_op", _P, [_P, c_char_p, POINTER(_P), c_int, POINTER(Attrs)]),
    ("tp_op_count", c_int, []),
    ("tp_op_describe", c_int, [c_int, POINTER(OpInfo)]),
    ("tp_attr_key_name", c_char_p, [c_int]),
    ("tp_ndim", c_int, [_P, _P]),
    ("tp_dim", c_int64, [_P, _P, c_int]),
    ("tp_item_bool", c_bool, [_P, _P]),
    ("tp_item_i64", c_int64, [_P, _P]),
    ("tp_item_f64", c_double, [_P, _P]),
    ("tp_scalar", _P, [_P, c_int, c_double]),
    ("tp_compile", c_int, [FN, POINTER(CompileOptions), POINTER(_P)]),
    ("tp_compile_graph", c_int, [_P, POINTER(CompileOptions), POINTER(_P)]),
    ("tp_compiled_free", None, [_P]),
    ("tp_call", c_int, [_P, POINTER(Arg), c_int, POINTER(_P)]),
    ("tp_prepared_call_create", c_int, [_P, c_int, POINTER(_P)]),
    ("tp_prepared_call_free", None, [_P]),
    ("tp_compiled_num_entries", c_int, [_P]),
    ("tp_compiled_num_compiles", c_int, [_P]),
    ("tp_compiled_last_recompile_reasons", c_int, [_P, POINTER(POINTER(c_char_p)), POINTER(c_int)]),
    ("tp_compiled_uncompiled_reason", c_char_p, [_P]),
    ("tp_compile_reset_all", None, []),
    ("tp_compiled_last_partition", c_int, [_P, POINTER(POINTER(PartitionRegion)), POINTER(c_int)]),
    ("tp_graph_load", c_int, [c_char_p, POINTER(_P)]),
    # include/tensorplay/onnx.h: present in every build; without the importer
    # (TP_WITH_ONNX=OFF) tp_onnx_available() is false and loading fails.
    ("tp_onnx_available", c_bool, []),
    ("tp_graph_load_onnx", c_int, [c_char_p, POINTER(_P)]),
    ("tp_graph_destroy", None, [_P]),
    ("tp_graph_num_inputs", c_int, [_P]),
    ("tp_graph_num_outputs", c_int, [_P]),
    ("tp_graph_name", c_char_p, [_P]),
    ("tp_graph_input", c_int32, [_P, c_int]),
    ("tp_graph_value_name", c_char_p, [_P, c_int32]),
    ("tp_backend_list", c_int, [POINTER(BackendListOptions), POINTER(POINTER(BackendInfo)), POINTER(c_int)]),
    ("tp_backend_info_get", c_int, [c_char_p, POINTER(POINTER(BackendInfo))]),
    ("tp_backend_info_release", None, [POINTER(BackendInfo), c_int]),
    ("tp_backend_state_name", c_char_p, [c_int]),
    ("tp_backend_lookup", c_int, [c_char_p, POINTER(_P)]),
    ("tp_backend_get_default", c_char_p, []),
    ("tp_backend_set_default", c_int, [c_char_p]),
    ("tp_backend_register_file", c_int, [c_char_p]),
]:
    _declare(_name, _res, *_args)

# tp_call and tp_tensor_release are the hot path of a cache hit: plain
# attribute lookups are hoisted here so call sites skip the CDLL __getattr__.
tp_call = lib.tp_call
# The cache-hit path: tp_call without argtypes (each converter costs a
# microsecond on a loaded machine), called with a c_void_p handle, the tp_arg
# array packed into a bytes object (struct.pack: kind in the first 8 bytes,
# the union in the next 8) and a c_void_p output array. The GIL is released
# around it like around every CDLL call.
tp_call_packed = ctypes.CDLL(library_path).tp_call
tp_call_packed.restype = c_int
tp_call_packed.argtypes = None
assert ctypes.sizeof(Arg) == 16 and Arg.value.offset == 8, "tp_arg layout: kind, then 8-byte union"
# The cache hit (see _compile.py): one foreign call per call, with the
# prepared call's handle (c_void_p) and one ctypes buffer holding the
# tp_prepared_arg records followed by the output slots; no argtypes, so
# ctypes runs no converter.
tp_prepared_call_run = ctypes.CDLL(library_path).tp_prepared_call_run
tp_prepared_call_run.restype = c_int
tp_prepared_call_run.argtypes = None
PREPARED_ARG_SIZE = 88  # sizeof(tp_prepared_arg): kind, dtype, ndim, reserved, value, shape[8]
PREPARED_ARRAY = 16  # TP_PREPARED_ARRAY
tp_tensor_release = lib.tp_tensor_release
tp_tensor_retain = lib.tp_tensor_retain
