#!/bin/bash
# (c) SIGINT / SIGTERM / SIGHUP stop a long run within moments: exit 130 /
# 143 / 129, and the cell that was running is written with status partial;
# a closed stdout does not stop it.
# (d) mkdata stopped by Ctrl-C (SIGINT to its process group) or by SIGTERM
# to it alone: exit 130 / 143, one line, and no .part output left behind
# (it used to stay, however large); a file of the user's found in the
# .part tree is kept, the tree with it, and the line says so (it said
# "removed" whatever was left).
source "$(dirname "$0")/lib.sh"

# interrupt NAME SIGNAL SLEEP [AFTER]: runs a 60 s cell of SLEEP steps,
# signals it AFTER seconds (1.5)
interrupt() {
    local name=$1 sig=$2 nap=$3 after=${4:-1.5}
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
    sleep "$after"
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

case_int() {
    interrupt int INT 10ms
    expect_rc int 130
    [ "$STEPS" -ge 20 ] || fail "int: only $STEPS steps of 10 ms in 1.5 s"
    # the workload's own fields are kept for a stopped cell with no complete
    # repetition (they were empty: a stopped preprocess lost its images_written)
    [ "$("$PY" "$E2E/e2e_check.py" get int.csv 0 sleep_ns)" = 10000000 ] ||
        fail "int: the workload's fields of the stopped repetition are missing: $(head -c 600 int.csv)"

    grep -q '^dlgauge: interrupted: results so far were written (the last marked partial)' int.err ||
        fail "int: the last line does not say the row is partial: $(cat int.err)"
}

# stopped before the first cell (an unreachable InfluxDB retried at open):
# the last line says nothing was measured, not that results were written
case_early() {
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    ini early.ini <<EOT
[sink csv]
path = $WORK/early.csv
[sink db]
type    = influx
url     = http://127.0.0.1:$port/write?db=dlg
retries = 3
backoff = 3s
[job j]
workload   = sleep
sleep      = 10ms
iterations = 5
EOT
    "$DLG" --plugin-dir "$PLUGDIR" run early.ini >early.out 2>early.err &
    pid=$!
    sleep 1
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    expect_rc early 130
    grep -q '^dlgauge: interrupted before a cell started: nothing was measured' early.err ||
        fail "early: the last line does not say nothing was measured: $(cat early.err)"
    if grep -q 'results so far were written' early.err; then fail "early: says results were written: $(cat early.err)"; fi
    # and so did the note said at the signal: no cell was running to end
    grep -q '^dlgauge: stopping before the first cell: nothing was measured' early.err ||
        fail "early: the stopping note does not say no cell ran: $(cat early.err)"
    if grep -q 'the running cell ends' early.err; then fail "early: speaks of a running cell: $(cat early.err)"; fi
}

case_term() {
    interrupt term TERM 10ms
    expect_rc term 143
}

# a hangup (terminal or ssh session closed) stops the run as SIGTERM does:
# the cell is written partial (the run used to die with nothing for it)
case_hup() {
    interrupt hup HUP 10ms
    expect_rc hup 129
}

# ... unless started under nohup (SIGHUP ignored): then it goes on
case_nohup() {
    ini nohup.ini <<EOT
[sink csv]
path = $WORK/nohup.csv
[job long]
workload = sleep
sleep    = 10ms
duration = 60s
warmup   = 0
EOT
    (trap '' HUP && exec "$DLG" --plugin-dir "$PLUGDIR" run nohup.ini >nohup.out 2>nohup.err) &
    nh_pid=$!
    sleep 1
    kill -HUP "$nh_pid"
    sleep 0.5
    kill -0 "$nh_pid" 2>/dev/null || fail "nohup: a hangup stopped a run started with SIGHUP ignored"
    kill -TERM "$nh_pid"
    wait "$nh_pid"
    RC=$?
    expect_rc nohup 143
}

# A 2 s step interrupted half-way (at 3 s: the run may take up to 1 s to
# set up): the first step counts, the cut one does not.
case_midstep() {
    interrupt midstep INT 2s 3
    expect_rc midstep 130
    [ "$STEPS" = 1 ] || fail "midstep: $STEPS steps, expected 1"
}

# Stopped in the second repetition's warm-up: that repetition timed nothing,
# so the row is the first one's alone (5 steps of 200 ms: ~5 steps/s), not a
# mean with a 0 that halves it, and the error counts the steps kept.
case_warmstop() {
    ini warmstop.ini <<EOT
[sink csv]
path = $WORK/warmstop.csv
[job reps]
workload   = sleep
sleep      = 200ms
warmup     = 10
iterations = 5
repeat     = 2
EOT
    "$DLG" --plugin-dir "$PLUGDIR" run warmstop.ini >warmstop.out 2>warmstop.err &
    ws_pid=$!
    sleep 4 # repetition 1: 2 s warm-up + 1 s timed; repetition 2 warms up until ~5 s
    kill -INT "$ws_pid"
    wait "$ws_pid"
    RC=$?
    expect_rc warmstop 130
    { read -r ws_status; read -r ws_reps; read -r ws_tput; read -r ws_err; } < <("$PY" "$E2E/e2e_check.py" get warmstop.csv 0 status repeats throughput error)
    [ "$ws_status" = partial ] || fail "warmstop: status '$ws_status' ($ws_err)"
    [ "$ws_reps" = 1 ] || fail "warmstop: repeats $ws_reps, expected 1 (the stopped warm-up measured nothing)"
    "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 4 else 1)" "$ws_tput" ||
        fail "warmstop: throughput $ws_tput steps/s, expected ~5"
    echo "$ws_err" | grep -q "after 5 timed steps" || fail "warmstop: error '$ws_err'"
}

# The reader of the run's stdout gone (| head, a pager quit): the run goes
# on to its end (SIGPIPE used to end it at its first summary line).
case_pipe() {
    ini pipe.ini <<EOT
[sink csv]
path = $WORK/pipe.csv
[job a]
workload   = sleep
sleep      = 1ms
iterations = 3
seed       = 1, 2, 3
EOT
    { "$DLG" --plugin-dir "$PLUGDIR" run pipe.ini 2>pipe.err; echo $? >pipe.rc; } | head -c 0
    [ "$(cat pipe.rc)" = 0 ] || fail "pipe: exit status $(cat pipe.rc), expected 0: $(cat pipe.err)"
    [ "$("$PY" "$E2E/e2e_check.py" count pipe.csv)" = 3 ] || fail "pipe: $("$PY" "$E2E/e2e_check.py" count pipe.csv) rows, expected 3"
}

# stop_mkdata NAME SIGNAL TARGET PART ARGS...: mkdata ARGS signalled (TARGET
# "group": its process group, as Ctrl-C does; else the process) once PART exists
stop_mkdata() {
    local name=$1 sig=$2 target=$3 part=$4
    shift 4
    set -m # a process group of its own, and SIGINT not ignored as in a script's background
    "$DLG" mkdata "$@" >"$name.out" 2>"$name.err" &
    local pid=$!
    set +m
    for _ in $(seq 200); do [ -e "$part" ] && break; sleep 0.02; done
    [ -e "$part" ] || fail "$name: $part never appeared"
    if [ "$target" = group ]; then kill "-$sig" -- "-$pid"; else kill "-$sig" "$pid"; fi
    wait "$pid"
    RC=$?
    [ ! -e "$part" ] || fail "$name: $part left behind"
    grep -Eq "^dlgauge mkdata: stopped by signal [0-9]+ \(.*\): its unfinished \.part output was removed$" "$name.err" ||
        fail "$name: no line saying so: $(cat "$name.err")"
    [ "$(wc -l <"$name.err")" = 1 ] || fail "$name: more than one line: $(cat "$name.err")"
}

case_mk_int() {
    stop_mkdata mk_int INT group corpus.txt.train.txt.part text --out corpus.txt --words 500000000 --splits
    expect_rc mk_int 130
    ls corpus.txt* >/dev/null 2>&1 && fail "mk_int: output left: $(ls corpus.txt*)"
}
case_mk_term() {
    stop_mkdata mk_term TERM process imgs/train.part images --out imgs --classes 4 --images 200000 --threads 2
    expect_rc mk_term 143
    [ -z "$(ls -A imgs)" ] || fail "mk_term: left in imgs: $(ls -A imgs)"
}
case_mk_foreign() {
    set -m
    "$DLG" mkdata images --out imgs2 --classes 4 --images 200000 --threads 2 >mk_foreign.out 2>mk_foreign.err &
    local pid=$!
    set +m
    for _ in $(seq 200); do [ -s imgs2/train.part/.dlgauge-mkdata ] && break; sleep 0.02; done
    echo mine >imgs2/train.part/notes.txt
    kill -TERM "$pid"
    wait "$pid"
    RC=$?
    expect_rc mk_foreign 143
    [ "$(cat imgs2/train.part/notes.txt 2>/dev/null)" = mine ] || fail "mk_foreign: the user's file was not kept"
    grep -Eq "^dlgauge mkdata: stopped by signal 15 \(.*\): its unfinished \.part output could not all be removed: .*notes\.txt, which mkdata did not write" mk_foreign.err ||
        fail "mk_foreign: no line saying what stayed: $(cat mk_foreign.err)"
}

# The cases that wait on signals and sleeps of their own, all at once (each
# in its own files: 13 s of this serial test were one after another), then
# the two mkdata runs, which burn both CPUs until signalled: beside the
# others they once delayed an ASan run's setup past the 1.5 s that
# midstep's signal then came at
side_by_side case_int case_early case_term case_hup case_nohup case_midstep case_warmstop case_pipe
side_by_side case_mk_int case_mk_term case_mk_foreign
finish
