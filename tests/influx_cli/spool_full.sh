#!/usr/bin/env bash
# The InfluxDB sink with InfluxDB unreachable (127.0.0.1 port 1) and its
# spool on a full disk (the spool file is /dev/full: each append fails
# with ENOSPC): a result row neither takes fails the sink's write, in one
# line naming the spool, the reason and the journal, so the journal keeps
# the row; once the disk is freed, `dlgauge run --resume` spools the very
# rows the run measured (exit 1: spooled is not delivered), and
# `dlgauge flush` finds them there.  The rows
# used to be journaled as sent while only held in memory: the run said
# they were lost when it ended, `--resume` found every cell done and the
# spool stayed empty: lost for good.  Skipped (77) without /dev/full.
set -uo pipefail
dlgauge=$1 work=$2
[ -w /dev/full ] || { echo "SKIP: no writable /dev/full"; exit 77; }
rm -rf "$work"
mkdir -p "$work/spool"
cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

cat >run.ini <<INI
[sink csv]
path = out.csv
[sink db]
type = influx
url = http://127.0.0.1:1/write?db=x
spool_dir = spool
retries = 0
timeout = 2s
[job n]
workload = noop
seed = 1,2
iterations = 1000
INI
spool=$work/spool/db.lp
ln -s /dev/full "$spool"

# 1. the disk full: the rows stay in the journal, not "sent"
rc=0; "$dlgauge" -q run run.ini >run1.out 2>run1.err || rc=$?
[ $rc -eq 1 ] || fail "run with the spool's disk full exited $rc, expected 1: $(cat run1.err)"
n=$(grep -c "cannot spool a result row that InfluxDB at http://127.0.0.1:1/write?db=x&precision=ns did not take: No space left on device; the run's journal keeps it: \`dlgauge run --resume\` sends it again\$" run1.err)
[ "$n" = 1 ] || fail "not one line saying a result row could not be spooled and stays journaled ($n): $(cat run1.err)"
grep -q "^dlgauge: run\.ini:3: \[sink db\]: $spool: cannot spool a result row" run1.err ||
    fail "the line does not name the sink and the spool $spool: $(cat run1.err)"
grep -q '^dlgauge: run\.ini:3: \[sink db\]: incomplete: 2 result rows did not reach it; .*: dlgauge run --resume sends them$' run1.err ||
    fail "the run's end does not say that sink db lacks 2 rows: $(cat run1.err)"
if grep -v 'progress points held in memory are lost' run1.err | grep -q 'lost'; then
    fail "a line claims result rows are lost: $(grep lost run1.err)"
fi
[ "$(grep -c '^20' out.csv)" = 2 ] || fail "the csv sink lacks the 2 rows: $(cat out.csv)"

# 2. the disk freed: --resume spools the rows measured, not new ones
rm "$spool"
rc=0; "$dlgauge" -q run run.ini --resume >run2.out 2>run2.err || rc=$?
# 1: the rows are spooled now, not lost, but InfluxDB (still unreachable)
# does not have them
[ $rc -eq 1 ] || fail "--resume after freeing the disk exited $rc, expected 1: $(cat run2.err)"
grep -q "3 points stay spooled in $spool" run2.err || fail "--resume did not say the points wait in $spool: $(cat run2.err)"
if grep -q 'already done' run2.err && ! grep -q '0 cells already done' run2.err; then
    fail "--resume calls cells done whose rows never reached sink db: $(cat run2.err)"
fi
[ "$(grep -c '^20' out.csv)" = 2 ] || fail "--resume measured again (csv): $(cat out.csv)"
python3 - "$spool" out.csv <<'PY' || fail "the spool does not hold the run's rows: $(cut -c1-200 "$spool" 2>&1)"
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
rows = list(csv.DictReader(open(sys.argv[2])))
def tags(l):
    head = l.split(" ", 1)[0].split(",")
    return head[0], dict(kv.split("=", 1) for kv in head[1:])
res = [t for m, t in map(tags, lines) if m == "dlgauge_result"]
assert sorted(t["seed"] for t in res) == ["1", "2"], res
assert {t["run_id"] for t in res} == {r["run_id"] for r in rows}, (res, rows)
assert any(l.startswith("dlgauge_host,") for l in lines), "no dlgauge_host point"
for r in rows:  # the very measurement: the spooled throughput is the csv's
    mine = [l for l in lines if l.startswith("dlgauge_result,") and tags(l)[1]["seed"] == r["seed"]]
    tp = float(mine[0].split(" ")[1].split("throughput=", 1)[1].split(",", 1)[0])
    assert abs(tp - float(r["throughput"])) <= 1e-9 * tp, (tp, r["throughput"])
PY

# 3. `dlgauge flush` finds them there (InfluxDB still unreachable)
rc=0; "$dlgauge" flush run.ini >flush.out 2>flush.err || rc=$?
[ $rc -eq 1 ] || fail "flush exited $rc, expected 1: $(cat flush.err)"
grep -q "points stay spooled in $spool until" flush.err || fail "flush does not find the spooled rows: $(cat flush.err)"

[ $fails -eq 0 ] || exit 1
echo "ok"
