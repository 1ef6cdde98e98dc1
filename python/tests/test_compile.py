"""tensorplay.compile: the C frontend's semantics seen from Python (cache keys,
gates, reasons naming the parameter, limits, fullgraph, errors)."""
import numpy as np
import pytest

import tensorplay as tp

ops = tp.ops


def ramp(n, dtype=np.float32):
    return (np.arange(n, dtype=dtype) - n // 2)


def relu2(x):
    return ops.relu(x) * 2.0


def test_compiled_result_matches_numpy_and_caches(backend):
    compiled = tp.compile(relu2, backend=backend)
    x = ramp(6)
    np.testing.assert_allclose(compiled(x).numpy(), np.maximum(x, 0) * 2)
    compiled(x)
    assert compiled.num_compiles == 1
    assert compiled.num_entries == 1


def test_static_size_change_recompiles_naming_parameter_and_dimension(backend):
    compiled = tp.compile(relu2, backend=backend, dynamic=False)
    compiled(ramp(4))
    compiled(ramp(5))
    assert compiled.num_entries == 2
    assert compiled.last_recompile_reasons == ["x.shape[0] == 4, got 5"]


def test_dtype_change_reason_names_parameter(backend):
    def scale(x, w):
        return x * w
    compiled = tp.compile(scale, backend=backend)
    compiled(ramp(3), np.ones(3, np.float32))
    compiled(ramp(3), np.ones(3, np.float64))
    assert compiled.last_recompile_reasons == ["w.dtype == f32, got f64"]


def test_dynamic_reuses_one_entry_across_sizes_and_recompiles_on_rank(backend):
    compiled = tp.compile(relu2, backend=backend, dynamic=True)
    for n in (4, 5, 9):
        np.testing.assert_allclose(compiled(ramp(n)).numpy(), np.maximum(ramp(n), 0) * 2)
    assert compiled.num_entries == 1
    compiled(np.ones((2, 3), np.float32))
    assert compiled.last_recompile_reasons == ["x.ndim == 1, got 2"]


def test_reading_shape_guards_the_exact_shape_in_dynamic_mode(backend):
    def rows_plus(x):
        return x + float(x.shape[0])
    compiled = tp.compile(rows_plus, backend=backend, dynamic=True)
    np.testing.assert_allclose(compiled(ramp(4)).numpy(), ramp(4) + 4)
    np.testing.assert_allclose(compiled(ramp(6)).numpy(), ramp(6) + 6)
    assert any("x.shape[0] == 4, got 6" in r for r in compiled.last_recompile_reasons)


def test_bool_gate_keys_two_entries_and_follows_the_values(backend):
    def branch(x):
        if ops.sum(x) > 0:
            return x * 2.0
        return x - 1.0
    compiled = tp.compile(branch, backend=backend)
    positive, negative = np.ones(3, np.float32), -np.ones(3, np.float32)
    np.testing.assert_allclose(compiled(positive).numpy(), [2, 2, 2])
    np.testing.assert_allclose(compiled(negative).numpy(), [-2, -2, -2])
    assert compiled.last_recompile_reasons == ["gate #1 took the other branch"]
    assert compiled.num_entries == 2
    np.testing.assert_allclose(compiled(positive).numpy(), [2, 2, 2])  # the gate flips back
    assert compiled.num_compiles == 2


def test_int_gate_is_tp_item_i64(backend):
    def repeat(x, n):
        count = int(ops.sum(n))
        out = x
        for _ in range(count - 1):
            out = out + x
        return out
    compiled = tp.compile(repeat, backend=backend)
    x = np.ones(2, np.float32)
    np.testing.assert_allclose(compiled(x, np.array([3], np.int64)).numpy(), [3, 3])
    np.testing.assert_allclose(compiled(x, np.array([2], np.int64)).numpy(), [2, 2])
    assert compiled.num_entries == 2
    assert "gate #1" in compiled.last_recompile_reasons[0]


def test_scalar_arguments_key_by_value(backend):
    def scale(x, alpha):
        return x * alpha
    compiled = tp.compile(scale, backend=backend)
    np.testing.assert_allclose(compiled(ramp(3), 2).numpy(), ramp(3) * 2)
    np.testing.assert_allclose(compiled(ramp(3), 3).numpy(), ramp(3) * 3)
    assert compiled.last_recompile_reasons == ["alpha == 2, got 3"]


def test_recompile_limit_runs_compiled_but_uncached(backend):
    compiled = tp.compile(relu2, backend=backend, recompile_limit=2, dynamic=False)
    for n in (2, 3, 4):
        np.testing.assert_allclose(compiled(ramp(n)).numpy(), np.maximum(ramp(n), 0) * 2)
    assert compiled.num_entries == 2
    compiled(ramp(4))
    assert compiled.num_compiles == 4  # past the limit: compiled again, not cached
    compiled(ramp(2))
    assert compiled.num_compiles == 4


def test_fullgraph_fails_past_the_limit(backend):
    compiled = tp.compile(relu2, backend=backend, recompile_limit=1, fullgraph=True)
    compiled(ramp(2))
    with pytest.raises(tp.StateError, match=r"recompile_limit \(1\) reached.*x.shape\[0\] == 2, got 3"):
        compiled(ramp(3))


def test_raw_data_access_runs_uncompiled_with_the_reason(backend):
    def peek(x):
        total = float(np.asarray(x).sum())  # raw data: not recordable
        return x + total
    compiled = tp.compile(peek, backend=backend)
    np.testing.assert_allclose(compiled(np.ones(2, np.float32)).numpy(), [3, 3])
    assert "tp_tensor_data" in compiled.uncompiled_reason


def test_raw_data_access_is_an_error_under_fullgraph(backend):
    def peek(x):
        return x + float(np.asarray(x).sum())
    with pytest.raises(tp.TensorPlayError, match="tp_tensor_data"):
        tp.compile(peek, backend=backend, fullgraph=True)(np.ones(2, np.float32))


def test_unknown_backend_is_invalid_backend_with_suggestion():
    with pytest.raises(tp.InvalidBackend, match="did you mean: 'stax'"):
        tp.compile(relu2, backend="staks")


def test_mode_with_options_is_rejected():
    with pytest.raises(tp.InvalidArgument):
        tp.compile(relu2, mode="default", options={"a": 1})


def test_negative_recompile_limit_is_rejected():
    with pytest.raises(tp.InvalidArgument, match="recompile_limit"):
        tp.compile(relu2, recompile_limit=-1)


def test_op_error_in_the_function_is_raised_with_the_c_message(backend):
    def bad(x):
        return ops.add(x, np.ones(7, np.float32))
    with pytest.raises(tp.ShapeError, match="cannot broadcast f32\\[3\\] with f32\\[7\\]"):
        tp.compile(bad, backend=backend)(np.ones(3, np.float32))


def test_python_exception_in_the_function_propagates(backend):
    def broken(x):
        raise KeyError("from the body")
    with pytest.raises(KeyError, match="from the body"):
        tp.compile(broken, backend=backend)(np.ones(3, np.float32))


def test_disable_runs_the_function_every_call(backend):
    calls = []
    def counted(x):
        calls.append(1)
        return x + 1.0
    compiled = tp.compile(counted, backend=backend, disable=True)
    for _ in range(3):
        np.testing.assert_allclose(compiled(np.zeros(2, np.float32)).numpy(), [1, 1])
    assert len(calls) == 3
    assert compiled.num_compiles == 0


def test_cache_hit_does_not_run_the_python_body(backend):
    calls = []
    def counted(x):
        calls.append(1)
        return x + 1.0
    compiled = tp.compile(counted, backend=backend)
    for _ in range(5):
        compiled(np.zeros(2, np.float32))
    assert len(calls) == 1


def test_several_outputs_come_back_as_a_tuple(backend):
    compiled = tp.compile(lambda x: (x + 1.0, x * 3.0), backend=backend)
    a, b = compiled(np.ones(2, np.float32))
    np.testing.assert_allclose(a.numpy(), [2, 2])
    np.testing.assert_allclose(b.numpy(), [3, 3])


def test_changing_the_number_of_outputs_later_is_an_error(backend):
    def varying(x, two):
        return (x, x) if two else x
    compiled = tp.compile(varying, backend=backend)
    compiled(np.ones(2, np.float32), False)
    with pytest.raises(tp.CompileOutputCountError, match="returned 2 tensors"):
        compiled(np.ones(2, np.float32), True)


def test_keyword_arguments_and_defaults_bind_like_python(backend):
    def scale(x, alpha=2.0):
        return x * alpha
    compiled = tp.compile(scale, backend=backend)
    np.testing.assert_allclose(compiled(np.ones(2, np.float32)).numpy(), [2, 2])
    np.testing.assert_allclose(compiled(x=np.ones(2, np.float32), alpha=5.0).numpy(), [5, 5])


def test_decorator_form(backend):
    @tp.compile(backend=backend)
    def double(x):
        return x + x
    np.testing.assert_allclose(double(np.ones(2, np.float32)).numpy(), [2, 2])
    assert double.__name__ == "double"


def test_numpy_inputs_are_wrapped_without_a_copy():
    seen = []
    def record(x):
        seen.append(x)
        return x
    x = np.ones(3, np.float32)
    compiled = tp.compile(record, disable=True)  # eager: the body sees the argument itself
    out = compiled(x)
    assert out.data_ptr == x.ctypes.data


def test_last_partition_names_the_backend_of_each_region(backend):
    compiled = tp.compile(relu2, backend=backend)
    assert compiled.last_partition == []
    compiled(ramp(4))
    regions = compiled.last_partition
    assert regions and all(count > 0 for _, count in regions)
    assert regions[0][0] == backend  # relu and mul: every backend claims them


def test_fallback_none_is_passed_to_the_c_frontend(backend):
    compiled = tp.compile(relu2, backend=backend, fallback_backend="none")
    np.testing.assert_allclose(compiled(ramp(4)).numpy(), np.maximum(ramp(4), 0) * 2)
