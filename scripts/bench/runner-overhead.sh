#!/usr/bin/env bash
# Runner overhead per step: dlgauge running the empty `noop` workload versus
# a bare loop that only reads the clock twice around the same step call.
# Prints medians of 5 runs each and the ratio.  Usage: runner-overhead.sh [BUILD]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
steps=${STEPS:-3000000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cc -O2 -I"$top/include" -o "$work/bare_loop" "$top/scripts/bench/bare_loop.c" -ldl
cat > "$work/noop.ini" <<INI
[sink csv]
path = $work/noop.csv
[job noop]
workload = noop
iterations = $steps
warmup = 1000
INI
. "$top/scripts/bench/bench_lib.sh"
for i in 1 2 3 4 5; do
  rm -f "$work/noop.csv"
  "$build/bin/dlgauge" -q run "$work/noop.ini" >/dev/null
  python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(float(r["wall_s"])*1e9/int(r["steps"]))' "$work/noop.csv"
done | median > "$work/dlg"
for i in 1 2 3 4 5; do "$work/bare_loop" "$build/lib/dlgauge/diag.so" noop "$steps" | cut -d' ' -f1; done | median > "$work/bare"
dlg=$(cat "$work/dlg") bare=$(cat "$work/bare")
printf 'runner overhead per step (median of 5, %s steps):\n' "$steps"
printf '  dlgauge noop        %8.1f ns/step  (histogram, progress, accounting included)\n' "$dlg"
printf '  bare clock loop     %8.1f ns/step\n' "$bare"
python3 -c "import sys; d,b=map(float,sys.argv[1:]); print(f'  ratio dlgauge/bare  {d/b:8.2f}x   (+{d-b:.1f} ns per step)')" "$dlg" "$bare"
