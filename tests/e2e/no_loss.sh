#!/bin/bash
# (e) A failing cell loses nothing: the cells before and after it are
# measured and written, the failure is one row with status error and one
# line on stderr naming file:line, and the run exits 1.
source "$(dirname "$0")/lib.sh"

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
data       = raw:$WORK
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
items      = 7
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
expect_row 1 impossible error '^noloss\.ini:11: \[job impossible\] \[storage posix\] posix: .*: is a directory'
expect_row 2 setup_fails error '^noloss\.ini:17: \[job setup_fails\] fail_setup: fail_setup: refusing to start'
expect_row 3 step_fails error 'noloss\.ini:21: \[job step_fails\] fail_step: fail_step: step 5 failed on purpose'
expect_row 4 silent error '^noloss\.ini:28: \[job silent\] silent: warm-up step failed \(code -2\) without saying why'
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
finish
