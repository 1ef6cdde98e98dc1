#!/usr/bin/env bash
# The main job: compile the example MLP (examples/mlp.tpir) with the default
# backend, run it on inputs made by NumPy, compare its output with NumPy's,
# then list the backends.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$here/examples/make_inputs.py" "$work" >/dev/null
args=()
for f in "$work"/mlp/inputs/*.npy; do args+=(--arg "$(basename "$f" .npy)=$f"); done

echo "== tpc run examples/mlp.tpir (default backend: ${TP_DEFAULT_BACKEND:-stax})"
if ! "$build/tpc" run "$here/examples/mlp.tpir" "${args[@]}" --out "$work/mlp/actual"; then
    echo "main job: the default backend could not run the model (reason above);" >&2
    echo "main job: running it on the reference backend 'eager' instead" >&2
    "$build/tpc" run "$here/examples/mlp.tpir" --backend eager "${args[@]}" --out "$work/mlp/actual"
fi
/usr/bin/python3 "$here/tests/examples/compare_npy.py" "$work/mlp/expected" "$work/mlp/actual"

echo "== tp-backends list"
"$build/tp-backends" list
