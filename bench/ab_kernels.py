#!/usr/bin/env python3
"""Interleaved A/B of two stax builds or two settings on one graph, per kernel.

    bench/ab_kernels.py [options] MODEL [--arg NAME=FILE ...]

A and B are either two builds of the stax plugin (--a-plugin, --b-plugin:
each copied in turn over the plugin that tpc loads, the original put back
afterwards, also on an error or Ctrl-C) or two sets of environment variables
(--a-env, --b-env: "STAX_CONV_SHIFTED=off STAX_GEMM_KC=192"), or both. In
each of --rounds rounds, A then B runs `tpc run MODEL --profile-json` with
--repeat steady runs. Every steady run's kernels are matched by position
(the i-th kernel of a run), and the table gives each position's minimum
over all of A's runs and over all of B's, with B/A; then the sum of those
minima and the whole runs' minimum and median. Minima of interleaved rounds
are what a noisy machine still lets one compare: a neighbour that takes
the core for a while slows some runs of both sides, not the fastest.

MODEL is a .onnx or .tpir file. Without --arg, every NAME.npy in the
folder MODEL.inputs beside a MODEL.onnx (the layout tests/models/run.sh
--export-only writes) becomes --arg NAME=FILE.

--parse FILE_A FILE_B (two --profile-json traces) skips the runs and prints
the same table for those two files; the test suite uses it.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def steady_kernels(trace):
    """[(whole run us, [(kernel name, us), ...]), ...] of a trace's steady runs."""
    events = trace["traceEvents"]
    runs = sorted((e for e in events if e.get("cat") == "tpc" and
                   e.get("name", "").startswith("steady run")), key=lambda e: e["ts"])
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"),
                     key=lambda e: e["ts"])
    result = []
    for run in runs:
        start, end = run["ts"], run["ts"] + run["dur"]
        inside = [(k["name"], k["dur"]) for k in kernels
                  if k["ts"] >= start and k["ts"] + k["dur"] <= end + 1e-3]
        result.append((run["dur"], inside))
    return result


def position_minima(runs):
    """(names, minima) by kernel position over runs; a run whose kernel list
    differs in length from the first one's is an error (another graph)."""
    if not runs:
        raise ValueError("the trace has no steady runs (tpc run --repeat N, N >= 1)")
    names = [name for name, _ in runs[0][1]]
    minima = [float("inf")] * len(names)
    for _, inside in runs:
        if len(inside) != len(names):
            raise ValueError(f"a steady run has {len(inside)} kernels, the first has {len(names)}")
        for i, (_, us) in enumerate(inside):
            minima[i] = min(minima[i], us)
    return names, minima


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def table(runs_a, runs_b, out=sys.stdout):
    names, min_a = position_minima(runs_a)
    _, min_b = position_minima(runs_b)
    if len(min_b) != len(names):
        print(f"note: A runs {len(names)} kernels, B runs {len(min_b)}: "
              "only the positions both have are compared", file=out)
    print(f"{'#':>3} {'A us':>9} {'B us':>9} {'B/A':>6}  kernel (A's name)", file=out)
    for i, name in enumerate(names):
        b = f"{min_b[i]:9.0f} {min_b[i] / min_a[i]:6.3f}" if i < len(min_b) and min_a[i] > 0 else \
            f"{'-':>9} {'-':>6}"
        print(f"{i:3d} {min_a[i]:9.0f} {b}  {name}", file=out)
    sum_a, sum_b = sum(min_a), sum(min_b)
    print(f"sum of minima: A {sum_a:.0f} us, B {sum_b:.0f} us, B/A {sum_b / sum_a:.3f}", file=out)
    whole_a = [w for w, _ in runs_a]
    whole_b = [w for w, _ in runs_b]
    print(f"whole runs: A min {min(whole_a):.0f} median {median(whole_a):.0f} us, "
          f"B min {min(whole_b):.0f} median {median(whole_b):.0f} us, "
          f"B/A of medians {median(whole_b) / median(whole_a):.3f} "
          f"({len(whole_a)} and {len(whole_b)} runs)", file=out)


def model_args(model, args):
    if args:
        return [part for arg in args for part in ("--arg", arg)]
    folder = os.path.splitext(model)[0] + ".inputs"
    if not os.path.isdir(folder):
        sys.exit(f"ab_kernels: no --arg given and no {folder} with the inputs' .npy files")
    result = []
    for entry in sorted(os.listdir(folder)):
        if entry.endswith(".npy"):
            result += ["--arg", f"{entry[:-4]}={os.path.join(folder, entry)}"]
    return result


def parse_env(text):
    env = {}
    for item in shlex.split(text or ""):
        if "=" not in item:
            sys.exit(f"ab_kernels: '{item}' in an --a-env/--b-env is not NAME=VALUE")
        name, value = item.split("=", 1)
        env[name] = value
    return env


def run_rounds(options):
    tpc = options.tpc
    plugin = options.plugin or os.path.join(os.path.dirname(os.path.abspath(tpc)), "plugins",
                                            "stax-llvm.so")
    swapping = options.a_plugin or options.b_plugin
    if swapping and not os.path.isfile(plugin):
        sys.exit(f"ab_kernels: {plugin} (the plugin tpc loads) does not exist; name it with --plugin")
    for path in (options.a_plugin, options.b_plugin):
        if path and not os.path.isfile(path):
            sys.exit(f"ab_kernels: plugin build {path} does not exist")
    arguments = model_args(options.model, options.arg)
    sides = {"A": (options.a_plugin, parse_env(options.a_env)),
             "B": (options.b_plugin, parse_env(options.b_env))}
    runs = {"A": [], "B": []}
    work = tempfile.mkdtemp(prefix="tp-ab-")
    original = os.path.join(work, "original.so")
    if swapping:
        shutil.copy2(plugin, original)
    try:
        for round_index in range(options.rounds):
            for side, (build, extra_env) in sides.items():
                if swapping:
                    shutil.copy2(build or original, plugin)
                trace = os.path.join(work, f"{side}.{round_index}.json")
                env = dict(os.environ, TP_NUM_THREADS=str(options.threads), **extra_env)
                command = [tpc, "run", options.model, *arguments, "--backend", options.backend,
                           "--repeat", str(options.repeat), "--profile-json", trace,
                           "--out", os.path.join(work, "out")]
                done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
                if done.returncode != 0:
                    sys.exit(f"ab_kernels: {side} failed (exit {done.returncode}): "
                             f"{' '.join(command)}\n{done.stderr.strip()}")
                with open(trace) as f:
                    runs[side] += steady_kernels(json.load(f))
    finally:
        if swapping:
            shutil.copy2(original, plugin)
        shutil.rmtree(work, ignore_errors=True)
    return runs["A"], runs["B"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 2)[2])
    parser.add_argument("model", nargs="?")
    parser.add_argument("--arg", action="append", default=[], help="NAME=FILE, as tpc run takes it")
    parser.add_argument("--tpc", default="build/tpc")
    parser.add_argument("--plugin", help="the plugin tpc loads (default: TPC's folder/plugins/stax-llvm.so)")
    parser.add_argument("--a-plugin")
    parser.add_argument("--b-plugin")
    parser.add_argument("--a-env", default="")
    parser.add_argument("--b-env", default="")
    parser.add_argument("--backend", default="stax")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--parse", nargs=2, metavar=("TRACE_A", "TRACE_B"))
    options = parser.parse_args()
    try:
        if options.parse:
            with open(options.parse[0]) as fa, open(options.parse[1]) as fb:
                table(steady_kernels(json.load(fa)), steady_kernels(json.load(fb)))
            return
        if not options.model:
            parser.error("MODEL is required (or --parse TRACE_A TRACE_B)")
        if options.rounds < 1 or options.repeat < 1 or options.threads < 1:
            parser.error("--rounds, --repeat and --threads must be at least 1")
        table(*run_rounds(options))
    except (ValueError, KeyError, OSError, json.JSONDecodeError) as error:
        sys.exit(f"ab_kernels: {error}")


if __name__ == "__main__":
    main()
