#!/bin/bash
# (b) Runner accuracy: 20 ms sleeps, 20 timed steps, 2 repetitions.
source "$(dirname "$0")/lib.sh"

ini acc.ini <<EOT
[sink csv]
path = $WORK/acc.csv
[job nap]
workload   = sleep
sleep      = 20ms
iterations = 20
warmup     = 2
repeat     = 2
EOT

run_cli acc run acc.ini
expect_rc acc 0
"$PY" "$E2E/e2e_check.py" accuracy "$WORK/acc.csv" || fail "timing out of bounds (see above)"
finish
