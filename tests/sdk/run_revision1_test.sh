#!/bin/sh
# A revision-1 plugin binary still loads and runs: the fixture (the last
# release's SDK template, built against the revision-1 plugin.h) is listed
# as available with contract 1 and passes the conformance kit exactly as the
# last release's note says: 217 pass, 237 unsupported, 0 fail; the corpus has
# grown by 60 cases since (gather, gather_elements x 5 dtypes; conv,
# conv_transpose, max_pool, avg_pool: 12 window cases; pad x 10, resize x 7,
# batch_norm x 5, clip, topk, topk_indices, cumsum x 4 each) and by the f16
# and bf16 variant of every case whose op takes them (dtype codes the old
# template never heard of, refused as it refuses any dtype but f32 and f64),
# all refused: 535 unsupported (conv, conv_transpose, avg_pool and max_pool
# take f16/bf16 since: 10 more).
# usage: run_revision1_test.sh TP_BACKENDS BACKENDS_D CORPUS WORK_DIR
set -eu
tool=$1
ini_dir=$2
corpus=$3
work=$4
fail() { printf 'FAILED: %s\n' "$*"; exit 1; }
mkdir -p "$work"
run() { TP_BACKENDS_PATH="$ini_dir" "$tool" "$@"; }

run list | tee "$work/list.txt"
grep -Eq '^template +available' "$work/list.txt" || fail "the revision-1 fixture is not available"
run info template | tee "$work/info.txt"
grep -Eiq 'contract[^0-9]*1' "$work/info.txt" || fail "tp-backends info does not show contract 1"

run check template --conformance --corpus "$corpus" --json "$work/revision1.json" >"$work/kit.txt" ||
    { cat "$work/kit.txt"; fail "the revision-1 fixture does not pass the conformance kit"; }
tail -n 2 "$work/kit.txt"
summary=$(grep -o '"summary": {[^}]*}' "$work/revision1.json")
echo "$summary"
for want in '"pass": 217' '"fail": 0' '"unsupported": 535' '"broken": 0'; do
    echo "$summary" | grep -q "$want" || fail "expected $want as in the last release, got $summary"
done
echo "ok: the revision-1 binary loads unchanged and passes the kit as before"
