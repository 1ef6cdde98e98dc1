"""Cache-hit call overhead of a compiled function from Python against the same
call from C (build/tests/python/bench_python_call_c). A benchmark, not a test:

    TENSORPLAY_LIBRARY=build/libtensorplay.so python bench_call_overhead.py [BUILD_DIR] [BACKEND]

Prints nanoseconds per call for: C tp_call; Python with Tensor arguments
(wrapped once); Python with NumPy arguments (wrapped on every call); and the
Python-over-C overhead of each. Best of 5 rounds.
"""
import os
import subprocess
import sys
import time

import numpy as np

import tensorplay as tp


def best_ns_per_call(function, iterations=100_000, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            function()
        best = min(best, (time.perf_counter_ns() - start) / iterations)
    return best


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "build")
    backend = sys.argv[2] if len(sys.argv) > 2 else "stax"
    c_bench = os.path.join(build, "tests", "python", "bench_python_call_c")
    c_ns = None
    if os.path.exists(c_bench):
        output = subprocess.run([c_bench, backend], capture_output=True, text=True, check=True).stdout
        c_ns = float(output.split()[1])
    compiled = tp.compile(lambda x, y: tp.ops.add(x, y), backend=backend)
    xa, ya = np.zeros(4, np.float32), np.zeros(4, np.float32)
    xt, yt = tp.from_numpy(xa), tp.from_numpy(ya)
    compiled(xt, yt)
    tensor_ns = best_ns_per_call(lambda: compiled(xt, yt))
    numpy_ns = best_ns_per_call(lambda: compiled(xa, ya))
    print(f"backend {backend}")
    if c_ns is not None:
        print(f"C tp_call:                 {c_ns:8.0f} ns/call")
    print(f"Python, Tensor arguments:  {tensor_ns:8.0f} ns/call"
          + (f"  (overhead over C {tensor_ns - c_ns:6.0f} ns)" if c_ns is not None else ""))
    print(f"Python, NumPy arguments:   {numpy_ns:8.0f} ns/call"
          + (f"  (overhead over C {numpy_ns - c_ns:6.0f} ns)" if c_ns is not None else ""))


if __name__ == "__main__":
    main()
