# dlgauge compare end to end: two tiny REAL runs of the sleep workload
# (5 repeats of 8 steps per cell: with 3, a loaded ASan run once failed
# here, cause not captured; 5 give the t-test more room).  Job `axis` sweeps sleep = 2ms, 5ms in
# base and 5ms, 8ms in new: 5ms matches, 2ms and 8ms are listed as only in
# one side (with the gate, 2ms fails it: gone from new).  Job `gate` sleeps 2ms in base and 6ms in new (not swept: one
# cell): about 3x slower, significant, and it fails --fail-below -5%.
#   bash compare_cli.sh DLGAUGE PLUGIN_DIR WORK_DIR
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
WORK=$(realpath -m "$3")
unset DLGAUGE_PLUGIN_PATH NO_COLOR
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

suite() { # NAME AXIS_VALUES GATE_SLEEP
    cat >"$1.ini" <<INI
[global]
repeat = 5
sinks = c, j
[sink c]
type = csv
path = $1.csv
[sink j]
type = json
path = $1.jsonl
[job axis]
workload = sleep
sleep = $2
iterations = 8
warmup = 1
[job gate]
workload = sleep
sleep = $3
iterations = 8
warmup = 1
INI
    "$DLG" -q --plugin-dir "$PLUGDIR" run "$1.ini" >"$1.out" 2>&1 || fail "run $1: exit $?: $(cat "$1.out")"
}
suite base "2ms, 5ms" 2ms
suite new "5ms, 8ms" 6ms

# no gate: exit 0; matched by value, the rest listed
"$DLG" compare base.csv -- new.csv >plain.txt 2>plain.err
rc=$?
[ $rc = 0 ] || fail "compare without a gate: exit $rc: $(cat plain.err)"
grep -q '^  sleep  base ' plain.txt || fail "no table of job axis: $(cat plain.txt)"
grep -Eq '^  5ms +[0-9.]+ steps/s .* 5\+5 ' plain.txt || fail "sleep=5ms not matched with 5+5 repeats: $(cat plain.txt)"
grep -q '^  only in base: sleep=2ms$' plain.txt || fail "sleep=2ms not listed as only in base"
grep -q '^  only in new: sleep=8ms$' plain.txt || fail "sleep=8ms not listed as only in new"
grep -Eq '^ +[0-9.]+ steps/s .* -[2-9][0-9]\.[0-9]% .* slower$' plain.txt ||
    fail "job gate (2ms -> 6ms) not significantly slower (2ms -> 6ms: about -67%): $(grep -A3 'job gate' plain.txt)"
grep -q '^  base: base.csv (3 rows): dlgauge .* (git ' plain.txt || fail "no header naming base: $(head -4 plain.txt)"
[ -s plain.err ] && fail "stderr without a gate: $(cat plain.err)"

# the gate, on the JSONL files (hosts named from their dlgauge_host points)
"$DLG" compare --base base.jsonl --new new.jsonl --fail-below -5% >gate.txt 2>gate.err
rc=$?
[ $rc = 1 ] || fail "compare --fail-below -5%: exit $rc, not 1: $(cat gate.err)"
# the limit as given, not rounded to one decimal (-9.99 read as -10.0)
"$DLG" compare --base base.jsonl --new new.jsonl --fail-below -9.99% >gate999.txt 2>/dev/null
grep -q 'slowdown beyond -9.99%,' gate999.txt || fail "gate header: $(grep -o 'gate: [^,]*' gate999.txt)"
grep -q '^dlgauge compare: regression: sleep (job gate), mode -, precision -: .* steps/s -> .* steps/s (-[2-9][0-9]\.[0-9]%, p=' gate.err ||
    fail "the gate does not name job gate: $(cat gate.err)"
grep -vq '^dlgauge compare: regression: ' gate.err && fail "stderr has more than regression lines: $(cat gate.err)"
grep -q '^dlgauge compare: regression: sleep (job axis), mode -, precision -: sleep=2ms: missing from new; base ran at ' gate.err ||
    fail "sleep=2ms, gone from new, does not fail the gate: $(cat gate.err)"
# a sweep changed on purpose: only the slowdown fails
"$DLG" compare base.jsonl -- new.jsonl --fail-below -5% --allow-missing >allow.txt 2>allow.err
rc=$?
# (not "gate's line alone": the matched 5ms cell may drift past -5% on a
# loaded machine, as it once did under ASan)
[ $rc = 1 ] && grep -q '(job gate)' allow.err && ! grep -q 'missing from new' allow.err ||
    fail "--allow-missing: exit $rc, not 1 with job gate's line and no missing cell: $(cat allow.err)"
grep -q '^  base: base.jsonl (3 rows): dlgauge .* on .* (' gate.txt || fail "no CPU model in the JSONL header: $(head -4 gate.txt)"

# both sinks of one run as one side count each measurement once; Markdown to stdout
"$DLG" compare base.csv base.jsonl -- new.jsonl --markdown - >both.md 2>both.err || fail "merged sides: $(cat both.err)"
grep -Eq '^\| 5ms \| .* \| 5\+5 \| ' both.md || fail "merged CSV+JSONL double-counted: $(grep '5ms' both.md)"
grep -q '^- \*\*only in new:\*\* sleep=8ms$' both.md || fail "no only-in line in Markdown: $(cat both.md)"

# usage, and the command in dlgauge's list
"$DLG" help compare | grep -q '^usage: dlgauge compare BASE' || fail "dlgauge help compare"
"$DLG" --help | grep -q '^  compare BASE... -- NEW...' || fail "compare not in dlgauge --help"

[ $FAILS = 0 ] || exit 1
echo "compare_cli: ok"
