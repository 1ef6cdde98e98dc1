"""Exports the model zoo (model_zoo.py) to ONNX, once: DIR/NAME.onnx plus
DIR/NAME.npz with its inputs (np.savez, the form `tpc run --args` reads).
Files already there are kept (delete them to re-export).

    python export_models.py DIR [NAME ...]
"""
import os
import sys
import time
import warnings

import numpy as np
import torch

import model_zoo

OPSET = 17


def export(name, directory):
    path = os.path.join(directory, name + ".onnx")
    inputs_path = os.path.join(directory, name + ".npz")
    if os.path.exists(path) and os.path.exists(inputs_path):
        print(f"{name}: kept {path}")
        return True
    module, inputs = model_zoo.build(name)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    start = time.perf_counter()
    partial = path + ".partial"
    # nn.TransformerEncoder's inference fast path is one fused aten op the
    # exporter cannot write; the composite path exports as plain ONNX ops.
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad():
        torch.onnx.export(module, args, partial, input_names=list(inputs), output_names=["output"],
                          opset_version=OPSET, do_constant_folding=True, dynamo=False)
    torch.backends.mha.set_fastpath_enabled(fastpath)
    os.replace(partial, path)
    np.savez(inputs_path, **inputs)
    inputs_dir = os.path.join(directory, name + ".inputs")  # one .npy per input, for tp-bench
    os.makedirs(inputs_dir, exist_ok=True)
    for input_name, value in inputs.items():
        np.save(os.path.join(inputs_dir, input_name + ".npy"), value)
    print(f"{name}: exported {path} ({os.path.getsize(path) / 1e6:.1f} MB, opset {OPSET}, "
          f"{time.perf_counter() - start:.1f} s)")
    return True


def main():
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # the legacy exporter's notice
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    names = sys.argv[2:] or list(model_zoo.MODELS)
    failed = []
    for name in names:
        try:
            export(name, directory)
        except Exception as error:  # one model's exporter failure must not hide the others
            print(f"{name}: export failed: {type(error).__name__}: {error}", file=sys.stderr)
            failed.append(name)
    if failed:
        sys.exit(f"export failed for: {', '.join(failed)}")


if __name__ == "__main__":
    main()
