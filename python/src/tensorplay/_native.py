"""Finding and binding the optional C extension ``tensorplay._speedups``.

The extension makes a compiled function's cache hit one C call (argument
records, ``tp_prepared_call_run`` with the GIL released, Tensor results)
instead of a ctypes call driven by Python code. It is built and installed
with the C library, not by ``pip install`` (which needs no compiler): it is
looked for next to the libtensorplay the package loaded, in its private
folder: ``<folder of libtensorplay.so>/tensorplay/tensorplay_speedups.abi3.so``
(``build/tensorplay/`` in a build tree, ``<libdir>/tensorplay/`` after
``cmake --install``). Without it, or with ``TENSORPLAY_NO_SPEEDUPS=1``
in the environment, the ctypes path does the same work unchanged.

The module never links libtensorplay: at import it is handed the addresses
of the library functions it calls, taken from the library ctypes loaded, so
the two always use the same copy. It also gives :class:`tensorplay.Tensor`
its base class (``TensorBase``: the handle is released in C when a Tensor
dies), so it is loaded before ``_tensor`` defines Tensor, which then calls
:func:`bind_python`.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
from ctypes import c_char_p, c_void_p
from typing import Any, Dict, NamedTuple, Optional

import numpy as np

from . import _errors, _lib

FILE_NAME = "tensorplay_speedups.abi3.so"
MODULE_NAME = "tensorplay._speedups"
INTERFACE_VERSION = 1  # SPEEDUPS_INTERFACE_VERSION of python/ext/speedups.h
_BOUND_FUNCTIONS = ("tp_prepared_call_create", "tp_prepared_call_free", "tp_prepared_call_run",
                    "tp_last_error", "tp_tensor_release")


class SpeedupsStatus(NamedTuple):
    """Whether compiled functions take their cache hits through the C extension.

    ``active``: the extension is loaded and used; ``path``: where it was
    looked for (or loaded from); ``reason``: why it is not used, or "loaded".
    """

    active: bool
    path: Optional[str]
    reason: str


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p), ("dli_sname", c_char_p),
                ("dli_saddr", c_void_p)]


def _library_folder() -> Optional[str]:
    """The folder of the libtensorplay that ctypes loaded (dladdr on one of its functions)."""
    path = _lib.library_path
    if os.sep not in path:
        try:
            dladdr = ctypes.CDLL(None).dladdr
            dladdr.argtypes = [c_void_p, ctypes.POINTER(_DlInfo)]
            info = _DlInfo()
            address = ctypes.cast(_lib.lib.tp_last_error, c_void_p).value
            if not dladdr(address, ctypes.byref(info)) or not info.dli_fname:
                return None
            path = os.fsdecode(info.dli_fname)
        except (AttributeError, OSError):
            return None
    return os.path.dirname(os.path.realpath(path))


def _buffer_formats(codes: Dict[np.dtype, int]) -> dict:
    """The buffer format NumPy exports for each dtype TensorPlay has -> its tp_dtype."""
    formats = {}
    for dtype, code in codes.items():
        if dtype.fields is not None or not dtype.isnative:
            continue  # bf16 (a structured dtype) takes the Python path
        for char in {dtype.char, *(c for c in np.typecodes["All"] if np.dtype(c) == dtype)}:
            formats[memoryview(np.zeros(1, np.dtype(char))).format] = code
    return {f: c for f, c in formats.items() if len(f) == 1}


def _dtype_objects(codes: Dict[np.dtype, int]) -> list:
    """[(NumPy dtype object, tp_dtype)] for the extension's direct array read:
    every distinct builtin dtype object of a dtype TensorPlay has."""
    found = []
    for char in np.typecodes["All"]:
        dtype = np.dtype(char)
        code = codes.get(dtype)
        if code is not None and dtype.fields is None and dtype.isnative and \
                all(dtype is not seen for seen, _ in found):
            found.append((dtype, code))
    return found


def _probe_arrays() -> list:
    """Arrays with what NumPy says of them, for the extension to check that it
    reads NumPy's array head where NumPy keeps it."""
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    return [(array, array.ctypes.data, array.shape, array.strides,
             bool(array.flags.c_contiguous))
            for array in (base, base[:, ::2], base[1], np.zeros((), np.int64))]


def _error_for(status: int, message: Optional[bytes]) -> BaseException:
    return _errors.error_for(status, (message or b"").decode(errors="replace"))


def _bind_library(module: Any) -> None:
    functions = {name: ctypes.cast(getattr(_lib.lib, name), c_void_p).value
                 for name in _BOUND_FUNCTIONS}
    module.bind_library(functions=functions, record_size=_lib.PREPARED_ARG_SIZE)


def bind_python(tensor_type: type, codes: Dict[np.dtype, int]) -> None:
    """Hands the extension tensorplay.Tensor (derived from its TensorBase) and
    the dtype tables; called by ``_tensor`` once Tensor exists. On failure the
    package uses the ctypes path (Tensor keeps its base: it only releases)."""
    global speedups, status
    if speedups is None:
        return
    try:
        speedups.bind(tensor_type=tensor_type, ndarray_type=np.ndarray, error_for=_error_for,
                      formats=_buffer_formats(codes), descrs=_dtype_objects(codes),
                      probes=_probe_arrays())
    except (ValueError, TypeError, RuntimeError) as error:
        speedups = None
        status = SpeedupsStatus(False, status.path, f"{status.path} did not bind: {error}")


def _load() -> "tuple[Any, SpeedupsStatus]":
    if os.environ.get("TENSORPLAY_NO_SPEEDUPS", "") not in ("", "0"):
        return None, SpeedupsStatus(False, None, "TENSORPLAY_NO_SPEEDUPS is set")
    folder = _library_folder()
    if folder is None:
        return None, SpeedupsStatus(False, None, "the folder of libtensorplay is unknown")
    path = os.path.join(folder, "tensorplay", FILE_NAME)
    if not os.path.exists(path):
        return None, SpeedupsStatus(
            False, path, f"{path} does not exist (built with the library when python3-dev "
            "is installed; TP_WITH_PYTHON_EXT)")
    try:
        loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, path)
        spec = importlib.util.spec_from_file_location(MODULE_NAME, path, loader=loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        version = getattr(module, "INTERFACE_VERSION", None)
        if version != INTERFACE_VERSION:
            return None, SpeedupsStatus(
                False, path, f"{path} has interface version {version}, the package wants "
                f"{INTERFACE_VERSION} (rebuild and reinstall TensorPlay from one tree)")
        _bind_library(module)
    except (ImportError, OSError, ValueError, TypeError) as error:
        return None, SpeedupsStatus(False, path, f"{path} did not load: {error}")
    sys.modules[MODULE_NAME] = module
    return module, SpeedupsStatus(True, path, "loaded")


speedups, status = _load()


def speedups_status() -> SpeedupsStatus:
    """Whether compiled functions' cache hits go through the C extension
    ``tensorplay._speedups`` (see :class:`SpeedupsStatus`); without it the
    ctypes path does the same work, a few microseconds slower per call."""
    return status
