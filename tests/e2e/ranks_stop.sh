#!/bin/bash
# A stop request while ranks wait for each other in the agreements around
# a cell's setup (ranks_stop.h): rank 0 gives up after a second, says one
# line, keeps the rows of the cells before, and every rank ends with the
# stop's status (143 for SIGTERM) within moments.  The peer it waits for
# sleeps deaf to signals for a minute (ranks_wl.c's slow_rank), as a plan
# check or a setup that does not stop would; rank 0 used to wait for it
# inside MPI for that whole minute.  The ranks are signalled by their pids
# (rank<N>.pid), as a batch system signals a job's tasks.
source "$(dirname "$0")/ranks_lib.sh"

now_ms() {
    local t=${EPOCHREALTIME//[!0-9]/}
    echo $((10#$t / 1000))
}

# start NAME: mpirun -np 2 dlgauge run NAME.ini in the background (PID),
# returning once both ranks wrote their pid files
start() {
    rm -f rank0.pid rank1.pid
    timeout -k 5 90 "${MPIRUN[@]}" -np 2 "$DLG" --plugin-dir "$PLUGDIR" run "$1.ini" >"$1.out" 2>"$1.err" &
    PID=$!
    for _ in $(seq 1500); do
        [ -s rank0.pid ] && [ -s rank1.pid ] && return
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.02
    done
    fail "$1: the ranks wrote no pid files: $(cat "$1.err")"
}

# A sanitized build's ranks take longer to end: LeakSanitizer scans each
# rank's memory at exit (MPI's included), 1.7 s idle here and 4 s on two
# loaded cores, where the ranks themselves end within 0.1 s of the signal
# and mpirun's abort of a job with a non-zero exit adds 1 s.  Its limits
# are three times as long, still far below the minute that a rank which
# missed the stop would take.
SLOW=1
ldd "$DLG" 2>/dev/null | grep -q 'libasan' && SLOW=3

# stop NAME LIMIT_MS DELAY RANKS...: after DELAY seconds (rank 0 is in
# the agreement by then, its signal handlers installed), SIGTERM to those
# ranks; RC and EXIT_MS, or LEFT=true (and mpirun ended by its pid) when
# it ran past LIMIT_MS
stop() {
    local name=$1 limit=$(($2 * SLOW)) t0 now
    sleep "$3"
    shift 3
    t0=$(now_ms)
    for r in "$@"; do
        local pid
        pid=$(cat "rank$r.pid")
        kill -TERM "$pid" || fail "$name: rank $r's pid file said '$pid': no signal sent"
    done
    LEFT=false
    while kill -0 "$PID" 2>/dev/null; do
        now=$(now_ms)
        if [ $((now - t0)) -ge "$limit" ]; then
            LEFT=true
            fail "$name: still running $limit ms after SIGTERM: $(cat "$name.err")"
            kill -TERM "$PID" 2>/dev/null
            wait "$PID"
            return
        fi
        sleep 0.02
    done
    wait "$PID"
    RC=$?
    EXIT_MS=$(($(now_ms) - t0))
    echo "$name: exit $RC ${EXIT_MS} ms after SIGTERM"
}

# said NAME WHERE: rank 0's one line naming the agreement, once
said() {
    local pat="^dlgauge: stopped by signal 15 while waiting for the other ranks in $2 "
    [ "$(grep -Ec "$pat" "$1.err")" = 1 ] || fail "$1: no single line '$pat': $(cat "$1.err")"
    [ "$RC" = 143 ] || fail "$1: exit $RC, expected 143 (SIGTERM's): $(cat "$1.err")"
}

# 1. Before the first cell: rank 1 checks its plan for a minute, rank 0
# waits in the ranks' check of their plans; SIGTERM to rank 0 alone.
{
    printf '[sink csv]\npath = %s/check.csv\n' "$WORK"
    job check "iterations = 2" "isolation = none" "slow_rank = 1" "slow_check_s = 60"
} >check.ini
start check
if [ -s rank1.pid ]; then
    stop check 6000 1.5 0
    $LEFT || said check "the ranks' check that they planned the same cells"
fi

# 2. Between cells: the first cell measured, rank 1's setup of the second
# takes a minute, rank 0 waits in the agreement after its own setup;
# SIGTERM to both.  The first cell's row is kept.
{
    printf '[sink csv]\npath = %s/setup.csv\n' "$WORK"
    job setup "iterations = 2" "isolation = none" "slow_rank = 1" "slow_setup_s = 0, 60"
} >setup.ini
rm -f setup.csv
start setup
# the first cell's setup wrote the pid files; its row comes before rank 1
# sleeps in the second's
for _ in $(seq 500); do [ -s setup.csv ] && break; sleep 0.02; done
if [ -s rank1.pid ]; then
    stop setup 6000 0.5 0 1
    if ! $LEFT; then
        said setup "the ranks' agreement that each set the cell up"
        rows_csv setup.csv '
assert len(rows) == 1, f"{len(rows)} rows, expected the first cell'"'"'s only"
assert rows[0]["status"] == "ok" and rows[0]["steps"] == "2", "the first cell measured whole"
' "status steps slow_setup_s"
    fi
fi

# 3. A setup that asks host->stopping() (as a net's plan does), on both
# ranks, for a minute; SIGTERM to both: under several ranks stopping()
# says so in setup too (no collective runs there), every rank's setup
# ends within moments, the ranks agree it was a stop, and rank 0 writes
# the cell partial with 0 steps, exit 143 (it used to run the setups to
# their end: a minute).
{
    printf '[sink csv]\npath = %s/heed.csv\n' "$WORK"
    job heed "iterations = 2" "isolation = none" "slow_rank = 0" "heed_setup_s = 60"
} >heed.ini
rm -f heed.csv
start heed
if [ -s rank1.pid ]; then
    stop heed 5000 0.5 0 1
    if ! $LEFT; then
        [ "$RC" = 143 ] || fail "heed: exit $RC, expected 143: $(cat heed.err)"
        rows_csv heed.csv '
assert len(rows) == 1, f"{len(rows)} rows"
r = rows[0]
assert r["status"] == "partial" and r["steps"] == "0", "partial, 0 steps"
assert r["error"] == "stopped by signal 15 after 0 timed steps", r["error"]
' "status steps error"
    fi
fi
finish
