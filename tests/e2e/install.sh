#!/bin/bash
# dlgauge installed (cmake --install into a scratch prefix) and run from
# there, away from the source tree and without DLGAUGE_PLUGIN_PATH: the
# shipped conf/ and docs are installed; the report reads the install's
# catalogs and finds a throttle's profile by file name in the install's
# conf/disks (not in a checkout named at build time); the installed
# study.sh takes its options anywhere, refuses an unknown option or suite
# before it generates anything, and plans a suite with no checkout.
# ctest runs it as: bash install.sh DLGAUGE PLUGIN_DIR BUILD_DIR WORK_DIR
source "$(dirname "$0")/lib.sh"
BUILD=$TPLUG # the third argument: the build tree to install
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" >install.log 2>&1 || { cat install.log >&2; fail "cmake --install"; finish; }
PDLG=$P/bin/dlgauge
CONF=$P/share/dlgauge/conf
DOCS=$P/share/doc/dlgauge

for f in "$CONF/quickstart.ini" "$CONF/instances/aws.ini" "$CONF/disks/local-nvme.ini" "$CONF/study/preprocess.ini" \
         "$DOCS/docs/report.md" "$DOCS/docs/study.md" "$DOCS/docs/plugins.md" "$DOCS/README.md"; do
    [ -f "$f" ] || fail "not installed: ${f#"$P"/}"
done
[ -x "$P/share/dlgauge/scripts/study.sh" ] || fail "not installed: share/dlgauge/scripts/study.sh"
# no path of the source tree compiled in: the executable finds conf/ from its own place
grep -q "$SRC/conf" "$PDLG" && fail "$PDLG holds the path $SRC/conf"
"$PDLG" help >help.out 2>&1
grep -q 'share/doc/dlgauge/docs' help.out || fail "dlgauge help names no installed docs path: $(tail -3 help.out)"

# A run that read through a throttle whose profile, mydisks/local-nvme.ini,
# was there when it ran (20 MB/s) and is not where the report runs.  The
# install's own conf/disks/local-nvme.ini says the same: the report must
# find that one, not the checkout's (6500 MB/s, no storage verdict).
mkdir -p run/mydisks away
profile='bandwidth = 20MB
iops = 100000'
echo "$profile" >run/mydisks/local-nvme.ini
echo "$profile" >"$CONF/disks/local-nvme.ini"
head -c 4194304 /dev/urandom >run/blob
cat >run/io.ini <<'EOF'
[global]
warmup = 0
repeat = 1
[sink csv]
path = results/io.csv
[storage nvme]
type = throttle
profile = mydisks/local-nvme.ini
[job a]
workload = io
data = raw:blob
iterations = 4
cache = none
storage = nvme
EOF
(cd run && env -u DLGAUGE_PLUGIN_PATH "$PDLG" run io.ini >../run.out 2>&1) || fail "run from the install: $(cat run.out)"
rm -r run/mydisks run/blob
cd away || exit 1
env -u DLGAUGE_PLUGIN_PATH "$PDLG" report ../run/results/io.csv --catalog "$CONF/instances/aws.ini" --markdown - \
    >../report.out 2>../report.err
RC=$?
cd "$WORK" || exit 1
expect_rc report 0
grep -q "was not found" report.err && fail "report: the profile was not found: $(cat report.err)"
grep -Eq "storage\*\* \(reads [0-9.]+ MB/s = [0-9]+% of profile nvme's limit \(20\.0 MB/s" report.out ||
    fail "report: no storage verdict against the install's profile: $(grep -A1 Bottlenecks report.out)"
grep -Eq '^recommended: [a-z0-9.]+ \(AWS' report.out || fail "report: no AWS instance from the installed catalog"

# study.sh from the install: a refused option or suite before any data or link
study=$P/share/dlgauge/scripts/study.sh
for args in "nosuch" "preprocess --nosuch" "preprocess nosuch --dry-run"; do
    rm -rf s && mkdir s
    (cd s && bash "$study" $args >out 2>err)
    rc=$?
    [ "$rc" = 2 ] || fail "study.sh $args: exit $rc, expected 2"
    grep -Eq "^study: unknown (suite|option) '(nosuch|--nosuch)'" s/err || fail "study.sh $args: $(cat s/err)"
    [ -z "$(ls s | grep -v '^out$\|^err$')" ] || fail "study.sh $args: left $(ls s) behind"
done
# --dry-run after a suite is the option, not a suite: every suite run is a plan check
# (a stand-in dlgauge logs its calls: no data is generated)
mkdir -p s && printf '#!/bin/sh\necho "$*" >>%s/calls\n' "$WORK/s" >s/stub && chmod +x s/stub
(cd s && DLGAUGE=$WORK/s/stub DLG_STUDY_IMAGES=100 bash "$study" preprocess --dry-run >out 2>err) ||
    fail "study.sh preprocess --dry-run: $(cat s/err)"
grep -qx 'run conf/study/preprocess.ini --dry-run' s/calls || fail "study.sh preprocess --dry-run: $(cat s/calls)"
grep -v '^mkdata ' s/calls | grep -vx 'run data/study/convert.ini' | grep -v -- '--dry-run$' |
    grep -q . && fail "study.sh preprocess --dry-run ran for real: $(cat s/calls)"
[ -L s/conf ] && [ "$(readlink -f s/conf)" = "$(readlink -f "$CONF")" ] || fail "study.sh: s/conf is not the install's conf/"
# and for real, with the installed dlgauge and suites only (small data): a plan check, no results
rm -rf s && mkdir s
(cd s && env -u DLGAUGE_PLUGIN_PATH DLG_STUDY_IMAGES=100 DLG_STUDY_WORDS=20000 bash "$study" --dry-run preprocess \
    >out 2>err) || fail "installed study.sh --dry-run preprocess: $(tail -5 s/err)"
[ -s s/data/study/train.rec ] || fail "installed study.sh --dry-run preprocess: no data/study/train.rec"
[ -e s/results/study/preprocess.csv ] && fail "installed study.sh --dry-run preprocess wrote results"
finish
