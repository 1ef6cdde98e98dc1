"""tp-bench checks its outputs: (1) a short run reports, for every backend
row, a check against NumPy that passed; (2) bench/peers.py's check fails on
an output that is wrong by 1% and passes the right one (so (1) can fail).

    check_tp_bench.py TP_BENCH PEERS_SCRIPT BACKEND CACHE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run_bench(tp_bench, backend, cache):
    env = dict(os.environ, TP_BENCH_CACHE=cache)
    done = subprocess.run([tp_bench, "--backends", backend, "--case", "mm-bias,transpose-mm,layer_norm",
                           "--reps", "1", "--rounds", "1", "--json", "--python", sys.executable],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"tp-bench exited {done.returncode}: {done.stderr}"
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    cases = [r for r in rows if "results" in r]
    assert [c["case"] for c in cases] == ["mm-bias", "transpose-mm", "layer_norm"], done.stdout
    for case in cases:
        backends = [r for r in case["results"] if r["kind"] == "backend"]
        assert [r["name"] for r in backends] == [backend], case
        for r in backends:
            assert r["check"]["oracle"] == "numpy" and r["check"]["pass"] is True, case
        assert any(r["name"] == "numpy" and r["kind"] == "peer" for r in case["results"]), case
    assert not os.listdir(cache) or all(not n.startswith("run-") for n in os.listdir(cache)), \
        "tp-bench left its scratch folder behind"


def helper_rejects_wrong_output(script):
    with tempfile.TemporaryDirectory() as directory:
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
        np.save(os.path.join(directory, "a.npy"), a)
        np.save(os.path.join(directory, "b.npy"), b)
        right, wrong = os.path.join(directory, "right.npy"), os.path.join(directory, "wrong.npy")
        np.save(right, a + b)
        np.save(wrong, (a + b) * 1.01)
        commands = f"case add {directory} a,b numpy -\ncheck x {right}\ncheck x {wrong}\nquit\n"
        done = subprocess.run([sys.executable, script, "--serve"], input=commands, capture_output=True,
                              text=True, timeout=120)
        lines = [l for l in done.stdout.splitlines() if not l.startswith("note ")]
        assert lines[0] == "hello" and lines[1].startswith("ready"), done.stdout + done.stderr
        assert lines[2].startswith("check numpy ") and lines[2].endswith(" pass"), lines[2]
        assert lines[3].startswith("check numpy ") and lines[3].endswith(" FAIL"), lines[3]


def main():
    tp_bench, script, backend, cache = sys.argv[1:5]
    os.makedirs(cache, exist_ok=True)
    helper_rejects_wrong_output(script)
    run_bench(tp_bench, backend, cache)
    print("tp_bench_checks_outputs: 2 passed, 0 failed")


if __name__ == "__main__":
    main()
