"""tensorplay.Tensor: a reference to a C tp_tensor, zero-copy to and from NumPy."""
from __future__ import annotations

import ctypes
import itertools
import os
import struct
from ctypes import byref, c_int64, c_void_p
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _context, _errors, _lib, _native

lib = _lib.lib

#: tp_dtype values and their NumPy dtypes. NumPy has no bfloat16: a bf16
#: tensor is a NumPy array of the structured dtype BF16 (one uint16 field
#: "bfloat16" holding the bits), the same convention as bf16 .npy files
#: (docs/npy-bf16.md); ``array["bfloat16"]`` is the uint16 view.
DTYPES: Dict[str, int] = {"f32": 0, "f64": 1, "i32": 2, "i64": 3, "bool": 4, "f16": 5,
                          "bf16": 6}
BF16 = np.dtype([("bfloat16", "<u2")])
_NUMPY_OF = {0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.int32),
             3: np.dtype(np.int64), 4: np.dtype(np.bool_), 5: np.dtype(np.float16), 6: BF16}
_CODE_OF_NUMPY = {dtype: code for code, dtype in _NUMPY_OF.items()}
_NAME_OF = {code: name for name, code in DTYPES.items()}

DTypeLike = Union[str, np.dtype, type]


def dtype_code(dtype: DTypeLike) -> int:
    """The tp_dtype of "f32"/"f64"/"i32"/"i64"/"bool", a NumPy dtype or a scalar type."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    try:
        return _CODE_OF_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise _errors.DTypeError(
            f"dtype {dtype!r} is not one TensorPlay has; use one of f32, f64, i32, i64, bool, "
            "f16, bf16 (or the NumPy float32, float64, int32, int64, bool_, float16, "
            "tensorplay.BF16)", "dtype") from None


# from_numpy: the arrays whose memory C tensors use, until the C side lets go.
_held: Dict[int, np.ndarray] = {}
_tokens = itertools.count(1)


@_lib.RELEASE_FN
def _release_array(token: int) -> None:
    _held.pop(token, None)


def _wrap_array(array: np.ndarray) -> int:
    """A new C reference to a tensor over `array`'s memory (no copy)."""
    code = _CODE_OF_NUMPY.get(array.dtype)
    if code is None:
        raise _errors.DTypeError(
            f"NumPy dtype {array.dtype} has no TensorPlay dtype; convert with "
            "array.astype(numpy.float32) (or float64, int32, int64, bool, float16; bf16 "
            "bits as array.view(tensorplay.BF16))", "dtype")
    flags = array.flags
    if not flags.c_contiguous or not flags.aligned:
        raise _errors.InvalidArgument(
            "tensorplay shares only C-contiguous, aligned arrays; pass "
            "numpy.ascontiguousarray(array) (a copy)", "invalid_argument")
    shape = array.shape
    ndim = len(shape)
    if ndim > _lib.MAX_DIMS:
        raise _errors.ShapeError(f"array has {ndim} dimensions; TensorPlay allows at most "
                                 f"{_lib.MAX_DIMS}", "shape")
    token = next(_tokens)
    _held[token] = array
    out = c_void_p()
    status = _tensor_wrap(code, ndim, _SHAPE_PACKERS[ndim](*shape), _data_address(array),
                          _release_array, token, _byref(out))
    if status:
        _held.pop(token, None)
        _errors.check(status)
    return out.value  # type: ignore[return-value]


def _data_address(array: np.ndarray) -> int:
    """Address of the first element: through the buffer protocol (0.5 us) when
    the array is writable and not empty, else __array_interface__ (4 us)."""
    try:
        return _addressof(_c_byte.from_buffer(array))
    except (TypeError, ValueError):
        return array.__array_interface__["data"][0] or 0


_addressof = ctypes.addressof
_c_byte = ctypes.c_byte
_SHAPE_PACKERS = [struct.Struct(f"<{n}q").pack if n else (lambda: None)
                  for n in range(_lib.MAX_DIMS + 1)]
_tensor_wrap = lib.tp_tensor_wrap
_release = _lib.tp_tensor_release
_byref = byref


class _Buffer:
    """The owner NumPy sees for Tensor.numpy(): keeps the Tensor alive."""

    __slots__ = ("__array_interface__", "tensor")

    def __init__(self, tensor: "Tensor", pointer: int) -> None:
        self.tensor = tensor
        dtype = _NUMPY_OF[lib.tp_tensor_dtype(tensor._ptr)]
        self.__array_interface__ = {
            "shape": tensor._c_shape(), "typestr": dtype.str,
            "data": (pointer or 0, False), "version": 3}
        if dtype.fields:  # bf16: the structured dtype's field
            self.__array_interface__["descr"] = dtype.descr


# With the C extension, Tensor's three attributes live in its C base, which
# releases the handle when a Tensor dies; without it, slots and __del__.
_TensorBase: Any = _native.speedups.TensorBase if _native.speedups is not None else object


class Tensor(_TensorBase):  # type: ignore[misc, valid-type]
    """A dense, C-order TensorPlay tensor (a reference to a C ``tp_tensor``).

    Make one with :func:`from_numpy` (shares the array's memory), an op of
    :mod:`tensorplay.ops`, :func:`load_npy`, or as the result of a compiled
    function. ``numpy()`` returns an array over the same memory. Inside a
    function given to :func:`tensorplay.compile`, reading ``shape``/``ndim``
    records a shape guard, and ``bool(t)``/``int(t)``/``float(t)`` become gates
    (as ``tp_item_bool``/``tp_item_i64``/``tp_item_f64`` in C).
    """

    __slots__ = (("_ptr", "_base", "_capture", "__weakref__") if _TensorBase is object
                 else ("__weakref__",))

    def __init__(self) -> None:
        raise TypeError("make tensors with tensorplay.from_numpy(), tensorplay.ops or load_npy()")

    @classmethod
    def _own(cls, pointer: int, capture: Optional[_context.Capture] = None,
             base: Optional[np.ndarray] = None) -> "Tensor":
        """Wraps a C reference the caller hands over."""
        tensor = object.__new__(cls)
        tensor._ptr = pointer
        tensor._base = base
        tensor._capture = capture
        if capture is not None:
            capture.wrappers.append(tensor)
        return tensor

    if _TensorBase is object:
        def __del__(self) -> None:
            # Every result of a compiled call ends here: kept to a slot read and
            # one foreign call.
            try:
                pointer = self._ptr
                if pointer:
                    self._ptr = None
                    _release(pointer)
            except Exception:  # no _ptr yet, or interpreter shutdown: nothing to do
                pass

    # ---- metadata ----------------------------------------------------------------
    def _c_shape(self) -> Tuple[int, ...]:
        ndim = lib.tp_tensor_ndim(self._ptr)
        dims = lib.tp_tensor_shape(self._ptr)
        return tuple(dims[i] for i in range(ndim))

    @property
    def dtype(self) -> np.dtype:
        """The element type as a NumPy dtype (float32, float64, int32, int64, bool, float16,
        or BF16 for bf16)."""
        return _NUMPY_OF[lib.tp_tensor_dtype(self._ptr)]

    @property
    def dtype_name(self) -> str:
        """The element type as TensorPlay names it: "f32", "f64", "i32", "i64", "bool", "f16",
        "bf16"."""
        return _NAME_OF[lib.tp_tensor_dtype(self._ptr)]

    @property
    def ndim(self) -> int:
        """Number of dimensions (a shape guard when read during capture)."""
        if self._capture is not None:
            return self._checked(lib.tp_ndim(self._capture.ctx, self._ptr))
        return lib.tp_tensor_ndim(self._ptr)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The sizes of the dimensions (a shape guard when read during capture)."""
        capture = self._capture
        if capture is not None:
            ndim = self.ndim
            return tuple(self._checked(lib.tp_dim(capture.ctx, self._ptr, axis))
                         for axis in range(ndim))
        return self._c_shape()

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape)) if self._capture is not None else lib.tp_tensor_numel(self._ptr)

    @property
    def nbytes(self) -> int:
        """Bytes of storage."""
        return lib.tp_tensor_nbytes(self._ptr)

    @property
    def version(self) -> int:
        """The C version counter: grows with every write through the C API or numpy()."""
        return lib.tp_tensor_version(self._ptr)

    @property
    def data_ptr(self) -> int:
        """Address of the first element (read without counting as a write)."""
        return lib.tp_tensor_data(self._ptr) or 0

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    # ---- values ------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A writable NumPy array over this tensor's memory (no copy).

        The array keeps the tensor alive. A tensor made by from_numpy gives back
        the array it was made from. Counts as a write (the version grows).
        During capture it is raw data access: the function then runs uncompiled
        (or, with fullgraph=True, the capture fails), exactly as in C.
        """
        pointer = lib.tp_tensor_data_mut(self._ptr)
        if self._base is not None:
            return self._base
        return np.asarray(_Buffer(self, pointer))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def _checked(self, value: Any) -> Any:
        ctx = self._capture.ctx if self._capture is not None else _context.current()[0]
        status = lib.tp_ctx_status(ctx)
        if status:
            message = lib.tp_ctx_error(ctx).decode(errors="replace")
            if self._capture is None:
                lib.tp_ctx_clear_error(ctx)
            raise _errors.error_for(status, message)
        return value

    def _ctx(self) -> int:
        return self._capture.ctx if self._capture is not None else _context.current()[0]

    def __bool__(self) -> bool:
        ctx = self._ctx()
        return bool(self._checked(lib.tp_item_bool(ctx, self._ptr)))

    def __int__(self) -> int:
        ctx = self._ctx()
        return int(self._checked(lib.tp_item_i64(ctx, self._ptr)))

    def __float__(self) -> float:
        ctx = self._ctx()
        return float(self._checked(lib.tp_item_f64(ctx, self._ptr)))

    def item(self) -> Union[bool, int, float]:
        """The value of a one-element tensor as a Python number (a gate during capture)."""
        code = lib.tp_tensor_dtype(self._ptr)
        if code == 4:
            return bool(self)
        return int(self) if code in (2, 3) else float(self)

    def __repr__(self) -> str:
        description = f"{self.dtype_name}{list(self._c_shape())}"
        if self._capture is not None:
            return f"tensorplay.Tensor({description}, traced)"
        return f"tensorplay.Tensor({description}, {np.asarray(_Buffer(self, lib.tp_tensor_data(self._ptr))).tolist()})"

    __hash__ = object.__hash__


def from_numpy(array: np.ndarray) -> Tensor:
    """A Tensor over `array`'s memory, without a copy.

    The array must be C-contiguous and aligned, of dtype float32, float64,
    int32, int64, bool, float16, or BF16 (bf16 bits; NumPy has no bfloat16). The tensor keeps the array alive for as long as the
    C library holds a reference (also after the Tensor object is gone, e.g.
    inside a compiled function's cache). Writes through either side are seen
    by the other.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Tensor._own(_wrap_array(array), None, array)


def tensor(data: Any, dtype: Optional[DTypeLike] = None) -> Tensor:
    """A new Tensor holding a copy of `data` (anything numpy.array accepts)."""
    array = np.array(data, dtype=None if dtype is None else _NUMPY_OF[dtype_code(dtype)])
    if array.dtype == np.float64 and dtype is None and not isinstance(data, np.ndarray):
        array = array.astype(np.float32)  # Python floats give f32, as in PyTorch
    elif array.dtype not in _CODE_OF_NUMPY and array.dtype.kind == "i":
        array = array.astype(np.int64)
    return from_numpy(np.ascontiguousarray(array))


def load_npy(path: Union[str, os.PathLike]) -> Tensor:
    """Reads a .npy file with the C library's reader (tp_npy_load)."""
    out = c_void_p()
    _errors.check(lib.tp_npy_load(os.fsencode(path), byref(out)))
    return Tensor._own(out.value)  # type: ignore[arg-type]


def save_npy(path: Union[str, os.PathLike], value: Union[Tensor, np.ndarray]) -> None:
    """Writes a Tensor (or a NumPy array, shared without a copy) as .npy with the C writer (tp_npy_save)."""
    tensor_value = value if isinstance(value, Tensor) else from_numpy(np.asarray(value))
    _errors.check(lib.tp_npy_save(os.fsencode(path), tensor_value._ptr))


# The C extension's cache hit makes Tensors of this class (a no-op without it).
_native.bind_python(Tensor, _CODE_OF_NUMPY)
