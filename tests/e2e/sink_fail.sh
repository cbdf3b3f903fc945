#!/bin/bash
# A sink that refuses a row, or crashes writing one, loses nothing for
# good and gives no sink a row twice (docs/architecture.md, "The journal").
# It used to: a refused row was journaled done anyway (--resume: "3 cells
# already done", the row never sent), the closing "results in" named the
# sink that lacked it, and a sink's SIGSEGV ended dlgauge with exit 139
# and not a word; and a kill -9 just after the last sink took a row
# measured the cell again, a second row in every sink.  The sink (tests/runtime/failsink.c, given as the third
# argument) refuses, or crashes at, the Nth result row of each process and
# appends every row it takes to a file: "job=J status=S start=T ...".
source "$(dirname "$0")/lib.sh"
FAILSINK=$TPLUG

# JOBS FILE: the job of every row of a CSV sink's file, or of the test
# sink's file (f.rows), in file order, one line: "a b c"
jobs_of() {
    case $1 in
    *.csv) "$PY" -c 'import csv,sys; print(" ".join(r["job"] for r in csv.DictReader(open(sys.argv[1]))))' "$1" ;;
    *) sed -n 's/^job=\([^ ]*\) .*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//' ;;
    esac
}

# same_row JOB CSV ROWS: the row of JOB in both files is the same
# measurement (start time, throughput), not one measured again
same_row() {
    local got
    got=$("$PY" - "$@" <<'EOF'
import csv, sys
job, csvf, rows = sys.argv[1:]
c = [r for r in csv.DictReader(open(csvf)) if r["job"] == job]
f = [dict(kv.split("=", 1) for kv in l.split()) for l in open(rows) if l.startswith("job=%s " % job)]
if len(c) != 1 or len(f) != 1:
    print("%d and %d rows" % (len(c), len(f)))
elif c[0]["time"] != f[0]["start"] or abs(float(c[0]["throughput"]) - float(f[0]["throughput"])) > 1e-6 * float(f[0]["throughput"]):
    print("csv %s %s, sink %s %s" % (c[0]["time"], c[0]["throughput"], f[0]["start"], f[0]["throughput"]))
EOF
)
    [ -z "$got" ] || fail "$2/$3: row of job $1 differs: $got"
}

expect_jobs() { # NAME FILE WANT
    local got
    got=$(jobs_of "$2")
    [ "$got" = "$3" ] || fail "$1: $2 holds the rows of jobs '$got', expected '$3'"
}

JOBS='[job a]
workload = noop
iterations = 5
[job b]
workload = noop
iterations = 6
[job c]
workload = noop
iterations = 7'

# --- 1. a refused row: kept in the journal, sent again by --resume ------
ini refuse.ini <<EOF
[sink f]
plugin = $FAILSINK
type = failing
fail = said
at = 2
path = f.rows
[sink csv]
path = r.csv
$JOBS
EOF
J=$(echo results/journal/refuse-*.journal)
run_cli refuse1 run refuse.ini
expect_rc refuse1 1
[ "$(grep -c 'injected write error' refuse1.err)" = 1 ] || fail "refuse1: the sink's error not said once: $(cat refuse1.err)"
grep -q '^dlgauge: refuse\.ini:1: \[sink f\]: incomplete: 1 result row did not reach it; .*refuse-[0-9a-f]*\.journal keeps it: dlgauge run --resume sends it$' refuse1.err ||
    fail "refuse1: no line saying that sink f lacks a row: $(cat refuse1.err)"
grep -q "^dlgauge: results in $WORK/r.csv\$" refuse1.err || fail "refuse1: 'results in' names the sink that lacks a row, or not r.csv: $(grep 'results in' refuse1.err)"
grep -q '^done a 0 ok$' $J && grep -q '^done c 0 ok$' $J || fail "refuse1: cells a and c not done: $(cut -c1-80 $J)"
grep -q '^done b ' $J && fail "refuse1: cell b, whose row missed sink f, is journaled done"
grep -Eq '^kept b 0 ok [0-9a-f]+$' $J || fail "refuse1: the row of cell b is not kept: $(cut -c1-80 $J)"
expect_jobs refuse1 f.rows "a c"
expect_jobs refuse1 r.csv "a b c"

run_cli refuse2 run --resume refuse.ini
expect_rc refuse2 0
grep -q 'resuming run .*: 2 cells already done, 1 more with its row kept' refuse2.err || fail "refuse2: $(head -1 refuse2.err)"
grep -q '\[2/3\] b: not measured again: the row kept by the interrupted run went to the sinks that lacked it' refuse2.err ||
    fail "refuse2: no note on the kept row: $(cat refuse2.err)"
grep -q "^dlgauge: results in $WORK/f.rows, $WORK/r.csv\$" refuse2.err || fail "refuse2: $(grep 'results in' refuse2.err)"
[ "$(tail -1 $J)" = "done b 0 ok" ] || fail "refuse2: the journal does not end with b done: $(tail -1 $J | cut -c1-80)"
expect_jobs refuse2 f.rows "a c b"
expect_jobs refuse2 r.csv "a b c"
for j in a b c; do same_row $j r.csv f.rows; done # b too: the very row kept, not a new one

run_cli refuse3 run --resume refuse.ini # nothing left to do
expect_rc refuse3 0
grep -q 'resuming run .*: 3 cells already done$' refuse3.err || fail "refuse3: $(head -1 refuse3.err)"
expect_jobs refuse3 f.rows "a c b"

# --- 2. every write refused (one sink): nothing done, nothing named -----
ini all.ini <<EOF
[sink f]
plugin = $FAILSINK
type = failing
fail = said
path = all.rows
$JOBS
EOF
for n in 1 2; do
    if [ $n = 1 ]; then run_cli all$n run all.ini; else run_cli all$n run --resume all.ini; fi
    expect_rc all$n 1
    grep -q '^done ' results/journal/all-*.journal && fail "all$n: a cell is journaled done though no sink has its row"
    [ "$(grep -c '^kept ' results/journal/all-*.journal)" = 3 ] || fail "all$n: not 3 kept rows, once each"
    grep -q 'incomplete: 3 result rows did not reach it' all$n.err || fail "all$n: $(cat all$n.err)"
    grep -q 'results in' all$n.err && fail "all$n: 'results in' names the sink that has none: $(grep 'results in' all$n.err)"
done

# --- 3. a sink crashing in its write: one line, rows kept, resumable ----
ini crash.ini <<EOF
[sink csv]
path = c.csv
[sink f]
plugin = $FAILSINK
type = failing
fail = crash
at = 2
path = c.rows
$JOBS
EOF
J=$(echo results/journal/crash-*.journal)
run_cli crash1 -q run crash.ini
expect_one_error crash1 139 '^dlgauge: crash\.ini:3: \[sink f\]: killed by SIGSEGV \(an invalid memory access\) in its write op' \
    'failsink\.so' 'the rows written so far are kept' 'dlgauge run --resume gives each sink the result rows it lacks'
expect_jobs crash1 c.csv "a b"
expect_jobs crash1 c.rows "a"
grep -q '^done a 0 ok$' $J || fail "crash1: cell a not done"
grep -q '^sent b 0 csv$' $J || fail "crash1: the journal does not say that csv has the row of b: $(cut -c1-80 $J)"
grep -q '^done b' $J && fail "crash1: cell b is done"

# b's row was kept before any sink got it: --resume sends that very row
# to sink f, not a new measurement; this process's second row (c's)
# crashes the sink again
run_cli crash2 run --resume crash.ini
expect_rc crash2 139
grep -q '\[2/3\] b: not measured again: the row kept by the interrupted run went to the sinks that lacked it' crash2.err ||
    fail "crash2: no note on b: $(cat crash2.err)"
[ "$(grep -c 'killed by SIGSEGV' crash2.err)" = 1 ] || fail "crash2: $(cat crash2.err)"
expect_jobs crash2 c.csv "a b c"
expect_jobs crash2 c.rows "a b"

run_cli crash3 -q run --resume crash.ini
expect_rc crash3 0
[ -s crash3.err ] && fail "crash3: stderr: $(cat crash3.err)"
expect_jobs crash3 c.csv "a b c" # each row once in the sink that never failed
expect_jobs crash3 c.rows "a b c"
for j in a b c; do grep -q "^done $j 0 ok\$" $J || fail "crash3: cell $j not done"; done
for j in a b c; do same_row $j c.csv c.rows; done # one measurement of each cell in both sinks

# --- 4. killed after the sinks stored a row, before the journal said so -
# (a kill -9 while the last sink syncs its file): --resume sends the kept
# row again through write_again, which each file sink skips where it holds
# it; it used to measure the cell again, a second row of it in every sink.
# The window is made by taking b's records after its `kept` out of a
# finished run's journal; in the second run csv also lost b's row.
ini died.ini <<EOF
[sink csv]
path = d.csv
[sink json]
type = json
path = d.jsonl
[sink lp]
type = influx
path = d.lp
$JOBS
EOF
for n in 1 2; do
    rm -f d.csv d.jsonl d.lp results/journal/died-*.journal
    run_cli died${n}a -q run died.ini
    expect_rc died${n}a 0
    J=$(echo results/journal/died-*.journal)
    grep -q '^kept b 0 ok [0-9a-f]*$' $J || fail "died$n: b's row was not kept before it was sent: $(cut -c1-60 $J)"
    sed -i '/^\(sent\|done\) b /d' $J
    cp d.csv d.first.csv
    [ $n = 2 ] && sed -i '/,b,/d' d.csv
    run_cli died${n}b run --resume died.ini
    expect_rc died${n}b 0
    grep -q 'resuming run .*: 2 cells already done, 1 more with its row kept' died${n}b.err || fail "died$n: $(head -1 died${n}b.err)"
    grep -q '\[2/3\] b: not measured again' died${n}b.err || fail "died$n: b measured again: $(cat died${n}b.err)"
    [ "$(jobs_of d.csv | tr ' ' '\n' | sort | tr '\n' ' ')" = "a b c " ] || fail "died$n: d.csv has jobs $(jobs_of d.csv)"
    [ "$(grep -c '"job":"b"' d.jsonl)" = 1 ] || fail "died$n: d.jsonl has b $(grep -c '"job":"b"' d.jsonl) times"
    [ "$(grep -c ',job=b[, ]' d.lp)" = 1 ] || fail "died$n: d.lp has b $(grep -c ',job=b[, ]' d.lp) times"
    [ "$(grep ',b,' d.csv)" = "$(grep ',b,' d.first.csv)" ] || fail "died$n: b's csv row is not the first run's"
    grep -q '^done b 0 ok$' $J || fail "died$n: b is not done"
done

finish
