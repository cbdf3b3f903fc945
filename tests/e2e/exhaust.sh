#!/bin/bash
# Running out, without root:
#  - the exit status of a run continued with --resume covers the cells the
#    interrupted part measured: a crashed cell there still makes it 1;
#  - no free file descriptor for a cell's pipe (ulimit -n): the row and the
#    one error line name the job's file and line, and the limit;
#  - a file size limit (ulimit -f): mkdata and the sinks say "File too
#    large" and exit 1 (SIGXFSZ used to kill dlgauge with no word, a
#    .part left behind and the CSV's last row torn);
#  - no memory for a cell's result point (a preloaded helper, argument 5):
#    the run says so and exits 1, and the journal does not call the cell
#    done, so --resume measures it (it used to be "ok", no row, done);
#  - room for the cell's process but not for its threads (pids.max = 2, only
#    where a pids cgroup can be made, i.e. as root): libgomp ends the cell
#    with exit code 1, and the row and its one line say that the threads
#    could not start, with the limits (it used to be just "exited with
#    code 1 without a result").
# (tests/sweeps/exhaust.sh: a container's OOM kill, pids.max and a full disk, as root.)
source "$(dirname "$0")/lib.sh"
NO_RESULT_MEMORY=$5

col() { "$PY" -c 'import csv,sys; [print(r[sys.argv[2]]) for r in csv.DictReader(open(sys.argv[1]))]' "$@"; }

# ---- a crashed cell, then Ctrl-C, then --resume: still exit 1
ini resume.ini <<EOT
[global]
journal = $WORK/resume.journal
[sink csv]
path = $WORK/resume.csv
[job crash]
plugin   = $TPLUG/testwl.so
workload = segv
fail_at  = 1
[job long]
workload = sleep
sleep    = 20ms
duration = 600ms
warmup   = 0
EOT
"$DLG" --plugin-dir "$PLUGDIR" -q run resume.ini >resume.out 2>resume.err &
pid=$!
for _ in $(seq 100); do grep -q '^done crash' resume.journal 2>/dev/null && break; sleep 0.05; done
sleep 0.3
kill -INT $pid
wait $pid
RC=$?
expect_rc resume 130
run_cli resumed -q run resume.ini --resume
expect_rc resumed 1
grep -q "^dlgauge: 1 cell failed before the run was interrupted" resumed.err ||
    fail "resumed: no line for the crashed cell of the interrupted part: $(cat resumed.err)"
# (a stop between the two cells leaves no partial row)
case "$(col resume.csv status | tr '\n' ' ')" in
"crashed partial ok " | "crashed ok ") ;;
*) fail "resume: statuses $(col resume.csv status | tr '\n' ' '), expected 'crashed partial ok '" ;;
esac

# ---- ulimit -n: from too few descriptors for the sink up to enough for
# all; where only the cell's pipe is missing, its line names job and limit
ini fd.ini <<EOT
[global]
journal = $WORK/fd.journal
[sink csv]
path = $WORK/fd.csv
[job s]
workload   = sleep
sleep      = 1ms
iterations = 1
warmup     = 0
EOT
pipe_seen=""
for n in $(seq 4 40); do
    rm -f fd.csv
    (exec >fd.out 2>fd.err && ulimit -n "$n" && exec "$DLG" --plugin-dir "$PLUGDIR" -q run fd.ini)
    RC=$?
    [ "$RC" -lt 128 ] || fail "fd: ulimit -n $n: killed by signal $((RC - 128)): $(cat fd.err)"
    if grep -q 'cannot create a pipe' fd.err; then
        pipe_seen=$n
        grep -Eq "^dlgauge: fd\.ini:5: \[job s\] cannot create a pipe for the cell: Too many open files \(the open-file limit, ulimit -n, is $n\)$" fd.err ||
            fail "fd: ulimit -n $n: the pipe's error line does not name the job and the limit: $(cat fd.err)"
        [ "$(col fd.csv error)" = "$(sed 's/^dlgauge: //' fd.err)" ] || fail "fd: the row's error is '$(col fd.csv error)'"
        expect_rc fd 1
    fi
    [ "$RC" = 0 ] && break
done
[ "$RC" = 0 ] || fail "fd: even ulimit -n 40 is not enough for one cell: $(cat fd.err)"
[ -n "$pipe_seen" ] || fail "fd: no descriptor limit left the cell's pipe alone to fail"

# ---- ulimit -f: writes fail and are named, nothing is killed
(exec 2>fsize_text.err && ulimit -f 64 && exec "$DLG" mkdata text --out "$WORK/big.txt" --words 100000 >/dev/null)
RC=$?
expect_rc fsize_text 1
[ "$(cat fsize_text.err)" = "dlgauge mkdata: $WORK/big.txt: write failed: File too large" ] ||
    fail "fsize_text: stderr is not the one line for the limit: $(cat fsize_text.err)"
[ ! -e big.txt.part ] || fail "fsize_text: big.txt.part left behind"
ini fsize.ini <<EOT
[global]
journal = $WORK/fsize.journal
[sink csv]
path = $WORK/fsize.csv
[job s]
workload   = sleep
sleep      = 1ms
iterations = 1
warmup     = 0
seed       = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
EOT
(exec >/dev/null 2>fsize_run.err && ulimit -f 4 && exec "$DLG" --plugin-dir "$PLUGDIR" -q run fsize.ini)
RC=$?
expect_rc fsize_run 1
[ "$(grep -Ec '^dlgauge: fsize\.ini:3: \[sink csv\]: .*fsize\.csv: cannot write the row: File too large$' fsize_run.err)" = 1 ] ||
    fail "fsize_run: the CSV's failure is not said once: $(cat fsize_run.err)"
rows=$("$PY" "$E2E/e2e_check.py" count fsize.csv) || fail "fsize: the CSV's rows are not whole: $(tail -c 200 fsize.csv)"
# a cell is done once its row is in every sink (sink_fail.sh): the others
# are not, and the journal (over the limit too) keeps none of their rows
[ "$(grep -c '^done s' fsize.journal)" = "$rows" ] || fail "fsize: $rows rows in the CSV, journal: $(cut -c1-60 fsize.journal)"
grep -q "incomplete: $((10 - rows)) result rows did not reach it; .* measures the others again\$" fsize_run.err ||
    fail "fsize_run: no line saying what the CSV lacks: $(cat fsize_run.err)"

# ---- no memory for the result points: lost, said, not done
ini lost.ini <<EOT
[global]
journal   = $WORK/lost.journal
isolation = none
[sink csv]
path = $WORK/lost.csv
[job s]
workload   = sleep
sleep      = 1ms
iterations = 1
warmup     = 0
seed       = 1, 2
EOT
LD_PRELOAD=$NO_RESULT_MEMORY ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" \
    "$DLG" --plugin-dir "$PLUGDIR" -q run lost.ini >lost.out 2>lost.err
RC=$?
expect_rc lost 1
[ "$(grep -c '^dlgauge: lost\.ini:6: \[job s\] cell [12]/2: out of memory for its result, which is lost; --resume measures it again$' lost.err)" = 2 ] ||
    fail "lost: expected a line for each lost result: $(cat lost.err)"
! grep -q '^done' lost.journal || fail "lost: the journal calls lost cells done: $(cat lost.journal)"
run_cli lost_resume -q run lost.ini --resume
expect_rc lost_resume 0
[ "$(col lost.csv seed | tr '\n' ' ')" = "1 2 " ] || fail "lost: after --resume the seeds are '$(col lost.csv seed | tr '\n' ' ')'"

# ---- pids.max: the cell's process starts, its second thread cannot
own=$(awk -F: '$2 ~ /(^|,)pids(,|$)/ {print $3}' /proc/self/cgroup)
box=/sys/fs/cgroup/pids${own%/}/dlg-e2e-threads-$$
if [ -n "$own" ] && [ "$(nproc)" -ge 2 ] && [ -e "$PLUGDIR/kernels.so" ] && mkdir "$box" 2>/dev/null; then
    ini threads.ini <<EOT
[global]
journal = $WORK/threads.journal
[sink csv]
path = $WORK/threads.csv
[job g]
workload   = gemm
cpus       = 2
m          = 64
n          = 64
k          = 64
iterations = 1
warmup     = 0
EOT
    echo 2 >"$box/pids.max"
    bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$box" \
        "$DLG" --plugin-dir "$PLUGDIR" -q run threads.ini >threads.out 2>threads.err
    RC=$?
    rmdir "$box"
    expect_rc threads 1
    line=$(grep '^dlgauge: ' threads.err)
    [[ "$line" =~ ^dlgauge:\ threads\.ini:5:\ \[job\ g\]\ could\ not\ start\ 2\ threads:\ Resource\ temporarily\ unavailable\;\ ulimit\ -u\ is\ [0-9a-z]+\ /\ pids\.max\ is\ 2$ ]] ||
        fail "threads: no line naming the threads and the limits: $(cat threads.err)"
    [ "$(col threads.csv status)" = error ] || fail "threads: status '$(col threads.csv status)', expected error"
    [ "dlgauge: $(col threads.csv error)" = "$line" ] || fail "threads: the row's error is '$(col threads.csv error)'"
else
    echo "skipped: pids.max for a cell's threads (needs a writable pids cgroup, 2 CPUs and kernels.so)"
fi

finish
