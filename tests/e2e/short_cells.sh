#!/bin/bash
# Cells of a few microseconds (5 no-op steps): cpu_user_share stays a share
# of the CPU time the cell could use (at most 1), although the readings and
# samplers around the timed steps then take longer than the steps.
source "$(dirname "$0")/lib.sh"

ini short.ini <<EOT
[sink csv]
path = $WORK/out/results.csv
[job tiny]
workload   = noop
iterations = 5
warmup     = 0
cpus       = 0, 1
repeat     = 3
EOT

run_cli short run short.ini
expect_rc short 0
"$PY" - "$WORK/out/results.csv" <<'PY' || fail "cpu_user_share above 1 (see above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
bad = [(r["cpus"], r["cpu_user_share"], r["wall_s"]) for r in rows if float(r["cpu_user_share"]) > 1.0]
if bad:
    print("cpus, cpu_user_share, wall_s:", bad)
    sys.exit(1)
PY
finish
