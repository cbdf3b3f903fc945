#!/usr/bin/env bash
# The InfluxDB sink through the whole CLI, against a real influxd:
#  1. a run writes its host inventory and first results to a live server;
#  2. the server is stopped mid-run: the rest is spooled, the run goes on
#     and still exits 0 (an unreachable database never aborts a run);
#  3. the server comes back; `dlgauge flush` replays the spool;
#  4. every result is in InfluxDB exactly once (the server's own write
#     counter, which repeated writes would inflate even though InfluxDB
#     would silently merge duplicate points);
#  5. a run into a database that does not exist (404) exits 1 with an error
#     naming the URL, the status and what to fix; its points stay spooled,
#     and `dlgauge flush` delivers them once the database exists;
#  6. a spool holding a line InfluxDB refuses: the run measures every cell
#     and exits 1 at the end, `dlgauge flush` exits 1 (both used to exit 2,
#     the run before its first cell).
set -euo pipefail
dlgauge=$1 server=$2
source "$(dirname "$server")/influx_test_server.sh"
influx_test_start "$server"
q() { curl -sf --get "$url/query" --data-urlencode "db=dlg" --data-urlencode "q=$1"; }
written_ok() { curl -sf "$url/debug/vars" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(v["values"].get("pointsWrittenOK",0) for k,v in d.items() if k.startswith("httpd")))'; }
curl -sf -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE dlg" >/dev/null

cat > "$work/run.ini" <<INI
[global]
run_id = flush-test
[sink influx]
url            = $url/write?db=dlg
spool_dir      = $work/spool
batch          = 1
retries        = 1
backoff        = 50ms
timeout        = 1s
progress       = false
[sink csv]
path = $work/results.csv
[job before]
workload   = sleep
sleep      = 1ms, 2ms
iterations = 5
[job during]
workload   = sleep
sleep      = 1500ms
iterations = 1
min_steps  = 1
warmup     = 0
[job after]
workload   = sleep
sleep      = 1ms, 3ms
iterations = 5
INI

"$dlgauge" -q run "$work/run.ini" > "$work/run.out" 2> "$work/run.err" &
pid=$!
# stop the server once the first job's two rows exist (the next cell sleeps 1.5 s)
for _ in $(seq 100); do
  [ -f "$work/results.csv" ] && [ "$(wc -l < "$work/results.csv")" -ge 3 ] && break
  sleep 0.05
done
before=$(written_ok)
bash "$server" stop "$work/influx"
rc=0; wait $pid || rc=$?
# exit 1: nothing is lost (the points are spooled for a flush), but the
# database does not have them, and a script must not read that as success
[ $rc -eq 1 ] || { echo "FAIL: run exited $rc with the database down, expected 1"; cat "$work/run.err"; exit 1; }
# the run's dlgauge_host inventory point, then the first job's 2 results
[ "$before" -eq 3 ] || { echo "FAIL: expected 3 points written before the stop, server says $before"; exit 1; }
[ -s "$work/spool/influx.lp" ] || { echo "FAIL: nothing was spooled"; ls -la "$work/spool" || true; exit 1; }
spooled=$(grep -c '^dlgauge_result' "$work/spool/influx.lp")
[ "$spooled" -eq 3 ] || { echo "FAIL: expected 3 spooled results, found $spooled"; exit 1; }
grep -q "influx" "$work/run.err" || { echo "FAIL: no warning about the unreachable database"; exit 1; }

# 2b. a flush while the server is still down delivers nothing: it says how
#     many points stay spooled and where, and exits 1 (it used to exit 0
#     and print "flushed 1 sink"), in one line (the sink's open warned of
#     the same before it)
lines=$(wc -l < "$work/spool/influx.lp")
rc=0; "$dlgauge" flush "$work/run.ini" > "$work/down.out" 2> "$work/down.err" || rc=$?
[ $rc -eq 1 ] || { echo "FAIL: flush with the database down exited $rc, expected 1"; cat "$work/down.err"; exit 1; }
grep -q "$lines points stay spooled in $work/spool/influx.lp" "$work/down.err" ||
  { echo "FAIL: flush with the database down did not say what stays spooled:"; cat "$work/down.err"; exit 1; }
[ "$(wc -l < "$work/down.err")" -eq 1 ] && [ "$(grep -c "is unreachable" "$work/down.err")" -eq 1 ] ||
  { echo "FAIL: flush with the database down said more than one line:"; cat "$work/down.err"; exit 1; }
if grep -q "flushed" "$work/down.err"; then echo "FAIL: flush claims success:"; cat "$work/down.err"; exit 1; fi
[ "$(wc -l < "$work/spool/influx.lp")" -eq "$lines" ] || { echo "FAIL: the failed flush changed the spool"; exit 1; }

bash "$server" start "$work/influx" "$port" >/dev/null
"$dlgauge" -q flush "$work/run.ini" || { echo "FAIL: dlgauge flush failed"; exit 1; }
after=$(written_ok)
[ "$after" -eq 3 ] || { echo "FAIL: flush wrote $after points, expected exactly 3"; exit 1; }
"$dlgauge" -q flush "$work/run.ini"
again=$(written_ok)
[ "$again" -eq 3 ] || { echo "FAIL: a second flush resent points ($again written)"; exit 1; }

q "SELECT count(throughput) FROM dlgauge_result GROUP BY job" | python3 -c '
import json, sys
series = json.load(sys.stdin)["results"][0]["series"]
got = {s["tags"]["job"]: s["values"][0][1] for s in series}
want = {"before": 2, "during": 1, "after": 2}
assert got == want, f"per-job counts {got} != {want}"
print("ok: per-job result counts", got)'
# field-by-field: InfluxDB agrees with the CSV the same run wrote
q "SELECT throughput, steps, status FROM dlgauge_result" | python3 -c '
import csv, json, sys
vals = json.load(sys.stdin)["results"][0]["series"][0]["values"]
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(vals) == len(rows) == 5, (len(vals), len(rows))
a = sorted((round(v[1], 6), v[2]) for v in vals)
b = sorted((round(float(r["throughput"]), 6), int(r["steps"])) for r in rows)
assert a == b, (a, b)
print("ok: throughput and steps identical in InfluxDB and CSV")' "$work/results.csv"
echo "ok: 2 live + 3 spooled-and-flushed results, each exactly once"

# 5. a database that does not exist yet: not a rejection of the points
cat > "$work/404.ini" <<INI
[global]
run_id = flush-404
[sink influx]
url       = $url/write?db=later
spool_dir = $work/spool404
retries   = 0
timeout   = 1s
progress  = false
[job j]
workload   = sleep
sleep      = 1ms
iterations = 3
INI
rc=0; "$dlgauge" -q run "$work/404.ini" > "$work/404.out" 2> "$work/404.err" || rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a run into a missing database exited $rc, expected 1"; cat "$work/404.err"; exit 1; }
spooled=$(wc -l < "$work/spool404/influx.lp")
grep "InfluxDB at $url/write?db=later"  "$work/404.err" | grep "HTTP 404: database not found" |
  grep "CREATE DATABASE" | grep -q "$spooled points stay spooled in $work/spool404/influx.lp" ||
  { echo "FAIL: no error line naming the URL, the 404 and what to do:"; cat "$work/404.err"; exit 1; }
[ ! -e "$work/spool404/influx.rejected.lp" ] || { echo "FAIL: a missing database rejected the points"; exit 1; }
curl -sf -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE later" >/dev/null
"$dlgauge" -q flush "$work/404.ini" || { echo "FAIL: flush after CREATE DATABASE failed"; exit 1; }
n=$(curl -sf --get "$url/query" --data-urlencode "db=later" --data-urlencode "q=SELECT count(throughput) FROM dlgauge_result" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["series"][0]["values"][0][1])')
[ "$n" -eq 1 ] || { echo "FAIL: expected the run's 1 result in the new database, found $n"; exit 1; }
echo "ok: a missing database kept $spooled points in the spool; flush delivered them"

# 6. a spooled line InfluxDB refuses (400) is saved and reported at the end
mkdir -p "$work/spoolbad"
printf 'bad v= 1\n' > "$work/spoolbad/influx.lp"
cat > "$work/bad.ini" <<INI
[global]
run_id = flush-bad
[sink influx]
url       = $url/write?db=dlg
spool_dir = $work/spoolbad
retries   = 0
timeout   = 1s
progress  = false
[sink csv]
path = $work/bad.csv
[job j]
workload   = sleep
sleep      = 1ms
iterations = 3
INI
rc=0; "$dlgauge" -q run "$work/bad.ini" > "$work/bad.out" 2> "$work/bad.err" || rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a run replaying a refused line exited $rc, expected 1"; cat "$work/bad.err"; exit 1; }
[ "$(wc -l < "$work/bad.csv")" -eq 2 ] || { echo "FAIL: the run did not measure its cell"; cat "$work/bad.err"; exit 1; }
grep -q "rejected 1 point of the spool $work/spoolbad/influx.lp when the sink opened" "$work/bad.err" ||
  { echo "FAIL: no error line at the end of the run about the refused line:"; cat "$work/bad.err"; exit 1; }
grep -qx 'bad v= 1' "$work/spoolbad/influx.rejected.lp" || { echo "FAIL: the refused line was not saved"; exit 1; }
printf 'bad v= 2\n' > "$work/spoolbad/influx.lp"
rc=0; "$dlgauge" -q flush "$work/bad.ini" > "$work/badf.out" 2> "$work/badf.err" || rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a flush of a refused line exited $rc, expected 1"; cat "$work/badf.err"; exit 1; }
[ ! -s "$work/spoolbad/influx.lp" ] || { echo "FAIL: the refused line stayed in the spool"; exit 1; }
echo "ok: a refused spooled line is saved, the run measures and exits 1, flush exits 1"
