#!/bin/bash
# What a run writes once: its dlgauge_host inventory is one point per run,
# also after a kill -9 and --resume on the same machine (the journal says
# it went out); and the shipped dashboard plots only measured rates.
source "$(dirname "$0")/lib.sh"

ini resume.ini <<EOT
[global]
journal = $WORK/resume.journal
[sink json]
path = $WORK/resume.jsonl
[job a]
workload   = sleep
sleep      = 1ms
iterations = 2
[job b]
workload   = sleep
sleep      = 100ms
warmup     = 0
iterations = 8
EOT
"$DLG" --plugin-dir "$PLUGDIR" -q run resume.ini >killed.out 2>killed.err &
pid=$!
for _ in $(seq 500); do
    grep -q '^done a 0 ' resume.journal 2>/dev/null && break
    sleep 0.01
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
grep -q '^done b' resume.journal && fail "b finished before the kill: make it longer"
run_cli resumed -q run resume.ini --resume
expect_rc resumed 0
count() { grep -c "\"measurement\": *\"$1\"" resume.jsonl; }
[ "$(count dlgauge_host)" = 1 ] || fail "$(count dlgauge_host) dlgauge_host points after --resume, expected 1: $(grep dlgauge_host resume.jsonl)"
[ "$(count dlgauge_result)" = 2 ] || fail "$(count dlgauge_result) results after --resume, expected a's and b's"
grep -q '^inventory [0-9a-f]\{16\}$' resume.journal || fail "the journal does not record the inventory: $(cat resume.journal)"

# a chart of results over time shows only cells that measured them (a
# failed cell's latency, power or data wait is of steps that failed)
"$PY" - "$SRC/docs/dashboards" <<'EOPY' || fail "a dashboard plots results without status = 'ok'"
import glob, json, re, sys
bad = []
def queries(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "query" and isinstance(v, str):
                yield v
            else:
                yield from queries(v)
    elif isinstance(node, list):
        for v in node:
            yield from queries(v)
for path in glob.glob(sys.argv[1] + "/*.json"):
    for q in queries(json.load(open(path))):
        # a table grouped by status (or by every tag, *) shows each status
        # apart: no filter needed
        group = q.split("GROUP BY")[-1] if "GROUP BY" in q else ""
        by_status = '"status"' in group or group.strip() == "*"
        if q.startswith("SELECT") and '"dlgauge_result"' in q and not by_status:
            if not re.search(r""""status" = 'ok'""", q):
                bad.append(q)
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
EOPY
finish
