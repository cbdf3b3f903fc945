#!/bin/bash
# (e) A failing cell loses nothing: the cells before and after it are
# measured and written, the failure is one row with status error and one
# line on stderr naming file:line, and the run exits 1.
source "$(dirname "$0")/lib.sh"

# impossible reads a character device: no folder, which the plan refuses
# before any cell, but no file a storage backend reads: its cell fails
ini noloss.ini <<EOT
[sink csv]
path = $WORK/noloss.csv
[sink json]
path = $WORK/noloss.jsonl

[job first]
workload   = sleep
sleep      = 1ms
iterations = 3

[job impossible]
workload   = io
data       = raw:/dev/null
warmup     = 0
iterations = 2

[job setup_fails]
plugin   = $TPLUG/testwl.so
workload = fail_setup

[job step_fails]
plugin     = $TPLUG/testwl.so
workload   = fail_step
fail_at    = 5
warmup     = 2
iterations = 10

[job silent]
plugin   = $TPLUG/testwl.so
workload = silent

[job last]
plugin     = $TPLUG/testwl.so
workload   = count
per_step   = 7
iterations = 4
repeat     = 3
seed       = 100
EOT

run_cli noloss run noloss.ini
expect_rc noloss 1
get() { "$PY" "$E2E/e2e_check.py" get noloss.csv "$@"; }
rows=$("$PY" "$E2E/e2e_check.py" count noloss.csv)
[ "$rows" = 6 ] || fail "$rows CSV rows, expected 6"
[ "$(grep -c dlgauge_result noloss.jsonl)" = 6 ] || fail "JSON has $(grep -c dlgauge_result noloss.jsonl) results, expected 6"

# row, job, status, pattern the error field must match ('' = empty)
expect_row() {
    local job status err
    { read -r job; read -r status; read -r err; } < <(get "$1" job status error)
    [ "$job" = "$2" ] || fail "row $1: job '$job', expected $2"
    [ "$status" = "$3" ] || fail "row $1 ($2): status '$status', expected $3 ($err)"
    if [ -z "$4" ]; then
        [ -z "$err" ] || fail "row $1 ($2): unexpected error '$err'"
    else
        echo "$err" | grep -Eq -- "$4" || fail "row $1 ($2): error '$err' lacks /$4/"
    fi
}
expect_row 0 first ok ''
expect_row 1 impossible error '^noloss\.ini:11: \[job impossible\] \[storage posix\] posix: /dev/null: is a character device'
expect_row 2 setup_fails error '^noloss\.ini:17: \[job setup_fails\] fail_setup: fail_setup: refusing to start'
expect_row 3 step_fails error 'noloss\.ini:21: \[job step_fails\] fail_step: fail_step: step 5 failed on purpose'
expect_row 4 silent error '^noloss\.ini:28: \[job silent\] silent: warm-up step failed \(DLG_EIO\) without saying why'
expect_row 5 last ok ''
steps=$(get 0 steps)
[ "$steps" = 3 ] || fail "first: steps $steps, expected 3"
# fail_step fails at step 5 (0-based, 2 warm-up steps first): 3 timed steps were measured
steps=$(get 3 steps)
[ "$steps" = 3 ] || fail "step_fails: steps $steps, expected the 3 measured before the failure"
# count: 3 repetitions x 4 steps x 7 items; seeds 100, 101, 102 (mean 101)
{ read -r items; read -r repeats; read -r seed; read -r flavour; } < <(get 5 items repeats seed_seen flavour)
[ "$items" = 84 ] || fail "last: items $items, expected 84"
[ "$repeats" = 3 ] || fail "last: repeats $repeats, expected 3"
[ "$seed" = 101 ] || fail "last: seed_seen $seed, expected 101"
[ "$flavour" = 'a "quoted", comma string' ] || fail "last: flavour '$flavour'"

# a failed cell has no rate (a 0 would be averaged and plotted): an empty
# CSV cell, no JSON key, and a run line with its status instead (the error is on stderr)
for row in 2 3; do
    thr=$(get $row throughput)
    [ -z "$thr" ] || fail "row $row (failed, no repetition): throughput '$thr', expected none"
done
"$PY" - noloss.jsonl <<'EOPY' || fail "JSON: a failed cell has a rate"
import json, sys
rows = [p for p in map(json.loads, open(sys.argv[1])) if p.get("measurement") == "dlgauge_result"]
def has(job, key):
    return any(key in r["fields"] for r in rows if r["tags"]["job"] == job)
sys.exit(has("setup_fails", "throughput") or has("step_fails", "throughput_ci95") or not has("last", "throughput"))
EOPY
grep -Eq '^\[4/6\] step_fails +error \(3 steps, no repetition completed\)$' noloss.out ||
    fail "step_fails: run line: $(grep step_fails noloss.out)"
grep -Eq '^\[3/6\] setup_fails +error$' noloss.out || fail "setup_fails: run line: $(grep setup_fails noloss.out)"
grep -E '^\[[0-9]/6\] (impossible|setup_fails|step_fails|silent) .*/s' noloss.out && fail "a failed cell's run line has a rate"
grep -Eq '^\[6/6\] last +ok [0-9.]+ .*/s ±[0-9.]+%  p50 ' noloss.out || fail "last: run line: $(grep last noloss.out)"
# the report and compare read the failed rows without a rate
run_cli noloss_report report noloss.csv noloss.jsonl
expect_rc noloss_report 0
run_cli noloss_compare compare noloss.csv -- noloss.jsonl
[ "$RC" -le 1 ] || fail "compare: exit $RC: $(cat noloss_compare.err)"

# one stderr line per failed cell, each naming file:line
for pat in 'noloss\.ini:11: \[job impossible\]' 'noloss\.ini:17: \[job setup_fails\]' \
           'noloss\.ini:21: \[job step_fails\]' 'noloss\.ini:28: \[job silent\]'; do
    [ "$(grep -Ec "^dlgauge: $pat" noloss.err)" = 1 ] || fail "stderr has not exactly one /$pat/ line: $(cat noloss.err)"
done

# An error raised by a storage backend names the job whose cell hit it, in
# its own process and in dlgauge's (it used to start "[storage posix]").
# A socket is there for the plan's check but is refused at open.
# (bound by a relative name: a socket path over 107 bytes cannot be bound)
"$PY" -c 'import socket; socket.socket(socket.AF_UNIX).bind("nofile.bin")'
ini storerr.ini <<EOT
[sink csv]
path = $WORK/storerr.csv
[job before]
workload   = sleep
sleep      = 1ms
iterations = 2
[job rd]
workload   = io
data       = raw:$WORK/nofile.bin
iterations = 2
[job rd_inproc]
workload   = io
data       = raw:$WORK/nofile.bin
iterations = 2
isolation  = none
EOT
run_cli storerr run storerr.ini
expect_rc storerr 1
want='\[storage posix\] posix: .*nofile\.bin: is a socket; storage backends read regular files'
for row in 1:7:rd 2:11:rd_inproc; do
    IFS=: read -r n line job <<<"$row"
    err=$("$PY" "$E2E/e2e_check.py" get storerr.csv "$n" error)
    echo "$err" | grep -Eq "^storerr\.ini:$line: \[job $job\] $want" || fail "storerr row $n: error '$err'"
    [ "$(grep -Ec "^dlgauge: storerr\.ini:$line: \[job $job\] $want" storerr.err)" = 1 ] ||
        fail "storerr: stderr has not exactly one line for job $job: $(cat storerr.err)"
done
# (f) A results file deleted, or renamed away, mid-run keeps every row: the
# rows after went to the deleted inode (or the moved file), the journal
# marked them written.  The deleted one is made again with what it held,
# later rows after them; the moved one keeps its rows, later ones go to a
# new file at the path; each said once, exit 0, the closing line names both.
ini gone.ini <<EOT
[sink csv]
path = results/run.csv
[sink json]
path = results/run.jsonl
[job s]
workload   = sleep
sleep      = 10ms, 20ms, 30ms
iterations = 40
warmup     = 0
EOT
rm -rf results
"$DLG" --plugin-dir "$PLUGDIR" run gone.ini >gone.out 2>gone.err &
pid=$!
for _ in $(seq 200); do [ "$(wc -l 2>/dev/null <results/run.csv)" = 2 ] && break; sleep 0.02; done
rm results/run.csv
mv results/run.jsonl results/moved.jsonl
wait "$pid"
RC=$?
expect_rc gone 0
[ "$(grep -c 'results/run.csv was deleted during the run: made again' gone.err)" = 1 ] ||
    fail "gone: the deleted csv not said once: $(cat gone.err)"
[ "$(grep -c 'results/run.jsonl was renamed or replaced during the run' gone.err)" = 1 ] ||
    fail "gone: the moved json not said once: $(cat gone.err)"
[ "$(wc -l <results/run.csv)" = 4 ] || fail "gone: run.csv lacks rows: $(cat results/run.csv)"
[ "$(($(wc -l <results/run.jsonl) + $(wc -l <results/moved.jsonl)))" = 4 ] || # and the host's
    fail "gone: json lacks points: $(wc -l results/*.jsonl)"
grep -qx "dlgauge: results in $WORK/results/run.csv, $WORK/results/run.jsonl" gone.err ||
    fail "gone: closing line: $(cat gone.err)"
finish
