# dlgauge report through the CLI:
#  (a) a REAL sweep: io-pipeline over generated JPEG files, emulated 20 ms
#      compute per batch of 4, swept over storage = slow (2 MB/s throttle),
#      mid (200 MB/s throttle), posix.  The batch needs ~0.42 MB per 20 ms
#      (21 MB/s), so slow is storage-bound (AU ~0.1) and mid already keeps
#      the emulated accelerator busy: knee storage = mid, slow input-bound
#      on storage at its profile limit, mid/posix compute-bound.
#  (d) bad inputs: missing columns, mixed versions, broken JSON, bad options;
#      rows cut short by a crash: skipped with one warning, the rest reported.
#   bash report_cli.sh DLGAUGE PLUGIN_DIR WORK_DIR
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
WORK=$(realpath -m "$3")
SRC=${DLG_SOURCE_DIR:?}
unset DLGAUGE_PLUGIN_PATH NO_COLOR
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# ---- (a) the real sweep -------------------------------------------------------
"$DLG" mkdata images --out imgs --classes 2 --images 40 >mkdata.out 2>&1 || fail "mkdata: $(cat mkdata.out)"
mkdir -p disks
printf 'name = slow\nbandwidth = 2MB\n' >disks/slow.ini
printf 'name = mid\nbandwidth = 200MB\n' >disks/mid.ini
cat >sweep.ini <<'INI'
[global]
sinks = j, c
repeat = 2
[sink j]
type = json
path = sweep.jsonl
[sink c]
type = csv
path = sweep.csv
[storage slow]
type = throttle
inner = posix
profile = disks/slow.ini
[storage mid]
type = throttle
inner = posix
profile = disks/mid.ini
[job pipe]
workload = io-pipeline
data = files:imgs/train.txt
decode = false
batch = 4
threads = 2
prefetch = 2
compute = 20ms
warmup = 2
duration = 0.4s
min_steps = 3
storage = slow, mid, posix
INI
"$DLG" -q --plugin-dir "$PLUGDIR" run sweep.ini >run.out 2>run.err || fail "run: exit $?: $(cat run.err)"
for f in sweep.jsonl sweep.csv; do
    "$DLG" report "$f" --disks disks --markdown "$f.md" >"$f.txt" 2>"$f.err" || { fail "report $f: $(cat $f.err)"; continue; }
    grep -q '^- storage = mid: ' "$f.md" || fail "$f: knee is not storage = mid: $(grep -A3 Knees $f.md)"
    grep -q '^- `storage=slow`: \*\*input-bound: storage\*\* (reads .* of profile slow.s limit' "$f.md" ||
        fail "$f: slow is not storage-bound at its limit: $(grep storage=slow $f.md)"
    grep -q '^- `storage=mid`: \*\*compute-bound\*\*' "$f.md" || fail "$f: mid is not compute-bound: $(grep storage=mid $f.md)"
    grep -q '^- `storage=posix`: \*\*compute-bound\*\*' "$f.md" || fail "$f: posix is not compute-bound"
    # the terminal table is aligned and has no colour when not a TTY
    grep -q $'\033' "$f.txt" && fail "$f: colour codes written to a file"
    grep -q '^  storage  throughput' "$f.txt" || fail "$f: no table header: $(head -5 $f.txt)"
done
# both sinks of one run merged: the same measurement counts once (n stays 2)
"$DLG" report sweep.csv sweep.jsonl --disks disks --markdown both.md >/dev/null 2>both.err || fail "merge: $(cat both.err)"
grep -q '^| mid | .* | 2 |' both.md || fail "merged CSV+JSONL double-counted: $(grep '^| mid' both.md)"
# a recommendation from a shipped catalog names a winner with a cost per million of the unit counted
"$DLG" report sweep.jsonl --disks disks --catalog "$SRC/conf/instances/aws.ini" >aws.txt 2>aws.err || fail "aws: $(cat aws.err)"
grep -q '^recommended: .* USD per million images' aws.txt || fail "no recommendation: $(tail -15 aws.txt)"
# --weight: the ranking is the price of the mix (here 40 M images)
"$DLG" report sweep.jsonl --disks disks --catalog "$SRC/conf/instances/aws.ini" --weight io-pipeline=40 >mix.txt 2>mix.err ||
    fail "mix: $(cat mix.err)"
grep -q '^recommended: .* USD for the weighted mix' mix.txt || fail "no weighted recommendation: $(tail -5 mix.txt)"
grep -q 'mix cost = the sum of weight x cost (--weight): 40 M images of io-pipeline' mix.txt ||
    fail "weights not named: $(tail -3 mix.txt)"
grep -q "no disk profile" aws.err && fail "a shipped catalog names a disk no profile describes: $(cat aws.err)"
# a disk name no profile has (a typo) is said once, naming the catalog and instance
sed 's/^vcpus = 2$/vcpus = 2\ndisks = aws-gp4/; s/^vcpus = 4$/vcpus = 4\ndisks = aws-gp4, aws-gp3/' \
    "$SRC/tests/report/fixtures/catalog.ini" > typo.ini
"$DLG" report sweep.jsonl --disks disks --disks "$SRC/conf/disks" --catalog typo.ini >typo.txt 2>typo.err || fail "typo: $(cat typo.err)"
[ "$(grep -c 'disks = aws-gp4: no disk profile has that name' typo.err)" = 1 ] ||
    fail "typo: expected one warning for aws-gp4: $(cat typo.err)"
grep -q 'typo.ini: \[instance tiny\] disks = aws-gp4' typo.err || fail "typo: warning lacks catalog/instance: $(cat typo.err)"
grep -q 'aws-gp3: no disk' typo.err && fail "typo: aws-gp3 has a profile: $(cat typo.err)"

# the throttles' profiles (profile=disks/slow.ini, relative to where the run
# ran) found from any current folder: from the results' folder up.  The
# report opened them from its own folder: from elsewhere slow and mid had
# no limits, and nothing said so.
mkdir -p moved/results
cp sweep.csv moved/results/ && cp -r disks moved/
(cd / && "$DLG" report "$WORK/moved/results/sweep.csv" --markdown "$WORK/cwd.md" >"$WORK/cwd-root.txt" 2>"$WORK/cwd.err") ||
    fail "cwd: $(cat cwd.err)"
grep -q '^- `storage=slow`: \*\*input-bound: storage\*\* (reads .* of profile slow.s limit' cwd.md ||
    fail "cwd: slow is not judged by its profile from another folder: $(grep storage=slow cwd.md)"
[ -s cwd.err ] && fail "cwd: warned: $(cat cwd.err)"
"$DLG" report "$WORK/moved/results/sweep.csv" >cwd-work.txt 2>&1
cmp -s cwd-root.txt cwd-work.txt || fail "cwd: another answer from another folder: $(diff cwd-root.txt cwd-work.txt)"
# a profile found nowhere is said once (two storages name it), with the paths
# tried; a folder of profiles (--disks) supplies it by its file name
mkdir -p lone gone-dir
sed 's#profile=disks/[a-z]*[.]ini#profile=disks/gone.ini#' sweep.csv >lone/gone.csv
"$DLG" report lone/gone.csv >/dev/null 2>gone.err || fail "gone: $(cat gone.err)"
[ "$(grep -c 'warning: ' gone.err)" = 1 ] || fail "gone: expected one warning: $(cat gone.err)"
grep -qF "storage slow: its throttle's profile disks/gone.ini was not found (tried $WORK/lone/disks/gone.ini, $WORK/disks/gone.ini, " \
    gone.err || fail "gone: the warning lacks the storage or the paths tried: $(cat gone.err)"
grep -qF -- '--disks DIR' gone.err || fail "gone: the warning does not say what supplies it: $(cat gone.err)"
cp disks/slow.ini gone-dir/gone.ini
"$DLG" report lone/gone.csv --disks gone-dir --markdown gone.md >/dev/null 2>gone2.err || fail "gone2: $(cat gone2.err)"
[ -s gone2.err ] && fail "gone2: warned with --disks: $(cat gone2.err)"
grep -q '^- `storage=slow`: \*\*input-bound: storage\*\* (reads .* of profile slow.s limit' gone.md ||
    fail "gone2: slow is not judged by the profile --disks gave: $(grep storage=slow gone.md)"

# ---- (d) bad input: one clear line, exit 2 -----------------------------------
# expect NAME WANT-IN-STDERR ARGS...
expect() {
    local name=$1 want=$2
    shift 2
    "$DLG" report "$@" >"$name.out" 2>"$name.err"
    local rc=$?
    [ $rc = 2 ] || fail "$name: exit $rc, expected 2"
    grep -qF -- "$want" "$name.err" || fail "$name: stderr lacks '$want': $(cat $name.err)"
    [ "$(wc -l <"$name.err")" = 1 ] || fail "$name: more than one line: $(cat $name.err)"
}
python3 - <<'PY'
import csv
rows = list(csv.reader(open("sweep.csv")))
h = rows[0]
drop = h.index("throughput_ci95")
with open("noci.csv", "w", newline="") as f:
    csv.writer(f).writerows([r[:drop] + r[drop + 1:] for r in rows])
with open("nothr.csv", "w", newline="") as f:
    d = h.index("throughput")
    csv.writer(f).writerows([r[:d] + r[d + 1:] for r in rows])
v = h.index("version")
with open("v2.csv", "w", newline="") as f:
    csv.writer(f).writerows([h] + [r[:v] + ["9.9.9"] + r[v + 1:] for r in rows[1:]])
with open("short.csv", "w", newline="") as f:
    csv.writer(f).writerows([h, rows[1], rows[2][:5]])
# the csv sink ended a line cut by a crash and appended the next run's rows
with open("midcut.csv", "w", newline="") as f:
    csv.writer(f).writerows([h, rows[1], rows[2], rows[3][:2], rows[3]])
with open("allcut.csv", "w", newline="") as f:
    csv.writer(f).writerows([h, rows[1][:2]])
lines = open("sweep.jsonl").read().splitlines(keepends=True)
half = lines[0][:len(lines[0]) // 2]
open("cut.jsonl", "w").write("".join(lines) + half)
open("midcut.jsonl", "w").write(half + "\n" + "".join(lines))
PY
printf '{"measurement":"dlgauge_result","tags":{' >broken.jsonl
printf '{"measurement":"dlgauge_result" "tags":{}}\n' >bad.jsonl
printf 'time,a,b\n1,"unterminated\n' >quote.csv
expect missing-ci "missing or non-numeric column 'throughput_ci95'" noci.csv
expect missing-thr "missing column 'throughput'" nothr.csv
expect mixed "mixed dlgauge versions" sweep.csv v2.csv
expect allcut "allcut.csv: record 2 has 2 columns, the header has" allcut.csv
expect broken "broken.jsonl: line 1: cut short (an interrupted write?)" broken.jsonl
# the byte after the cut line's end: its length plus one, what wc -c counts with the newline
expect midcut-jsonl "midcut.jsonl: line 1, byte $(head -1 midcut.jsonl | wc -c): the line ends before its object does" \
    midcut.jsonl
expect bad-jsonl "bad.jsonl: line 1, byte 33: expected ',' or '}' after a value, found '\"'" bad.jsonl
expect quote "quote.csv:" quote.csv
expect nofile "cannot open" does-not-exist.csv
expect target "--target '1.5'" sweep.csv --target 1.5
expect catalog "unknown section [global]" sweep.csv --catalog sweep.ini
expect weight-amount "--weight 'io-pipeline=lots': expected NAME[/MODE]=AMOUNT" sweep.csv --weight io-pipeline=lots
expect weight-name "--weight nosuch=2: no such workload in the results" sweep.csv --weight nosuch=2
# the headline says what the table says: an estimated figure is marked, and
# instances that no measured throughput prices get no recommendation
cat >cat1.ini <<'EOF'
[catalog]
provider = T
region = r
currency = USD
source = x
retrieved = 2026-12-01
[instance a8m1]
gpus = 1
gpu = G1
vcpus = 8
memory = 1GiB
price_per_hour = 1.0
[instance a8m2]
gpus = 1
gpu = G1
vcpus = 8
memory = 2GiB
price_per_hour = 1.1
EOF
{ echo "time,cpus,job,memory,mode,status,workload,throughput,repeats,throughput_ci95,throughput_stddev,unit,version"
  echo "2026-11-29T10:00:01Z,8,j,2G,train,ok,sim,390,3,1,0.4,images,0.1.0"
  echo "2026-11-29T10:00:02Z,16,j,1G,train,ok,sim,390,3,1,0.4,images,0.1.0"
  echo "2026-11-29T10:00:03Z,16,j,2G,train,ok,sim,400,3,1,0.4,images,0.1.0"; } >est.csv
"$DLG" report est.csv --catalog cat1.ini >est.txt 2>est.err || fail "est: $(cat est.err)"
grep -q '^recommended: a8m1 .* USD per million images (est\.: cpus=8 memory=1G not measured); runner-up: a8m2 ' est.txt ||
    fail "est: the headline does not mark the estimate: $(grep recommended est.txt)"
sed 's/,39[0-9],3,1,0.4,/,0,3,0,0,/; s/,400,3,1,0.4,/,0,3,0,0,/' est.csv >zero.csv
"$DLG" report zero.csv --catalog cat1.ini >zero.txt 2>zero.err || fail "zero: $(cat zero.err)"
grep -Eq '^no recommendation: [0-9]+ instances? meets? every knee, but no measured throughput prices' zero.txt ||
    fail "zero: $(grep -E '^(recommended|no )' zero.txt)"
# one workload weighed twice: refused (the last used to win silently)
expect weight-twice "--weight io-pipeline=3: io-pipeline already has a weight (--weight io-pipeline=2)" sweep.csv --weight io-pipeline=2 --weight io-pipeline=3
# a GPU no instance has is a typo, not "no instance meets every knee" (exit 0)
expect gpu-typo "--gpu NOSUCH: no instance in the catalog has such a GPU; its GPUs: " sweep.csv \
    --catalog "$SRC/conf/instances/aws.ini" --gpu NOSUCH

# warns NAME WANT-IN-STDERR ARGS...: reported (exit 0) with one warning line
warns() {
    local name=$1 want=$2
    shift 2
    "$DLG" report "$@" >"$name.out" 2>"$name.err"
    local rc=$?
    [ $rc = 0 ] || fail "$name: exit $rc, expected 0: $(cat $name.err)"
    grep -qF -- "$want" "$name.err" || fail "$name: stderr lacks '$want': $(cat $name.err)"
    [ "$(wc -l <"$name.err")" = 1 ] || fail "$name: not one warning line: $(cat $name.err)"
}
warns short "short.csv: record 3: 5 columns, the header has" short.csv
warns midcut-csv "midcut.csv: record 4: 2 columns, the header has" midcut.csv --disks disks --markdown midcut.md
grep -q 'cut short by a crash?); 1 row skipped$' midcut-csv.err || fail "midcut.csv: no count: $(cat midcut-csv.err)"
grep -q '^- storage = mid: ' midcut.md || fail "midcut.csv: rows after the cut one lost: $(grep -A3 Knees midcut.md)"
# a last record with no line end was cut short by a crash (the csv sink's
# rule): skipped with one warning naming it and its byte, not read with a
# wrong last value, nor, cut inside quotes, the whole file refused
head -c -3 sweep.csv >tailcut.csv
last=$(wc -l <sweep.csv) at=$(head -n -1 sweep.csv | wc -c)
warns tailcut "tailcut.csv: record $last, at byte $at, has no line end (cut short by a crash?); skipped" tailcut.csv \
    --disks disks --markdown tailcut.md
grep -q '^- storage = mid: ' tailcut.md || fail "tailcut.csv: rows before the cut one lost: $(grep -A3 Knees tailcut.md)"
{ head -n -1 sweep.csv; printf '2026-11-29T10:00:01Z,"a cut, quoted\nfield'; } >quotecut.csv
warns quotecut "quotecut.csv: record $last, at byte $at, has no line end (cut short by a crash?); skipped" quotecut.csv
warns cut-jsonl "cut.jsonl: line $(($(wc -l <sweep.jsonl) + 1)): cut short (an interrupted write?), skipped" cut.jsonl \
    --disks disks --markdown cut.md
grep -q '^- storage = mid: ' cut.md || fail "cut.jsonl: rows before the cut line lost: $(grep -A3 Knees cut.md)"

if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed (outputs kept in $WORK)" >&2
    exit 1
fi
echo "all checks passed"
