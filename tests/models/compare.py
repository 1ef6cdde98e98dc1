"""Runs each exported model (export_models.py) with `tpc run` on each backend
and compares the outputs with ONNX Runtime on the same file.

    python compare.py --tpc BUILD/tpc --models DIR [--backends eager,stax,opencl,auto]
                      [--report FILE.md] [--timeout S] [NAME ...]

Tolerances (f32 everywhere): an element passes when
|tp - ort| <= atol + rtol * |ort| with rtol = 1e-3 and atol = 1e-4 * max|ort|
(the output's scale: logits and features differ by orders of magnitude
between models; a summation-order difference grows with the reduction length,
not with each element's size). Exit status: 1 when any case fails, 0 when
every case passes or is unsupported (an unsupported op is a known gap and is
reported with the importer's message).
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

RTOL = 1e-3
ATOL_SCALE = 1e-4


def ort_reference(path, inputs, repeat):
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: inputs[i.name] for i in session.get_inputs()}
    outputs = session.run(None, feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - start)
    return outputs, float(np.median(times))


def steady_median_ms(profile_text):
    """The median of the N steady runs from tpc's --profile table."""
    for line in profile_text.splitlines():
        found = re.search(r"steady runs \(\d+\)\s+([0-9.]+) median", line)
        if found:
            return float(found.group(1)) / 1e3  # microseconds
    return None


UNSUPPORTED_SUMMARY = re.compile(r"(\d+) nodes? with ops the ONNX importer does not support \(([^)]*)\)")


def importer_message(stderr):
    """The importer's summary of unsupported op types with their node
    counts, or the last lines of tpc's message."""
    found = UNSUPPORTED_SUMMARY.search(stderr)
    if found:
        return f"unsupported ops: {found.group(2)}"
    lines = [l.strip() for l in stderr.strip().splitlines() if l.strip() and "steady" not in l]
    return " ".join(lines[-3:]) if lines else "(no message)"


def run_backend(tpc, model, args_file, backend, work, timeout, repeat):
    out_dir = os.path.join(work, backend)
    os.makedirs(out_dir, exist_ok=True)
    command = [tpc, "run", model, "--args", args_file, "--backend", backend, "--out", out_dir,
               "--profile", "--repeat", str(repeat)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"no result within {timeout} s"}
    wall = time.perf_counter() - start
    result = {"wall_s": wall, "steady_ms": steady_median_ms(done.stderr), "stderr": done.stderr}
    if done.returncode != 0:
        message = importer_message(done.stderr)
        unsupported = bool(re.search(r"unsupported|not support", message + done.stderr, re.I))
        result.update(status="unsupported" if unsupported else "error", message=message)
        return result
    result["status"] = "ran"
    result["out_dir"] = out_dir
    return result


def compare(outputs_dir, ort_outputs, ort_names):
    worst_abs = worst_rel = 0.0
    ok = True
    for name, expected in zip(ort_names, ort_outputs):
        path = os.path.join(outputs_dir, re.sub(r"[^A-Za-z0-9_]", "_", name) + ".npy")
        if not os.path.exists(path):
            return False, None, None, f"tpc wrote no {os.path.basename(path)}"
        got = np.load(path).astype(np.float64)
        expected = expected.astype(np.float64)
        if got.shape != expected.shape:
            return False, None, None, f"shape {got.shape}, ONNX Runtime {expected.shape}"
        diff = np.abs(got - expected)
        atol = ATOL_SCALE * float(np.max(np.abs(expected))) if expected.size else 0.0
        ok = ok and bool(np.all(diff <= atol + RTOL * np.abs(expected)))
        worst_abs = max(worst_abs, float(diff.max()) if diff.size else 0.0)
        worst_rel = max(worst_rel, float((diff / (np.abs(expected) + atol + 1e-30)).max()) if diff.size else 0.0)
    return ok, worst_abs, worst_rel, ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpc", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--backends", default="eager,stax,opencl,auto")
    parser.add_argument("--report")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    import onnx

    names = options.names or sorted(f[:-5] for f in os.listdir(options.models) if f.endswith(".onnx"))
    rows, failed = [], False
    for name in names:
        model = os.path.join(options.models, name + ".onnx")
        args_file = os.path.join(options.models, name + ".npz")
        inputs = dict(np.load(args_file))
        ort_names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
        ort_outputs, ort_s = ort_reference(model, inputs, options.repeat)
        for backend in options.backends.split(","):
            work = os.path.join(options.models, "work", name)
            r = run_backend(options.tpc, model, args_file, backend, work, options.timeout, options.repeat)
            row = {"model": name, "backend": backend, "status": r["status"], "abs": None, "rel": None,
                   "wall_s": r.get("wall_s"), "steady_ms": r.get("steady_ms"), "ort_ms": ort_s * 1e3,
                   "message": r.get("message", "")}
            if r["status"] == "ran":
                ok, worst_abs, worst_rel, why = compare(r["out_dir"], ort_outputs, ort_names)
                row.update(status="pass" if ok else "FAIL", abs=worst_abs, rel=worst_rel, message=why)
            failed = failed or row["status"] in ("FAIL", "error", "timeout")
            rows.append(row)
            print(format_row(row), flush=True)
    table = format_table(rows)
    print("\n" + table)
    if options.report:
        with open(options.report, "w") as report:
            report.write(table + "\n")
    sys.exit(1 if failed else 0)


def fmt(value, pattern):
    return pattern % value if value is not None else "-"


def format_row(row):
    return (f"{row['model']:15s} {row['backend']:7s} {row['status']:11s} "
            f"abs {fmt(row['abs'], '%.2e')} rel {fmt(row['rel'], '%.2e')} "
            f"steady {fmt(row['steady_ms'], '%.2f')} ms (ORT {row['ort_ms']:.2f} ms) "
            f"first tpc run {fmt(row['wall_s'], '%.2f')} s {row['message'][:400]}")


def format_table(rows):
    lines = [f"tolerance: |tp - ort| <= {RTOL:g}*|ort| + {ATOL_SCALE:g}*max|ort| per element",
             "",
             "| model | backend | result | max abs err | max rel err | tp steady ms | ORT ms | tpc run wall s | message |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['backend']} | {r['status']} | {fmt(r['abs'], '%.2e')} | "
                     f"{fmt(r['rel'], '%.2e')} | {fmt(r['steady_ms'], '%.2f')} | {r['ort_ms']:.2f} | "
                     f"{fmt(r['wall_s'], '%.2f')} | {r['message'][:300].replace('|', '/')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
