#!/usr/bin/env bash
# `dlgauge flush` when memory runs out, against a real influxd on 127.0.0.1:
# a spool of a run's points (its database did not exist yet: HTTP 404) is
# replayed in batches of 2 into a new database per trial while the
# preloaded allocator (tests/e2e/oom_at.c) fails the n-th allocation of the
# flush, for n over its whole count (the first ones all, then evenly;
# OOM_SWEEP_STRIDE=1 tries each, OOM_SWEEP_AT="N M" those).  Each time:
#  - flush exits 0 or 1 (out of memory is worth a retry, never 2 nor a
#    signal), with only dlgauge's lines on stderr, one saying out of
#    memory when it exits 1;
#  - exit 0: every point is in the database, the spool is empty;
#  - a second flush with memory back exits 0, and then every point is in
#    the database, written once by the server's own counter of points
#    written (which a resent batch raises though InfluxDB merges the
#    copy), or one batch twice at most: an allocation that fails inside
#    libcurl after the request went out loses InfluxDB's answer, and the
#    batch is sent again, as over a connection that broke there (no
#    client can know the first copy arrived).
#   bash flush_oom.sh DLGAUGE INFLUX_SERVER_SH OOM_AT_SO
set -euo pipefail
dlgauge=$1 server=$2 preload=$3
source "$(dirname "$server")/influx_test_server.sh"
influx_test_start "$server"
stride=${OOM_SWEEP_STRIDE:-}
written_ok() { curl -sf "$url/debug/vars" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(v["values"].get("pointsWrittenOK",0) for k,v in d.items() if k.startswith("httpd")))'; }
points_in() { # DB: how many points the database holds, over every measurement
  python3 - "$url" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url, db = sys.argv[1:]
def q(text):
    qs = urllib.parse.urlencode({"db": db, "q": text})
    return json.load(urllib.request.urlopen(f"{url}/query?{qs}"))["results"][0].get("series", [])
n = 0
for m in [s[0] for series in q("SHOW MEASUREMENTS") for s in series["values"]]:
    n += sum(len(s["values"]) for s in q(f'SELECT * FROM "{m}"'))
print(n)
PY
}
ini() { # DB SPOOL_DIR
  cat <<INI
[global]
run_id = flush-oom
[sink influx]
url       = $url/write?db=$1
spool_dir = $2
batch     = 2
retries   = 0
timeout   = 5s
progress  = false
[job a]
workload   = noop
iterations = 5
[job b]
workload   = sleep
sleep      = 1ms, 2ms
iterations = 3
INI
}

# the spool: a run into a database that does not exist yet
ini missing "$work/spool" > "$work/run.ini"
rc=0; "$dlgauge" -q run "$work/run.ini" > /dev/null 2> "$work/run.err" || rc=$?
[ $rc -eq 1 ] && [ -s "$work/spool/influx.lp" ] || { echo "FAIL: the run to spool exited $rc: $(cat "$work/run.err")"; exit 1; }
lines=$(wc -l < "$work/spool/influx.lp")

# trial NAME [AT]: a fresh database and a copy of the spool; flush (with
# allocation AT failing, or counting when AT is "count"), then again
trial() {
  local d=$work/t.$1 at=${2:-}
  mkdir -p "$d"
  cp -r "$work/spool" "$d/spool"
  curl -sf -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE t$1" > /dev/null
  ini "t$1" "$d/spool" > "$d/flush.ini"
  local before; before=$(written_ok)
  local env=()
  [ -z "$at" ] || env=(env LD_PRELOAD="$preload" DLG_OOM_IN=flush DLG_OOM_TRACE="$d/trace")
  [ "$at" != count ] || env+=(DLG_OOM_TALLY="$d/tally")
  [ "$at" = count ] || [ -z "$at" ] || env+=(DLG_OOM_AT="$at")
  local rc=0
  (cd "$d" && "${env[@]}" "$dlgauge" -q flush flush.ini > out 2> err) || rc=$?
  echo $rc > "$d/rc"
  [ $rc -ne 0 ] || points_in "t$1" > "$d/first"
  wc -l < "$d/spool/influx.lp" > "$d/left" 2> /dev/null || echo 0 > "$d/left"
  local rc2=0
  (cd "$d" && "$dlgauge" -q flush flush.ini > out2 2> err2) || rc2=$?
  echo $rc2 > "$d/rc2"
  points_in "t$1" > "$d/points"
  echo $(($(written_ok) - before)) > "$d/written"
}

trial count count
n=$(head -n 1 "$work/t.count/tally" 2>/dev/null || echo 0)
[ "$n" -gt 50 ] || { echo "FAIL: the flush made '$n' allocations counted: is $preload preloaded?"; exit 1; }
want=$(cat "$work/t.count/points")
[ "$(cat "$work/t.count/rc")" = 0 ] && [ "$want" -eq "$lines" ] ||
  { echo "FAIL: without a failed allocation: exit $(cat "$work/t.count/rc"), $want of $lines points: $(cat "$work/t.count/err")"; exit 1; }
if [ -n "${OOM_SWEEP_AT:-}" ]; then ats=$OOM_SWEEP_AT; elif [ -n "$stride" ]; then ats=$(seq 1 "$stride" "$n"); else ats="$(seq 1 5) $(awk -v n="$n" 'BEGIN { for (i = 1; i <= 30; i++) print 5 + int(i * (n - 5) / 30) }')"; fi
echo "flush: $n allocations, $lines points spooled; failing $(echo $ats | wc -w) of the allocations in turn"
for at in $ats; do trial "$at" "$at"; done

python3 - "$work" "$lines" "$(dirname "$0")/../support" <<'PY'
import glob, os, re, sys
sys.path.insert(0, sys.argv[3])
from oom_trial import report
work, lines = sys.argv[1], int(sys.argv[2])
BATCH = 2  # the sink's batch
bad = failed = resent = 0
def read(d, f):
    p = os.path.join(d, f)
    return open(p, errors="replace").read() if os.path.exists(p) else ""
trials = sorted((d for d in glob.glob(f"{work}/t.*") if not d.endswith(".count")), key=lambda d: int(d.rsplit(".", 1)[1]))
for d in trials:
    rc, err = int(read(d, "rc")), read(d, "err").splitlines()
    said = []
    if rc not in (0, 1):
        said.append(f"exit {rc}, not 0 or 1")
    stray = [l for l in err if not l.startswith("dlgauge")]
    if stray:
        said.append(f"a line on stderr that is not dlgauge's: {stray[0]!r}")
    if rc == 1:
        failed += 1
        if not any(re.search(r"out of (\w+ )?memory|Cannot allocate memory", l) for l in err):
            said.append("exit 1 without a line that says out of memory")
    if rc == 0 and (read(d, "first").strip() != str(lines) or read(d, "left").strip() != "0"):
        said.append(f"exit 0 with {read(d, 'first').strip()} of {lines} points in the database, {read(d, 'left').strip()} lines left in the spool")
    if read(d, "rc2").strip() != "0":
        said.append(f"the flush again exited {read(d, 'rc2').strip()}: {read(d, 'err2').strip()}")
    if read(d, "points").strip() != str(lines):
        said.append(f"after the flush again, {read(d, 'points').strip()} of {lines} points in the database")
    written = int(read(d, "written") or -1)
    if written == lines + BATCH:
        resent += 1
    elif written != lines:
        said.append(f"the server counted {written} points written for {lines}: more than one batch of {BATCH} sent twice")
    if said:
        bad += 1
        report(os.path.basename(d), said, err, f"{d}/trace", lines=3)
print(f"{len(trials)} trials: {failed} flushes failed saying so, {resent} sent a batch twice; {bad} problem(s)")
sys.exit(1 if bad or not trials else 0)
PY
echo "ok: flush_oom"
