#!/bin/bash
# A repetition cut short by the cell's timeout: its rate (a few slow steps)
# stays out of throughput and its CI, which are over the complete
# repetitions; `repeats` counts those, and the run's line says how many of
# the configured ones were complete.  The cut one used to weigh as a full
# repetition: throughput fell by a quarter and the CI was wider than it.
# TEST_PLUGIN_DIR is this folder of the build tree (slowrep_wl.so).
source "$(dirname "$0")/lib.sh"

# run_slowrep NAME SLOW_FROM ITERATIONS REPEAT TIMEOUT: steps of 5 ms (long
# enough that a complete repetition's rate holds under ASan on a busy
# machine; 1 ms steps swung by 10x there), of 100 ms from repetition
# SLOW_FROM on, after one warm-up step; the row in NAME.csv, exit status 1
run_slowrep() {
    ini "$1.ini" <<EOT
[sink csv]
path = $WORK/$1.csv
[job $1]
plugin     = $TPLUG/slowrep_wl.so
workload   = slowrep
fast       = 5ms
slow       = 100ms
slow_from  = $2
iterations = $3
warmup     = 1
repeat     = $4
timeout    = $5
EOT
    run_cli "$1" -q run "$1.ini"
    expect_rc "$1" 1
}

# row_check NAME PYTHON: PYTHON's asserts on r, the row of NAME.csv
row_check() {
    "$PY" - "$WORK/$1.csv" "$2" <<'PY' || fail "$1: the cut repetition counted in the rate (row above)"
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
print({k: r[k] for k in ("status", "repeats", "steps", "throughput", "throughput_ci95")})
thr, ci, steps = float(r["throughput"]), float(r["throughput_ci95"]), int(r["steps"])
assert r["status"] == "timeout"
exec(sys.argv[2])
PY
}

# 3 complete repetitions of ~190 steps/s (~0.5 s in all; the timeout leaves
# 2 s for a loaded machine), the 4th cut after steps of 10/s
run_slowrep cut 3 30 4 2500ms
grep -Eq "^\[1/1\] cut +timeout .*\([0-9]+ steps, 3 of 4 repetitions complete\)$" cut.out ||
    fail "cut: run line '$(cat cut.out)'"
# steps: the cut one's are kept; the rate not pulled towards 10/s, nor its
# CI widened (counted, the cut one gives ~145 +- ~143: the CI is the test;
# the rate's bound leaves room for 5 ms sleeps that overshoot under load)
row_check cut 'assert r["repeats"] == "3" and steps > 90 and thr > 100 and ci < thr / 2'
# the error names the timeout key's line (12), not the section's (3)
row_check cut 'assert r["error"].startswith("cut.ini:12: [job cut] stopped after timeout = 2500ms"), r["error"]'

# a cut first repetition is all there is: its rate stands, 0 complete
run_slowrep first 0 100 2 700ms
grep -Eq "timeout .*\([0-9]+ steps, 0 of 2 repetitions complete\)$" first.out || fail "first: run line '$(cat first.out)'"
row_check first 'assert r["repeats"] == "0" and 5 < thr < 12 and ci == 0'
finish
