"""tensorplay.compile: a Python function over tensorplay.ops, compiled by the
C frontend (tp_compile) through a ctypes callback.

Everything the C frontend does (capture, guards, gates, cache keys, recompile
reasons and limits, fullgraph, dynamic shapes, eager fallback) happens in C;
this file converts arguments and results and carries Python exceptions
across the callback.
"""
from __future__ import annotations

import ctypes
import functools
import inspect
import re
import struct
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_int64, c_void_p, sizeof
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _context, _errors, _lib, _native
from ._tensor import _CODE_OF_NUMPY, Tensor, _data_address, _wrap_array

lib = _lib.lib
_Arg = _lib.Arg
_PACKERS: Dict[str, Callable[..., bytes]] = {}
_tp_call_packed = _lib.tp_call_packed
_new_tensor = object.__new__

# ---- the cache hit: one tp_prepared_call_run per call ---------------------------
# tp_prepared_arg records (compile.h): kind, dtype, ndim, reserved (int32 each),
# the 8-byte value, then up to 8 int64 sizes; written with pack_into.
_RECORD_SIZE = _lib.PREPARED_ARG_SIZE
_ARRAY_RECORDS = [struct.Struct(f"<iiiiQ{n}q") for n in range(_lib.MAX_DIMS + 1)]
_HANDLE_RECORD = struct.Struct("<iiiiQ")
_INT_RECORD = struct.Struct("<iiiiq")
_FLOAT_RECORD = struct.Struct("<iiiid")
_tp_prepared_call_run = _lib.tp_prepared_call_run
_ndarray = np.ndarray
_NOT_CACHED = object()  # a slot whose record is rewritten on every call (scalars)
_UNCHANGED_CHECKS: Dict[int, Callable[..., bool]] = {}


def _unchanged_check(arity: int) -> Callable[..., bool]:
    """unchanged(args, objects, metadata): whether every argument is the object
    its record was packed from, an array still with that (shape, dtype,
    strides). Straight-line code per arity (a loop or zip costs more than the
    whole check); made once with exec, as dataclasses make their methods."""
    check = _UNCHANGED_CHECKS.get(arity)
    if check is None:
        terms = [f"(a{i} is objects[{i}] and (type(a{i}) is not _ndarray or "
                 f"(a{i}.shape, a{i}.dtype, a{i}.strides) == metadata[{i}]))"
                 for i in range(arity)]
        unpack = "".join(f"a{i}, " for i in range(arity))
        source = (f"def unchanged(args, objects, metadata):\n"
                  f"    {unpack} = args\n" if arity else "def unchanged(args, objects, metadata):\n")
        source += f"    return {' and '.join(terms) or 'True'}\n"
        namespace: Dict[str, Any] = {"_ndarray": np.ndarray}
        exec(source, namespace)  # noqa: S102 - generated from integers only
        check = _UNCHANGED_CHECKS[arity] = namespace["unchanged"]
    return check
_MAX_PREPARED_THREADS = 64  # threads with their own prepared call; others use tp_call
_get_ident = threading.get_ident


class _PreparedCall:
    """A tp_prepared_call and the buffer its records and outputs live in.

    ``objects[i]`` is what slot i's record was packed from and
    ``metadata[i]`` its (shape, dtype, strides) when an array: an argument
    that is the same object with the same metadata keeps its record, so a
    loop over the same arrays or Tensors packs nothing. Each thread has its own (the buffer is
    written before the call and read by C while the GIL is released).
    """

    __slots__ = ("handle", "buffer", "outputs", "objects", "metadata", "unchanged", "busy",
                 "__weakref__")

    def __init__(self, compiled_handle: int, num_args: int, num_outputs: int) -> None:
        handle = c_void_p()
        _errors.check(lib.tp_prepared_call_create(compiled_handle, num_args, byref(handle)))
        self.handle = handle
        records = _RECORD_SIZE * num_args
        self.buffer = (ctypes.c_char * (records + 8 * num_outputs))()
        self.outputs = (c_void_p * num_outputs).from_buffer(self.buffer, records)
        self.objects: List[Any] = [_NOT_CACHED] * num_args
        self.metadata: List[Any] = [None] * num_args
        self.unchanged = _unchanged_check(num_args)
        self.busy = False

    def free(self) -> None:
        handle, self.handle = self.handle, None
        if handle:
            lib.tp_prepared_call_free(handle)

    def pack_all(self, args: Tuple[Any, ...]) -> bool:
        """Rewrites the records of the arguments that changed; False when one
        of them is for tp_call only."""
        objects, metadata = self.objects, self.metadata
        for index, value in enumerate(args):
            if value is objects[index] and (type(value) is not _ndarray or (
                    value.shape, value.dtype, value.strides) == metadata[index]):
                continue
            if not self.pack(index, value):
                return False
        return True

    def pack(self, index: int, value: Any) -> bool:
        """Writes argument `index`'s record; False when only tp_call takes it."""
        offset = index * _RECORD_SIZE
        kind = type(value)
        if kind is Tensor:
            if not value._ptr:
                return False
            _HANDLE_RECORD.pack_into(self.buffer, offset, _lib.ARG_TENSOR, 0, 0, 0, value._ptr)
            self.objects[index] = value
            return True
        if kind is _ndarray:
            dtype = value.dtype
            code = _CODE_OF_NUMPY.get(dtype)
            flags = value.flags
            shape = value.shape
            if code is None or not flags.c_contiguous or not flags.aligned or len(shape) > 8:
                return False  # tp_call's path copies or explains
            _ARRAY_RECORDS[len(shape)].pack_into(self.buffer, offset, _lib.PREPARED_ARRAY, code,
                                                 len(shape), 0, _data_address(value), *shape)
            self.objects[index] = value
            self.metadata[index] = (shape, dtype, value.strides)
            return True
        self.objects[index] = _NOT_CACHED
        try:
            if kind is bool:
                _INT_RECORD.pack_into(self.buffer, offset, _lib.ARG_BOOL, 0, 0, 0, int(value))
            elif kind is int:
                _INT_RECORD.pack_into(self.buffer, offset, _lib.ARG_INT, 0, 0, 0, value)
            elif kind is float:
                _FLOAT_RECORD.pack_into(self.buffer, offset, _lib.ARG_FLOAT, 0, 0, 0, value)
            else:
                return False
        except struct.error:  # an int beyond int64: tp_call's path explains
            return False
        return True


def _encode(text: Optional[str]) -> Optional[bytes]:
    return None if text is None else str(text).encode()


def _strings(values: Sequence[str]) -> Any:
    return (c_char_p * max(len(values), 1))(*[v.encode() for v in values])


def _identifier(name: str) -> str:
    """`name` as the C identifier the frontend wants in logs and reasons ("<lambda>" -> "lambda")."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "fn"
    return text if not text[0].isdigit() else "fn_" + text


def _parameter_names(fn: Callable[..., Any]) -> Optional[List[str]]:
    """Names of fn's positional parameters, or None when it takes *args or cannot be inspected."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    names = []
    for p in parameters:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            return None
        elif p.kind == p.KEYWORD_ONLY and p.default is p.empty:
            raise TypeError(f"tensorplay.compile: '{fn.__name__}' has the keyword-only "
                            f"parameter '{p.name}' without a default; compiled functions take "
                            "their tensors positionally")
    return names


# The C extension's callable base: its tp_call runs cache hits in C.
_CallBase: Any = _native.speedups.CompiledCallBase if _native.speedups is not None else object


class CompiledFunction(_CallBase):  # type: ignore[misc, valid-type]
    """The result of :func:`tensorplay.compile`: call it like the original function.

    Arguments may be Tensors, NumPy arrays (C-contiguous ones are shared
    without a copy) and Python bool/int/float. Returns a Tensor, or a tuple
    of Tensors when the function returns a tuple or list.
    """

    def __init__(self, fn: Callable[..., Any], backend: Optional[str], mode: Optional[str],
                 options: Optional[Mapping[str, Any]], fullgraph: bool,
                 dynamic: Optional[bool], disable: bool,
                 recompile_limit: Optional[int], fallback_backend: Optional[str] = None) -> None:
        self._fn = fn
        self._handle: Optional[int] = None
        self._name = _identifier(getattr(fn, "__name__", "fn"))
        self._param_names = _parameter_names(fn)
        self._arity = len(self._param_names) if self._param_names is not None else -1
        self._tensors_packer = struct.Struct("<" + "8xQ" * max(self._arity, 0)).pack
        self._signature = None
        try:
            self._signature = inspect.signature(fn)
        except (TypeError, ValueError):
            pass
        self._option_strings = [f"{k}={'true' if v is True else 'false' if v is False else v}"
                                for k, v in (options or {}).items()]
        self._settings = dict(backend=backend, mode=mode, fullgraph=fullgraph, dynamic=dynamic,
                              disable=disable, recompile_limit=recompile_limit,
                              fallback_backend=fallback_backend)
        self._returns_tuple = False
        self._succeeded = False  # a call has returned: the output count is settled
        self._output_count = 1
        self._lock = threading.Lock()
        self._prepared: Dict[int, _PreparedCall] = {}  # per thread (threading.get_ident)
        # The C extension's cache hit (tensorplay._speedups), made after the
        # first call that succeeds; None: the ctypes prepared call above.
        self._speedups = _native.speedups
        self._fast: Any = None
        self._callback = _lib.FN(self._run_body)  # kept alive as long as the handle
        self._create(1)
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    # ---- the C wrapper -----------------------------------------------------------
    def _create(self, num_outputs: int) -> None:
        settings = self._settings
        dynamic = settings["dynamic"]
        names = self._param_names
        self._keep = [_encode(settings["backend"]), _encode(settings["mode"]),
                      _strings(self._option_strings), _encode(self._name),
                      _strings(names or []), _encode(settings["fallback_backend"])]
        options = _lib.CompileOptions(
            struct_size=sizeof(_lib.CompileOptions), backend=self._keep[0], mode=self._keep[1],
            options=self._keep[2] if self._option_strings else None,
            num_options=len(self._option_strings), fullgraph=bool(settings["fullgraph"]),
            dynamic=(_lib.DYNAMIC_UNSET if dynamic is None else
                     _lib.DYNAMIC_DYNAMIC if dynamic else _lib.DYNAMIC_STATIC),
            recompile_limit=0 if settings["recompile_limit"] is None else int(settings["recompile_limit"]),
            disable=bool(settings["disable"]), name=self._keep[3],
            param_names=self._keep[4] if names is not None else None,
            num_params=len(names) if names is not None else 0, num_outputs=num_outputs,
            fallback_backend=self._keep[5])
        handle = c_void_p()
        _errors.check(lib.tp_compile(self._callback, byref(options), byref(handle)))
        old, self._handle, self._output_count = self._handle, handle.value, num_outputs
        self._single_output = num_outputs == 1 and not self._returns_tuple
        self._handle_arg = c_void_p(self._handle)
        self._outputs_type = c_void_p * num_outputs
        self._drop_prepared()
        self._fast = None
        if old:
            lib.tp_compiled_free(old)

    def _drop_prepared(self) -> None:
        prepared, self._prepared = getattr(self, "_prepared", None) or {}, {}
        for call in prepared.values():
            call.free()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            try:
                self._fast = None  # its prepared calls go before the wrapper
                self._drop_prepared()
                lib.tp_compiled_free(handle)
            except Exception:
                pass

    # ---- the body, called by the C frontend (capture or eager) --------------------
    def _run_body(self, ctx: int, args: Any, num_args: int, outputs: Any, num_outputs: int,
                  user_data: Any) -> None:
        capture = _context.push(ctx)
        self._last_capture.capture = None
        try:
            values = []
            for i in range(num_args):
                arg = args[i]
                kind = arg.kind
                if kind == _lib.ARG_TENSOR:
                    values.append(Tensor._own(lib.tp_tensor_retain(arg.tensor), capture))
                elif kind == _lib.ARG_INT:
                    values.append(arg.i)
                elif kind == _lib.ARG_FLOAT:
                    values.append(arg.f)
                else:
                    values.append(bool(arg.b))
            result = self._fn(*values)
            results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            self._returns_tuple = isinstance(result, (tuple, list))
            self._single_output = num_outputs == 1 and not self._returns_tuple
            if self._fast is not None:
                self._fast.single_output = self._single_output
            if len(results) != num_outputs:
                capture.output_count = len(results)
                return
            for i, value in enumerate(results):
                if not isinstance(value, Tensor):
                    raise TypeError(f"'{self._name}' returned {type(value).__name__} as output "
                                    f"{i}; a compiled function returns tensorplay Tensors "
                                    "(results of tensorplay.ops or its arguments)")
                # The ctx holds a reference until the C frontend has taken the
                # output (this Tensor may die as soon as the body returns).
                outputs[i] = lib.tp_ctx_adopt(ctx, lib.tp_tensor_retain(value._ptr))
        except BaseException as error:  # carried across C to __call__
            capture.error = error
        finally:
            _context.pop(capture)
            if capture.error is not None or capture.output_count is not None:
                self._last_capture.capture = capture

    _last_capture = threading.local()

    # ---- calling -------------------------------------------------------------------
    # With the C extension, calling a CompiledFunction is _CallBase's tp_call
    # (python/ext/speedups_compiled_base.c): a cache hit through self._fast in C, anything
    # else self._call_slow(*args, **kwargs). Without it, _call_slow is __call__.
    def _call_slow(self, *args: Any, **kwargs: Any) -> Union[Tensor, Tuple[Tensor, ...]]:
        """Runs the compiled function (tp_call); arguments bind like the original's."""
        if not kwargs and len(args) == self._arity:
            # Without the extension a cache hit takes one foreign call
            # (tp_prepared_call_run) on this thread's prepared call, once a
            # first call has settled the output count. What is not a hit
            # (nothing ran) goes on to tp_call. With it (self._fast), this
            # is a call the extension did not take: straight to tp_call.
            prepared = self._prepared.get(_get_ident()) if self._succeeded else None
            if prepared is None and self._succeeded and self._fast is None:
                prepared = self._new_prepared()
            if prepared is not None and not prepared.busy:
                prepared.busy = True  # per thread: only a re-entrant call can see it
                try:
                    if prepared.unchanged(args, prepared.objects, prepared.metadata) or \
                            prepared.pack_all(args):
                        outputs = prepared.outputs
                        status = _tp_prepared_call_run(prepared.handle, prepared.buffer, outputs)
                        if status:
                            raise _errors.error_for(
                                status, lib.tp_last_error().decode(errors="replace"))
                        first = outputs[0]
                        if first:
                            if self._single_output:
                                result = _new_tensor(Tensor)
                                result._ptr, result._base, result._capture = first, None, None
                                return result
                            return tuple(Tensor._own(outputs[i])
                                         for i in range(self._output_count))
                finally:
                    prepared.busy = False
            try:  # every argument a Tensor (kind 0 = zero padding)
                packed = self._tensors_packer(*[arg._ptr for arg in args])
            except (AttributeError, struct.error):
                pass
            else:
                return self._call(packed, self._arity)
        return self._call_general(args, kwargs)

    if _CallBase is object:
        __call__ = _call_slow

    def _new_prepared(self) -> Optional[_PreparedCall]:
        """This thread's prepared call (None past _MAX_PREPARED_THREADS threads)."""
        if len(self._prepared) >= _MAX_PREPARED_THREADS:
            return None
        prepared = _PreparedCall(self._handle, self._arity, self._output_count)
        self._prepared[_get_ident()] = prepared
        return prepared

    def _call_general(self, args: Tuple[Any, ...],
                      kwargs: Dict[str, Any]) -> Union[Tensor, Tuple[Tensor, ...]]:
        names = self._param_names
        if kwargs or (names is not None and len(args) != len(names)):
            if self._signature is None:
                raise TypeError(f"'{self._name}' takes positional arguments only")
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments[n] for n in names) if names is not None else bound.args
        # tp_arg as 16-byte records packed into bytes (see _lib.tp_call_packed).
        kinds: List[str] = []
        values: List[Any] = []
        owned: List[int] = []
        try:
            for value in args:
                if type(value) is Tensor:
                    kinds.append("qQ")
                    values += (0, value._ptr)
                elif isinstance(value, np.ndarray):
                    pointer = _wrap_array(value if value.flags.c_contiguous
                                          else np.ascontiguousarray(value))
                    owned.append(pointer)
                    kinds.append("qQ")
                    values += (0, pointer)
                else:
                    kind, code, payload = self._scalar_slot(value, len(kinds))
                    kinds.append(code)
                    values += (kind, payload)
            layout = "".join(kinds)
            packer = _PACKERS.get(layout)
            if packer is None:
                packer = _PACKERS[layout] = struct.Struct("<" + layout).pack
            return self._call(packer(*values) if values else bytes(16), len(args))
        finally:
            for pointer in owned:
                _lib.tp_tensor_release(pointer)

    def _scalar_slot(self, value: Any, index: int) -> Tuple[int, str, Any]:
        """(kind, struct code of the record, payload) of a non-array argument."""
        if isinstance(value, Tensor):
            return (_lib.ARG_TENSOR, "qQ", value._ptr)
        if isinstance(value, (bool, np.bool_)):
            return (_lib.ARG_BOOL, "qQ", int(bool(value)))
        if isinstance(value, (int, np.integer)):
            return (_lib.ARG_INT, "qq", int(value))
        if isinstance(value, (float, np.floating)):
            return (_lib.ARG_FLOAT, "qd", float(value))
        raise TypeError(f"'{self._name}' argument {index}: expected a Tensor, numpy.ndarray, "
                        f"bool, int or float, got {type(value).__name__}")

    def _call(self, c_args: Any, count: int) -> Union[Tensor, Tuple[Tensor, ...]]:
        num_outputs = self._output_count
        outputs = self._outputs_type()
        status = _tp_call_packed(self._handle_arg, c_args, count, outputs)
        if status:
            capture = self._last_capture.capture
            self._last_capture.capture = None
            if capture is not None and capture.output_count is not None:
                return self._retry_with_outputs(capture.output_count, c_args, count)
            message = lib.tp_last_error().decode(errors="replace")
            if capture is not None and capture.error is not None:
                error = capture.error
                if isinstance(error, _errors.TensorPlayError):
                    raise error
                raise error from _errors.error_for(status, message)
            raise _errors.error_for(status, message)
        self._succeeded = True
        if self._fast is None and self._speedups is not None and self._arity >= 0:
            self._fast = self._speedups.PreparedCall(self._handle, self._arity, num_outputs,
                                                     self._single_output)
        if num_outputs == 1 and not self._returns_tuple:
            result = _new_tensor(Tensor)
            result._ptr, result._base, result._capture = outputs[0], None, None
            return result
        return tuple(Tensor._own(outputs[i]) for i in range(num_outputs))

    def _retry_with_outputs(self, count: int, c_args: Any, num_args: int) -> Union[Tensor, Tuple[Tensor, ...]]:
        with self._lock:
            if self._output_count != count:
                if self._succeeded:
                    raise _errors.CompileOutputCountError(
                        f"'{self._name}' returned {count} tensors; its earlier captures "
                        f"returned {self._output_count}. A compiled function must always "
                        "return the same number of tensors", "invalid_argument")
                self._create(count)  # the first capture: now we know how many
        return self._call(c_args, num_args)

    # ---- what the C frontend knows ---------------------------------------------------
    @property
    def num_entries(self) -> int:
        """Live cache entries (tp_compiled_num_entries)."""
        return lib.tp_compiled_num_entries(self._handle)

    @property
    def num_compiles(self) -> int:
        """Compilations so far (tp_compiled_num_compiles)."""
        return lib.tp_compiled_num_compiles(self._handle)

    @property
    def last_recompile_reasons(self) -> List[str]:
        """Why the last call recompiled, one reason per stored entry ("x.shape[0] == 4, got 5")."""
        reasons = POINTER(c_char_p)()
        count = c_int()
        _errors.check(lib.tp_compiled_last_recompile_reasons(self._handle, byref(reasons),
                                                             byref(count)))
        try:
            return [reasons[i].decode(errors="replace") for i in range(count.value)]
        finally:
            if reasons:
                lib.tp_free(reasons)

    @property
    def last_partition(self) -> List[Tuple[str, int]]:
        """(backend, number of nodes) per region of the last backend compile, in execution order."""
        regions = POINTER(_lib.PartitionRegion)()
        count = c_int()
        _errors.check(lib.tp_compiled_last_partition(self._handle, byref(regions), byref(count)))
        try:
            return [(regions[i].backend.decode(), regions[i].num_nodes) for i in range(count.value)]
        finally:
            if regions:
                lib.tp_free(regions)

    @property
    def uncompiled_reason(self) -> Optional[str]:
        """Why the function runs uncompiled (raw data access during capture), or None."""
        reason = lib.tp_compiled_uncompiled_reason(self._handle)
        return None if reason is None else reason.decode(errors="replace")


def compile(fn: Optional[Callable[..., Any]] = None, backend: Optional[str] = None,
            mode: Optional[str] = None, options: Optional[Mapping[str, Any]] = None,
            fullgraph: bool = False, dynamic: Optional[bool] = None, disable: bool = False,
            recompile_limit: Optional[int] = None, fallback_backend: Optional[str] = None) -> Any:
    """Compiles `fn`, a function of tensors written with :mod:`tensorplay.ops`.

    The C frontend (``tp_compile``) does the work: on the first call with a
    new input signature `fn` runs once on traced tensors, the recorded graph
    is optimised and compiled by the backend, and later calls with the same
    signature run the compiled code directly. ``bool(t)``/``int(t)`` on a
    traced tensor become gates (re-evaluated every call, part of the cache
    key); reading ``t.shape`` guards the exact shape.

    Args:
        fn: the function; without it, returns a decorator.
        backend: backend name (``None``: the default backend). An unknown name
            raises :class:`InvalidBackend` with "did you mean" suggestions.
        mode: a backend mode ("default", "max-autotune", ...); not with `options`.
        options: backend options as a mapping, passed as "key=value" strings.
        fullgraph: capture problems and recompile-limit hits raise instead of
            falling back to running `fn` uncompiled.
        dynamic: ``True`` keys tensors on rank rather than sizes, ``False``
            on exact sizes, ``None`` takes the configuration.
        disable: run `fn` eagerly on every call, never compile.
        recompile_limit: live cache entries before calls run uncached
            (``None``: the configuration's ``recompile_limit``).
        fallback_backend: where nodes `backend` does not claim run (a backend
            name, "none" to make them an error, ``None``: the configuration's).
    """
    def wrap(function: Callable[..., Any]) -> CompiledFunction:
        return CompiledFunction(function, backend, mode, options, fullgraph, dynamic, disable,
                                recompile_limit, fallback_backend)

    return wrap if fn is None else wrap(fn)


def reset() -> None:
    """Clears every compiled function's cache and resets every loaded backend (tp_compile_reset_all)."""
    lib.tp_compile_reset_all()
