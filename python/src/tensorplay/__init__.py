"""TensorPlay from Python: tensors shared with NumPy, the op table as
:mod:`tensorplay.ops`, :func:`compile` over the C frontend, the backend
registry, and model loading. A ctypes layer over libtensorplay (see
``tensorplay._lib`` for where the library is found), with the optional C
extension ``tensorplay._speedups`` for compiled functions' cache hits
(:func:`speedups_status`)."""
from __future__ import annotations

import atexit as _atexit

from . import _lib
from ._compile import CompiledFunction, compile, reset
from ._errors import (BackendError, CompileOutputCountError, DTypeError, FileError,
                      InternalError, InvalidArgument, InvalidBackend, InvalidGraph, NotFound,
                      OutOfMemory, ParseError, ShapeError, StateError, TensorPlayError,
                      Unsupported, UnsupportedFormat)
from ._graph import Graph, load
from ._native import SpeedupsStatus, speedups_status
from ._ops import build_module as _build_ops, install_operators as _install_operators
from ._registry import (Backend, backend_info, get_default_backend, list_backends,
                        register_backend_library, set_default_backend)
from ._tensor import BF16, DTYPES, Tensor, from_numpy, load_npy, save_npy, tensor

ops, _op_specs = _build_ops()
_install_operators(ops)

#: Path of the libtensorplay these bindings use.
library_path: str = _lib.library_path
#: The C library's version ("MAJOR.MINOR.PATCH").
__version__: str = _lib.lib.tp_version().decode()


def _drop_c_references_to_python_memory() -> None:
    # Cached calls keep references to the last inputs (NumPy memory); drop
    # them while Python can still run the release callbacks.
    _lib.lib.tp_compile_reset_all()


_atexit.register(_drop_c_references_to_python_memory)

__all__ = [
    "BF16", "Backend", "BackendError", "CompileOutputCountError", "CompiledFunction", "DTYPES",
    "DTypeError", "FileError", "Graph", "InternalError", "InvalidArgument", "InvalidBackend",
    "InvalidGraph", "NotFound", "OutOfMemory", "ParseError", "ShapeError", "SpeedupsStatus", "StateError",
    "Tensor", "TensorPlayError", "Unsupported", "UnsupportedFormat", "backend_info",
    "compile", "from_numpy", "get_default_backend", "library_path", "list_backends", "load",
    "load_npy", "ops", "register_backend_library", "reset", "save_npy",
    "set_default_backend", "speedups_status", "tensor",
]
