#!/usr/bin/env bash
# compile-headers.sh CC CXX INCLUDE_DIR WORK_DIR: compiles a file holding
# `#include <tensorplay/H>` alone, for every H in INCLUDE_DIR/tensorplay,
# in each C and C++ standard below; prints every failure, fails if any.
set -uo pipefail
cc=$1 cxx=$2 include=$3 work=$4
mkdir -p "$work"
flags=(-Wall -Wextra -Werror -fsyntax-only -I"$include")
headers=("$include"/tensorplay/*.h)
if [ ! -e "${headers[0]}" ]; then
    echo "no headers in $include/tensorplay" >&2
    exit 1
fi
failed=0 compiled=0
for header in "${headers[@]}"; do
    name=$(basename "$header")
    printf '#include <tensorplay/%s>\n' "$name" >"$work/$name.c"
    cp "$work/$name.c" "$work/$name.cpp"
    for std in c11 c17; do
        if ! "$cc" -std=$std "${flags[@]}" "$work/$name.c"; then
            echo "FAILED: $name as $std ($cc)"
            failed=$((failed + 1))
        fi
        compiled=$((compiled + 1))
    done
    for std in c++11 c++17 c++20; do
        if ! "$cxx" -std=$std "${flags[@]}" "$work/$name.cpp"; then
            echo "FAILED: $name as $std ($cxx)"
            failed=$((failed + 1))
        fi
        compiled=$((compiled + 1))
    done
done
echo "$compiled header compilations, $failed failed (${#headers[@]} headers x 5 standards)"
[ "$failed" -eq 0 ]
