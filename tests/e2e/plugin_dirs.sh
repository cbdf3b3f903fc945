#!/bin/bash
# Where plugins are looked for: every --plugin-dir (the first one was
# dropped when two were given), searched in the order given as
# DLGAUGE_PLUGIN_PATH's folders are, each checked; a DLGAUGE_PLUGIN_PATH
# folder that is not there is noted, and an unknown name says where it
# was looked for.
source "$(dirname "$0")/lib.sh"

# dlg NAME ARGS...: dlgauge ARGS alone (no --plugin-dir of run_cli's)
dlg() {
    local name=$1
    shift
    "$DLG" "$@" >"$name.out" 2>"$name.err"
    RC=$?
}

# a, b: one workload plugin each, and the same file twice
mkdir -p a b twin
cp "$TPLUG/testwl.so" a/
cp "$TPLUG/timedwl.so" b/
cp "$TPLUG/testwl.so" twin/

# each --plugin-dir is checked, the first as the last
dlg first -q --plugin-dir "$WORK/nonexist" --plugin-dir "$WORK/a" list
expect_one_error first 2 "^dlgauge: --plugin-dir '$WORK/nonexist': No such file or directory$"
dlg last --plugin-dir "$WORK/a" --plugin-dir="$WORK/nonexist" list
expect_one_error last 2 "^dlgauge: --plugin-dir '$WORK/nonexist': No such file or directory$"

# both folders are searched
dlg both --plugin-dir "$WORK/a" --plugin-dir "$WORK/b" list
expect_rc both 0
grep -Eq "^workload +count .* $WORK/a/testwl\.so " both.out || fail "both: a's count is not listed: $(cat both.out)"
[ "$(grep -c " $WORK/b/timedwl\.so " both.out)" -gt 0 ] || fail "both: b's plugin is not listed: $(cat both.out)"

# a name two folders provide is the first folder's, as in DLGAUGE_PLUGIN_PATH
dlg order --plugin-dir "$WORK/a" --plugin-dir "$WORK/twin" list
grep -Eq "^workload +count .* $WORK/twin/testwl\.so +\(shadowed by $WORK/a/testwl\.so, not used\)" order.out ||
    fail "order: twin's copy is not shadowed by a's: $(grep ' count ' order.out)"
dlg revorder --plugin-dir "$WORK/twin" --plugin-dir "$WORK/a" list
grep -Eq "^workload +count .* $WORK/a/testwl\.so +\(shadowed by $WORK/twin/testwl\.so, not used\)" revorder.out ||
    fail "revorder: a's copy is not shadowed by twin's: $(grep ' count ' revorder.out)"
DLGAUGE_PLUGIN_PATH="$WORK/a:$WORK/twin" dlg envorder list
grep -Eq "^workload +count .* $WORK/twin/testwl\.so +\(shadowed by $WORK/a/testwl\.so, not used\)" envorder.out ||
    fail "envorder: DLGAUGE_PLUGIN_PATH's order differs: $(grep ' count ' envorder.out)"

# a run finds a workload of the first folder, in the cell's own process too
# (which gets every --plugin-dir), and writes it with the built-in csv sink
ini run.ini <<EOT
[sink csv]
path = $WORK/run.csv
[job a]
workload = count
per_step = 3
iterations = 2
warmup = 0
EOT
dlg run -q --plugin-dir "$WORK/a" --plugin-dir "$WORK/b" run run.ini
expect_rc run 0
[ "$("$PY" "$E2E/e2e_check.py" get run.csv 0 items)" = 6 ] || fail "run: items is not 2 x 3: $(cat run.err)"

# a DLGAUGE_PLUGIN_PATH folder that is not there: one note; list goes on
DLGAUGE_PLUGIN_PATH="$WORK/a:$WORK/okk" dlg envmiss list
expect_one_error envmiss 0 "^dlgauge: note: DLGAUGE_PLUGIN_PATH folder '$WORK/okk': No such file or directory; skipped$"
grep -Eq "^workload +count " envmiss.out || fail "envmiss: a's plugin is not listed"
# an unknown workload names the folders searched, the missing one marked
printf '[job a]\nworkload = mlp3\n' >unknown.ini
DLGAUGE_PLUGIN_PATH="$WORK/okk" dlg unknown --plugin-dir "$WORK/a" run unknown.ini
expect_rc unknown 2
[ "$(wc -l <unknown.err)" = 2 ] || fail "unknown: not a note and an error: $(cat unknown.err)"
grep -q "^dlgauge: note: DLGAUGE_PLUGIN_PATH folder '$WORK/okk': No such file or directory; skipped$" unknown.err ||
    fail "unknown: no note: $(cat unknown.err)"
grep -Eq "^dlgauge: unknown\.ini:2: \[job a\] workload: unknown workload 'mlp3'; available: .*count.*; searched: $WORK/a $WORK/okk \(missing\) " \
    unknown.err || fail "unknown: the folders searched are not named: $(cat unknown.err)"

# dlgauge help says how --plugin-dir is searched
dlg help help
grep -q "usage: dlgauge \[--plugin-dir DIR\]\.\.\." help.out || fail "help: --plugin-dir is not shown repeatable"
grep -q "given more than once, every DIR is" help.out || fail "help: the order of --plugin-dir is not said"
finish
