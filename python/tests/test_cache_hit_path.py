"""The cache hit of a compiled function (one tp_prepared_call_run per call):
the same answers, guards, gates and recompiles as tp_call, with NumPy arrays
reused, mutated and reshaped in place between calls. NumPy is the oracle."""
import gc
import weakref

import numpy as np
import pytest

import tensorplay as tp

ops = tp.ops


def branch(x):
    """x * 2 when sum(x) > 0, else -x: a gate on the data."""
    if ops.sum(x) > 0.0:
        return x * 2.0
    return ops.neg(x)


def branch_oracle(x):
    return x * 2 if x.sum() > 0 else -x


def test_writes_to_the_same_array_flip_the_gate(backend):
    compiled = tp.compile(branch, backend=backend)
    x = np.arange(1, 5, dtype=np.float32)
    for _ in range(3):  # the same array every call; its values change in place
        np.testing.assert_allclose(compiled(x).numpy(), branch_oracle(x))
        x *= -1
        np.testing.assert_allclose(compiled(x).numpy(), branch_oracle(x))
        x *= -1
    assert compiled.num_compiles == 2  # one entry per branch, then hits


def test_an_array_reshaped_in_place_is_guarded(backend):
    compiled = tp.compile(lambda x: ops.relu(x) * 2.0, backend=backend, dynamic=False)
    x = np.arange(-3, 3, dtype=np.float32)
    compiled(x)
    compiled(x)
    x.shape = (2, 3)  # the same object, a new shape
    out = compiled(x).numpy()
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, np.maximum(x, 0) * 2)
    assert compiled.num_compiles == 2
    assert compiled.last_recompile_reasons == ["x.ndim == 1, got 2"]


def test_an_array_given_a_new_dtype_in_place_is_guarded(backend):
    compiled = tp.compile(lambda x: x + x, backend=backend)
    x = np.arange(4, dtype=np.int32)
    compiled(x)
    compiled(x)
    x.dtype = np.float32  # the same bytes read as f32
    np.testing.assert_allclose(compiled(x).numpy(), x + x)
    assert compiled.last_recompile_reasons == ["x.dtype == i32, got f32"]


def test_new_sizes_recompile_and_old_ones_hit_again(backend):
    compiled = tp.compile(lambda x: ops.exp(x), backend=backend, dynamic=False)
    rng = np.random.default_rng(3)
    for n in (3, 4, 3, 4, 5, 3):
        x = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_allclose(compiled(x).numpy(), np.exp(x), rtol=1e-5)
    assert compiled.num_compiles == 3


def test_tensors_arrays_and_scalars_mix(backend):
    def scaled_sum(x, y, k, shift):
        return x * k + y + shift
    compiled = tp.compile(scaled_sum, backend=backend)
    x = np.arange(4, dtype=np.float32)
    y = tp.from_numpy(np.full(4, 0.5, np.float32))
    for k in (2.0, 2.0, 3.0, 2.0):
        np.testing.assert_allclose(compiled(x, y, k, 1.0).numpy(), x * k + 0.5 + 1.0)
    assert compiled.num_compiles == 2  # scalars key by value


def test_non_contiguous_arrays_are_copied_as_before(backend):
    compiled = tp.compile(lambda x: x + 1.0, backend=backend)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    compiled(np.ascontiguousarray(x[:, ::2]))
    np.testing.assert_allclose(compiled(x[:, ::2]).numpy(), x[:, ::2] + 1)


def test_a_returned_argument_has_the_argument_values(backend):
    compiled = tp.compile(lambda x: x, backend=backend)
    x = np.arange(3, dtype=np.float32)
    for _ in range(3):
        out = compiled(x)
        np.testing.assert_array_equal(out.numpy(), x)


def test_the_hit_keeps_no_reference_to_arrays_once_others_are_passed(backend):
    compiled = tp.compile(lambda x: x + 1.0, backend=backend)
    x = np.ones(4, np.float32)
    compiled(x)
    compiled(x)
    alive = weakref.ref(x)
    del x
    compiled(np.zeros(4, np.float32))
    compiled(np.zeros(4, np.float32))
    gc.collect()
    assert alive() is None


def test_a_backend_error_on_a_hit_is_raised_with_the_c_message(backend):
    compiled = tp.compile(lambda x, y: x + y, backend=backend)
    x = np.ones(3, np.float32)
    compiled(x, x)
    with pytest.raises(tp.ShapeError):
        compiled(x, np.ones(4, np.float32))  # a miss: the capture reports the shapes


def test_a_hit_is_one_prepared_call_and_a_miss_goes_to_tp_call(backend, monkeypatch):
    from tensorplay import _compile
    counts = {"prepared": 0, "tp_call": 0}
    prepared, tp_call = _compile._tp_prepared_call_run, _compile._tp_call_packed

    def counting_prepared(*args):
        counts["prepared"] += 1
        return prepared(*args)

    def counting_tp_call(*args):
        counts["tp_call"] += 1
        return tp_call(*args)
    monkeypatch.setattr(_compile, "_tp_prepared_call_run", counting_prepared)
    monkeypatch.setattr(_compile, "_tp_call_packed", counting_tp_call)
    compiled = tp.compile(lambda x: x * 3.0, backend=backend)
    compiled._speedups = None  # the ctypes path (test_speedups.py has the extension's)
    x = np.arange(4, dtype=np.float32)
    compiled(x)  # the first call: tp_call compiles
    assert counts == {"prepared": 0, "tp_call": 1}
    for _ in range(5):
        np.testing.assert_allclose(compiled(x).numpy(), x * 3)
    assert counts == {"prepared": 5, "tp_call": 1}
    compiled(np.arange(5, dtype=np.float32))  # a miss: tried, then tp_call
    assert counts == {"prepared": 6, "tp_call": 2}


def test_an_unsupported_dtype_after_a_hit_raises_as_on_a_first_call(backend):
    compiled = tp.compile(lambda x: x + 1.0, backend=backend)
    x = np.ones(4, np.float32)
    compiled(x)
    compiled(x)
    with pytest.raises(tp.DTypeError, match="uint16"):
        compiled(np.ones(4, np.uint16))
    np.testing.assert_allclose(compiled(x).numpy(), x + 1)  # the hit still works
