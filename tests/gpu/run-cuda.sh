#!/usr/bin/env bash
# TensorPlay cuda backend on an NVIDIA GPU machine, in one go: build, the
# cuda check suites (ctest), the GPU conformance run, the benchmarks (our
# cuda_gpu bench, PyTorch's side if importable, tp-bench --backends cuda if
# the tree has it), everything written to one results folder.
#
#   tests/gpu/run-cuda.sh [RESULTS_DIR]        (default: ./cuda-results-<date>)
#
# Offline machines: the Debian build dependencies can come as .deb files
# fetched beforehand (see tests/gpu/README.md): put them in $TP_DEBS
# (default tests/gpu/debs); they are unpacked with dpkg-deb -x into a local
# prefix and put on PATH / PKG_CONFIG_PATH / LD_LIBRARY_PATH. Missing pieces
# are listed by name before anything is built.
# Budget: well under 8 minutes on an H100/H200 (build ~2 min with all cores).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=${1:-$PWD/cuda-results-$(date +%Y%m%d-%H%M%S)}
DEBS=${TP_DEBS:-$ROOT/tests/gpu/debs}
PREFIX=${TP_DEB_PREFIX:-$RESULTS/deb-prefix}
BUILD=${TP_GPU_BUILD_DIR:-$RESULTS/build}
JOBS=$(nproc 2>/dev/null || echo 8)
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.txt
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

# ---- dependencies: the system's, or unpacked .debs --------------------------
if compgen -G "$DEBS/*.deb" > /dev/null; then
  say "unpacking $(ls "$DEBS"/*.deb | wc -l) .deb files from $DEBS into $PREFIX"
  mkdir -p "$PREFIX"
  for deb in "$DEBS"/*.deb; do dpkg-deb -x "$deb" "$PREFIX" || say "WARNING: cannot unpack $deb"; done
  ARCH_LIB=$(ls -d "$PREFIX"/usr/lib/*-linux-gnu 2>/dev/null | head -1)
  export PATH="$PREFIX/usr/bin:$PATH"
  export PKG_CONFIG_PATH="${ARCH_LIB:+$ARCH_LIB/pkgconfig:}$PREFIX/usr/share/pkgconfig:$PREFIX/usr/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
  export LD_LIBRARY_PATH="${ARCH_LIB:+$ARCH_LIB:}${LD_LIBRARY_PATH:-}"
  export CMAKE_PREFIX_PATH="$PREFIX/usr:${CMAKE_PREFIX_PATH:-}"
  # pkg-config files of unpacked packages name /usr as their prefix
  for pc in $(find "$PREFIX" -name '*.pc' 2>/dev/null); do
    sed -i "s|^prefix=/usr|prefix=$PREFIX/usr|" "$pc"
  done
fi

missing=()
command -v cmake > /dev/null || missing+=("cmake (cmake, cmake-data)")
command -v cc > /dev/null || command -v gcc > /dev/null || missing+=("a C compiler (gcc / build-essential)")
command -v pkg-config > /dev/null || missing+=("pkg-config (pkg-config or pkgconf)")
if command -v pkg-config > /dev/null; then
  pkg-config --exists check || missing+=("check (check)")
  pkg-config --exists inih || missing+=("inih (libinih-dev, libinih1)")
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cuda.h" ] && [ -f "$CUDA_HOME/include/nvrtc.h" ] ||
  missing+=("CUDA toolkit headers in $CUDA_HOME/include (set CUDA_HOME)")
if [ ${#missing[@]} -gt 0 ]; then
  say "MISSING build dependencies:"
  for m in "${missing[@]}"; do say "  - $m"; done
  say "fetch them on a machine with network: apt-get download <package> (list in"
  say "scripts/debian-packages.txt; the minimum is cmake cmake-data check libinih-dev libinih1"
  say "pkg-config), copy the .deb files to $DEBS and run again."
  exit 2
fi
command -v nvidia-smi > /dev/null && nvidia-smi > "$RESULTS/nvidia-smi.txt" 2>&1
say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# ---- build --------------------------------------------------------------------
start=$(date +%s)
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTP_WITH_CUDA=ON \
     > "$RESULTS/configure.log" 2>&1; then
  say "configure FAILED (see configure.log)"; tail -20 "$RESULTS/configure.log"; exit 1
fi
if ! cmake --build "$BUILD" -j "$JOBS" > "$RESULTS/build.log" 2>&1; then
  say "build FAILED (see build.log)"; grep -m 20 -E 'error|Error' "$RESULTS/build.log"; exit 1
fi
say "build: $(( $(date +%s) - start )) s"

status=0
export TP_CACHE_DIR="$RESULTS/cache"
# ---- checks: the cuda suites (PTX, unavailable path, cache), the GPU run ---------
(cd "$BUILD" && ctest -R 'cuda' --output-on-failure) > "$RESULTS/ctest-cuda.log" 2>&1 \
  && say "ctest cuda: passed" || { say "ctest cuda: FAILED (ctest-cuda.log)"; status=1; }
"$BUILD/tp-backends" list --all > "$RESULTS/tp-backends-list.txt" 2>&1
"$BUILD/tp-backends" check cuda > "$RESULTS/tp-backends-check.txt" 2>&1 \
  && say "tp-backends check cuda: passed" || { say "tp-backends check cuda: FAILED"; status=1; }
timeout 300 "$BUILD/tests/gpu/cuda_gpu" conformance > "$RESULTS/conformance.log" 2>&1 \
  && say "conformance: $(tail -1 "$RESULTS/conformance.log")" \
  || { say "conformance: FAILED: $(tail -1 "$RESULTS/conformance.log") (conformance.log)"; status=1; }

# ---- benchmarks ------------------------------------------------------------------
timeout 180 "$BUILD/tests/gpu/cuda_gpu" bench > "$RESULTS/bench-cuda.txt" 2> "$RESULTS/bench-cuda.err" \
  || say "cuda bench: FAILED (bench-cuda.err)"
PYTHON=${PYTHON:-python3}
timeout 120 "$PYTHON" "$ROOT/tests/gpu/bench_torch.py" > "$RESULTS/bench-torch.txt" 2> "$RESULTS/bench-torch.err" || true
if [ -x "$BUILD/tp-bench" ]; then
  timeout 120 "$BUILD/tp-bench" --backends cuda > "$RESULTS/tp-bench.txt" 2>&1 || say "tp-bench: FAILED"
fi
value() { awk -v n="$1" '$1 == n {print $2}' "$RESULTS"/bench-*.txt; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
cat "$RESULTS/bench-cuda.txt" "$RESULTS/bench-torch.txt" >> "$SUMMARY" 2>/dev/null
say "a+b 256M f32 bandwidth / device copy bandwidth: $(value add_vs_copy_bandwidth)"
say "sgemm 4096: cuda $(value sgemm_4096_tflops) TFLOP/s, torch $(value torch_sgemm_4096_tflops) TFLOP/s, ratio $(ratio "$(value sgemm_4096_tflops)" "$(value torch_sgemm_4096_tflops)")"
say "fused chain 64M: cuda $(value fused_chain_64M_f32) ms, torch eager $(value torch_eager_chain_64M_f32) ms, speedup $(ratio "$(value torch_eager_chain_64M_f32)" "$(value fused_chain_64M_f32)")"
say "total: $(( $(date +%s) - start )) s; results in $RESULTS"
exit $status
