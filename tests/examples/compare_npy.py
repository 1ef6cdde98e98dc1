#!/usr/bin/env python3
"""Compares every EXPECTED_DIR/NAME.npy with ACTUAL_DIR/NAME.npy.

Same dtype and shape are required. Floating point: |actual - expected| <=
ATOL + RTOL * |expected| elementwise, with RTOL = 1e-4 and ATOL = 1e-5 (f32
results of a reference interpreter against float64 NumPy math, rounded to
f32). Integers and bools: exactly equal.

usage: compare_npy.py EXPECTED_DIR ACTUAL_DIR   (exit 0 when all match)
"""
import os
import sys

import numpy as np

RTOL = 1e-4
ATOL = 1e-5


def compare(name, expected, actual):
    if expected.dtype != actual.dtype:
        return "%s: dtype %s, expected %s" % (name, actual.dtype, expected.dtype)
    if expected.shape != actual.shape:
        return "%s: shape %s, expected %s" % (name, actual.shape, expected.shape)
    if np.issubdtype(expected.dtype, np.floating):
        error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        bound = ATOL + RTOL * np.abs(expected.astype(np.float64))
        worst = float((error - bound).max()) if error.size else 0.0
        if error.size and (np.isnan(error).any() or worst > 0):
            return "%s: max |error| %.3g exceeds atol %g + rtol %g" % (
                name, float(np.nanmax(error)), ATOL, RTOL)
        print("%s: ok (max |error| %.3g)" % (name, float(error.max()) if error.size else 0.0))
    else:
        mismatches = int((expected != actual).sum())
        if mismatches:
            return "%s: %d of %d elements differ" % (name, mismatches, expected.size)
        print("%s: ok (exact)" % name)
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    expected_dir, actual_dir = sys.argv[1:]
    names = sorted(f[:-4] for f in os.listdir(expected_dir) if f.endswith(".npy"))
    if not names:
        sys.exit("no .npy files in %s" % expected_dir)
    failures = []
    for name in names:
        actual_path = os.path.join(actual_dir, name + ".npy")
        if not os.path.exists(actual_path):
            failures.append("%s: missing %s" % (name, actual_path))
            continue
        problem = compare(name, np.load(os.path.join(expected_dir, name + ".npy")),
                          np.load(actual_path))
        if problem:
            failures.append(problem)
    for failure in failures:
        print("MISMATCH " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
