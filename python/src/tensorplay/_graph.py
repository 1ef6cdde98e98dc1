"""tensorplay.load: a model file as a compiled function over NumPy arrays."""
from __future__ import annotations

import os
from ctypes import byref, c_void_p, sizeof
from typing import Any, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _errors, _lib
from ._compile import _encode, _strings
from ._tensor import Tensor, _wrap_array

lib = _lib.lib


class Graph:
    """A loaded graph, compiled through the C frontend (tp_compile_graph).

    Call it with one NumPy array (or Tensor) per graph input; it returns a
    NumPy array, or a tuple of them when the graph has several outputs. The
    arrays returned share memory with the C tensors (no copy).
    """

    def __init__(self, graph: int, path: str, backend: Optional[str],
                 options: Optional[Mapping[str, Any]]) -> None:
        self.path = path
        try:
            self.name: str = lib.tp_graph_name(graph).decode()
            self.num_outputs: int = lib.tp_graph_num_outputs(graph)
            self.input_names: List[str] = [
                lib.tp_graph_value_name(graph, lib.tp_graph_input(graph, i)).decode().lstrip("%")
                for i in range(lib.tp_graph_num_inputs(graph))]
            option_strings = [f"{k}={v}" for k, v in (options or {}).items()]
            self._keep = [_encode(backend), _strings(option_strings), _encode(self.name)]
            compile_options = _lib.CompileOptions(
                struct_size=sizeof(_lib.CompileOptions), backend=self._keep[0],
                options=self._keep[1] if option_strings else None,
                num_options=len(option_strings), name=self._keep[2])
            handle = c_void_p()
            _errors.check(lib.tp_compile_graph(graph, byref(compile_options), byref(handle)))
            self._handle = handle.value
        finally:
            lib.tp_graph_destroy(graph)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            try:
                lib.tp_compiled_free(handle)
            except Exception:
                pass

    def __call__(self, *inputs: Union[np.ndarray, Tensor]) -> Union[np.ndarray, Tuple[np.ndarray, ...]]:
        """Runs the graph on one array per input; returns NumPy arrays over the results."""
        if len(inputs) != len(self.input_names):
            raise TypeError(f"graph '{self.name}' ({self.path}) takes {len(self.input_names)} "
                            f"inputs ({', '.join(self.input_names)}), got {len(inputs)}")
        args = (_lib.Arg * max(len(inputs), 1))()
        owned = []
        try:
            for i, value in enumerate(inputs):
                if isinstance(value, Tensor):
                    pointer = value._ptr
                else:
                    pointer = _wrap_array(np.ascontiguousarray(value))
                    owned.append(pointer)
                args[i].kind, args[i].tensor = _lib.ARG_TENSOR, pointer
            outputs = (c_void_p * self.num_outputs)()
            _errors.check(_lib.tp_call(self._handle, args, len(inputs), outputs))
        finally:
            for pointer in owned:
                _lib.tp_tensor_release(pointer)
        arrays = tuple(Tensor._own(outputs[i]).numpy() for i in range(self.num_outputs))
        return arrays[0] if self.num_outputs == 1 else arrays


def load(path: Union[str, os.PathLike], backend: Optional[str] = None,
         options: Optional[Mapping[str, Any]] = None) -> Graph:
    """Loads a model file and compiles it: ``.tpir`` text, or ``.onnx``.

    ONNX needs a libtensorplay built with the ONNX importer (the
    ``TP_WITH_ONNX`` CMake option); without it, UnsupportedFormat says so.
    """
    text_path = os.fspath(path)
    extension = os.path.splitext(text_path)[1].lower()
    graph = c_void_p()
    if extension == ".onnx":
        if not lib.tp_onnx_available():
            raise _errors.UnsupportedFormat(
                f"{text_path}: this libtensorplay ({_lib.library_path}) has no ONNX importer; "
                "rebuild it with -DTP_WITH_ONNX=ON (needs protobuf-c and libonnx-dev) or "
                "convert the model to .tpir on a build that has it (tpc import)", "unsupported")
        _errors.check(lib.tp_graph_load_onnx(os.fsencode(text_path), byref(graph)))
    elif extension == ".tpir":
        _errors.check(lib.tp_graph_load(os.fsencode(text_path), byref(graph)))
    else:
        raise _errors.UnsupportedFormat(
            f"{text_path}: unknown model format '{extension}'; tensorplay.load reads .tpir "
            "and .onnx files", "unsupported")
    return Graph(graph.value, text_path, backend, options)  # type: ignore[arg-type]
