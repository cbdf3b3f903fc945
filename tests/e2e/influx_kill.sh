#!/usr/bin/env bash
# kill -9 mid-run, then --resume, against a real influxd: every result row
# and the run's dlgauge_host point end up in InfluxDB.  The journal calls
# a row sent once the sink's write returned; the influx sink used to batch
# it in memory (progress = false: nothing else came to send it), so the
# kill lost it for good and --resume skipped its cell.
set -euo pipefail
dlgauge=$1 server=$2
pid=
influx_test_on_exit() { [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null; }
source "$(dirname "$server")/influx_test_server.sh"
influx_test_start "$server" d4
count() { curl -sf --get "$url/query" --data-urlencode "db=d4" --data-urlencode "q=$1" |
          python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; s=r.get("series")
print(s[0]["values"][0][1] if s else 0)'; }
cd "$work"
cat > run4.ini <<INI
[global]
run_id = r4
[sink influx]
url       = $url/write?db=d4
spool_dir = $work/spool
progress  = false
[sink csv]
path = $work/r4.csv
[job a]
workload   = sleep
sleep      = 1ms, 2ms
iterations = 5
[job b]
workload   = sleep
sleep      = 20s
iterations = 1
min_steps  = 1
warmup     = 0
INI
"$dlgauge" -q run run4.ini > run.out 2> run.err &
pid=$!
for _ in $(seq 200); do # job a's two rows are in the CSV: job b sleeps 20 s
  [ -f r4.csv ] && [ "$(wc -l < r4.csv)" -ge 3 ] && break
  sleep 0.05
done
[ "$(wc -l < r4.csv)" -ge 3 ] || { echo "FAIL: job a's rows never reached the CSV"; cat run.err; exit 1; }
sleep 0.5
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
"$dlgauge" -q run run4.ini --resume > resume.out 2> resume.err < /dev/null &
pid=$!
# job b sleeps 20 s: only its own row is this run's; the test does not wait for it
for _ in $(seq 50); do [ "$(count 'SELECT count(*) FROM dlgauge_host')" != 0 ] && break; sleep 0.1; done
a=$(count "SELECT count(throughput) FROM dlgauge_result WHERE job = 'a'")
h=$(count 'SELECT count(*) FROM dlgauge_host')
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
[ "$a" = 2 ] || { echo "FAIL: InfluxDB holds $a of job a's 2 rows after kill -9 and --resume"; cat run.err resume.err; exit 1; }
[ "$h" != 0 ] || { echo "FAIL: no dlgauge_host point in InfluxDB"; exit 1; }
echo "ok: both rows of job a and the dlgauge_host point survived kill -9"
