#!/usr/bin/env bash
# Makes (once, then only fills in what is missing) the Python venv that
# `tp-bench --peers` / `--plot` and tests/models/run.sh use:
#
#   bench/peers-venv.sh [--models]
#
# It holds numpy, onnx, onnxruntime, matplotlib and torch (CPU); --models
# adds torchvision and transformers (for exporting the model zoo). The venv
# is CACHE/venv with CACHE = $TP_BENCH_CACHE, else
# ~/.cache/tensorplay-bench, so reruns download nothing. torch is tried
# first from PyTorch's CPU-only wheel index ($TP_TORCH_INDEX_URL); where
# that index cannot be reached, from the default index, whose Linux wheel
# pulls NVIDIA's CUDA libraries as dependencies (several GB; set
# TP_BENCH_NO_CUDA_TORCH=1 to go without torch instead: the torch peers are
# then reported unavailable). Prints the venv's Python on the last line.
set -euo pipefail

cache=${TP_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorplay-bench}
venv=$cache/venv
base_python=${TP_BENCH_BASE_PYTHON:-/usr/bin/python3}
torch_index=${TP_TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
models=false
[ "${1:-}" = "--models" ] && models=true

mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ]; then
  "$base_python" -m venv "$venv"
fi
py=$venv/bin/python
pip() { "$py" -m pip install --disable-pip-version-check --quiet "$@"; }
have() { "$py" -c "import $1" 2>/dev/null; }

missing=()
for module in numpy onnx onnxruntime matplotlib; do
  have "$module" || missing+=("$module")
done
[ ${#missing[@]} -eq 0 ] || pip "${missing[@]}"

vision=()
$models && vision=(torchvision)
if ! have torch || { $models && ! have torchvision; }; then
  if pip --retries 1 --timeout 20 torch "${vision[@]}" --index-url "$torch_index" 2>/dev/null; then
    echo "peers-venv: torch from the CPU-only index" >&2
  elif [ "${TP_BENCH_NO_CUDA_TORCH:-0}" = 1 ]; then
    echo "peers-venv: torch's CPU-only index is unreachable and TP_BENCH_NO_CUDA_TORCH=1: no torch" >&2
  else
    echo "peers-venv: torch's CPU-only index is unreachable; installing torch from the default" \
         "index (with its CUDA libraries, several GB, once)" >&2
    pip torch "${vision[@]}"
  fi
fi
if $models && ! have transformers; then
  pip transformers
fi
"$py" - <<'PY' >&2
import importlib
for name in ("numpy", "onnx", "onnxruntime", "matplotlib", "torch", "torchvision", "transformers"):
    try:
        print(f"peers-venv: {name} {importlib.import_module(name).__version__}")
    except Exception as error:
        print(f"peers-venv: {name} unavailable ({type(error).__name__})")
PY
echo "$py"
