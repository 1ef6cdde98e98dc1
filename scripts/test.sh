#!/usr/bin/env bash
# Quick start, step 2: build (if needed) and run the whole test suite.
#   scripts/test.sh          plain build in build/
#   scripts/test.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/
#   scripts/test.sh release  Release build (gcc -O3: its own warnings) in build-release/
#   scripts/test.sh clang    Debug build with clang in build-clang/
# TP_TEST_BUILD_ONLY=1 builds without running the suite. Every flavour
# builds with -Werror (TP_WERROR=ON); a user's build does not.
# TP_WITH_PYTHON_EXT (default AUTO; CI sets ON) is passed to CMake: the
# Python package's C extension (python/ext).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-plain}
case "$flavour" in
plain) build=${TP_BUILD:-$here/build}; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
asan) build=${TP_BUILD_ASAN:-$here/build-asan}; flags=(-DCMAKE_BUILD_TYPE=Debug -DTP_SANITIZE=ON) ;;
release) build=${TP_BUILD_RELEASE:-$here/build-release}; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
clang)
    build=${TP_BUILD_CLANG:-$here/build-clang}
    flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
    ;;
*) echo "usage: $0 [plain|asan|release|clang]" >&2; exit 2 ;;
esac
cmake -S "$here" -B "$build" -DTP_WERROR=ON -DTP_WITH_PYTHON_EXT="${TP_WITH_PYTHON_EXT:-AUTO}" \
    "${flags[@]}"
cmake --build "$build" -j"$(nproc)"
if [ "${TP_TEST_BUILD_ONLY:-0}" = 1 ]; then
    echo "built $flavour in $build (TP_TEST_BUILD_ONLY=1: suite not run)"
    exit 0
fi
# PoCL caches its compilations of the OpenCL kernels the tests generate; one
# folder serves the plain and the sanitizer suites (first builds are slow).
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$here/build-pocl-cache}
export TP_TEST_POCL_CACHE_DIR=$POCL_CACHE_DIR
mkdir -p "$POCL_CACHE_DIR"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest --output-on-failure -j"$(nproc)"
