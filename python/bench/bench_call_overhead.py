"""Cache-hit call overhead of a compiled function from Python against the same
call from C (build/tests/python/bench_python_call_c). A benchmark, not a test:

    TENSORPLAY_LIBRARY=build/libtensorplay.so python bench_call_overhead.py [BUILD_DIR] [BACKEND] [ROUNDS]

add(x, y) on two 4-element f32 inputs, so the call path, not the kernel, is
what is timed. Rounds of every case are interleaved (C ones in the same
process through the C benchmark's binary, run between Python rounds) and
the medians are printed in nanoseconds per call:

  C tp_call                       the memo hit from C (same tensors)
  C prepared, arrays              tp_prepared_call_run with array records
  Python, Tensor arguments        compiled(xt, yt): the same Tensors
  Python, NumPy, same arrays      compiled(x, y): the same arrays every call
  Python, NumPy, new arrays       a different pair of arrays every call
  ... through tp_call             the same calls with the prepared call
                                  turned off: the path every call took
                                  before it (and a miss still takes)
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


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build")
    backend = sys.argv[2] if len(sys.argv) > 2 else "stax"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    iterations = 20000
    c_bench = os.path.join(build, "tests", "python", "bench_python_call_c")

    compiled = tp.compile(lambda x, y: tp.ops.add(x, y), backend=backend)
    xa, ya = np.zeros(4, np.float32), np.zeros(4, np.float32)
    xt, yt = tp.from_numpy(xa), tp.from_numpy(ya)
    pool = [(np.zeros(4, np.float32), np.zeros(4, np.float32)) for _ in range(64)]
    compiled(xa, ya)
    cursor = [0]

    def new_arrays():
        cursor[0] = (cursor[0] + 1) & 63
        return compiled(*pool[cursor[0]])

    # The same function with the prepared call turned off: every call takes
    # the tp_call path all calls took before it (and misses still take).
    through_tp_call = tp.compile(lambda x, y: tp.ops.add(x, y), backend=backend)
    through_tp_call._new_prepared = lambda: None
    through_tp_call(xa, ya)

    def new_arrays_tp_call():
        cursor[0] = (cursor[0] + 1) & 63
        return through_tp_call(*pool[cursor[0]])

    cases = {
        "Python, Tensor arguments": lambda: compiled(xt, yt),
        "Python, NumPy, same arrays": lambda: compiled(xa, ya),
        "Python, NumPy, new arrays": new_arrays,
        "Python, Tensor arguments, through tp_call": lambda: through_tp_call(xt, yt),
        "Python, NumPy, same arrays, through tp_call": lambda: through_tp_call(xa, ya),
        "Python, NumPy, new arrays, through tp_call": new_arrays_tp_call,
    }
    samples = {name: [] for name in cases}
    c_samples = {}
    for round_index in range(rounds):
        for name, function in cases.items():
            samples[name].append(ns_per_call(function, iterations))
        for key, value in c_figures(c_bench, backend, iterations).items():
            c_samples.setdefault(key, []).append(value)

    c_call = statistics.median(c_samples["c_tp_call_ns"]) if c_samples else None
    print(f"backend {backend}; medians of {rounds} interleaved rounds of {iterations} calls "
          f"(ns per call)")
    for key, label in (("c_tp_call_ns", "C tp_call (memo hit)"),
                       ("c_prepared_array_ns", "C prepared, arrays"),
                       ("c_prepared_tensor_ns", "C prepared, tensor handles")):
        if key in c_samples:
            print(f"  {label:48s} {statistics.median(c_samples[key]):8.0f}")
    for name, values in samples.items():
        median = statistics.median(values)
        over = f"  (over C tp_call {median - c_call:6.0f})" if c_call is not None else ""
        print(f"  {name:48s} {median:8.0f}{over}")


if __name__ == "__main__":
    main()
