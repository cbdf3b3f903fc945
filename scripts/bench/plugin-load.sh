#!/usr/bin/env bash
# Time to load every built-in plugin: `dlgauge list` (dlopen + checks of every
# .so) versus `dlgauge --version` (process start alone). Medians of 15.  A
# failing command stops the script (its time would be no load time).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
. "$top/scripts/bench/bench_lib.sh"
run_ms() { for i in $(seq 15); do s=$(date +%s%N); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; e=$(date +%s%N); echo $(( (e - s) / 1000 )); done | median; }
n=$(ls "$build"/lib/dlgauge/*.so | wc -l)
list=$(run_ms "$build/bin/dlgauge" list)
ver=$(run_ms "$build/bin/dlgauge" --version)
python3 - "$n" "$list" "$ver" <<'PY'
import sys
n, l, v = int(sys.argv[1]), float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000
print(f"plugin loading ({n} plugin files, median of 15):")
print(f"  dlgauge list       {l:8.1f} ms")
print(f"  dlgauge --version  {v:8.1f} ms  (process start alone)")
print(f"  loading every plugin: {l - v:.1f} ms; ratio list/--version {l / v:.1f}x")
PY
