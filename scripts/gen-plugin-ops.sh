#!/usr/bin/env bash
# Regenerates include/tensorplay/plugin_ops.h from core/ops/op_list.def after
# an op was added (at the end of that file: op ids are plugin ABI).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -DTP_WRITE=ON -P cmake/PluginOps.cmake
