#!/bin/sh
# Runs the Python bindings' pytest suite in a fresh venv:
#   python/run-tests.sh [BUILD_DIR] [pytest args...]
# BUILD_DIR (default: build next to this folder) holds libtensorplay.so.
# Makes the venv with `python3 -m venv` (TP_PYTHON picks another python3),
# installs pytest, numpy and ./python into it, then runs python/tests.
# Exits 77 (ctest's SKIP_RETURN_CODE) when venv support (Debian: python3-venv)
# or the package index is not reachable, so an offline build still passes.
# First checks the installed path: `cmake --install BUILD_DIR` into a second
# venv's prefix, `pip install ./python` there, and, from outside the
# checkout with no TENSORPLAY_LIBRARY, `import tensorplay` compiling and
# running a small model on stax with NumPy inputs (python/tests/installed_smoke.py);
# TP_PYTHON_SKIP_INSTALL_CHECK=1 skips that step.
# The suite runs twice when the build made the C extension
# (BUILD_DIR/tensorplay/tensorplay_speedups.abi3.so): with it (TENSORPLAY_EXPECT_SPEEDUPS=1:
# test_speedups.py fails if it does not load) and with TENSORPLAY_NO_SPEEDUPS=1
# (the ctypes path alone); once, ctypes only, without it.
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
if [ "${TP_PYTHON_SKIP_INSTALL_CHECK:-0}" != 1 ]; then
    # The library as a user installs it: into the venv's prefix, found by the
    # package next to the Python installation (tensorplay/_lib.py, step 2).
    installed=${TP_PYTHON_INSTALL_VENV:-$build/python-install-venv}
    log=$build/python-install.log
    if [ ! -x "$installed/bin/python" ]; then
        "$python" -m venv "$installed" >"$log" 2>&1 || {
            echo "FAIL: '$python -m venv $installed' failed; see $log"; exit 1; }
    fi
    if ! "$installed/bin/python" -c "import numpy" 2>/dev/null; then
        "$installed/bin/python" -m pip install -q --disable-pip-version-check numpy >>"$log" 2>&1 || {
            echo "SKIP: could not install numpy from the package index (offline?); see $log"
            exit $skip; }
    fi
    cmake --install "$build" --prefix "$installed" >>"$log" 2>&1 || {
        echo "FAIL: cmake --install $build --prefix $installed failed; see $log"; exit 1; }
    "$installed/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        --force-reinstall "$here" >>"$log" 2>&1 || {
        echo "FAIL: pip install $here into $installed failed; see $log"; exit 1; }
    require=""
    [ -e "$build/plugins/stax-llvm.so" ] && require=--require-stax
    [ -e "$build/tensorplay/tensorplay_speedups.abi3.so" ] && require="$require --require-speedups"
    (cd "${TMPDIR:-/tmp}" && env -u TENSORPLAY_LIBRARY "$installed/bin/python" \
        "$here/tests/installed_smoke.py" "$installed" $require) || {
        echo "FAIL: the installed package did not compile and run a model (above; $log)"; exit 1; }
fi

cd "$here/tests"
export TENSORPLAY_LIBRARY="$build/libtensorplay.so"
if [ -e "$build/tensorplay/tensorplay_speedups.abi3.so" ]; then
    echo "pytest with the C extension tensorplay._speedups:"
    TENSORPLAY_EXPECT_SPEEDUPS=1 "$venv/bin/python" -m pytest -q "$@" . || {
        echo "FAIL: the suite with the C extension (above)"; exit 1; }
    echo "pytest without it (TENSORPLAY_NO_SPEEDUPS=1, the ctypes path):"
fi
TENSORPLAY_NO_SPEEDUPS=1 exec "$venv/bin/python" -m pytest -q "$@" .
