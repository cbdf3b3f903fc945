#!/bin/bash
# The default run journal is named by the INI's name and a hash of its
# absolute path: two configurations of one name (d1/x.ini, d2/x.ini) keep
# journals of their own (one used to overwrite the other's, and a run of
# one refused the other as "the same configuration is running"); --resume
# still finds a journal of the old name (NAME.journal); a journal that
# cannot be created says how to put it elsewhere.
source "$(dirname "$0")/lib.sh"

mkdir -p d1 d2
for d in d1 d2; do
    printf '[job a]\nworkload = sleep\nsleep = 1ms\niterations = 3\nrepeat = 1\n[job b]\nworkload = sleep\nsleep = 1ms\niterations = 3\nrepeat = 1\n' >$d/x.ini
done
run_cli one run d1/x.ini
expect_rc one 0
run_cli two run d2/x.ini
expect_rc two 0
set -- results/journal/x-*.journal
[ $# = 2 ] || fail "two configurations named x.ini: $# journals ($*), want 2"
for j in "$@"; do
    [ "$(grep -c '^done ' "$j")" = 2 ] || fail "$j: not 2 cells done: $(cat "$j")"
done

# a journal of the old name (a run interrupted before the change): resumed
run_cli one run d1/x.ini
grep -v '^done b' "$(ls -t results/journal/x-*.journal | head -1)" >results/journal/x.journal
rm -f results/journal/x-*.journal
run_cli legacy -v run --resume d1/x.ini
expect_rc legacy 0
grep -q 'resuming run .*: 1 cell already done' legacy.err || fail "legacy: not resumed from x.journal: $(cat legacy.err)"

# no place for the journal: one line saying where else to put it
mkdir -p ro && printf 'x' >ro/results
(cd ro && "$DLG" --plugin-dir "$PLUGDIR" run ../d1/x.ini >../ro.out 2>../ro.err)
RC=$?
expect_one_error ro 2 '^dlgauge: results/journal/x-[0-9a-f]{8}\.journal: cannot create the run journal: Not a directory \(set \[global\] journal = PATH for another place\)$'
finish
