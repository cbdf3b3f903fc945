#!/usr/bin/env bash
# One InfluxDB schema per key, whatever a run sweeps: stream's `threads`
# metric reports its option, and a run that sweeps threads and one that
# does not write it as a tag alike (it was a tag in the one, an integer
# field in the other: `threads` was then both in dlgauge_result, and
# WHERE / GROUP BY threads answered by which runs the time range held).
# Against a real influxd: the key is a tag only, and both runs' rows of
# threads = 1 are one group.  The dashboard's GROUP BY * then has a
# threads tag on every row of stream, never a field beside it.
set -euo pipefail
dlgauge=$1 server=$2
source "$(dirname "$server")/influx_test_server.sh"
influx_test_start "$server" ds
cd "$work"
# run RUN_ID THREADS: one stream job, threads as given ("1, 2" sweeps it)
run() {
    cat > "$1.ini" <<INI
[global]
run_id = $1
[sink influx]
url       = $url/write?db=ds
spool_dir = $work/spool
progress  = false
[job mem]
workload   = stream
array_size = 64KiB
kernel     = copy
threads    = $2
iterations = 2
min_steps  = 1
warmup     = 0
INI
    "$dlgauge" -q run "$1.ini" > "$1.out" 2> "$1.err" || { echo "FAIL: run $1 exited non-zero"; cat "$1.err"; exit 1; }
}
run swept "1, 2"
run plain 1
python3 - "$url" <<'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1]
def q(text):
    u = url + "/query?" + urllib.parse.urlencode({"db": "ds", "q": text})
    r = json.load(urllib.request.urlopen(u))["results"][0]
    if "error" in r:
        sys.exit("FAIL: InfluxDB refused %r: %s" % (text, r["error"]))
    return r.get("series", [])
def keys(text):
    return {v[0] for s in q(text) for v in s["values"]}
fails = []
tags, fields = keys("SHOW TAG KEYS FROM dlgauge_result"), keys("SHOW FIELD KEYS FROM dlgauge_result")
if "threads" not in tags:
    fails.append("threads is no tag key: %s" % sorted(tags))
if "threads" in fields:
    fails.append("threads is a field key as well as a tag key")
if "copy_bytes_per_s" not in fields or "copy_bytes_per_s" in tags:
    fails.append("copy_bytes_per_s (a measurement) is not a field alone")
# both runs' threads = 1 rows in one group, the swept run's 2 in another
groups = {}
for s in q("SELECT count(throughput) FROM dlgauge_result GROUP BY threads, run_id"):
    groups.setdefault(s["tags"]["threads"], set()).add(s["tags"]["run_id"])
if groups != {"1": {"swept", "plain"}, "2": {"swept"}}:
    fails.append("GROUP BY threads: %s, expected 1: both runs, 2: swept" % groups)
n = sum(v[1] for s in q("SELECT count(throughput) FROM dlgauge_result WHERE threads = '1'") for v in s["values"])
if n != 2:
    fails.append("WHERE threads = '1' counts %s rows, expected the two runs' 2" % n)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
echo "ok: threads is a tag in both runs"
