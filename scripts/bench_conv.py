#!/usr/bin/python3
"""Times conv layers on stax and eager (through `tpc run --repeat`) and in
NumPy (im2col by sliding_window_view, then one BLAS matmul; the depthwise
layer as a sum of shifted planes), in one run, and prints the ratios.

Usage: scripts/bench_conv.py [BUILD_DIR] [--rounds N] [--repeat N]

Each round runs every case once per engine; the figure per engine is the
median over rounds of tpc's steady-run median (NumPy: the median of
`repeat` calls). Outputs are checked against NumPy before timing. On a
shared machine compare the ratios, not the absolute times.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = [
    # name, x shape, w shape, pads, group
    ("resnet18_layer1_conv3x3", (1, 64, 56, 56), (64, 64, 3, 3), 1, 1),
    ("mobilenetv2_depthwise3x3", (1, 144, 56, 56), (144, 1, 3, 3), 1, 144),
]


def numpy_conv(x, w, pad, group):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    if group == 1:
        patches = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
        n, c, oh, ow = patches.shape[:4]
        cols = patches.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
        out = cols @ w.reshape(w.shape[0], -1).T
        return out.reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            out += xp[:, :, i:i + oh, j:j + ow] * w[:, 0, i, j][None, :, None, None]
    return out


def tpir(name, xs, ws, pad, group):
    out = (xs[0], ws[0], xs[2] + 2 * pad - ws[2] + 1, xs[3] + 2 * pad - ws[3] + 1)
    dims = lambda s: ", ".join(str(d) for d in s)  # noqa: E731
    return (f"graph {name}(%x: f32[{dims(xs)}], %w: f32[{dims(ws)}]) {{\n"
            f"  %y: f32[{dims(out)}] = conv(%x, %w) {{strides=[], pads=[{pad}, {pad}, {pad}, "
            f"{pad}], dilations=[], group={group}}}\n  return %y\n}}\n")


def tpc_time(tpc, graph, x, w, backend, repeat, out_dir):
    args = [tpc, "run", graph, "--arg", "x=" + x, "--arg", "w=" + w, "--backend", backend,
            "--repeat", str(repeat), "--profile", "--out", out_dir]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    text += subprocess.run(args, check=True, capture_output=True, text=True).stderr
    match = re.search(r"steady runs \(\d+\)\s+([0-9.]+) median", text)
    if not match:
        sys.exit("bench_conv: no steady-run median in tpc's profile:\n" + text)
    return float(match.group(1)) / 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(os.path.dirname(__file__),
                                                                 "..", "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    tpc = os.path.join(args.build, "tpc")
    rng = np.random.default_rng(7)
    work = tempfile.mkdtemp(prefix="bench_conv.")
    times = {}
    for name, xs, ws, pad, group in CASES:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        np.save(os.path.join(work, name + ".x.npy"), x)
        np.save(os.path.join(work, name + ".w.npy"), w)
        with open(os.path.join(work, name + ".tpir"), "w") as f:
            f.write(tpir(name, xs, ws, pad, group))
        expected = numpy_conv(x, w, pad, group)
        for backend in ("stax", "eager"):
            out = os.path.join(work, name + "." + backend)
            tpc_time(tpc, os.path.join(work, name + ".tpir"), os.path.join(work, name + ".x.npy"),
                     os.path.join(work, name + ".w.npy"), backend, 1, out)
            got = np.load(os.path.join(out, "y.npy"))
            error = np.abs(got - expected).max() / max(1.0, np.abs(expected).max())
            if error > 1e-4:
                sys.exit(f"bench_conv: {name} on {backend} differs from NumPy ({error:.3g})")
    for _ in range(args.rounds):
        for name, xs, ws, pad, group in CASES:
            base = os.path.join(work, name)
            for backend in ("stax", "eager"):
                t = tpc_time(tpc, base + ".tpir", base + ".x.npy", base + ".w.npy", backend,
                             args.repeat, base + "." + backend)
                times.setdefault((name, backend), []).append(t)
            x, w = np.load(base + ".x.npy"), np.load(base + ".w.npy")
            samples = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                numpy_conv(x, w, pad, group)
                samples.append((time.perf_counter() - start) * 1e3)
            times.setdefault((name, "numpy"), []).append(statistics.median(samples))
    print(f"{'case':28} {'stax ms':>9} {'eager ms':>9} {'numpy ms':>9} {'eager/stax':>10} "
          f"{'numpy/stax':>10}")
    for name, *_ in CASES:
        t = {e: statistics.median(times[(name, e)]) for e in ("stax", "eager", "numpy")}
        print(f"{name:28} {t['stax']:9.2f} {t['eager']:9.2f} {t['numpy']:9.2f} "
              f"{t['eager'] / t['stax']:10.1f} {t['numpy'] / t['stax']:10.2f}")


if __name__ == "__main__":
    main()
