#!/bin/bash
# (c) SIGINT / SIGTERM stop a long run within moments: exit 130 / 143, and
# the cell that was running is written with status partial.
source "$(dirname "$0")/lib.sh"

# interrupt NAME SIGNAL SLEEP: runs a 60 s cell, signals it after 1.5 s
interrupt() {
    local name=$1 sig=$2 nap=$3
    ini "$name.ini" <<EOT
[sink csv]
path = $WORK/$name.csv
[job long]
workload = sleep
sleep    = $nap
duration = 60s
warmup   = 0
EOT
    local t0=$SECONDS
    "$DLG" --plugin-dir "$PLUGDIR" run "$name.ini" >"$name.out" 2>"$name.err" &
    local pid=$!
    sleep 1.5
    kill "-$sig" "$pid"
    wait "$pid"
    RC=$?
    [ $((SECONDS - t0)) -lt 10 ] || fail "$name: took $((SECONDS - t0)) s to stop"
    local rows status steps error
    rows=$("$PY" "$E2E/e2e_check.py" count "$name.csv")
    [ "$rows" = 1 ] || { fail "$name: $rows CSV rows, expected 1"; return; }
    { read -r status; read -r steps; read -r error; } < <("$PY" "$E2E/e2e_check.py" get "$name.csv" 0 status steps error)
    [ "$status" = partial ] || fail "$name: status '$status', expected partial ($error)"
    echo "$error" | grep -q "stopped by signal" || fail "$name: error field '$error'"
    grep -q 'interrupted' "$name.err" || fail "$name: no 'interrupted' note on stderr"
    STEPS=$steps
}

interrupt int INT 10ms
expect_rc int 130
[ "$STEPS" -ge 20 ] || fail "int: only $STEPS steps of 10 ms in 1.5 s"

interrupt term TERM 10ms
expect_rc term 143

# A 1 s step interrupted half-way: the first step counts, the cut one does not.
interrupt midstep INT 1s
expect_rc midstep 130
[ "$STEPS" = 1 ] || fail "midstep: $STEPS steps, expected 1"
finish
