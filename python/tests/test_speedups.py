"""The C extension tensorplay._speedups: used when it is built, off with
TENSORPLAY_NO_SPEEDUPS=1, the same answers and exceptions as the ctypes path,
no reference leaks, several threads. NumPy is the oracle.

run-tests.sh sets TENSORPLAY_EXPECT_SPEEDUPS=1 when the build made the
extension and the run does not turn it off, so a broken load fails here
rather than falling back silently."""
import gc
import os
import subprocess
import sys
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import tensorplay as tp

ops = tp.ops
ACTIVE = tp.speedups_status().active
needs_speedups = pytest.mark.skipif(not ACTIVE, reason="tensorplay._speedups is not loaded: "
                                    + tp.speedups_status().reason)


def test_the_extension_is_loaded_when_the_build_made_it():
    status = tp.speedups_status()
    if os.environ.get("TENSORPLAY_EXPECT_SPEEDUPS") == "1":
        assert status.active, status.reason
        assert status.path.endswith("tensorplay_speedups.abi3.so")
    if os.environ.get("TENSORPLAY_NO_SPEEDUPS") == "1":
        assert not status.active
        assert "TENSORPLAY_NO_SPEEDUPS" in status.reason


def test_no_speedups_in_the_environment_turns_the_extension_off():
    script = ("import numpy as np, tensorplay as tp\n"
              "f = tp.compile(lambda x: x + 1.0)\n"
              "x = np.arange(3, dtype=np.float32)\n"
              "f(x)\n"
              "print(tp.speedups_status().active, f._fast is None, f(x).numpy().tolist())\n")
    env = dict(os.environ, TENSORPLAY_NO_SPEEDUPS="1")
    output = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True).stdout.split(maxsplit=2)
    assert output[:2] == ["False", "True"]
    assert output[2].strip() == "[1.0, 2.0, 3.0]"


@needs_speedups
def test_hits_run_in_the_extension_and_misses_go_to_tp_call(backend, monkeypatch):
    from tensorplay import _compile
    counts = {"ctypes prepared": 0, "tp_call": 0}
    prepared, tp_call = _compile._tp_prepared_call_run, _compile._tp_call_packed

    def counting_prepared(*args):
        counts["ctypes prepared"] += 1
        return prepared(*args)

    def counting_tp_call(*args):
        counts["tp_call"] += 1
        return tp_call(*args)
    monkeypatch.setattr(_compile, "_tp_prepared_call_run", counting_prepared)
    monkeypatch.setattr(_compile, "_tp_call_packed", counting_tp_call)
    compiled = tp.compile(lambda x: x * 3.0, backend=backend)
    x = np.arange(4, dtype=np.float32)
    compiled(x)  # the first call: tp_call compiles
    for _ in range(5):
        np.testing.assert_allclose(compiled(x).numpy(), x * 3)
    assert compiled._fast.hits == 5
    assert counts == {"ctypes prepared": 0, "tp_call": 1}
    compiled(np.arange(5, dtype=np.float32))  # a miss: tried, then tp_call
    assert compiled._fast.hits == 5
    assert counts == {"ctypes prepared": 0, "tp_call": 2}


@needs_speedups
def test_tensor_scalar_and_array_arguments_all_hit_in_the_extension(backend):
    def scaled(x, y, k, flag, n):
        return x * k + y + float(n) if flag else x
    compiled = tp.compile(scaled, backend=backend)
    x = np.arange(4, dtype=np.float32)
    y = tp.from_numpy(np.full(4, 0.25, np.float32))
    for _ in range(3):
        np.testing.assert_allclose(compiled(x, y, 2.0, True, 3).numpy(), x * 2 + 0.25 + 3)
    assert compiled._fast.hits == 2


@needs_speedups
def test_tuple_outputs_come_back_as_a_tuple_of_tensors(backend):
    compiled = tp.compile(lambda x: (x + 1.0, ops.neg(x)), backend=backend)
    x = np.arange(3, dtype=np.float32)
    compiled(x)
    plus, minus = compiled(x)
    assert compiled._fast.hits == 1
    np.testing.assert_allclose(plus.numpy(), x + 1)
    np.testing.assert_allclose(minus.numpy(), -x)


@needs_speedups
def test_arguments_the_extension_does_not_take_go_the_python_way(backend):
    compiled = tp.compile(lambda x, k: x * k, backend=backend)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    compiled(np.ascontiguousarray(x[:, ::2]), 2)
    compiled(np.ascontiguousarray(x[:, ::2]), 2)
    hits = compiled._fast.hits
    np.testing.assert_allclose(compiled(x[:, ::2], 2).numpy(), x[:, ::2] * 2)  # strided
    np.testing.assert_allclose(compiled(x[:, ::2].copy(), np.int64(2)).numpy(), x[:, ::2] * 2)
    assert compiled._fast.hits == hits


def _error_of(call):
    try:
        call()
    except Exception as error:  # what each path raises is compared below
        return type(error), str(error)
    return None


@needs_speedups
def test_an_argument_error_is_the_same_exception_with_and_without_it(backend):
    with_extension = tp.compile(lambda x, k: x * k, backend=backend)
    through_ctypes = tp.compile(lambda x, k: x * k, backend=backend)
    through_ctypes._speedups = None
    x = np.arange(4, dtype=np.float32)
    for compiled in (with_extension, through_ctypes):
        compiled(x, 2)
        compiled(x, 2)
    assert with_extension._fast is not None and through_ctypes._fast is None
    for bad in (1 << 70, "two", None):
        expected = _error_of(lambda: through_ctypes(x, bad))
        assert expected is not None
        assert _error_of(lambda: with_extension(x, bad)) == expected
    released = tp.from_numpy(np.ones(4, np.float32))
    handle, released._ptr = released._ptr, None  # its C reference is gone
    tp._lib.tp_tensor_release(handle)
    expected = _error_of(lambda: through_ctypes(released, 2))
    assert expected is not None
    assert _error_of(lambda: with_extension(released, 2)) == expected


def _leak_figures(compiled, x, y, calls):
    tracemalloc.start()
    for _ in range(calls // 10):  # warm-up: what the first hits settle stays out
        compiled(x, y)
    gc.collect()
    references = (sys.getrefcount(x), sys.getrefcount(y), sys.getrefcount(tp.Tensor))
    first, _ = tracemalloc.get_traced_memory()
    for _ in range(calls):
        compiled(x, y)
    gc.collect()
    last, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return references, (sys.getrefcount(x), sys.getrefcount(y),
                        sys.getrefcount(tp.Tensor)), last - first


@needs_speedups
@pytest.mark.parametrize("kind", ["arrays", "tensors"])
def test_no_reference_leak_over_ten_thousand_hits(backend, kind):
    compiled = tp.compile(lambda x, y: x + y, backend=backend)
    x, y = np.ones(8, np.float32), np.full(8, 2.0, np.float32)
    if kind == "tensors":
        x, y = tp.from_numpy(x), tp.from_numpy(y)
    compiled(x, y)
    before, after, growth = _leak_figures(compiled, x, y, 10_000)
    assert compiled._fast.hits >= 10_000
    assert after == before
    assert growth < 64 * 1024  # bytes; a leaked Tensor per call would be ~1 MB


@needs_speedups
def test_several_threads_hit_with_their_own_prepared_calls(backend):
    compiled = tp.compile(lambda x, y: x * y + 1.0, backend=backend)
    compiled(np.ones(16, np.float32), np.ones(16, np.float32))
    errors = []
    start = threading.Barrier(4)

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            x = rng.standard_normal(16).astype(np.float32)
            y = rng.standard_normal(16).astype(np.float32)
            start.wait()
            for _ in range(2000):
                np.testing.assert_allclose(compiled(x, y).numpy(), x * y + 1, rtol=1e-6)
        except BaseException as error:  # reported below
            errors.append(error)
    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert compiled._fast.num_threads == 4  # one tp_prepared_call per thread, made on its first hit
    assert compiled._fast.hits >= 4 * 2000 - 4  # a thread's first call may still be in tp_call


@needs_speedups
def test_the_extension_refuses_a_mismatched_record_size():
    module = sys.modules["tensorplay._speedups"]
    with pytest.raises(ValueError, match="tp_prepared_arg is 80 bytes"):
        module.bind_library(functions={}, record_size=80)


@needs_speedups
def test_tensors_are_released_in_c_and_their_cycles_collected(backend):
    assert isinstance(tp.Tensor, type) and tp.Tensor.__mro__[1].__name__ == "TensorBase"
    assert not hasattr(tp.Tensor, "__del__")
    array = np.arange(3, dtype=np.float32)
    tensor = tp.from_numpy(array)
    alive = weakref.ref(tensor)
    tensor._capture = [tensor]  # a cycle through the C base's attribute
    references = sys.getrefcount(array)
    del tensor
    gc.collect()
    assert alive() is None
    assert sys.getrefcount(array) < references  # the C side let the array go


@needs_speedups
def test_numpy_arrays_are_read_from_their_head_when_numpy_keeps_it_where_expected():
    assert sys.modules["tensorplay._speedups"].reads_arrays_directly()


@needs_speedups
def test_other_dtype_objects_hit_through_the_buffer_protocol_or_go_the_python_way(backend):
    with_extension = tp.compile(lambda x: x * 2.0, backend=backend)
    through_ctypes = tp.compile(lambda x: x * 2.0, backend=backend)
    through_ctypes._speedups = None
    x = np.arange(4, dtype=np.float32)
    for compiled in (with_extension, through_ctypes):
        compiled(x)
    described = x.view(np.dtype(np.float32, metadata={"unit": "m"}))  # another float32 object
    assert described.dtype is not x.dtype
    hits = with_extension._fast.hits
    np.testing.assert_allclose(with_extension(described).numpy(), x * 2)
    assert with_extension._fast.hits == hits + 1
    swapped = x.astype(">f4")  # big-endian: not a record the C side takes
    expected = _error_of(lambda: through_ctypes(swapped).numpy().tolist())
    assert _error_of(lambda: with_extension(swapped).numpy().tolist()) == expected
    if expected is None:
        np.testing.assert_allclose(with_extension(swapped).numpy(), x * 2)


@needs_speedups
def test_a_c_error_in_the_extension_is_the_package_exception_with_the_c_message(backend):
    compiled = tp.compile(lambda x: x + 1.0, backend=backend)
    x = np.ones(2, np.float32)
    compiled(x)
    wrong = type(compiled._fast)(compiled._handle, 3, 1, True)  # the wrapper takes 1 argument
    with pytest.raises(tp.InvalidArgument, match="takes 1 arguments, not 3"):
        wrong.run((x, x, x))
