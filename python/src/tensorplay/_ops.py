"""tensorplay.ops: one Python function per op of the C library's op table.

The functions are generated at import time from tp_op_count/tp_op_describe
(name, arity, attribute mask), so an op added to the C library is here
without a change to this file. What this file knows is how each *attribute
key* of attrs.h looks in Python (its parameter name, type and default) and
the names of a few ops' tensor parameters; an op whose attributes are all
known keys needs nothing else.
"""
from __future__ import annotations

import inspect
import keyword
import sys
import types
from ctypes import byref, c_void_p
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _context, _errors, _lib
from ._tensor import DTYPES, DTypeLike, Tensor, _wrap_array, dtype_code

lib = _lib.lib
_REQUIRED = inspect.Parameter.empty


class AttrKey:
    """How one tp_attr_key appears as a Python parameter."""

    def __init__(self, index: int, c_name: str, python_name: str, annotation: Any,
                 default: Any, setter: Callable[[_lib.Attrs, Any, List[Any]], None]) -> None:
        self.index, self.c_name, self.python_name = index, c_name, python_name
        self.annotation, self.default, self.setter = annotation, default, setter


def _ints(field: str, count_field: str) -> Callable[[_lib.Attrs, Any, List[Any]], None]:
    def set_ints(attrs: _lib.Attrs, value: Any, keep: List[Any]) -> None:
        if value is None:
            setattr(attrs, count_field, 0)
            return
        values = [int(value)] if isinstance(value, (int, np.integer)) else [int(v) for v in value]
        if len(values) > _lib.MAX_DIMS:
            raise _errors.InvalidArgument(f"{field}: at most {_lib.MAX_DIMS} entries, got "
                                          f"{len(values)}", "invalid_argument")
        setattr(attrs, count_field, len(values))
        array = getattr(attrs, field)
        for i, v in enumerate(values):
            array[i] = v
    return set_ints


def _scalar(field: str, convert: Callable[[Any], Any]) -> Callable[[_lib.Attrs, Any, List[Any]], None]:
    def set_scalar(attrs: _lib.Attrs, value: Any, keep: List[Any]) -> None:
        setattr(attrs, field, convert(value))
    return set_scalar


def _stop(attrs: _lib.Attrs, value: Any, keep: List[Any]) -> None:
    attrs.stop = _lib.SLICE_END if value is None else int(value)


def _approximate(attrs: _lib.Attrs, value: Any, keep: List[Any]) -> None:
    modes = {"none": 0, "tanh": 1}
    if value not in modes:
        raise _errors.InvalidArgument(f"approximate must be 'none' or 'tanh', got {value!r}",
                                      "invalid_argument")
    attrs.approximate = modes[value]


def _data(attrs: _lib.Attrs, value: Any, keep: List[Any]) -> None:
    if isinstance(value, Tensor):
        attrs.data = value._ptr
        keep.append(value)
        return
    array = np.ascontiguousarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)
    pointer = _wrap_array(array)
    keep.append(Tensor._own(pointer, None, array))
    attrs.data = pointer


Ints = Optional[Union[int, Sequence[int]]]
#: Every tp_attr_key in attrs.h order, as (C name, Python name, annotation, default, setter).
ATTR_KEYS: List[AttrKey] = [AttrKey(i, *spec) for i, spec in enumerate([
    ("axes", "axes", Ints, None, _ints("axes", "naxes")),
    ("keepdim", "keepdim", bool, False, _scalar("keepdim", bool)),
    ("shape", "shape", Sequence[int], _REQUIRED, _ints("shape", "shape_ndim")),
    ("perm", "perm", Sequence[int], _REQUIRED, _ints("perm", "nperm")),
    ("axis", "axis", int, _REQUIRED, _scalar("axis", int)),
    ("dim0", "dim0", int, _REQUIRED, _scalar("dim0", int)),
    ("dim1", "dim1", int, _REQUIRED, _scalar("dim1", int)),
    ("start", "start", int, 0, _scalar("start", int)),
    ("stop", "stop", Optional[int], None, _stop),
    ("step", "step", int, 1, _scalar("step", int)),
    ("start", "start", float, _REQUIRED, _scalar("range_start", float)),
    ("stop", "stop", float, _REQUIRED, _scalar("range_stop", float)),
    ("step", "step", float, 1.0, _scalar("range_step", float)),
    ("dtype", "dtype", DTypeLike, _REQUIRED, _scalar("dtype", dtype_code)),
    ("value", "value", float, _REQUIRED, _scalar("value", float)),
    ("eps", "eps", float, 1e-5, _scalar("eps", float)),
    ("approximate", "approximate", str, "none", _approximate),
    ("beta", "beta", float, 1.0, _scalar("beta", float)),
    ("threshold", "threshold", float, 20.0, _scalar("threshold", float)),
    ("value", "data", Any, _REQUIRED, _data),  # printed "value" in .tpir
    ("kernel_shape", "kernel_shape", Sequence[int], _REQUIRED,
     _ints("kernel_shape", "nkernel_shape")),
    ("strides", "strides", Ints, None, _ints("strides", "nstrides")),
    ("pads", "pads", Ints, None, _ints("pads", "npads")),
    ("dilations", "dilations", Ints, None, _ints("dilations", "ndilations")),
    ("group", "group", int, 1, _scalar("group", int)),
    ("output_padding", "output_padding", Ints, None,
     _ints("output_padding", "noutput_padding")),
    ("ceil_mode", "ceil_mode", bool, False, _scalar("ceil_mode", bool)),
    ("count_include_pad", "count_include_pad", bool, False, _scalar("count_include_pad", bool)),
])]

# Per-op Python defaults where one key's default depends on the op.
_OP_DEFAULTS: Dict[Tuple[str, str], Any] = {
    ("softmax", "axis"): -1, ("log_softmax", "axis"): -1, ("layer_norm", "axis"): -1,
    ("concat", "axis"): 0,
}
# Names of tensor parameters where "x" / "a, b" would read badly.
_TENSOR_NAMES: Dict[str, Tuple[str, ...]] = {
    "where": ("condition", "x", "y"), "layer_norm": ("x", "weight", "bias"),
    "linear": ("x", "weight", "bias"),
}
_VARIADIC_ARITY = 9  # an op taking more tensors than this takes one sequence


def _check_attr_keys() -> None:
    """The C library's attribute keys must be the ones above, in order."""
    for key in ATTR_KEYS:
        name = lib.tp_attr_key_name(key.index).decode()
        if name != key.c_name:
            raise ImportError(f"tensorplay: attribute key {key.index} is '{name}' in "
                              f"{_lib.library_path}, the bindings expect '{key.c_name}'; "
                              "the bindings and the C library come from different versions")


class OpSpec:
    """One op of the table as the bindings call it."""

    def __init__(self, op_id: int, info: _lib.OpInfo) -> None:
        self.id = op_id
        self.name: str = info.name.decode()
        self.c_name = info.name
        self.kind: str = info.kind.decode()
        self.min_arity, self.max_arity = info.min_arity, info.max_arity
        self.keys = [key for key in ATTR_KEYS if info.attr_mask >> key.index & 1]
        unknown = info.attr_mask >> len(ATTR_KEYS)
        self.unknown_attrs = bool(unknown)
        self.variadic = self.max_arity >= _VARIADIC_ARITY

    def tensor_names(self) -> Tuple[str, ...]:
        if self.name in _TENSOR_NAMES:
            return _TENSOR_NAMES[self.name][:self.max_arity]
        if self.max_arity == 0:
            return ()
        if self.max_arity == 2 and self.min_arity == 2:
            return ("a", "b")
        return tuple(["x"] + [f"x{i}" for i in range(1, self.max_arity)])

    def default_of(self, key: AttrKey) -> Any:
        if (self.name, key.python_name) in _OP_DEFAULTS:
            return _OP_DEFAULTS[(self.name, key.python_name)]
        if key.c_name == "dtype" and self.kind == "creation":
            return "f32"
        return key.default

    def signature(self) -> inspect.Signature:
        P = inspect.Parameter
        params: List[inspect.Parameter] = []
        if self.variadic:
            params.append(P("tensors", P.POSITIONAL_OR_KEYWORD, annotation=Sequence[Tensor]))
        else:
            for i, name in enumerate(self.tensor_names()):
                default = _REQUIRED if i < self.min_arity else None
                params.append(P(name, P.POSITIONAL_OR_KEYWORD, default=default,
                                annotation=Tensor if default is _REQUIRED else Optional[Tensor]))
        has_optional = any(p.default is not _REQUIRED for p in params)
        required = [k for k in self.keys if self.default_of(k) is _REQUIRED]
        optional = [k for k in self.keys if self.default_of(k) is not _REQUIRED]
        # A required attribute after an optional tensor can only be a keyword.
        kind = P.KEYWORD_ONLY if has_optional and required else P.POSITIONAL_OR_KEYWORD
        for key in required:
            params.append(P(key.python_name, kind, annotation=key.annotation))
        for key in optional:
            params.append(P(key.python_name, kind, default=self.default_of(key),
                            annotation=key.annotation))
        return inspect.Signature(params, return_annotation=Tensor)


def _scalar_dtype(value: Any, like: Optional[int]) -> int:
    """The dtype of a Python scalar operand next to a tensor of dtype `like` (PyTorch style)."""
    if isinstance(value, (bool, np.bool_)):
        return DTYPES["bool"]
    if isinstance(value, (int, np.integer)):
        return like if like is not None and like != DTYPES["bool"] else DTYPES["i64"]
    return like if like in (DTYPES["f32"], DTYPES["f64"]) else DTYPES["f32"]


def _operand(value: Any, ctx: int, like: Optional[int], keep: List[Any]) -> int:
    """The tp_tensor * for one operand: a Tensor, a NumPy array (shared), or a Python scalar."""
    if isinstance(value, Tensor):
        return value._ptr
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        pointer = _wrap_array(array)
        keep.append(Tensor._own(pointer, None, array))
        return pointer
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        pointer = lib.tp_scalar(ctx, _scalar_dtype(value, like), float(value))
        if not pointer:
            raise _ctx_error(ctx, None)
        return pointer
    raise TypeError(f"expected a tensorplay.Tensor, numpy.ndarray or number, got "
                    f"{type(value).__name__}")


def _ctx_error(ctx: int, capture: Optional[_context.Capture]) -> _errors.TensorPlayError:
    status = lib.tp_ctx_status(ctx) or 12
    message = (lib.tp_ctx_error(ctx) or b"op failed without a message").decode(errors="replace")
    if capture is None:
        lib.tp_ctx_clear_error(ctx)  # the eager ctx starts clean for the next call
    return _errors.error_for(status, message)


def call_op(spec: OpSpec, inputs: Sequence[Any], attr_values: Sequence[Tuple[AttrKey, Any]]) -> Tensor:
    """Runs one op on the current ctx (capture or eager) and returns its result."""
    ctx, capture = _context.current()
    keep: List[Any] = []
    attrs = _lib.Attrs(stop=_lib.SLICE_END, step=1, range_step=1.0, eps=1e-5, beta=1.0,
                       threshold=20.0)
    for key, value in attr_values:
        key.setter(attrs, value, keep)
    mark = lib.tp_ctx_scope_begin(ctx) if capture is None else 0
    try:
        like = next((lib.tp_tensor_dtype(x._ptr) for x in inputs if isinstance(x, Tensor)), None)
        pointers = [_operand(x, ctx, like, keep) for x in inputs]
        array = (c_void_p * max(len(pointers), 1))(*pointers)
        result = lib.tp_op(ctx, spec.c_name, array, len(pointers), byref(attrs))
        if not result:
            raise _ctx_error(ctx, capture)
        lib.tp_tensor_retain(result)
    finally:
        if capture is None:
            lib.tp_ctx_scope_end(ctx, mark, None, 0)
    return Tensor._own(result, capture)


def _make_function(spec: OpSpec) -> Callable[..., Tensor]:
    signature = spec.signature()
    tensor_params = 1 if spec.variadic else len(spec.tensor_names())
    keys_by_name = {key.python_name: key for key in spec.keys}

    def op(*args: Any, **kwargs: Any) -> Tensor:
        if spec.unknown_attrs:
            raise NotImplementedError(
                f"op '{spec.name}' reads an attribute these bindings do not know; update the "
                "tensorplay package to the C library's version")
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        if spec.variadic:
            inputs = list(values[0])
        else:
            inputs = [v for v in values[:tensor_params] if v is not None]
        names = list(bound.arguments.keys())[tensor_params:]
        return call_op(spec, inputs, [(keys_by_name[n], bound.arguments[n]) for n in names])

    name = spec.name if not keyword.iskeyword(spec.name) else spec.name + "_"
    op.__name__ = op.__qualname__ = name
    op.__signature__ = signature  # type: ignore[attr-defined]
    op.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    op.__doc__ = (f"{spec.name}{signature}: the '{spec.name}' op of the TensorPlay op table "
                  f"({spec.kind}, {spec.min_arity}"
                  f"{'' if spec.min_arity == spec.max_arity else '-' + str(spec.max_arity)} "
                  "tensor input(s)). Runs eagerly outside tensorplay.compile; inside a "
                  "compiled function it is also recorded into the graph. Operands may be "
                  "Tensors, NumPy arrays (shared, no copy) or Python numbers.")
    op.__module__ = "tensorplay.ops"
    return op


def ndim(x: Tensor) -> int:
    """Number of dimensions of `x` (tp_ndim: an exact-shape guard during capture)."""
    return x.ndim


def dim(x: Tensor, axis: int) -> int:
    """Size of dimension `axis` of `x` (tp_dim: an exact-shape guard during capture)."""
    ctx = x._ctx()
    return x._checked(lib.tp_dim(ctx, x._ptr, axis))


def item_bool(x: Tensor) -> bool:
    """Value of a one-element tensor as bool (tp_item_bool: a gate during capture)."""
    return bool(x)


def item_int(x: Tensor) -> int:
    """Value of a one-element tensor as int (tp_item_i64: a gate during capture)."""
    return int(x)


def item_float(x: Tensor) -> float:
    """Value of a one-element tensor as float (tp_item_f64: baked in and keyed on during capture)."""
    return float(x)


def build_module() -> Tuple[types.ModuleType, List[OpSpec]]:
    """The tensorplay.ops module with one function per op of the C table."""
    _check_attr_keys()
    module = types.ModuleType("tensorplay.ops", __doc__)
    specs = []
    for op_id in range(lib.tp_op_count()):
        info = _lib.OpInfo(struct_size=_lib.ctypes.sizeof(_lib.OpInfo))
        _errors.check(lib.tp_op_describe(op_id, byref(info)))
        spec = OpSpec(op_id, info)
        specs.append(spec)
        function = _make_function(spec)
        setattr(module, function.__name__, function)
    for helper in (ndim, dim, item_bool, item_int, item_float):
        helper.__module__ = "tensorplay.ops"
        setattr(module, helper.__name__, helper)
    module.SPECS = specs  # type: ignore[attr-defined]
    module.__all__ = [s.name for s in specs] + ["ndim", "dim", "item_bool", "item_int", "item_float"]  # type: ignore[attr-defined]
    sys.modules["tensorplay.ops"] = module
    return module, specs


def install_operators(module: types.ModuleType) -> None:
    """Python operators on Tensor, each calling the op of the same meaning."""
    def binary(name: str, reflected: bool = False) -> Callable[[Tensor, Any], Tensor]:
        function = getattr(module, name)
        if reflected:
            return lambda self, other: function(other, self)
        return lambda self, other: function(self, other)

    pairs = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "pow",
             "matmul": "matmul", "and": "logical_and", "or": "logical_or"}
    for dunder, name in pairs.items():
        if hasattr(module, name):
            setattr(Tensor, f"__{dunder}__", binary(name))
            setattr(Tensor, f"__r{dunder}__", binary(name, True))
    for dunder, name in {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq",
                         "ne": "ne"}.items():
        if hasattr(module, name):
            setattr(Tensor, f"__{dunder}__", binary(name))
    Tensor.__neg__ = lambda self: module.neg(self)  # type: ignore[assignment]
    Tensor.__abs__ = lambda self: module.abs(self)  # type: ignore[assignment]
    Tensor.__invert__ = lambda self: module.logical_not(self)  # type: ignore[assignment]
    Tensor.__hash__ = object.__hash__  # type: ignore[assignment]
