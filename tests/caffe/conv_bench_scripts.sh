#!/usr/bin/env bash
# The conv-kernel benchmarks (scripts/bench/winograd-vs-onednn.sh,
# strided-vs-onednn.sh, and the former with KEPT=1) still run end to end
# against this build: one round of one step on tiny shapes, every pass
# printing a row with both times and a ratio.  Only that they run and report is checked; their figures are
# benchmarks, quoted in docs/benchmarks.md, not test results.
# usage: conv_bench_scripts.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rows() { # script shapes want-rows
  ROUNDS=1 STEPS=1 SHAPES="$2" bash "$src/scripts/bench/$1" "$build" 2 >"$out" 2>&1 ||
    { echo "FAIL: $1 exited non-zero"; cat "$out"; exit 1; }
  # a row: batch ... pass direct-ms engine-ms ratio range
  local got
  got=$(grep -cE '^ +[0-9]+ .* (fwd|bwd_data|bwd_filter) +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$out" || true)
  [ "$got" = "$3" ] || { echo "FAIL: $1 printed $got rows, want $3"; cat "$out"; exit 1; }
  echo "ok: $1 printed $got rows"
}
rows winograd-vs-onednn.sh "2:16:10 2:16:9:24:1x7 2:16:9:24:5x5" 9
KEPT=1 rows winograd-vs-onednn.sh "2:16:10 2:16:9:24:5x5" 2 # forward with the filter kept
rows strided-vs-onednn.sh "2:16:14:24:1 2:16:14:16:0:1" 2
