#!/usr/bin/env bash
# Line-protocol formatting rate, one core: dlgauge's formatter versus the
# InfluxDB Python client's make_lines on the same point. Medians of 5.
# env PEER_PYTHON: the python3 with influxdb (/usr/bin/python3).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/bench/bench_lib.sh"
need_peer_modules influxdb
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cc -O2 -I"$top/include" -I"$top/sinks/influx" -I"$top/sinks/common" -o "$work/lp" \
  "$top/scripts/bench/lineproto_rate.c" "$top/sinks/influx/lineproto.c" "$top/sinks/common/sbuf.c" \
  "$top/sinks/common/sinkfmt.c" -lm
for i in 1 2 3 4 5; do taskset -c 0 "$work/lp" 300000 | cut -d' ' -f1; done | median > "$work/dlg"
for i in 1 2 3 4 5; do taskset -c 0 "$PEER_PYTHON" "$top/scripts/bench/lineproto_peer.py" 20000 | cut -d' ' -f1; done | median > "$work/py"
dlg=$(cat "$work/dlg") py=$(cat "$work/py")
echo "line protocol, one core, 6 tags + 30 fields per point (median of 5):"
printf '  dlgauge lp_format_point     %10.0f points/s\n' "$dlg"
printf '  influxdb-python make_lines  %10.0f points/s\n' "$py"
python3 -c "import sys; d,p=map(float,sys.argv[1:]); print(f'  ratio dlgauge/python        {d/p:10.1f}x')" "$dlg" "$py"
