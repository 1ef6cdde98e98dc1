"""Cache-hit call overhead of a compiled function from Python against the same
call from C (build/tests/python/bench_python_call_c). A benchmark, not a test:

    TENSORPLAY_LIBRARY=build/libtensorplay.so python bench_call_overhead.py [BUILD_DIR] [BACKEND] [ROUNDS]

(with the C extension loaded when the build made it: see python/README.md)

add(x, y) on two 4-element f32 inputs, so the call path, not the kernel, is
what is timed. Rounds of every case are interleaved: each round runs the
C benchmark's binary, the extension's cases in this process, and the ctypes
cases in a child process started with TENSORPLAY_NO_SPEEDUPS=1 (the package
exactly as without the extension); each
line prints the median nanoseconds per call over the rounds, the range
(fastest-slowest round), and the overhead over C tp_call (the median and
range of the per-round differences, so load that drifts between rounds
cancels as far as it can):

  C tp_call                       the memo hit from C (same tensors)
  C prepared, arrays              tp_prepared_call_run with array records
  Python <path>, Tensor arguments compiled(xt, yt): the same Tensors
  Python <path>, NumPy, same      compiled(x, y): the same arrays every call
  Python <path>, NumPy, new       a different pair of arrays every call

with <path> one of
  extension    tensorplay._speedups (python/ext/), when loaded
  ctypes       no extension: the ctypes prepared call
  tp_call      no extension and the prepared call turned off: the path
               every call took before it (and a miss still takes)
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import tensorplay as tp


def ns_per_call(function, iterations):
    start = time.perf_counter_ns()
    for _ in range(iterations):
        function()
    return (time.perf_counter_ns() - start) / iterations


def c_figures(c_bench, backend, iterations):
    if not os.path.exists(c_bench):
        return {}
    output = subprocess.run([c_bench, backend, str(iterations), "3"], capture_output=True,
                            text=True, check=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in output.splitlines()}


def compiled_add(backend, path):
    """add(x, y) compiled, its hits taking `path` (extension, ctypes or tp_call)."""
    compiled = tp.compile(lambda x, y: tp.ops.add(x, y), backend=backend)
    if path == "tp_call":
        compiled._new_prepared = lambda: None
    return compiled


def all_cases(backend, paths):
    arrays = (np.zeros(4, np.float32), np.zeros(4, np.float32))
    tensors = (tp.from_numpy(arrays[0]), tp.from_numpy(arrays[1]))
    pool = [(np.zeros(4, np.float32), np.zeros(4, np.float32)) for _ in range(64)]
    cases = {}
    for path in paths:
        cases.update(cases_of(compiled_add(backend, path), path, arrays, tensors, pool))
    return cases


def ctypes_figures(backend, iterations):
    """One round of the ctypes cases, in a child without the extension."""
    env = dict(os.environ, TENSORPLAY_NO_SPEEDUPS="1")
    output = subprocess.run([sys.executable, os.path.abspath(__file__), "--ctypes-round", backend,
                             str(iterations)], env=env, capture_output=True, text=True,
                            check=True).stdout
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in output.splitlines()}


def ctypes_round(backend, iterations):
    assert not tp.speedups_status().active
    for name, function in all_cases(backend, ["ctypes", "tp_call"]).items():
        print(f"{name} {ns_per_call(function, iterations)}")


def cases_of(compiled, path, arrays, tensors, pool):
    xa, ya = arrays
    xt, yt = tensors
    compiled(xa, ya)
    cursor = [0]

    def new_arrays():
        cursor[0] = (cursor[0] + 1) & 63
        return compiled(*pool[cursor[0]])

    return {f"Python {path}, Tensor arguments": lambda: compiled(xt, yt),
            f"Python {path}, NumPy, same arrays": lambda: compiled(xa, ya),
            f"Python {path}, NumPy, new arrays": new_arrays}


def spread(values):
    return f"{statistics.median(values):8.0f}  [{min(values):6.0f} .. {max(values):6.0f}]"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build")
    backend = sys.argv[2] if len(sys.argv) > 2 else "stax"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    iterations = 20000
    c_bench = os.path.join(build, "tests", "python", "bench_python_call_c")

    cases = all_cases(backend, ["extension"] if tp.speedups_status().active else [])
    samples = {name: [] for name in cases}
    c_samples = {}
    for round_index in range(rounds):
        for key, value in c_figures(c_bench, backend, iterations).items():
            c_samples.setdefault(key, []).append(value)
        for name, function in cases.items():
            samples[name].append(ns_per_call(function, iterations))
        for name, value in ctypes_figures(backend, iterations).items():
            samples.setdefault(name, []).append(value)

    print(f"backend {backend}; speedups: {tp.speedups_status().reason}; {rounds} interleaved "
          f"rounds of {iterations} calls; ns per call: median [fastest .. slowest round]")
    for key, label in (("c_tp_call_ns", "C tp_call (memo hit)"),
                       ("c_prepared_array_ns", "C prepared, arrays"),
                       ("c_prepared_tensor_ns", "C prepared, tensor handles")):
        if key in c_samples:
            print(f"  {label:44s} {spread(c_samples[key])}")
    c_call = c_samples.get("c_tp_call_ns")
    for name, values in samples.items():
        over = ""
        if c_call:
            differences = [p - c for p, c in zip(values, c_call)]
            over = f"   over C tp_call {spread(differences)}"
        print(f"  {name:44s} {spread(values)}{over}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--ctypes-round":
        ctypes_round(sys.argv[2], int(sys.argv[3]))
    else:
        main()
