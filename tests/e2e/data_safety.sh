# What mkdata and preprocess refuse to replace, through the real CLI (an
# audit's cases).  Both replace what has their own format: mkdata a tree
# with its marker and its exact lists (mkdata text: any file), preprocess
# by the format alone (a user's own .rec, LMDB or mean image is replaced,
# as im2rec would); the rest is refused:
# - mkdata images over a real ImageNet-layout train folder: refused before
#   any work, exit 2 (bad input), one line naming an entry, files kept;
# - preprocess output=lmdb: over a folder holding an LMDB and a README,
#   output=recordio: over its own input list or over a text file,
#   mean_output over the input list or a text file: refused before any
#   cell, in run and --dry-run alike (exit 2), files kept;
# - preprocess with no complete pass reports output_bytes = 0, not the
#   bytes of the .part it dropped.
#   bash data_safety.sh DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK_DIR
. "$(dirname "$0")/lib.sh"
. "$E2E/prep_run.sh"

# --- mkdata
mkdir -p imnet/train/n01440764 imnet/train/n01443537
echo precious >imnet/train/n01440764/n01440764_10026.JPEG
echo precious >imnet/train/n01443537/n01443537_2.JPEG
run_cli imnet mkdata images --out imnet --classes 2 --images 4
expect_rc imnet 2
[ "$(wc -l <imnet.err)" = 1 ] || fail "imnet: not one line: $(cat imnet.err)"
grep -Eq '^dlgauge mkdata: imnet/train: exists and holds imnet/train/n0144[0-9]+, but no \.dlgauge-mkdata' imnet.err ||
    fail "imnet: $(cat imnet.err)"
for f in n01440764/n01440764_10026.JPEG n01443537/n01443537_2.JPEG; do
    [ "$(cat "imnet/train/$f" 2>/dev/null)" = precious ] || fail "imnet: train/$f lost"
done
[ ! -e imnet/train.part ] && [ ! -e imnet/train.txt ] || fail "imnet: work was done: $(ls imnet)"
# its own tree it replaces (and a failed write, not a refusal, stays 1: tests/data)
run_cli own mkdata images --out own --classes 2 --images 4
expect_rc own 0
run_cli own2 mkdata images --out own --classes 3 --images 6
expect_rc own2 0
[ -f own/train/n00000002/n00000002_1.JPEG ] || fail "own2: not replaced: $(ls -R own)"

# --- preprocess
run_cli data mkdata images --out data --classes 2 --images 7 --seed 3 --threads 1
expect_rc data 0
awk -v OFS='\t' '{ print NR - 1, $2, $1 }' data/train.txt >data/trap.lst
prep_ini p.ini pre <<'EOT'
iterations = 7
warmup = 0
EOT
run_cli made run p.ini --set pre.output=lmdb:userlmdb
expect_rc made 0
echo mine >userlmdb/README
sum0=$(cksum userlmdb/data.mdb)
for mode in run dry; do
    args=(run p.ini --set pre.output=lmdb:userlmdb)
    [ $mode = dry ] && args+=(--dry-run)
    run_cli "lmdb-$mode" "${args[@]}"
    expect_one_error "lmdb-$mode" 2 'output = lmdb:userlmdb: exists and holds README'
done
[ "$(cat userlmdb/README)" = mine ] && [ "$(cksum userlmdb/data.mdb)" = "$sum0" ] && [ -f userlmdb/lock.mdb ] ||
    fail "lmdb: userlmdb changed: $(ls userlmdb)"
[ ! -e userlmdb.part ] || fail "lmdb: userlmdb.part left"

cp data/trap.lst trap.keep
echo 'my notes' >victim.txt
for mode in run dry; do
    extra=()
    [ $mode = dry ] && extra=(--dry-run)
    run_cli "trap-$mode" run p.ini --set pre.input=data/trap.lst --set pre.output=recordio:data/trap.lst "${extra[@]}"
    expect_one_error "trap-$mode" 2 'output = recordio:data/trap\.lst: is the input'
    run_cli "victim-$mode" run p.ini --set pre.output=recordio:victim.txt "${extra[@]}"
    expect_one_error "victim-$mode" 2 'output = recordio:victim\.txt: exists and is not a RecordIO file'
done
for mode in run dry; do
    extra=(--set pre.resize_width=16 --set pre.resize_height=16)
    [ $mode = dry ] && extra+=(--dry-run)
    run_cli "mean-trap-$mode" run p.ini --set pre.input=data/trap.lst --set pre.mean_output=data/trap.lst "${extra[@]}"
    expect_one_error "mean-trap-$mode" 2 'mean_output = data/trap\.lst: is the input'
    run_cli "mean-victim-$mode" run p.ini --set pre.mean_output=victim.txt "${extra[@]}"
    expect_one_error "mean-victim-$mode" 2 'mean_output = victim\.txt: exists and is not a BlobProto'
done
cmp -s data/trap.lst trap.keep || fail "trap: data/trap.lst changed"
[ "$(cat victim.txt)" = 'my notes' ] || fail "victim: victim.txt changed"

# --- output_bytes: 3 of 7 images, no complete pass, nothing written
rm -f run.jsonl
run_cli short run p.ini --set pre.output=recordio:short.rec --set pre.iterations=3
expect_rc short 0
grep -q 'no complete pass (7 images each): output not written' short.err || fail "short: $(cat short.err)"
[ ! -e short.rec ] && [ ! -e short.rec.part ] || fail "short: wrote $(ls short.rec*)"
got="$(field pre output_bytes) $(field pre write_mb_per_s)"
case $got in "0 0.0" | "0 0" | "0 ") ;; *) fail "short: output_bytes, write_mb_per_s = $got, expected 0 0" ;; esac
finish
