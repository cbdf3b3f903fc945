#!/bin/bash
# --resume of a journal that a newer dlgauge wrote: a record of a kind this
# one does not know is skipped with one note naming the journal's line and
# the kind, and the run goes on with the records it knows (it used to stop
# at "malformed journal line", as the version before the inventory record
# did on this one's journals).  A damaged record of a known kind stays an
# error at its line.  Records of cells the plan lacks count for none.
source "$(dirname "$0")/lib.sh"

ini compat.ini <<EOT
[global]
journal = $WORK/compat.journal
[sink csv]
path = $WORK/compat.csv
[job s]
workload   = noop
iterations = 3
warmup     = 0
isolation  = none
seed       = 1, 2
EOT
run_cli first -q run compat.ini
expect_rc first 0
# as if interrupted before seed 2's cell was recorded, by a newer dlgauge
grep -v "^done s 1 " compat.journal >j.tmp && mv j.tmp compat.journal
echo "gpu_clock s 0 1410" >>compat.journal
line=$(wc -l <compat.journal)
run_cli resume -q run compat.ini --resume
expect_rc resume 0
[ "$(grep -c . resume.err)" = 1 ] &&
    grep -q "^dlgauge: note: $WORK/compat.journal:$line: skipped 1 journal line of a kind this dlgauge does not know (the first: gpu_clock): a newer dlgauge's, or damaged" resume.err ||
    fail "resume: expected one note on stderr: $(cat resume.err)"
[ "$(grep -c '^\[' resume.out)" = 1 ] || fail "resume: expected seed 2's cell alone: $(cat resume.out)"

# records of cells the plan lacks (a journal edited by hand) are not
# counted as its cells done: it said "4 cells already done" of 2
printf 'done s 7 ok\ndone gone 0 ok\n' >>compat.journal
run_cli count run compat.ini --resume
expect_rc count 0
grep -q "^dlgauge: resuming run .*: 2 cells already done$" count.err || fail "count: $(cat count.err)"

echo "done s 1x ok" >>compat.journal
line=$(wc -l <compat.journal)
run_cli damaged -q run compat.ini --resume
expect_one_error damaged 2 "compat.journal:$line: malformed journal line \(done JOB CELL STATUS\)$"
finish
