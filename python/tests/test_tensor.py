"""Tensors: zero-copy to and from NumPy (pointer identity), lifetimes, metadata, .npy."""
import gc
import weakref

import numpy as np
import pytest

import tensorplay as tp


def test_from_numpy_shares_the_array_memory():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tp.from_numpy(array)
    assert t.data_ptr == array.ctypes.data
    array[1, 2] = 100.0
    assert t.numpy()[1, 2] == 100.0


def test_numpy_of_a_c_tensor_shares_its_memory():
    t = tp.ops.full(shape=[2, 3], value=1.0)
    view = t.numpy()
    assert view.ctypes.data == t.data_ptr
    view[0, 0] = 7.0
    assert t.numpy()[0, 0] == 7.0
    assert np.shares_memory(view, t.numpy())


def test_numpy_of_from_numpy_gives_back_the_same_array():
    array = np.ones(5, dtype=np.int64)
    assert tp.from_numpy(array).numpy() is array


def test_array_lives_as_long_as_the_tensor():
    array = np.arange(4, dtype=np.float64)
    alive = weakref.ref(array)
    t = tp.from_numpy(array)
    del array
    gc.collect()
    assert alive() is not None
    del t
    gc.collect()
    assert alive() is None


def test_numpy_view_keeps_the_c_tensor_alive():
    view = tp.ops.full(shape=[1000], value=3.0).numpy()  # the Tensor object is gone
    gc.collect()
    assert view.sum() == 3000.0


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float64, "f64"),
                                        (np.int32, "i32"), (np.int64, "i64"), (np.bool_, "bool")])
def test_dtype_and_shape_properties(dtype, name):
    t = tp.from_numpy(np.zeros((2, 3, 4), dtype=dtype))
    assert t.dtype == np.dtype(dtype)
    assert t.dtype_name == name
    assert t.shape == (2, 3, 4)
    assert t.ndim == 3
    assert t.size == 24
    assert t.nbytes == 24 * np.dtype(dtype).itemsize


def test_unsupported_arrays_are_refused_with_a_hint():
    with pytest.raises(tp.DTypeError, match="astype"):
        tp.from_numpy(np.zeros(3, dtype=np.uint16))
    with pytest.raises(tp.InvalidArgument, match="ascontiguousarray"):
        tp.from_numpy(np.zeros((3, 4), dtype=np.float32).T)


def test_npy_round_trip_through_the_c_library(tmp_path):
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    path = tmp_path / "a.npy"
    tp.save_npy(path, tp.from_numpy(array))
    assert np.array_equal(np.load(path), array)  # NumPy reads what C wrote
    np.save(tmp_path / "b.npy", array.astype(np.float64) / 3)
    loaded = tp.load_npy(tmp_path / "b.npy")  # C reads what NumPy wrote
    assert loaded.dtype == np.float64
    np.testing.assert_array_equal(loaded.numpy(), array / 3)


def test_npy_errors_name_the_file(tmp_path):
    with pytest.raises(tp.NotFound, match="missing.npy"):
        tp.load_npy(tmp_path / "missing.npy")


def test_scalar_reads():
    t = tp.from_numpy(np.array([2.5], dtype=np.float32))
    assert float(t) == 2.5
    assert int(tp.from_numpy(np.array(7, dtype=np.int64))) == 7
    assert bool(tp.from_numpy(np.array(True)))
    with pytest.raises(tp.TensorPlayError):
        int(tp.from_numpy(np.zeros(3, dtype=np.int64)))


def test_read_only_and_empty_arrays_are_shared_too():
    array = np.arange(3, dtype=np.float64)
    array.flags.writeable = False
    assert tp.from_numpy(array).data_ptr == array.ctypes.data
    empty = np.zeros((0, 3), dtype=np.float32)
    assert tp.from_numpy(empty).shape == (0, 3)


def test_float16_arrays_are_shared_and_computed_as_numpy_does():
    bits = np.arange(0, 65536, 7, dtype=np.uint16)
    a = bits.view(np.float16)
    b = bits[::-1].copy().view(np.float16)
    t = tp.from_numpy(a)
    assert t.dtype_name == "f16" and t.data_ptr == a.ctypes.data
    got = tp.ops.add(t, tp.from_numpy(b)).numpy()
    assert got.dtype == np.float16
    with np.errstate(all="ignore"):
        want = a + b  # NumPy adds float16 in float32 and rounds once, as we do
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    assert same.all()


def test_bf16_tensors_are_numpy_arrays_of_the_bf16_bits_dtype(tmp_path):
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], dtype=np.uint16)  # 1, -2, inf, tiny
    t = tp.from_numpy(bits.view(tp.BF16))
    assert t.dtype_name == "bf16" and t.dtype == tp.BF16
    widened = tp.ops.cast(t, "f32").numpy()
    want = (bits.astype(np.uint32) << 16).view(np.float32)
    assert (widened.view(np.uint32) == want.view(np.uint32)).all()
    path = tmp_path / "bits.npy"
    tp.save_npy(path, t)
    assert (np.load(path)["bfloat16"] == bits).all()
    assert (tp.load_npy(path).numpy()["bfloat16"] == bits).all()
