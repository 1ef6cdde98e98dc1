#!/usr/bin/env bash
# check-help-in-man.sh MAN_DIR TOOL...: for each TOOL, every --option its
# `--help` prints must appear in MAN_DIR/$(basename TOOL).1 (written \-\-option
# or --option); prints each one missing and fails if any is.
set -uo pipefail
man_dir=$1
shift
missing=0 checked=0
for tool in "$@"; do
    name=$(basename "$tool")
    page=$man_dir/$name.1
    [ -f "$page" ] || { echo "FAILED: $name has no man page $page"; missing=$((missing + 1)); continue; }
    help=$("$tool" --help 2>&1) || { echo "FAILED: $name --help exits with an error"; missing=$((missing + 1)); continue; }
    options=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
    [ -n "$options" ] || { echo "FAILED: $name --help names no option"; missing=$((missing + 1)); continue; }
    plain=$(sed 's/\\-/-/g' "$page")
    for option in $options; do
        checked=$((checked + 1))
        if ! grep -qE -- "${option}([^a-z0-9-]|\$)" <<<"$plain"; then
            echo "FAILED: $name: '$option' (from --help) is not in $page"
            missing=$((missing + 1))
        fi
    done
done
echo "$checked options checked in $# man pages, $missing missing"
[ "$missing" -eq 0 ]
