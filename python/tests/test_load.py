"""tensorplay.load: .tpir files as callables on NumPy arrays; ONNX needs its build option."""
import numpy as np
import pytest

import tensorplay as tp

MLP = """graph mlp(%x: f32[2, 3], %w: f32[3, 4], %b: f32[4]) {
  %h: f32[2, 4] = matmul(%x, %w)
  %y: f32[2, 4] = add(%h, %b)
  %r: f32[2, 4] = relu(%y)
  %s: f32[2] = sum(%r) {axes=[1], keepdim=false}
  return %r, %s
}
"""


def test_tpir_graph_runs_on_numpy_arrays(tmp_path, backend):
    path = tmp_path / "mlp.tpir"
    path.write_text(MLP)
    graph = tp.load(path, backend=backend)
    assert graph.input_names == ["x", "w", "b"]
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (3, 4), (4,)))
    r, s = graph(x, w, b)
    expected = np.maximum(x @ w + b, 0)
    np.testing.assert_allclose(r, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, expected.sum(axis=1), rtol=1e-5, atol=1e-6)
    assert isinstance(r, np.ndarray)


def test_wrong_input_count_names_the_inputs(tmp_path):
    path = tmp_path / "mlp.tpir"
    path.write_text(MLP)
    with pytest.raises(TypeError, match="x, w, b"):
        tp.load(path)(np.ones((2, 3), np.float32))


def test_parse_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.tpir"
    path.write_text("graph g(%x: f32[2]) {\n  %y: f32[2] = nosuchop(%x)\n  return %y\n}\n")
    with pytest.raises(tp.TensorPlayError, match="bad.tpir:2"):
        tp.load(path)


def test_unknown_extension_is_unsupported(tmp_path):
    with pytest.raises(tp.UnsupportedFormat, match=".pb"):
        tp.load(tmp_path / "model.pb")
