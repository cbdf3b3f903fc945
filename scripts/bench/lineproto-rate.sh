#!/usr/bin/env bash
# Line-protocol formatting rate, one core: dlgauge's formatter versus the
# InfluxDB Python client's make_lines on the same point. Medians of 5.
# dlgauge's side is the formatter the build ships: lineproto_rate.c linked
# against the build's libdlg_lineproto.a and libdlg_sinkutil.a (what
# influx.so is linked from), the driver compiled with that target's
# compiler and flags, which the script prints.
#
#   scripts/bench/lineproto-rate.sh [BUILD_DIR]   (default: build)
#   env PEER_PYTHON: the python3 with influxdb (/usr/bin/python3)
# Exits 2 before measuring when influxdb cannot be imported, 1 when the
# build has no formatter library (cmake --build BUILD --target dlg_lineproto).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/bench/bench_lib.sh"
need_peer_modules influxdb
build=$(cd "${1:-$top/build}" && pwd)
libs=("$build/sinks/influx/libdlg_lineproto.a" "$build/sinks/common/libdlg_sinkutil.a")
for l in "${libs[@]}"; do
  [ -f "$l" ] || { echo "no $l: cmake --build $build --target dlg_lineproto" >&2; exit 1; }
done
# The flags lineproto.c was compiled with: Ninja's build.ninja or the
# Makefile generator's flags.make of the dlg_lineproto target.
flags=$(python3 - "$build" <<'PY'
import os, re, sys
b = sys.argv[1]
fm = f"{b}/sinks/influx/CMakeFiles/dlg_lineproto.dir/flags.make"
if os.path.exists(fm):
    m = dict(re.findall(r"^(C_FLAGS|C_DEFINES) = ?(.*)$", open(fm).read(), re.M))
    print(m.get("C_DEFINES", ""), m.get("C_FLAGS", ""))
elif os.path.exists(f"{b}/build.ninja"):
    m = re.search(r"^build \S*dlg_lineproto\.dir/lineproto\.c\.o:.*?\n((?:  .*\n)+)", open(f"{b}/build.ninja").read(), re.M)
    v = dict(re.findall(r"^  (DEFINES|FLAGS) = (.*)$", m.group(1), re.M)) if m else {}
    print(v.get("DEFINES", ""), v.get("FLAGS", ""))
PY
)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "${flags// /}" ] && [ -n "$cc" ] || { echo "$build: no compile flags of dlg_lineproto found; nothing measured" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # the flags split on purpose
"$cc" $flags -I"$top/include" -I"$top/sinks/influx" -I"$top/sinks/common" -o "$work/lp" \
  "$top/scripts/bench/lineproto_rate.c" "${libs[@]}" -lm
echo "dlgauge side: $build's libdlg_lineproto.a + libdlg_sinkutil.a; driver built by $cc with: $flags"
echo "load average: $(loadavg)"
for i in 1 2 3 4 5; do taskset -c 0 "$work/lp" 300000 | cut -d' ' -f1; done | median > "$work/dlg"
for i in 1 2 3 4 5; do taskset -c 0 "$PEER_PYTHON" "$top/scripts/bench/lineproto_peer.py" 20000 | cut -d' ' -f1; done | median > "$work/py"
dlg=$(cat "$work/dlg") py=$(cat "$work/py")
echo "line protocol, one core, 6 tags + 30 fields per point (median of 5):"
printf '  dlgauge lp_format_point     %10.0f points/s\n' "$dlg"
printf '  influxdb-python make_lines  %10.0f points/s\n' "$py"
python3 -c "import sys; d,p=map(float,sys.argv[1:]); print(f'  ratio dlgauge/python        {d/p:10.1f}x')" "$dlg" "$py"
echo "load average at the end: $(loadavg)"
