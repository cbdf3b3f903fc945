# dlgauge report and compare: command-line mistakes get one line and exit 2,
# and an output file is replaced only once it is whole (a failed write
# leaves the earlier file as it was).  On the fixture, no run: fast.
#   bash report_args.sh DLGAUGE WORK_DIR
set -u
DLG=$(realpath "$1")
WORK=$(realpath -m "$2")
SRC=${DLG_SOURCE_DIR:?}
K=$SRC/tests/report/fixtures/known.csv
unset NO_COLOR
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# one NAME RC WANT CMD ARGS...: exit RC and one stderr line holding WANT
one() {
    local name=$1 want_rc=$2 want=$3
    shift 3
    "$DLG" "$@" >"$name.out" 2>"$name.err"
    local rc=$?
    [ "$rc" = "$want_rc" ] || fail "$name: exit $rc, expected $want_rc: $(cat "$name.err")"
    grep -qF -- "$want" "$name.err" || fail "$name: stderr lacks '$want': $(cat "$name.err")"
    [ "$(wc -l <"$name.err")" = 1 ] || fail "$name: not one line: $(cat "$name.err")"
}

# ---- report's arguments: the name is checked before the value; one line,
# not the error and six lines of usage
one bogus 2 "dlgauge report: unknown option '--bogus' (dlgauge report --help lists them)" report "$K" --bogus
one bogusval 2 "unknown option '--bogus'" report "$K" --bogus x
one nofile 2 "dlgauge report: no results file given" report
one noval 2 "dlgauge report: --html needs a value" report "$K" --html
# a value left out does not take the next option as a file name
one optval 2 "dlgauge report: --html needs a value" report "$K" --html --markdown x.md
[ ! -e ./--markdown ] || fail "optval: wrote a file '--markdown'"
one empty 2 "dlgauge report: --html '': an empty value" report "$K" --html ""
one cempty 2 "dlgauge compare: --markdown '': an empty value" compare "$K" -- "$K" --markdown ""
# "--" ends the options: a results file may then start with '-'
cp "$K" ./-odd.csv
"$DLG" report -- -odd.csv >dash.out 2>dash.err || fail "report -- -odd.csv: $(cat dash.err)"
grep -q 'sim' dash.out || fail "report -- -odd.csv: $(head -3 dash.out)"
# a folder or a missing catalog: the reason, not "empty file" / no reason
one folder 2 "dlgauge report: .: is a directory; give the results file itself" report .
one catalog 2 "dlgauge report: missing.ini: cannot open the instance catalog: No such file or directory" \
    report "$K" --catalog missing.ini
one catdir 2 "dlgauge report: .: is a directory; give the instance catalog itself" report "$K" --catalog .
one diskfile 2 "dlgauge report: nope.ini: cannot open the disk profile: No such file or directory" \
    report "$K" --disk d=nope.ini

# ---- report's outputs: whole or not at all
"$DLG" report "$K" --markdown out.md --html out.html >/dev/null 2>first.err || fail "report: $(cat first.err)"
cp out.md old.md
cp out.html old.html
# past a file size limit the write fails midway: it truncated out.html to the limit
(ulimit -f 2 && exec "$DLG" report "$K" --target 0.9 --html out.html >/dev/null 2>fsize.err)
rc=$?
[ $rc = 1 ] || fail "fsize: exit $rc, expected 1: $(cat fsize.err)"
[ "$(cat fsize.err)" = "dlgauge report: out.html: write failed: File too large; any earlier out.html is left as it was" ] ||
    fail "fsize: stderr: $(cat fsize.err)"
cmp -s out.html old.html || fail "fsize: the earlier out.html was damaged ($(wc -c <out.html) bytes, was $(wc -c <old.html))"
! ls out.html.part* >/dev/null 2>&1 || fail "fsize: $(ls out.html.part*) left behind"
one full 1 "dlgauge report: /dev/full: write failed: No space left on device" report "$K" --markdown /dev/full
# a link to the report: the file it names is replaced, the link kept
ln -s out.md link.md
"$DLG" report "$K" --target 0.5 --markdown link.md >/dev/null 2>link.err || fail "link: $(cat link.err)"
[ -L link.md ] || fail "link.md is no longer a link"
cmp -s out.md old.md && fail "link: out.md not rewritten through link.md"

# ---- compare: the same, and an unknown option last is no "needs a value"
one cbogus 2 "dlgauge compare: unknown option '--bogus'" compare "$K" -- "$K" --bogus
one cnoval 2 "dlgauge compare: --markdown needs a value" compare "$K" -- "$K" --markdown --alpha 0.1
one cfolder 2 "dlgauge compare: base: .: is a directory; give the results file itself" compare . -- "$K"
# an unwritable output is 2, as documented (1 is the gate's alone)
one cfull 2 "dlgauge compare: /dev/full: write failed: No space left on device" compare "$K" -- "$K" --markdown /dev/full
"$DLG" compare "$K" -- "$K" --markdown cmp.md >/dev/null 2>cmp.err || fail "compare: $(cat cmp.err)"
cp cmp.md oldcmp.md
(ulimit -f 1 && exec "$DLG" compare "$K" -- "$K" --alpha 0.1 --markdown cmp.md >/dev/null 2>cfsize.err)
rc=$?
[ $rc = 2 ] || fail "cfsize: exit $rc, expected 2: $(cat cfsize.err)"
grep -qx 'dlgauge compare: cmp.md: write failed: File too large; any earlier cmp.md is left as it was' cfsize.err ||
    fail "cfsize: stderr: $(cat cfsize.err)"
cmp -s cmp.md oldcmp.md || fail "cfsize: the earlier cmp.md was damaged"
! ls cmp.md.part* >/dev/null 2>&1 || fail "cfsize: $(ls cmp.md.part*) left behind"

if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed (outputs kept in $WORK)" >&2
    exit 1
fi
echo "report_args: ok"
