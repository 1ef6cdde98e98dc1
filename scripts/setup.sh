#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages TensorPlay needs, build it,
# and run the main job (an example model on the default backend, then
# `tp-backends list`). Run from anywhere; uses sudo when not root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TP_BUILD:-$here/build}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ "${TP_SKIP_APT:-0}" != 1 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2046
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        $(grep -v '^#' "$here/scripts/debian-packages.txt")
fi

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)"
"$here/scripts/main-job.sh" "$build"
