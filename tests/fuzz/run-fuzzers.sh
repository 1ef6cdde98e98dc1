#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a while.
#
#   tests/fuzz/run-fuzzers.sh [BUILD_DIR] [SECONDS] [TARGET...]
#
# BUILD_DIR defaults to build-fuzz, SECONDS (per target) to 30, TARGETs to
# every tests/fuzz/fuzz_*.c. Each target runs on a copy of its seed corpus
# (tests/fuzz/corpus/NAME for fuzz_NAME; with tests/fuzz/NAME.dict as its
# libFuzzer dictionary when there is one), so the committed seeds stay as they
# are; new corpus entries, logs and any crash/leak/timeout/oom inputs land in
# BUILD_DIR/fuzz-runs/TARGET/. Prints per target the executions and whether
# it found anything; exits non-zero when any target found something.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build-fuzz}
seconds=${2:-30}
shift $(( $# < 2 ? $# : 2 ))

case $seconds in
  ''|*[!0-9]*) echo "run-fuzzers.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for source in "$root"/tests/fuzz/fuzz_*.c; do
    [ -e "$source" ] && targets+=("$(basename "$source" .c)")
  done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "run-fuzzers.sh: no tests/fuzz/fuzz_*.c targets" >&2
  exit 2
fi

cmake -S "$root" -B "$build" -DTP_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

found_any=0
summary=()
for target in "${targets[@]}"; do
  binary=$(find "$build" -type f -name "$target" -perm -u+x | head -n 1)
  if [ -z "$binary" ]; then
    echo "run-fuzzers.sh: $target was not built" >&2
    exit 2
  fi
  work="$build/fuzz-runs/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  seeds="$root/tests/fuzz/corpus/${target#fuzz_}"
  if [ -d "$seeds" ]; then cp -R "$seeds/." "$work/corpus/"; fi
  echo "== $target: ${seconds}s on $(ls "$work/corpus" | wc -l) seeds (log: $work/log.txt)"
  options=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$work/artifacts/")
  dictionary="$root/tests/fuzz/${target#fuzz_}.dict"
  if [ -f "$dictionary" ]; then options+=(-dict="$dictionary"); fi
  status=0
  "$binary" "${options[@]}" "$work/corpus" >"$work/log.txt" 2>&1 || status=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" | tail -n 1)
  findings=$(find "$work/artifacts" -type f | wc -l)
  if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
    found_any=1
    result="FOUND SOMETHING (exit $status, $findings artifact(s) in $work/artifacts)"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$work/log.txt" | head -n 5 || true
  else
    result="nothing found"
  fi
  summary+=("$(printf '%-16s %12s executions  %s' "$target" "${executions:-?}" "$result")")
done

echo
echo "== fuzzing summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
exit $found_any
