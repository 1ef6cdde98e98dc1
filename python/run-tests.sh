#!/bin/sh
# Runs the Python bindings' pytest suite in a fresh venv:
#   python/run-tests.sh [BUILD_DIR] [pytest args...]
# BUILD_DIR (default: build next to this folder) holds libtensorplay.so.
# Makes the venv with `python3 -m venv` (TP_PYTHON picks another python3),
# installs pytest, numpy and ./python into it, then runs python/tests.
# Exits 77 (ctest's SKIP_RETURN_CODE) when venv support (Debian: python3-venv)
# or the package index is not reachable, so an offline build still passes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
[ $# -gt 0 ] && shift
build=$(cd "$build" && pwd)
python=${TP_PYTHON:-python3}
venv=${TP_PYTHON_VENV:-$build/python-venv}
skip=77

if ! command -v "$python" >/dev/null 2>&1; then
    echo "SKIP: $python not found (install python3)"; exit $skip
fi
if [ ! -x "$venv/bin/python" ]; then
    if ! "$python" -m venv "$venv" >"$build/python-venv.log" 2>&1; then
        echo "SKIP: '$python -m venv' failed (Debian/Ubuntu: apt-get install python3-venv); see $build/python-venv.log"
        rm -rf "$venv"; exit $skip
    fi
fi
if ! "$venv/bin/python" -c "import numpy, pytest" 2>/dev/null; then
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check pytest numpy \
        >>"$build/python-venv.log" 2>&1; then
        echo "SKIP: could not install pytest and numpy from the package index (offline?); see $build/python-venv.log"
        exit $skip
    fi
fi
# The package itself: always reinstalled, so the tests run today's sources.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
    "$here" >>"$build/python-venv.log" 2>&1 || {
    echo "FAIL: pip install $here failed; see $build/python-venv.log"; exit 1; }
cd "$here/tests"
TENSORPLAY_LIBRARY="$build/libtensorplay.so" exec "$venv/bin/python" -m pytest -q "$@" .
