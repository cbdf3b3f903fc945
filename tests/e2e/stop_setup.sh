#!/bin/bash
# A stop request (Ctrl-C) while a cell sets up: dlgauge says at once, in
# one line, what it does, and a setup that asks host->stopping() (a net's
# plan does, between layers and parameter chunks) ends within moments: the
# cell is written partial with 0 steps, exit 130.  dlgauge used to say
# nothing until VGG16's setup (10-20 s on two cores) had run to its end,
# and a setup that stopped was written as a failed cell.  A second signal
# ends dlgauge at once, with the note said once.
# TEST_PLUGIN_DIR is this folder of the build tree (slow_setup_wl.so).
source "$(dirname "$0")/lib.sh"

NOTE='^dlgauge: stopping: the running cell ends after its current step \(or its setup\) and is written as partial; a second signal \(Ctrl-C again\) stops at once and loses that cell.s row$'

now_ms() {
    local t=${EPOCHREALTIME//[!0-9]/}
    echo $((10#$t / 1000))
}

# start NAME: `dlgauge run NAME.ini` in the background (PID), returning
# once it said its run line (after it installed its signal handlers)
start() {
    "$DLG" --plugin-dir "$PLUGDIR" run "$1.ini" >"$1.out" 2>"$1.err" &
    PID=$!
    for _ in $(seq 1000); do
        grep -q '^dlgauge: run .*: 1 cell' "$1.err" && return
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.02
    done
    fail "$1: no run line on stderr: $(cat "$1.err")"
}

# interrupt NAME LIMIT_MS [SIG]: SIGINT (or SIG) to PID, watched for LIMIT_MS at most.
# NOTE_MS: ms until the stopping note was on stderr (-1: not while it ran);
# LEFT: whether PID still ran then; else RC and EXIT_MS, its exit's ms
interrupt() {
    local t0 now
    t0=$(now_ms)
    kill -"${3:-INT}" "$PID"
    NOTE_MS=-1
    LEFT=false
    while :; do
        now=$(now_ms)
        [ "$NOTE_MS" -lt 0 ] && grep -Eq "$NOTE" "$1.err" && NOTE_MS=$((now - t0))
        kill -0 "$PID" 2>/dev/null || break
        [ $((now - t0)) -ge "$2" ] && { LEFT=true; return; }
        sleep 0.02
    done
    wait "$PID"
    RC=$?
    EXIT_MS=$((now - t0))
}

# said_once NAME: the note came within a second of the first signal, once
said_once() {
    [ "$NOTE_MS" -ge 0 ] && [ "$NOTE_MS" -le 1000 ] ||
        fail "$1: the stopping note took ${NOTE_MS} ms (-1: not said while it ran): $(cat "$1.err")"
    [ "$(grep -Ec "$NOTE" "$1.err")" = 1 ] || fail "$1: the note said $(grep -c stopping "$1.err") times: $(cat "$1.err")"
}

# gone NAME: after LEFT, PID ended for good (the test goes on without it)
gone() {
    fail "$1: still running ${2} ms after the signal: $(cat "$1.err")"
    kill -KILL "$PID" 2>/dev/null
    wait "$PID"
}

# expect_stopped NAME [RC SIGNUM]: exit 130 (RC), and the one row partial
# with 0 steps, stopped by signal 2 (SIGNUM)
expect_stopped() {
    expect_rc "$1" "${2:-130}"
    local rows status steps error
    rows=$("$PY" "$E2E/e2e_check.py" count "$1.csv")
    [ "$rows" = 1 ] || { fail "$1: $rows CSV rows, expected 1"; return; }
    { read -r status; read -r steps; read -r error; } < <("$PY" "$E2E/e2e_check.py" get "$1.csv" 0 status steps error)
    [ "$status" = partial ] || fail "$1: status '$status', expected partial ($error)"
    [ "$steps" = 0 ] || fail "$1: $steps steps, expected 0"
    [ "$error" = "stopped by signal ${3:-2} after 0 timed steps" ] || fail "$1: error field '$error'"
}

# slow NAME ISOLATION HEED: a cell whose setup takes a minute
slow() {
    ini "$1.ini" <<EOT
[sink csv]
path = $WORK/$1.csv
[job slow]
plugin    = $TPLUG/slow_setup_wl.so
workload  = slow_setup
setup     = 60s
heed      = $3
isolation = $2
EOT
}

# A setup that asks stopping(), in a cell's process and in dlgauge's own:
# ended in moments (it used to be written as a failed setup).
for iso in process none; do
    slow "heed_$iso" "$iso" true
    start "heed_$iso"
    sleep 0.5
    interrupt "heed_$iso" 1500
    if $LEFT; then gone "heed_$iso" 1500; continue; fi
    said_once "heed_$iso"
    expect_stopped "heed_$iso"
done

# A setup that cannot be cut short: the note comes at once all the same,
# and a second Ctrl-C ends dlgauge at once (no row for that cell).
slow deaf process false
start deaf
sleep 0.5
interrupt deaf 1500
if $LEFT; then
    said_once deaf
    interrupt deaf 1000
    if $LEFT; then
        gone deaf 1000
    else
        expect_rc deaf 130
        [ "$(grep -Ec "$NOTE" deaf.err)" = 1 ] || fail "deaf: the note said $(grep -Ec "$NOTE" deaf.err) times by the second signal"
        [ ! -s deaf.csv ] || [ "$("$PY" "$E2E/e2e_check.py" count deaf.csv)" = 0 ] || fail "deaf: a row was written"
    fi
else
    fail "deaf: ended (exit $RC) before a second signal: $(cat deaf.err)"
fi

# The engine's own setup: VGG16 planned for inference (13 convolutions that
# time their algorithms, 138 million parameters drawn) takes seconds; a
# stop early in it ends the cell within moments (the plan asks between
# layers and parameter chunks).
if [ -e "$PLUGDIR/caffe.so" ]; then
    ini vgg.ini <<EOT
[sink csv]
path = $WORK/vgg.csv
[job vgg]
workload = vgg16
mode     = infer
batch    = 1
device   = cpu
EOT
    start vgg
    sleep 0.5
    interrupt vgg 3000
    if $LEFT; then
        gone vgg 3000
    else
        said_once vgg
        expect_stopped vgg
    fi
fi
# lstm-ptb's corpus load (reading, tokenising and numbering a large text)
# asks stopping() every MiB: SIGTERM during it ends the cell within
# moments.  74 MB of 400,009 distinct words take seconds to load (a cache
# miss a word); it used to run to its end before the plan noticed.
if [ -e "$PLUGDIR/mxnet.so" ]; then
    "$PY" - <<'EOP' >corpus.txt
import sys
words = ['w%d' % ((i * 7919) % 400009) for i in range(400009)]
lines = '\n'.join(' '.join(words[k:k + 20]) for k in range(0, len(words), 20)) + '\n'
for _ in range(24):
    sys.stdout.write(lines)
EOP
    ini lm.ini <<EOT
[sink csv]
path = $WORK/lm.csv
[job lm]
workload  = lstm-ptb
data      = text:$WORK/corpus.txt
isolation = none
EOT
    start lm
    sleep 0.3
    interrupt lm 1500 TERM
    if $LEFT; then
        gone lm 1500
    else
        expect_stopped lm 143 15
    fi
    rm -f corpus.txt
fi
finish
