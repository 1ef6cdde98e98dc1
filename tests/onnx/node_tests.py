#!/usr/bin/env python3
"""ONNX's backend node tests through tpc: pass / fail / unsupported per op.

The test cases come from the generator code in the `onnx` package
(onnx.backend.test.case.node), not from stored files: each case is a model
and one or more sets of input and expected output arrays. For every case
whose op type the importer accepts (`tpc import --list-ops`) the model is
written to a work folder, its inputs to .npy files, and `tpc run` runs it on
each backend given; the outputs are compared with the expected arrays with
the case's own tolerances (rtol 1e-3, atol 1e-7 unless the case says).

A case is "unsupported" when tpc refuses it with a message saying so (an
element type, an attribute value or a run-time shape input the importer does
not take); anything else that goes wrong is "fail". Expanded variants
(`*_expanded`, the op's function body) are left out: they test other ops.

  node_tests.py --tpc build/tpc --backends eager,stax-llvm --work DIR
                [--report FILE.md] [--only OP,OP] [--max-fail N]

Exits 1 when any case fails; the last line reads "N passed, N failed".
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
import onnx  # noqa: E402
from onnx.backend.test.case import node as node_cases  # noqa: E402

UNSUPPORTED = re.compile(r"not supported|does not support|does not claim|unsupported|at import time|"
                         r"needs the input's sizes|needs its indices")


def supported_ops(tpc):
    out = subprocess.run([tpc, "import", "--list-ops"], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def classify_error(text):
    return "unsupported" if UNSUPPORTED.search(text) else "fail"


# bf16 in .npy files: one uint16 field holding the bits (docs/npy-bf16.md).
BF16 = np.dtype([("bfloat16", "<u2")])


def to_numpy(value):
    """A case's input or output as the array tpc reads or writes: TensorProto
    values (the Cast cases) decoded; bfloat16 arrays (ml_dtypes, which NumPy
    lacks) as their bits in the bf16 .npy convention."""
    if isinstance(value, onnx.TensorProto):
        value = onnx.numpy_helper.to_array(value)
    value = np.asarray(value)
    if value.dtype.name == "bfloat16":
        value = np.array(value, order="C").view(np.uint16).view(BF16)  # (0-d stays 0-d)
    return value


def bf16_values(array):
    return (array["bfloat16"].astype(np.uint32) << 16).view(np.float32)


def compare(expected, path, rtol, atol):
    if not os.path.exists(path):
        return "no output file %s" % path
    got = np.load(path)
    if got.shape != expected.shape:
        return "shape %s, expected %s" % (got.shape, expected.shape)
    if got.dtype != expected.dtype:
        return "dtype %s, expected %s" % (got.dtype, expected.dtype)
    if expected.dtype == BF16:
        got, expected = bf16_values(got), bf16_values(expected)
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        if not np.array_equal(got, expected):
            return "values differ"
        return None
    try:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as error:
        return "values differ: " + str(error).strip().splitlines()[-1][:160]
    return None


def run_case(tpc, case, backends, work):
    """Yields (backend, result, detail) for one case."""
    folder = os.path.join(work, case.name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    model_path = os.path.join(folder, "model.onnx")
    onnx.save(case.model, model_path)
    initializers = {t.name for t in case.model.graph.initializer}
    input_names = [i.name for i in case.model.graph.input if i.name not in initializers]
    rtol = getattr(case, "rtol", None) or 1e-3
    atol = getattr(case, "atol", None) or 1e-7
    for backend in backends:
        result, detail = "pass", ""
        for index, (inputs, outputs) in enumerate(case.data_sets or []):
            arguments = []
            for name, value in zip(input_names, inputs):
                file = os.path.join(folder, "in%d_%s.npy" % (index, re.sub(r"\W", "_", name)))
                np.save(file, to_numpy(value))
                arguments += ["--arg", "%s=%s" % (name, file)]
            out_dir = os.path.join(folder, "out_%s_%d" % (backend, index))
            run = subprocess.run([tpc, "run", model_path, "--backend", backend, "--out", out_dir]
                                 + arguments, capture_output=True, text=True)
            if run.returncode != 0:
                result, detail = classify_error(run.stderr), run.stderr.strip()[:300]
                break
            names = [line.split(":", 1)[0] for line in run.stdout.splitlines() if ": " in line]
            for position, expected in enumerate(outputs):
                if position >= len(names):
                    result, detail = "fail", "output %d missing" % position
                    break
                problem = compare(to_numpy(expected),
                                  os.path.join(out_dir, names[position] + ".npy"), rtol, atol)
                if problem:
                    result, detail = "fail", "output %d: %s" % (position, problem)
                    break
            if result != "pass":
                break
        yield backend, result, detail


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tpc", required=True)
    parser.add_argument("--backends", default="eager")
    parser.add_argument("--work", required=True)
    parser.add_argument("--report")
    parser.add_argument("--only")
    args = parser.parse_args()
    backends = args.backends.split(",")
    accepted = supported_ops(args.tpc)
    only = set(args.only.split(",")) if args.only else None
    cases = [c for c in node_cases.collect_testcases(None)
             if c.model and len(c.model.graph.node) >= 1 and not c.name.endswith("_expanded")
             and "_expanded_" not in c.name]
    selected = []
    for case in cases:
        op_type = case.model.graph.node[0].op_type if len(case.model.graph.node) == 1 else None
        if op_type in accepted and (only is None or op_type in only):
            selected.append((op_type, case))
    table = collections.defaultdict(lambda: collections.Counter())
    failures = []
    for op_type, case in selected:
        for backend, result, detail in run_case(args.tpc, case, backends, args.work):
            table[(op_type, backend)][result] += 1
            if result != "pass":
                failures.append((result, backend, case.name, detail))
    lines = ["| op | " + " | ".join("%s pass/fail/unsup" % b for b in backends) + " |",
             "|---|" + "---|" * len(backends)]
    for op_type in sorted({op for op, _ in selected}):
        cells = []
        for backend in backends:
            c = table[(op_type, backend)]
            cells.append("%d/%d/%d" % (c["pass"], c["fail"], c["unsupported"]))
        lines.append("| %s | %s |" % (op_type, " | ".join(cells)))
    totals = {b: collections.Counter() for b in backends}
    for (op_type, backend), counter in table.items():
        totals[backend].update(counter)
    lines.append("| **total** | %s |" % " | ".join(
        "%d/%d/%d" % (totals[b]["pass"], totals[b]["fail"], totals[b]["unsupported"])
        for b in backends))
    report = "\n".join(lines)
    details = "\n".join("%s %s %s: %s" % f for f in sorted(failures))
    if args.report:
        with open(args.report, "w") as file:
            file.write(report + "\n\nNot passing:\n" + details + "\n")
    print(report)
    for failure in sorted(failures):
        if failure[0] == "fail":
            print("FAIL %s %s: %s" % (failure[1], failure[2], failure[3]))
    passed = sum(t["pass"] for t in totals.values())
    failed = sum(t["fail"] for t in totals.values())
    skipped = sum(t["unsupported"] for t in totals.values())
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
