#!/bin/bash
# A cell's process and the run around it:
#  - a workload that leaves a process behind (holding the result pipe open)
#    neither hangs the run nor outlives its cell;
#  - a stop request that reaches a cell before it installed its handlers
#    gives a partial row that --resume measures again, not a "crashed" one
#    recorded as done;
#  - a configuration file edited during a run stops the run before the next
#    cell (its process would plan the edited file), and --resume with the
#    file restored measures exactly the missing cells;
#  - a cell's process that crashes after measuring (in a repetition's
#    teardown, or in the next repetition's setup) keeps the repetitions it
#    finished in a crashed row, rather than a row with nothing;
#  - a cell's process stopped by a signal that dlgauge did not get (a kill
#    by hand, a low-memory daemon) is a failure said on stderr, and --resume
#    measures it again (it was a silent partial row and exit 0).
# TEST_PLUGIN_DIR is this folder of the build tree (lifecycle_wl.so,
# slow_cell_start.so).
source "$(dirname "$0")/lib.sh"

col() { "$PY" -c 'import csv,sys; [print(r[sys.argv[2]]) for r in csv.DictReader(open(sys.argv[1]))]' "$@"; }

# ---- a process left behind: the next cell runs, the process is killed
ini leftover.ini <<EOT
[sink csv]
path = $WORK/leftover.csv
[job forker]
plugin     = $TPLUG/lifecycle_wl.so
workload   = forker
pidfile    = $WORK/leftover.pid
iterations = 3
[job after]
workload   = sleep
sleep      = 1ms
iterations = 3
EOT
t0=$SECONDS
timeout 20 "$DLG" --plugin-dir "$PLUGDIR" -q run leftover.ini >leftover.out 2>leftover.err
RC=$?
expect_rc leftover 0
[ $((SECONDS - t0)) -lt 10 ] || fail "leftover: the run took $((SECONDS - t0)) s (waited for the left-behind process)"
got=$(col leftover.csv status | tr '\n' ' ')
[ "$got" = "ok ok " ] || fail "leftover: statuses '$got', expected 'ok ok '"
# alive: exists and is not a zombie (which init reaps in its own time)
alive() { grep -qv '^State:.*Z' <(grep '^State:' "/proc/$1/status" 2>/dev/null || echo 'State: Z'); }
if [ -s leftover.pid ]; then
    left=$(cat leftover.pid)
    for _ in 1 2 3 4 5; do alive "$left" && sleep 0.2; done
    alive "$left" && { fail "leftover: the cell's process $left outlived it"; kill -9 "$left"; }
else
    fail "leftover: the workload did not start its process"
fi

# ---- SIGINT while the cell's process is still starting (before main)
ini early.ini <<EOT
[global]
journal = $WORK/early.journal
[sink csv]
path = $WORK/early.csv
[job s]
workload   = sleep
sleep      = 10ms
iterations = 3
warmup     = 0
seed       = 1, 2
EOT
# LD_PRELOAD of a library without ASan into an ASan build needs this
ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" LD_PRELOAD="$TPLUG/slow_cell_start.so" \
    "$DLG" --plugin-dir "$PLUGDIR" -q run early.ini >early.out 2>early.err &
pid=$!
sleep 0.7
kill -INT "$pid"
wait "$pid"
RC=$?
expect_rc early 130
got=$(col early.csv status | tr '\n' ' ')
[ "$got" = "partial " ] || fail "early: statuses '$got', expected 'partial ' ($(col early.csv error))"
grep -q '^done' early.journal && fail "early: the stopped cell is in the journal: $(grep '^done' early.journal)"
run_cli early_resume -q run early.ini --resume
expect_rc early_resume 0
got=$(col early.csv seed | tr '\n' ' ')
[ "$got" = "1 1 2 " ] || fail "early: seeds after --resume '$got', expected '1 1 2 ' (partial, then both cells)"

# ---- the file edited mid-run
ini edited.ini <<EOT
[global]
journal = $WORK/edited.journal
[sink csv]
path = $WORK/edited.csv
[job s]
workload   = sleep
sleep      = 300ms
iterations = 1
warmup     = 0
seed       = 1, 2, 3, 4
EOT
cp edited.ini edited.orig
"$DLG" --plugin-dir "$PLUGDIR" -q run edited.ini >edited.out 2>edited.err &
pid=$!
sleep 0.45
sed -i 's/^sleep      = 300ms/sleep      = 5ms/; s/^seed       = 1, 2, 3, 4/seed       = 7, 8/' edited.ini
wait "$pid"
RC=$?
expect_rc edited 1
grep -q "^dlgauge: edited.ini changed since this run started" edited.err || fail "edited: no note on stderr: $(cat edited.err)"
for s in $(col edited.csv seed); do
    case $s in 1 | 2 | 3 | 4) ;; *) fail "edited: a cell ran the edited file (seed $s)" ;; esac
done
for p in $(col edited.csv latency_p50_us); do
    "$PY" -c "import sys; sys.exit(float('$p') < 250000)" || fail "edited: a cell slept $p us, not 300 ms"
done
cp edited.orig edited.ini
run_cli edited_resume -q run edited.ini --resume
expect_rc edited_resume 0
got=$(col edited.csv seed | sort -n | tr '\n' ' ')
[ "$got" = "1 2 3 4 " ] || fail "edited: seeds after --resume '$got', expected each of 1..4 once"
# ---- what a cell prints goes to stderr (the run's stdout is its summary
# lines), and the cell sees the thread count of its vCPUs
ini chatty.ini <<EOT
[sink csv]
path = $WORK/chatty.csv
[job chatty]
plugin     = $TPLUG/lifecycle_wl.so
workload   = chatty
cpus       = 1
iterations = 2
EOT
"$DLG" --plugin-dir "$PLUGDIR" run chatty.ini >chatty.out 2>chatty.err
RC=$?
expect_rc chatty 0
grep -q CELL-STDOUT chatty.out && fail "chatty: a cell's output reached the run's stdout: $(cat chatty.out)"
grep -q '^\[1/1\] chatty .* ok ' chatty.out || fail "chatty: no summary line on stdout: $(cat chatty.out)"
grep -q 'CELL-STDOUT OMP_NUM_THREADS=1$' chatty.err || fail "chatty: stderr lacks the cell's line with 1 thread: $(cat chatty.err)"

# ---- a crash after measuring: the finished repetitions stay in the row
ini crashy.ini <<EOT
[sink csv]
path = $WORK/crashy.csv
[job teardown]
plugin     = $TPLUG/lifecycle_wl.so
workload   = crashy
crash      = teardown
warmup     = 0
iterations = 4
repeat     = 2
[job setup1]
plugin     = $TPLUG/lifecycle_wl.so
workload   = crashy
crash      = setup1
warmup     = 0
iterations = 3
repeat     = 3
EOT
run_cli crashy -q run crashy.ini
expect_rc crashy 1
got=$(col crashy.csv status | tr '\n' ' ')
[ "$got" = "crashed crashed " ] || fail "crashy: statuses '$got', expected 'crashed crashed '"
got=$(paste -d/ <(col crashy.csv steps) <(col crashy.csv repeats) | tr '\n' ' ')
[ "$got" = "4/1 3/1 " ] || fail "crashy: steps/repeats '$got', expected '4/1 3/1 ' (the finished repetition lost)"
"$PY" -c "import sys; sys.exit(float(sys.argv[1]) < 100)" "$(col crashy.csv throughput | head -1)" ||
    fail "crashy: throughput '$(col crashy.csv throughput | head -1)', expected ~900 steps/s"
[ "$(grep -c "died of signal 11 (Segmentation fault) in workload [a-z_]* (.*\.so); the [43] timed steps before it are kept" crashy.err)" = 2 ] ||
    fail "crashy: stderr lacks the kept steps: $(cat crashy.err)"

# ---- SIGTERM to the cell's process alone
ini alone.ini <<EOT
[sink csv]
path = $WORK/alone.csv
[job a]
workload   = sleep
sleep      = 20ms
iterations = 50
warmup     = 0
[job b]
workload   = sleep
sleep      = 1ms
iterations = 3
EOT
"$DLG" --plugin-dir "$PLUGDIR" -q run alone.ini >alone.out 2>alone.err &
al_pid=$!
for _ in $(seq 100); do cell=$(pgrep -P "$al_pid") && break; sleep 0.05; done
sleep 0.3
kill -TERM "$cell"
wait "$al_pid"
RC=$?
expect_rc alone 1
got=$(col alone.csv status | tr '\n' ' ')
[ "$got" = "partial ok " ] || fail "alone: statuses '$got', expected 'partial ok '"
grep -q "^dlgauge: alone.ini:3: \[job a\] stopped by signal 15 after [0-9]* timed steps: a signal sent to the cell's process alone" \
    alone.err || fail "alone: no line for the stopped cell: $(cat alone.err)"
run_cli alone_resume -q run alone.ini --resume
expect_rc alone_resume 0
got=$(col alone.csv status | tr '\n' ' ')
[ "$got" = "partial ok ok " ] || fail "alone: statuses after --resume '$got', expected 'partial ok ok '"

finish
