#!/usr/bin/env bash
# Real architectures through the ONNX importer, on every backend, compared
# with ONNX Runtime on the same file. Outside the default test run (it needs
# several GB of wheels: torch, torchvision, transformers, onnxruntime):
#
#   tests/models/run.sh [BUILD_DIR] [--backends eager,stax,opencl,auto] [--export-only] [NAME ...]
#
# 1. bench/peers-venv.sh --models makes the venv (once; kept in the cache
#    folder, $TP_BENCH_CACHE or ~/.cache/tensorplay-bench).
# 2. export_models.py exports the model zoo (model_zoo.py: ResNet-18 and
#    MobileNetV2 at batch 1 and 8, a BERT-style encoder, GPT-2 small, and the
#    encoder and GPT-2 block tp-bench times), random weights from a fixed
#    seed, nothing downloaded, opset 17, into CACHE/models (kept between
#    runs; delete a file to re-export it).
# 3. compare.py runs `tpc run MODEL.onnx --args MODEL.npz` per backend and
#    prints the model x backend table (pass / FAIL / unsupported with the
#    importer's message, max abs and rel error, times), also written to
#    BUILD_DIR/model-tests.md. Exits non-zero when an output is wrong or a
#    run errs; an unsupported op is reported, not a failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
backends=eager,stax,opencl,auto
export_only=false
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --backends) backends=$2; shift 2 ;;
    --export-only) export_only=true; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) if [ -d "$1" ] && [ ${#names[@]} -eq 0 ] && [ "$build" = "$root/build" ] && [ -x "$1/tpc" ]; then
         build=$(cd "$1" && pwd)
       else
         names+=("$1")
       fi
       shift ;;
  esac
done
cache=${TP_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorplay-bench}
py=$("$root/bench/peers-venv.sh" --models | tail -n 1)
"$py" "$root/tests/models/export_models.py" "$cache/models" "${names[@]}"
$export_only && exit 0
if [ ! -x "$build/tpc" ]; then
  echo "run.sh: $build/tpc is not built (cmake --build $build)" >&2
  exit 2
fi
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-/tmp/pocl-cache}
exec "$py" "$root/tests/models/compare.py" --tpc "$build/tpc" --models "$cache/models" \
  --backends "$backends" --report "$build/model-tests.md" "${names[@]}"
