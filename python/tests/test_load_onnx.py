"""tensorplay.load on ONNX files written by the test (onnx_writer.py), run
against NumPy; skipped when the library was built without the importer."""
import numpy as np
import pytest

import tensorplay as tp
from onnx_writer import attribute_int, model, node, value_info

needs_importer = pytest.mark.skipif(
    not tp._lib.lib.tp_onnx_available(),
    reason="this libtensorplay was built without the ONNX importer (TP_WITH_ONNX=OFF)")


def _mlp_model(path, w, b):
    """y = Softmax(Relu(x @ w + b), axis=-1) with w and b as initializers."""
    data = model(
        "mlp",
        [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["hb"]),
         node("Relu", ["hb"], ["r"]), node("Softmax", ["r"], ["y"],
                                          attributes=[attribute_int("axis", -1)])],
        [value_info("x", np.float32, (2, 3))], [value_info("y", np.float32, (2, 4))],
        {"w": w, "b": b})
    path.write_bytes(data)
    try:  # the bytes are a valid model by the reference checker, when it is here
        import onnx
        onnx.checker.check_model(onnx.load(str(path)))
    except ImportError:
        pass
    return path


@needs_importer
def test_onnx_model_runs_on_numpy_arrays(tmp_path, backend):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    graph = tp.load(_mlp_model(tmp_path / "mlp.onnx", w, b), backend=backend)
    assert graph.input_names == ["x"]
    for _ in range(2):  # the second call is a cache hit
        x = rng.standard_normal((2, 3)).astype(np.float32)
        r = np.maximum(x @ w + b, 0)
        expected = np.exp(r - r.max(axis=-1, keepdims=True))
        expected /= expected.sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(graph(x), expected, rtol=1e-5, atol=1e-6)


@needs_importer
def test_onnx_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x08\x3a\x05not a graph")
    with pytest.raises(tp.TensorPlayError, match="broken.onnx"):
        tp.load(path)


def test_onnx_without_the_importer_names_the_build_option(tmp_path):
    if tp._lib.lib.tp_onnx_available():
        pytest.skip("this libtensorplay has the ONNX importer")
    path = tmp_path / "model.onnx"
    path.write_bytes(b"")
    with pytest.raises(tp.UnsupportedFormat, match="TP_WITH_ONNX"):
        tp.load(path)
