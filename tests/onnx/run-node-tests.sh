#!/usr/bin/env bash
# ONNX's backend node tests for every op type the importer accepts, through
# `tpc run` on each backend given (default: eager and stax; add opencl, auto).
#
#   tests/onnx/run-node-tests.sh [BUILD_DIR] [BACKENDS] [REPORT.md]
#
# The cases come from the generator code of the `onnx` Python package
# (node_tests.py), installed with pip into a venv this script makes under
# BUILD_DIR/onnx-venv (kept between runs; delete it to refresh). The
# pass/fail/unsupported table per op goes to REPORT.md (default
# BUILD_DIR/onnx-node-tests.md) and stdout; exits non-zero when a case fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
backends=${2:-eager,stax}
report=${3:-$build/onnx-node-tests.md}
venv=$build/onnx-venv
onnx_version=${TP_ONNX_PIP_VERSION:-onnx}

if [ ! -x "$build/tpc" ]; then
  echo "run-node-tests.sh: $build/tpc is not built (cmake --build $build)" >&2
  exit 2
fi
if ! "$build/tpc" import --list-ops | grep -qx Add; then
  echo "run-node-tests.sh: $build/tpc has no ONNX importer (configure with -DTP_WITH_ONNX=ON)" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import onnx, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$onnx_version" numpy
fi
"$venv/bin/python" -c "import onnx; print('onnx', onnx.__version__, 'opset', onnx.defs.onnx_opset_version())"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-/tmp/pocl-cache}
exec "$venv/bin/python" "$root/tests/onnx/node_tests.py" --tpc "$build/tpc" --backends "$backends" \
  --work "$build/onnx-node-work" --report "$report"
