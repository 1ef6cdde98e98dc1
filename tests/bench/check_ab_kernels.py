#!/usr/bin/env python3
"""bench/ab_kernels.py on hand-made traces and a stand-in for tpc.

    check_ab_kernels.py AB_KERNELS_PY

1. --parse: per-position minima over the steady runs only (a kernel of the
   first run, outside every steady run, is ignored), B/A, the sums.
2. A stand-in tpc (this file, run with --fake-tpc) writes a trace whose
   kernel times say which plugin build was in place and which environment
   it saw; ab_kernels must run A's build with A's variables and B's with
   B's in every round, and put the original plugin back afterwards.
3. A trace without steady runs is an error with a message, not a crash.
"""
import json
import os
import subprocess
import sys
import tempfile


def event(name, cat, ts, dur):
    return {"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": 1, "tid": 1}


def trace(first_kernel_us, runs):
    """runs: [[kernel us, ...], ...] -> a trace with a first run and steady runs."""
    events = [event("first run", "tpc", 0, 100), event("conv", "kernel", 1, first_kernel_us)]
    t = 1000.0
    for i, kernels in enumerate(runs):
        start = t
        for j, us in enumerate(kernels):
            events.append(event(f"k{j}", "kernel", t, us))
            t += us + 1
        events.append(event(f"steady run {i + 1}", "tpc", start, t - start))
        t += 10
    return {"traceEvents": events}


def fake_tpc(args):
    plugin = os.environ["FAKE_PLUGIN"]
    with open(plugin) as f:
        build = f.read().strip()
    trace_path = args[args.index("--profile-json") + 1]
    setting = float(os.environ.get("FAKE_SETTING", "0"))
    base = {"A-build": 100.0, "B-build": 50.0}[build]
    with open(trace_path, "w") as f:
        json.dump(trace(1, [[base + setting, 7.0]] * 2), f)
    return 0


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--fake-tpc":
        sys.exit(fake_tpc(sys.argv[2:]))
    script = sys.argv[1]
    work = tempfile.mkdtemp(prefix="check-ab-")
    a, b = os.path.join(work, "a.json"), os.path.join(work, "b.json")
    with open(a, "w") as f:
        json.dump(trace(999, [[10, 40], [12, 30]]), f)
    with open(b, "w") as f:
        json.dump(trace(1, [[6, 20], [5, 25]]), f)
    out = subprocess.run([sys.executable, script, "--parse", a, b], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"--parse exited {out.returncode}: {out.stderr}")
    lines = out.stdout.splitlines()
    rows = [line.split() for line in lines if line[:3].strip().isdigit()]
    # minima: k0 A 10, B 5 (0.5); k1 A 30, B 20 (0.667); the first run's 999 ignored
    want = [("0", "10", "5", "0.500", "k0"), ("1", "30", "20", "0.667", "k1")]
    if [tuple(r) for r in rows] != want:
        fail(f"rows {rows}, want {want}\n{out.stdout}")
    if "sum of minima: A 40 us, B 25 us, B/A 0.625" not in out.stdout:
        fail(f"sum line missing or wrong:\n{out.stdout}")

    # the swap: A's build with A's setting, B's with B's; the original back
    plugin = os.path.join(work, "plugin.so")
    builds = {}
    for name in ("original", "A-build", "B-build"):
        builds[name] = os.path.join(work, name + ".so")
        with open(builds[name], "w") as f:
            f.write(name + "\n")
    with open(plugin, "w") as f:
        f.write("original\n")
    tpc = os.path.join(work, "tpc")
    with open(tpc, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} --fake-tpc \"$@\"\n")
    os.chmod(tpc, 0o755)
    model = os.path.join(work, "m.tpir")
    open(model, "w").close()
    env = dict(os.environ, FAKE_PLUGIN=plugin)
    out = subprocess.run([sys.executable, script, "--tpc", tpc, "--plugin", plugin,
                          "--a-plugin", builds["A-build"], "--b-plugin", builds["B-build"],
                          "--a-env", "FAKE_SETTING=1", "--b-env", "FAKE_SETTING=3",
                          "--rounds", "2", "--repeat", "2", model, "--arg", "x=x.npy"],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        fail(f"the swap run exited {out.returncode}: {out.stderr}")
    if "sum of minima: A 108 us, B 60 us, B/A 0.556" not in out.stdout:
        fail(f"A must be 100 + 1 + 7, B 50 + 3 + 7:\n{out.stdout}")
    with open(plugin) as f:
        if f.read().strip() != "original":
            fail("the original plugin was not put back")

    # no steady runs: an error that says so
    with open(a, "w") as f:
        json.dump({"traceEvents": [event("first run", "tpc", 0, 5)]}, f)
    out = subprocess.run([sys.executable, script, "--parse", a, b], capture_output=True, text=True)
    if out.returncode == 0 or "no steady runs" not in out.stderr:
        fail(f"a trace without steady runs: exit {out.returncode}, stderr {out.stderr!r}")
    print("ab_kernels: 3 checks passed")


if __name__ == "__main__":
    main()
