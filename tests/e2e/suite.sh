#!/bin/bash
# (a) A small sweep of sleep and stream to CSV, JSON Lines and a line-protocol
# file; all three are read back and must agree cell by cell.  Job sweep
# sweeps stream's `threads`, also a stream metric: one column of that name,
# the swept value in sweep's rows, mem's reported value in mem's.
source "$(dirname "$0")/lib.sh"

ini suite.ini <<EOT
; comments and blank lines are part of the test

[global]
run_id = e2e-suite
warmup = 1

[sink csv]
path = $WORK/out/results.csv
[sink json]
path = $WORK/out/results.jsonl
[sink lp]
type = influx
path = $WORK/out/results.lp

[job naps]
workload   = sleep
sleep      = 1ms, 2ms, 3ms   ; a sweep axis
iterations = 4

[job mem]
workload   = stream
array_size = 256KiB
threads    = 1
kernel     = copy, triad
cpus       = 0, 1
iterations = 3

[job sweep]
workload   = stream
array_size = 256KiB
kernel     = copy
threads    = 1, 2
cpus       = 0
iterations = 2
EOT

run_cli suite run suite.ini
expect_rc suite 0
grep -q '^\[9/9\] sweep' suite.out || fail "stdout lacks the summary of cell 9/9: $(cat suite.out)"
"$PY" "$E2E/e2e_check.py" suite "$WORK/out" || fail "result files disagree (see above)"
finish
