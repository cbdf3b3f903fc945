#!/bin/bash
# A cell's process that fails before its cell is set up (its re-read of
# the configuration, the plugin folders, the plan: here an allocation that
# fails, oom_at.c, for each of the first 40 of the __cell process) sends
# why to the run as its result: the run prints that one line, naming the
# job, and the cell's row says the same.  It used to print its own line,
# and the run a second one ("the cell's process exited with code 2
# without a result"), which the row kept instead of the cause.
source "$(dirname "$0")/lib.sh"
PRELOAD=$5

printf '[sink csv]\npath = s.csv\n[job a]\nworkload = noop\niterations = 3\n' >s.ini
before=0
for at in $(seq 1 40); do
    rm -f s.csv
    DLG_OOM_IN=__cell DLG_OOM_AT=$at LD_PRELOAD=$PRELOAD "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini >out 2>err
    rc=$?
    [ "$rc" = 0 ] && continue
    [ "$rc" = 1 ] || { fail "allocation $at: exit $rc: $(cat err)"; continue; }
    lines=$(grep -c '\[job a\]' err)
    [ "$lines" = 1 ] || { fail "allocation $at: $lines lines name the job, not 1: $(cat err)"; continue; }
    said=$(grep '\[job a\]' err | sed 's/^dlgauge: //')
    row=$("$PY" -c 'import csv,sys; print(next(csv.DictReader(open("s.csv")))["error"])')
    [ "$row" = "$said" ] || fail "allocation $at: the row says '$row', stderr '$said'"
    case $said in *"before the cell's setup"*) before=$((before + 1)) ;; esac
done
[ "$before" -gt 0 ] || fail "no allocation failed before the cell's setup: is $PRELOAD preloaded?"
finish
