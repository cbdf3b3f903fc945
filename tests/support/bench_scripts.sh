#!/usr/bin/env bash
# The peer benchmarks of scripts/bench/ against fake peers and a fake
# dlgauge side (no disk, no PyTorch, seconds): the work they hand each side
# matches, the ratio is dlgauge over the peer's median, and a missing or
# failing peer stops them with a non-zero exit instead of a ratio against
# nothing.
# usage: bench_scripts.sh SOURCE_DIR
set -euo pipefail
src=$1
bench=$src/scripts/bench
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; [ -f "$t/out" ] && cat "$t/out"; exit 1; }
# run NAME WANT_RC CMD...: runs CMD with stdout and stderr in $t/out
run() {
  local rc=0
  "${@:3}" >"$t/out" 2>&1 || rc=$?
  [ "$rc" = "$2" ] || fail "$1: exit $rc, want $2"
}
# row CASE COLUMN: field COLUMN of the table row of CASE in $t/out
row() { awk -v c="$1" -v k="$2" '$1 == c && NF > 3 {print $k; exit}' "$t/out"; }

mkdir -p "$t/bin" "$t/build/bin" "$t/build/lib/dlgauge" "$t/vm"
touch "$t/build/lib/dlgauge/tools.so" "$t/build/lib/dlgauge/mxnet.so"
echo 0 >"$t/vm/nr_hugepages"
: >"$t/vm/drop_caches"
# count FILE: 0, 1, 2, ... on successive calls (the fakes' round)
cat >"$t/count" <<'EOF'
n=$(cat "$1" 2>/dev/null || echo 0); echo $((n + 1)) >"$1"; echo "$n"
EOF

# fio: 100 MB/s always.  storage_bench: 100, 400, 200 MB/s in turn, so the
# median (200) differs from the mean (233): ratio 2.000.  The io workload:
# 200 MB/s.
cat >"$t/bin/fio" <<EOF
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo fio-3.33; exit 0; }
echo "\$*" >>"$t/fio.args"
echo '{"jobs": [{"read": {"bw_bytes": 1e8, "iops": 24414, "lat_ns": {"percentile": {"50.000000": 5000}}}}]}'
EOF
cat >"$t/build/bin/storage_bench" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$t/bench.args"
mb=(100 400 200); bw=\$(( mb[\$(bash "$t/count" "$t/n.bench") % 3] * 1000000 ))
echo "{\"bw_bytes\": \$bw, \"iops\": \$((bw / 4096))}"
EOF
# dlgauge: copies each job file aside; for io jobs it writes the JSON sink
# line, for the others a CSV row per job (p50 100 ms: 10 items/s at batch 1)
cat >"$t/build/bin/dlgauge" <<EOF
#!/usr/bin/env bash
ini=\${@: -1}
cat "\$ini" >>"$t/dlg.ini"
out=\$(sed -n 's/^path = //p' "\$ini" | head -1)
if grep -q '^workload = io' "\$ini"; then
  bw=200000000
  echo "{\"measurement\": \"dlgauge_result\", \"fields\": {\"throughput\": \$bw, \"iops\": \$((bw / 4096)), \"io_lat_p50_us\": 3}}" >"\$out"
else
  echo "job,status,latency_p50_us,rss_peak_bytes,peak_source,pct_peak,gflops,dnnl_isa" >"\$out"
  sed -n 's/^\[job \(.*\)\]$/\1,ok,100000,1048576,fake peak,1,1,fake/p' "\$ini" >>"\$out"
fi
EOF
# a peer python: imports work; the peer scripts print a median of 0.2 s a
# step (5 items/s at batch 1), or fail when FAKE_PEER_FAIL is set
cat >"$t/bin/peer-python" <<'EOF'
#!/usr/bin/env bash
[ "$1" = -c ] && exit 0
[ -n "${FAKE_PEER_FAIL:-}" ] && exit 1
echo '{"median_s": 0.2, "rss_peak_bytes": 1048576, "torch": "fake", "openblas_core": "fake"}'
EOF
printf '#!/bin/sh\nexit 1\n' >"$t/bin/no-python"
printf '#!/bin/sh\n' >"$t/bin/sync" # the drop before each run: nothing to flush here
chmod +x "$t/bin/"* "$t/build/bin/"*
export PATH=$t/bin:$PATH PROC_SYS_VM=$t/vm RUNTIME=1 REPEATS=1 ROUNDS=1 SIZE_MB=1 WARM_MB=1

# The shared median: the middle one, or the mean of the middle two.
got=$(. "$bench/bench_lib.sh" && printf '1\n4\n2\n3\n' | median)
[ "$got" = 2.5 ] || fail "median of 1 2 3 4: $got, want 2.5"

# storage-vs-fio.sh: buffered random reads with readahead off on both sides
# (fio's default fadvise_hint; dlgauge's posix advice = random).
run storage-vs-fio 0 env FILE="$t/f.bin" REPEATS=3 bash "$bench/storage-vs-fio.sh" "$t/build"
grep -q '^posix .*rand 4096 1 .*advice=random' "$t/bench.args" ||
  fail "storage-vs-fio: dlgauge's posix random case reads without advice=random: $(grep '^posix' "$t/bench.args" | head -1)"
! grep -q 'fadvise_hint=0' "$t/fio.args" || fail "storage-vs-fio: fio's fadvise hint turned off"
[ "$(row rand-4KiB-qd1-posix 6)" = 2.000 ] || fail "storage-vs-fio: ratio $(row rand-4KiB-qd1-posix 6), want 2.000"
[ "$(row rand-4KiB-qd1-posix 2)" = 200.0 ] || fail "storage-vs-fio: dlgauge MB/s is no median"
echo "ok: storage-vs-fio.sh"

# io-vs-fio.sh: the same for the io workload's buffered cases
run io-vs-fio 0 env FILE="$t/io.bin" bash "$bench/io-vs-fio.sh" "$t/build"
python3 - "$t/dlg.ini" <<'PY' || fail "io-vs-fio: a buffered random job reads without advice = random"
import re, sys
text = open(sys.argv[1]).read()
for job in re.findall(r"\[job (rand-4KiB-qd1-posix\S*)\]\n(.*?)(?=\n\[|\Z)", text, re.S):
    storage = re.search(r"^storage = (\S+)", job[1], re.M).group(1)
    sect = re.search(r"\[storage %s\]\n(.*?)(?=\n\[|\Z)" % re.escape(storage), text, re.S)
    if not sect or "advice = random" not in sect.group(1):
        sys.exit(f"{job[0]}: storage {storage}")
PY
[ "$(row rand-4KiB-qd1-posix 8)" = 2.000 ] || fail "io-vs-fio: ratio $(row rand-4KiB-qd1-posix 8), want 2.000"
echo "ok: io-vs-fio.sh"

# The PyTorch scripts: no PyTorch stops them before anything runs ...
for s in cnn-vs-pytorch mxnet-vs-pytorch; do
  rm -f "$t/dlg.ini"
  run "$s, no PyTorch" 2 env PEER_PYTHON="$t/bin/no-python" bash "$bench/$s.sh" "$t/build" 2
  grep -q 'peer missing' "$t/out" || fail "$s: no PyTorch, and it does not say so"
  [ ! -f "$t/dlg.ini" ] || fail "$s: measured dlgauge with no peer to compare"
done
run "cnn-vs-pytorch, unknown case" 2 env PEER_PYTHON="$t/bin/peer-python" CASES=alexnet-infer-b32 \
  bash "$bench/cnn-vs-pytorch.sh" "$t/build" 2
grep -q "no case 'alexnet-infer-b32'" "$t/out" || fail "cnn-vs-pytorch: an unknown case is not named"
# ... the ratio is dlgauge's items/s over PyTorch's (10 / 5) ...
run "cnn-vs-pytorch, fake peer" 0 env PEER_PYTHON="$t/bin/peer-python" CASES=alexnet-infer-b1 \
  bash "$bench/cnn-vs-pytorch.sh" "$t/build" 2
[ "$(row alexnet-infer-b1 5)" = 2.00 ] || fail "cnn-vs-pytorch: ratio $(row alexnet-infer-b1 5), want 2.00"
run "mxnet-vs-pytorch, fake peer" 0 env PEER_PYTHON="$t/bin/peer-python" CASES=inception-infer-b1 \
  BATCH_IMG=1 bash "$bench/mxnet-vs-pytorch.sh" "$t/build" 2
[ "$(row inception-infer-b1 5)" = 2.00 ] || fail "mxnet-vs-pytorch: ratio $(row inception-infer-b1 5), want 2.00"
# ... and a peer failing in every format leaves no ratio and a non-zero exit
run "cnn-vs-pytorch, failing peer" 1 env PEER_PYTHON="$t/bin/peer-python" FAKE_PEER_FAIL=1 \
  CASES=alexnet-infer-b1 bash "$bench/cnn-vs-pytorch.sh" "$t/build" 2
run "mxnet-vs-pytorch, failing peer" 1 env PEER_PYTHON="$t/bin/peer-python" FAKE_PEER_FAIL=1 \
  CASES=lstm-medium-infer bash "$bench/mxnet-vs-pytorch.sh" "$t/build" 2
grep -q 'lstm-medium-infer .*no ratio' "$t/out" || fail "mxnet-vs-pytorch: a case without a peer figure is not named"
echo "ok: cnn-vs-pytorch.sh, mxnet-vs-pytorch.sh"

# The other Python peers: missing, they stop the script the same way.
run "pipeline-vs-torchvision, no torchvision" 2 env PEER_PYTHON="$t/bin/no-python" \
  bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
# pipeline-vs-torchvision.sh: the peer gets dlgauge's workers, batches, batch
# and crop, and decodes at the window's DCT reduction (Image.draft) unless
# PEER_DECODE=full; dlgauge 200 img/s over the peer's 100 is 2.00x.
cat >"$t/build/bin/pipe_bench" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$t/pipe.args"
echo "images_per_s 200.0"
EOF
cat >"$t/bin/pipe-peer-python" <<EOF
#!/usr/bin/env bash
[ "\$1" = -c ] && exit 0
echo "\${*:2}" >>"$t/peer.args"
case " \$* " in
*" --about "*) echo "peer: fake PIL" ;;
*" --check "*) echo "check: fake" ;;
*) echo "images_per_s 100.0" ;;
esac
EOF
chmod +x "$t/build/bin/pipe_bench" "$t/bin/pipe-peer-python"
mkdir -p "$t/pdata/train/n0"
echo "train/n0/a.JPEG 0" >"$t/pdata/train.txt"
: >"$t/pdata/train/n0/a.JPEG"
run "pipeline-vs-torchvision, fake peer" 0 env PEER_PYTHON="$t/bin/pipe-peer-python" \
  DATA="$t/pdata" BATCHES=7 REPEATS=1 bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
[ "$(row 1 4)" = 2.00x ] || fail "pipeline-vs-torchvision: ratio $(row 1 4), want 2.00x"
for w in 1 2; do
  grep -qx "loader files:$t/pdata/train.txt $w 7 32 224" "$t/pipe.args" ||
    fail "pipeline-vs-torchvision: dlgauge not run with $w threads: $(cat "$t/pipe.args")"
  grep -qx "$t/pdata $t/pdata/train.txt $w 7 --batch 32 --crop 224 --decode draft" "$t/peer.args" ||
    fail "pipeline-vs-torchvision: peer not run as dlgauge with $w workers, draft: $(cat "$t/peer.args")"
done
grep -qx -- "--about" "$t/peer.args" || fail "pipeline-vs-torchvision: the peer's PIL is not printed"
grep -q "^check: fake" "$t/out" || fail "pipeline-vs-torchvision: no draft check"
rm "$t/peer.args"
run "pipeline-vs-torchvision, full decode" 0 env PEER_PYTHON="$t/bin/pipe-peer-python" \
  DATA="$t/pdata" BATCHES=7 REPEATS=1 CHECK=0 PEER_DECODE=full \
  bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
grep -q -- "--decode full" "$t/peer.args" || fail "pipeline-vs-torchvision: PEER_DECODE=full not passed"
if grep -q -- "--check" "$t/peer.args"; then fail "pipeline-vs-torchvision: CHECK=0 still checks"; fi
rm "$t/pipe.args"
run "pipeline-vs-torchvision, bad PEER_DECODE" 2 env PEER_PYTHON="$t/bin/pipe-peer-python" \
  DATA="$t/pdata" PEER_DECODE=half bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
[ ! -e "$t/pipe.args" ] || fail "pipeline-vs-torchvision: a bad PEER_DECODE measured dlgauge first"
run "lineproto-rate, no influxdb" 2 env PEER_PYTHON="$t/bin/no-python" bash "$bench/lineproto-rate.sh"
grep -q 'peer missing' "$t/out" || fail "lineproto-rate: no influxdb, and it does not say so"
echo "ok: pipeline-vs-torchvision.sh, lineproto-rate.sh"

# augment-vs-opencv.sh: no cv2 stops it before anything runs; bad numbers
# too; with fakes, dlgauge's aug_bench and the peer get the same image,
# folder and reps, and the ratio is OpenCV's time over dlgauge's (warp
# 200 / 100 us: 2.00x; hls 25 / 50 us: 0.50x).
run "augment-vs-opencv, no cv2" 2 env PEER_PYTHON="$t/bin/no-python" \
  bash "$bench/augment-vs-opencv.sh" "$t/build"
grep -q 'python3-opencv' "$t/out" || fail "augment-vs-opencv: no cv2, and it does not say which package"
cat >"$t/build/bin/aug_bench" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$t/aug.args"
printf 'isa_cpu avx2\nisa_hls fake\nisa_warp fake\nwarp_us 100.0\nhls_us 50.0\n'
EOF
cat >"$t/bin/aug-peer-python" <<EOF
#!/usr/bin/env bash
[ "\$1" = -c ] && exit 0
echo "\${*:2}" >>"$t/augpeer.args"
case " \$* " in
*" --about "*) echo "opencv fake" ;;
*) printf 'warp_us 200.0\nhls_us 25.0\nshift_us 1.0\nwarp_diff 0 0\nhls_diff 0 0\n' ;;
esac
EOF
chmod +x "$t/build/bin/aug_bench" "$t/bin/aug-peer-python"
run "augment-vs-opencv, bad REPS" 2 env PEER_PYTHON="$t/bin/aug-peer-python" DATA="$t/pdata" \
  REPS=x bash "$bench/augment-vs-opencv.sh" "$t/build"
[ ! -e "$t/aug.args" ] || fail "augment-vs-opencv: a bad REPS measured dlgauge first"
run "augment-vs-opencv, fake peer" 0 env PEER_PYTHON="$t/bin/aug-peer-python" DATA="$t/pdata" \
  IMAGES=1 REPS=7 ROUNDS=1 SIDE=300 CROP=200 bash "$bench/augment-vs-opencv.sh" "$t/build"
[ "$(row warp 4)" = 2.00x ] || fail "augment-vs-opencv: warp ratio $(row warp 4), want 2.00x"
[ "$(row hls 4)" = 0.50x ] || fail "augment-vs-opencv: hls ratio $(row hls 4), want 0.50x"
read -r img dir reps side crop <"$t/aug.args"
[ "$img $reps $side $crop" = "$t/pdata/train/n0/a.JPEG 7 300 200" ] ||
  fail "augment-vs-opencv: aug_bench got $(cat "$t/aug.args")"
grep -qx -- "$dir 7" "$t/augpeer.args" || fail "augment-vs-opencv: the peer did not get aug_bench's folder and reps: $(cat "$t/augpeer.args")"
echo "ok: augment-vs-opencv.sh"
