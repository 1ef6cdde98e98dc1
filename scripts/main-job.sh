#!/usr/bin/env bash
# The main job: run the example MLP through the default backend with inputs
# made by NumPy, compare with NumPy, and list the backends.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$here/examples/make_inputs.py" "$work"
echo "== tpc run examples/mlp.tpir"
"$build/tpc" run "$here/examples/mlp.tpir" $(cd "$work/mlp" && for f in in_*.npy; do n=${f#in_}; echo "--arg ${n%.npy}=$work/mlp/$f"; done) --out "$work/mlp/out"
/usr/bin/python3 "$here/tests/examples/compare_npy.py" "$work/mlp/out" "$work/mlp"
if [ -x "$build/tp-backends" ]; then
    echo "== tp-backends list"
    "$build/tp-backends" list
fi
