"""Every op of the C library's op table, through tensorplay.ops, against NumPy.

The test list comes from the op table (tensorplay.ops.SPECS), so an op added
to the C library is tested here at once; one without a NumPy oracle in
ORACLES fails test_every_op_has_an_oracle, naming it.
"""
import ctypes
import inspect
import math

import numpy as np
import pytest

import tensorplay as tp
from conftest import COMPILED_BACKEND

rng = np.random.default_rng(18)
ops = tp.ops


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def positive(*shape):
    return f32(*shape, low=0.25, high=3.0)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def unary(expect, make=lambda: f32(3, 4)):
    return ([make()], lambda op, x: op(x), expect)


def binary(expect, make_a=lambda: f32(3, 4), make_b=lambda: f32(4)):
    return ([make_a(), make_b()], lambda op, a, b: op(a, b), expect)


def ints(*shape):
    return rng.integers(-5, 5, shape).astype(np.int64)


def bools(*shape):
    return rng.integers(0, 2, shape).astype(bool)


# op name -> (inputs, how to call the op on tensors, NumPy oracle on the arrays)
ORACLES = {
    "neg": unary(np.negative), "abs": unary(np.abs), "exp": unary(np.exp),
    "log": unary(np.log, positive and (lambda: positive(3, 4))),
    "sqrt": unary(np.sqrt, lambda: positive(3, 4)),
    "rsqrt": unary(lambda x: 1 / np.sqrt(x), lambda: positive(3, 4)),
    "sin": unary(np.sin), "cos": unary(np.cos), "tanh": unary(np.tanh),
    "sigmoid": unary(lambda x: 1 / (1 + np.exp(-x))), "relu": unary(lambda x: np.maximum(x, 0)),
    "erf": unary(lambda x: _erf(x).astype(np.float32)), "floor": unary(np.floor),
    "ceil": unary(np.ceil), "sign": unary(np.sign),
    "logical_not": unary(np.logical_not, lambda: bools(3, 4)),
    "cast": ([f32(3, 4) * 3], lambda op, x: op(x, "i32"), lambda x: x.astype(np.int32)),
    "add": binary(np.add), "sub": binary(np.subtract), "mul": binary(np.multiply),
    "div": binary(np.divide, make_b=lambda: positive(4)),
    "pow": binary(np.power, make_a=lambda: positive(3, 4)),
    "maximum": binary(np.maximum), "minimum": binary(np.minimum),
    "lt": binary(np.less), "le": binary(np.less_equal), "gt": binary(np.greater),
    "ge": binary(np.greater_equal),
    "eq": binary(np.equal, lambda: ints(3, 4), lambda: ints(4)),
    "ne": binary(np.not_equal, lambda: ints(3, 4), lambda: ints(4)),
    "logical_and": binary(np.logical_and, lambda: bools(3, 4), lambda: bools(4)),
    "logical_or": binary(np.logical_or, lambda: bools(3, 4), lambda: bools(4)),
    "where": ([bools(3, 4), f32(3, 4), f32(4)], lambda op, c, a, b: op(c, a, b), np.where),
    "sum": ([f32(3, 4, 5)], lambda op, x: op(x, axes=[0, 2]), lambda x: x.sum(axis=(0, 2))),
    "mean": ([f32(3, 4)], lambda op, x: op(x, axes=1, keepdim=True),
             lambda x: x.mean(axis=1, keepdims=True)),
    "max": ([f32(3, 4)], lambda op, x: op(x), lambda x: x.max()),
    "min": ([f32(3, 4)], lambda op, x: op(x, 0), lambda x: x.min(axis=0)),
    "argmax": ([f32(3, 4)], lambda op, x: op(x, 1), lambda x: x.argmax(axis=1)),
    "matmul": ([f32(2, 3, 4), f32(4, 5)], lambda op, a, b: op(a, b), np.matmul),
    "reshape": ([f32(3, 4)], lambda op, x: op(x, [2, -1]), lambda x: x.reshape(2, -1)),
    "permute": ([f32(2, 3, 4)], lambda op, x: op(x, [2, 0, 1]),
                lambda x: x.transpose(2, 0, 1)),
    "transpose": ([f32(2, 3, 4)], lambda op, x: op(x, 0, 2), lambda x: x.swapaxes(0, 2)),
    "expand": ([f32(3, 1)], lambda op, x: op(x, [2, 3, 4]),
               lambda x: np.broadcast_to(x, (2, 3, 4))),
    "slice": ([f32(3, 7)], lambda op, x: op(x, 1, 1, None, 2), lambda x: x[:, 1::2]),
    "concat": ([f32(2, 3), f32(4, 3)], lambda op, a, b: op([a, b]),
               lambda a, b: np.concatenate([a, b])),
    "squeeze": ([f32(3, 1, 4)], lambda op, x: op(x), np.squeeze),
    "unsqueeze": ([f32(3, 4)], lambda op, x: op(x, 1), lambda x: np.expand_dims(x, 1)),
    "constant": ([f32(3)], lambda op, x: op(data=np.array([[1, 2], [3, 4]], np.int32)) + 0 * ops.sum(ops.cast(x, "i32")),
                 lambda x: np.array([[1, 2], [3, 4]], np.int32)),
    "full": ([f32(2)], lambda op, x: op(shape=[2, 3], value=2.5) + 0 * ops.sum(x),
             lambda x: np.full((2, 3), 2.5, np.float32)),
    "arange": ([f32(2)], lambda op, x: op(start=1, stop=10, step=3, dtype="i64") + ops.cast(0 * ops.sum(x), "i64"),
               lambda x: np.arange(1, 10, 3, dtype=np.int64)),
    "softmax": ([f32(3, 4)], lambda op, x: op(x), _softmax),
    "log_softmax": ([f32(3, 4)], lambda op, x: op(x, 0), lambda x: np.log(_softmax(x, 0))),
    "layer_norm": ([f32(3, 4), f32(4), f32(4)], lambda op, x, w, b: op(x, w, b), _layer_norm),
    "gelu": ([f32(3, 4)], lambda op, x: op(x, "tanh"), _gelu_tanh),
    "silu": unary(lambda x: x / (1 + np.exp(-x))),
    "softplus": ([f32(3, 4) * 15], lambda op, x: op(x, beta=2.0, threshold=20.0),
                 lambda x: np.where(2 * x > 20, x, np.log1p(np.exp(2 * x)) / 2)),
    "linear": ([f32(3, 4), f32(5, 4), f32(5)], lambda op, x, w, b: op(x, w, b),
               lambda x, w, b: x @ w.T + b),
    "gather": ([f32(5, 3), np.array([[4, 0], [-1, 2]], np.int64)],
               lambda op, x, i: op(x, i, axis=0), lambda x, i: np.take(x, i, axis=0)),
    "gather_elements": ([f32(3, 4), np.array([[3, 0, 1, 1], [2, 2, -1, 0], [0, 1, 2, 3]],
                                             np.int64)],
                        lambda op, x, i: op(x, i, axis=1),
                        lambda x, i: np.take_along_axis(x, np.where(i < 0, i + 4, i), axis=1)),
    # windows: 3x3 patches by sliding_window_view; the stride-2 2x2 cases tile
    # the plane without overlap, so they are reshapes
    "conv": ([f32(1, 2, 4, 5), f32(3, 2, 3, 3)], lambda op, x, w: op(x, w),
             lambda x, w: np.einsum("nchwij,ocij->nohw",
                                    np.lib.stride_tricks.sliding_window_view(x, (3, 3), (2, 3)),
                                    w)),
    "conv_transpose": ([f32(1, 2, 2, 3), f32(2, 3, 2, 2)],
                       lambda op, x, w: op(x, w, strides=[2, 2]),
                       lambda x, w: np.einsum("nchw,coij->nohiwj", x, w).reshape(1, 3, 4, 6)),
    "max_pool": ([f32(1, 2, 4, 6)], lambda op, x: op(x, kernel_shape=[2, 2], strides=[2, 2]),
                 lambda x: x.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5))),
    "avg_pool": ([f32(1, 2, 4, 6)], lambda op, x: op(x, kernel_shape=[2, 2], strides=[2, 2]),
                 lambda x: x.reshape(1, 2, 2, 2, 3, 2).mean(axis=(3, 5))),
}

OP_NAMES = [spec.name for spec in ops.SPECS]


def test_every_op_has_an_oracle():
    missing = [name for name in OP_NAMES if name not in ORACLES]
    assert not missing, f"ops without a NumPy oracle in tests/test_ops.py ORACLES: {missing}"


def _check(name, result):
    arrays, _, expect = ORACLES[name]
    expected = np.asarray(expect(*arrays))
    got = np.asarray(result.numpy())
    assert got.shape == expected.shape, f"{name}: shape {got.shape} vs NumPy {expected.shape}"
    if expected.dtype.kind in "biu":
        assert np.array_equal(got, expected), f"{name}: {got} vs {expected}"
    else:
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.parametrize("name", OP_NAMES)
def test_op_eagerly_matches_numpy(name):
    if name not in ORACLES:
        pytest.fail(f"no oracle for {name}")
    arrays, call, _ = ORACLES[name]
    tensors = [tp.from_numpy(a) for a in arrays]
    _check(name, call(getattr(ops, name), *tensors))


@pytest.mark.parametrize("name", OP_NAMES)
def test_op_compiled_matches_numpy(name):
    if name not in ORACLES:
        pytest.fail(f"no oracle for {name}")
    arrays, call, _ = ORACLES[name]
    function = getattr(ops, name)
    # Not fullgraph: an op the backend does not claim runs on the fallback
    # backend through the partitioner, still compiled.
    compiled = tp.compile(lambda *xs: call(function, *xs), backend=COMPILED_BACKEND)
    _check(name, compiled(*arrays))


def test_python_operators_call_the_ops():
    a, b = f32(3, 4), positive(4)
    ta, tb = tp.from_numpy(a), tp.from_numpy(b)
    np.testing.assert_allclose((ta + tb).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose((ta - 1.5).numpy(), a - 1.5, rtol=1e-6)
    np.testing.assert_allclose((2.0 * ta).numpy(), 2 * a, rtol=1e-6)
    np.testing.assert_allclose((ta / tb).numpy(), a / b, rtol=1e-6)
    np.testing.assert_allclose((-ta).numpy(), -a)
    assert np.array_equal((ta < tb).numpy(), a < b)
    np.testing.assert_allclose((ta @ tp.from_numpy(f32(4, 2) * 0 + 1)).numpy(),
                               a @ np.ones((4, 2), np.float32), rtol=1e-5)


def test_op_errors_carry_the_c_message():
    with pytest.raises(tp.ShapeError, match="add: cannot broadcast f32\\[3\\] with f32\\[4\\]"):
        ops.add(tp.from_numpy(f32(3)), tp.from_numpy(f32(4)))
    with pytest.raises(TypeError):
        ops.reshape(tp.from_numpy(f32(3)))  # shape is required


def test_signatures_have_python_defaults():
    import inspect
    assert str(inspect.signature(ops.sum)).startswith("(x: ")
    assert inspect.signature(ops.softmax).parameters["axis"].default == -1
    assert inspect.signature(ops.slice).parameters["stop"].default is None
    assert inspect.signature(ops.layer_norm).parameters["eps"].default == 1e-5
    assert ops.add.__doc__ and "add" in ops.add.__doc__


def test_python_defaults_agree_with_the_op_tables():
    """Where the C op table gives an attribute a default (what .tpir applies)
    and the bindings give it one too, both mean the same value."""
    from tensorplay import _lib
    c_default = _lib.lib.tp_op_attribute_default
    c_default.restype, c_default.argtypes = ctypes.c_char_p, [ctypes.c_int, ctypes.c_int]
    from_result = b"(from the result type)"
    checked = 0
    for spec in ops.SPECS:
        for key in spec.keys:
            text = c_default(spec.id, key.index)
            python = spec.default_of(key)
            if text is None or text == from_result or python is inspect.Parameter.empty:
                continue
            text = text.decode()
            if text == "[]" or text == "end":
                expected = None
            elif text in ("true", "false"):
                expected = text == "true"
            elif text in ("none", "tanh"):
                expected = text
            else:
                expected = float(text)
            assert python == expected, (spec.name, key.python_name, python, text)
            checked += 1
    assert checked >= 10
