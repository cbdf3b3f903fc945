# mkdata and preprocess through the real CLI, their files read back by the
# independent Python readers (check_formats.py, formats.py): same seed ->
# same bytes, sizes as asked, RecordIO / .idx / im2rec headers / split
# records and LMDB / Datum as MXNet and Caffe lay them out.
#   bash formats_cli.sh DLGAUGE PLUGIN_DIR MKJPEG WORK_DIR
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
MKJPEG=$(realpath "$3")
WORK=$(realpath -m "$4")
CHECK="${PYTHON3:-python3} $(cd "$(dirname "$0")" && pwd)/check_formats.py"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
mk() { "$DLG" mkdata "$@" >mk.out 2>&1 || fail "mkdata $*: $(cat mk.out)"; }
# prep NAME INPUT OUTPUT STEPS: one preprocess pass
prep() {
    printf '[job %s]\nworkload = preprocess\ninput = %s\noutput = %s\nthreads = 2\niterations = %s\nwarmup = 0\n' \
        "$1" "$2" "$3" "$4" >"$1.ini"
    "$DLG" -q --plugin-dir "$PLUGDIR" run "$1.ini" >"$1.out" 2>"$1.err"
}

# ---- help: usage on stdout, exit 0 -------------------------------------------------
# fewer images than classes left class folders empty ("wrote 10 images in 20 classes")
"$DLG" mkdata images --out few --classes 20 --images 10 >few.out 2>&1
rc=$?
[ $rc = 2 ] || fail "mkdata with fewer images than classes: exit $rc, expected 2: $(cat few.out)"
grep -q "fewer than --classes 20: every class needs at least one image" few.out || fail "few: $(cat few.out)"
[ ! -e few ] || fail "mkdata with fewer images than classes created few/"
"$DLG" mkdata --help >help.out 2>&1 || fail "mkdata --help: exit $?"
grep -q '^usage: dlgauge mkdata images' help.out || fail "mkdata --help: $(head -2 help.out)"
"$DLG" mkdata images -h >help.out 2>&1 || fail "mkdata images -h: exit $?"

# ---- images: thread count does not change a byte; counts as asked ------------------
mk images --out a --classes 3 --images 24 --seed 5 --quality 60 --threads 1
mk images --out b --classes 3 --images 24 --seed 5 --quality 60 --threads 3
diff -r a b >/dev/null || fail "mkdata images: --threads 1 and 3 differ"
$CHECK images a train 24 3 || fail "mkdata images"
# regenerated smaller: exactly the new dataset
mk images --out b --classes 2 --images 10 --seed 5 --quality 60
$CHECK images b train 10 2 || fail "mkdata images over a larger dataset"

# a split that is not one plain folder name (or is too long: a 240-byte one
# failed midway on paths cut at 255 bytes, exit 1) is a usage error, and nothing
# is written outside --out
mkdir -p sp/inner
for split in .. . 'a/b' "$(printf 's%.0s' $(seq 240))"; do
    "$DLG" mkdata images --out sp/inner --classes 2 --images 2 --split "$split" >sp.out 2>&1
    rc=$?
    [ $rc = 2 ] || fail "--split '$split': exit $rc, expected 2: $(cat sp.out)"
done
[ -z "$(ls sp)" ] || [ "$(ls sp)" = inner ] || fail "--split ..: wrote $(ls sp) beside --out"

# ---- text: same seed, same bytes; at least --words tokens; vocabulary ----------------
mk text --out t1.txt --words 5000 --vocab 300 --seed 9
mk text --out t2.txt --words 5000 --vocab 300 --seed 9
cmp -s t1.txt t2.txt || fail "mkdata text: same seed, different bytes"
$CHECK text t1.txt 5000 300 || fail "mkdata text"
ls ./*.part >/dev/null 2>&1 && fail "mkdata left .part files: $(ls ./*.part)"

# ---- RecordIO: im2rec records, .idx offsets, bytes as the files ----------------------
prep rec a/train.lst recordio:a/train.rec 24 || fail "rec: $(cat rec.err)"
$CHECK rec a/train.rec a/train.lst a >/dev/null || fail "rec"
# a payload with the magic at aligned offsets is split (cflag 1, 2, 3) and
# joined back; several labels go to the float array (flag = 3)
mkdir -p m
$CHECK magic a/train/n00000000/n00000000_0.JPEG m/a.jpg
cp a/train/n00000001/n00000001_0.JPEG m/b.jpg
printf '5\t1.5\t2\t3\ta.jpg\n6\t7\tb.jpg\n' >m/x.lst
prep magic m/x.lst recordio:m/x.rec 2 || fail "magic: $(cat magic.err)"
out=$($CHECK rec m/x.rec m/x.lst m) || fail "magic: $out"
[ "$out" = "2 records, 3 split parts" ] || fail "magic: $out, expected 2 records, 3 split parts"

# ---- LMDB: convert_imageset keys, encoded Datums, > 1000 puts (two commits) --------
prep db a/train.txt lmdb:a/train_lmdb 24 || fail "db: $(cat db.err)"
$CHECK lmdb a/train_lmdb a/train.txt a >/dev/null || fail "lmdb"
"$MKJPEG" s 2 550 1 || fail "mkjpeg"
(cd s && find . -name '*.jpg' | sort | sed 's|^\./||' | awk -F/ '{print $0, ($1 == "c1")}') >s/all.txt
prep db2 s/all.txt lmdb:s/db 1100 || fail "db2: $(cat db2.err)"
$CHECK lmdb s/db s/all.txt s 2 >/dev/null || fail "lmdb of 1100"
# a Datum holds one whole-number label: a multi-label list is refused
prep db3 m/x.lst lmdb:m/db 2 && fail "db3: a 3-label list went into an LMDB"
grep -q 'a.jpg has 3 labels, a Caffe Datum holds one' db3.err || fail "db3: $(cat db3.err)"
[ -e m/db ] || [ -e m/db.part ] && fail "db3: left m/db or m/db.part"

# ---- a write that fails (file size limit, as a full disk): the reason, no
# .part left behind, no "run more steps" advice
big() { (trap '' XFSZ; ulimit -f 1000; prep "$@"); }
big fz a/train.txt lmdb:fz 24 && fail "fz: a 2.4 MB LMDB under a 1 MB file size limit"
grep -q 'fz.part: commit: ' fz.err || fail "fz: $(cat fz.err)"
big fr a/train.lst recordio:fr.rec 24 && fail "fr: a 2.4 MB .rec under a 1 MB file size limit"
grep -q 'fr.rec.part: write of [0-9]* bytes at offset [0-9]*\( stopped at offset [0-9]*\)\?: File too large' fr.err || fail "fr: $(cat fr.err)"
grep -h 'run more steps' fz.err fr.err && fail "fz, fr: advice to run more steps after a failed write"
ls -d fz* fr* | grep -v '\.\(ini\|err\|out\)$' && fail "fz, fr: output left behind"

[ $FAILS = 0 ] && echo "formats_cli: all passed"
exit $((FAILS > 0))
