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
# what a script keeps for a second look (a table it could not make) goes
# under $t, not /tmp, where every run of the suite left a folder
export TMPDIR=$t/tmp
mkdir -p "$TMPDIR"
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
# line, for the others a CSV row per job (p50 100 ms: 10 items/s at batch 1,
# or FAKE_PASSIVE_P50 us under OMP_WAIT_POLICY=PASSIVE, or the n-th of
# FAKE_P50S on the n-th call; GFLOP/s = p50 / 1000 and winograd_layers = n,
# so that a row's figures tell which run they are from; throughput 10
# items/s alone, 18 as 2 ranks; busbw 2 GB/s, op time 10 us mean, 9 us
# median; ranks: as many as the fake mpirun started, or FAKE_RANKS)
cat >"$t/build/bin/dlgauge" <<EOF
#!/usr/bin/env bash
[ "\$1" = sysinfo ] && { echo "ranks:      1 (no launcher); mpirun -np N starts N with Fake MPI 9.9"; exit 0; }
# mkdata images: as the real one, refuses fewer images than classes
if [ "\$1" = mkdata ]; then
  echo "\$*" >>"$t/mkdata.args"
  while [ \$# -gt 0 ]; do case \$1 in --out) o=\$2 ;; --classes) c=\$2 ;; --images) n=\$2 ;; esac; shift; done
  [ "\$n" -ge "\$c" ] || { echo "--images \$n is fewer than --classes \$c" >&2; exit 2; }
  mkdir -p "\$o"; for i in \$(seq "\$n"); do : >"\$o/\$i.jpg"; echo "\$i.jpg 0" >>"\$o/train.txt"; done
  exit 0
fi
ini=\${@: -1}
cat "\$ini" >>"$t/dlg.ini"
# under ONEDNN_VERBOSE=1, a primitive's exec line: FAKE_IMPL in FAKE_LAYOUT
[ "\${ONEDNN_VERBOSE:-}" = 1 ] &&
  echo "onednn_verbose,exec,cpu,convolution,\${FAKE_IMPL:-jit:avx2},forward_training,src_f32::blocked:\${FAKE_LAYOUT:-aBcd8b}:f0 wei_f32::blocked:ABcd8b8a:f0 dst_f32::blocked:\${FAKE_LAYOUT:-aBcd8b}:f0,,alg:convolution_direct,mb1,0.5"
out=\$(sed -n 's/^path = //p' "\$ini" | head -1)
if grep -q '^workload = io' "\$ini"; then
  bw=200000000
  echo "{\"measurement\": \"dlgauge_result\", \"fields\": {\"throughput\": \$bw, \"iops\": \$((bw / 4096)), \"io_lat_p50_us\": 3}}" >"\$out"
else
  n=\$(bash "$t/count" "$t/n.dlg")
  p50=100000
  [ -n "\${FAKE_P50S:-}" ] && { read -ra l <<<"\$FAKE_P50S"; p50=\${l[n % \${#l[@]}]}; }
  [ "\${OMP_WAIT_POLICY:-}" = PASSIVE ] && [ -n "\${FAKE_PASSIVE_P50:-}" ] && p50=\$FAKE_PASSIVE_P50
  echo "job,status,latency_p50_us,rss_peak_bytes,peak_source,pct_peak,gflops,dnnl_isa,winograd_layers,ranks,throughput,busbw_bytes_per_s,op_time_us,op_median_us,error" >"\$out"
  awk -v np="\${FAKE_RANKS:-\${FAKE_NP:-1}}" -v rate="\$((\${FAKE_NP:-1} == 2 ? 18 : 10))" -v p50="\$p50" -v n="\$n" '/^\[job .*\]\$/ {
    print substr(\$0, 6, length(\$0) - 6) ",ok," p50 ",1048576,fake peak,1," p50 / 1000 ",fake," n "," np "," rate ",2e9,10,9,"}' "\$ini" >>"\$out"
fi
EOF
# mpirun: records its line, then starts the command once, as rank 0 of
# -np N would be (FAKE_NP=N); mpicc "builds" a peer that records its work
# and prints busbw 1 GB/s, mean op time 20 us, median 18 us
cat >"$t/bin/mpirun" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$t/mpirun.args"
np=1
while [ \$# -gt 0 ]; do
  case \$1 in -np) np=\$2; shift 2 ;; --mca) shift 3 ;; --bind-to | --map-by) shift 2 ;; -*) shift ;; *) break ;; esac
done
FAKE_NP=\$np exec "\$@"
EOF
cat >"$t/bin/mpicc" <<EOF
#!/usr/bin/env bash
while [ "\$1" != -o ]; do shift; done
cat >"\$2" <<'PEER'
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo "Fake MPI 9.9"; exit 0; }
echo "\$*" >>"$t/mpipeer.args"
echo "1e9 5e8 20.0 18.0"
PEER
chmod +x "\$2"
EOF
# a peer python: imports work; the peer scripts print a median of 0.2 s a
# step (5 items/s at batch 1), or FAKE_PEER_PASSIVE_S under
# OMP_WAIT_POLICY=PASSIVE, or fail when FAKE_PEER_FAIL is set
cat >"$t/bin/peer-python" <<'EOF'
#!/usr/bin/env bash
[ "$1" = -c ] && exit 0
[ -n "${FAKE_PEER_FAIL:-}" ] && exit 1
s=0.2
[ "${OMP_WAIT_POLICY:-}" = PASSIVE ] && s=${FAKE_PEER_PASSIVE_S:-0.2}
echo "{\"median_s\": $s, \"rss_peak_bytes\": 1048576, \"torch\": \"fake\", \"openblas_core\": \"fake\"}"
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
# ... each side runs at its best OpenMP wait policy (PyTorch 10 img/s
# under PASSIVE, 5 under libgomp's default; dlgauge 10 under the default,
# 5 under PASSIVE: 1.00, not 2.00 nor 0.50), which the table names, with
# the load average ...
for s in cnn-vs-pytorch:alexnet-infer-b1 mxnet-vs-pytorch:inception-infer-b1; do
  run "${s%:*}, wait policies" 0 env PEER_PYTHON="$t/bin/peer-python" CASES="${s#*:}" BATCH_IMG=1 \
    FAKE_PEER_PASSIVE_S=0.1 FAKE_PASSIVE_P50=200000 OMP_WAIT_POLICY=ACTIVE bash "$bench/${s%:*}.sh" "$t/build" 2
  [ "$(row "${s#*:}" 5)" = 1.00 ] || fail "${s%:*}: ratio $(row "${s#*:}" 5) across wait policies, want 1.00"
  won=$(awk -v c="${s#*:}" '$1 == c && NF > 3 {print $(NF - 1), $NF; exit}' "$t/out")
  [ "$won" = "default PASSIVE" ] || fail "${s%:*}: winning policies (dlgauge, PyTorch) '$won', want 'default PASSIVE'"
  [ "$(grep -c 'load average' "$t/out")" -ge 3 ] || fail "${s%:*}: load average not printed before, during and after"
done
run "cnn-vs-pytorch, bad WAIT_POLICIES" 2 env PEER_PYTHON="$t/bin/peer-python" WAIT_POLICIES=spin \
  bash "$bench/cnn-vs-pytorch.sh" "$t/build" 2
grep -q "WAIT_POLICIES: 'spin'" "$t/out" || fail "cnn-vs-pytorch: a bad wait policy is not named"
# ... and GFLOP/s and winograd_layers come from the median round (p50 200
# ms of 100, 200, 300: the second run), not the last
for s in cnn-vs-pytorch:alexnet-infer-b1 mxnet-vs-pytorch:inception-infer-b1; do
  rm -f "$t/n.dlg"
  run "${s%:*}, median round" 0 env PEER_PYTHON="$t/bin/peer-python" CASES="${s#*:}" BATCH_IMG=1 ROUNDS=3 \
    WAIT_POLICIES=default FAKE_P50S="100000 200000 300000" bash "$bench/${s%:*}.sh" "$t/build" 2
  case ${s%:*} in cnn-vs-pytorch) want="200.0 GFLOP/s, isa fake, winograd_layers 1" ;; *) want="isa fake, winograd_layers 1" ;; esac
  grep -q "median round: $want" "$t/out" || fail "${s%:*}: the median round's figures are not printed ('$want')"
done
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
# PEER_DECODE=full, which dlgauge then runs with too (jpeg_scale = full);
# dlgauge 200 img/s over the peer's 100 is 2.00x.
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
  grep -qx "loader files:$t/pdata/train.txt $w 7 32 224 auto" "$t/pipe.args" ||
    fail "pipeline-vs-torchvision: dlgauge not run with $w threads: $(cat "$t/pipe.args")"
  grep -qx "$t/pdata $t/pdata/train.txt $w 7 --batch 32 --crop 224 --decode draft" "$t/peer.args" ||
    fail "pipeline-vs-torchvision: peer not run as dlgauge with $w workers, draft: $(cat "$t/peer.args")"
done
grep -qx -- "--about" "$t/peer.args" || fail "pipeline-vs-torchvision: the peer's PIL is not printed"
grep -q "^check: fake" "$t/out" || fail "pipeline-vs-torchvision: no draft check"
rm "$t/peer.args" "$t/pipe.args"
run "pipeline-vs-torchvision, full decode" 0 env PEER_PYTHON="$t/bin/pipe-peer-python" \
  DATA="$t/pdata" BATCHES=7 REPEATS=1 CHECK=0 PEER_DECODE=full \
  bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
grep -q -- "--decode full" "$t/peer.args" || fail "pipeline-vs-torchvision: PEER_DECODE=full not passed"
grep -qx "loader files:$t/pdata/train.txt 1 7 32 224 full" "$t/pipe.args" ||
  fail "pipeline-vs-torchvision: PEER_DECODE=full, dlgauge not run with jpeg_scale = full: $(cat "$t/pipe.args")"
if grep -q -- "--check" "$t/peer.args"; then fail "pipeline-vs-torchvision: CHECK=0 still checks"; fi
rm "$t/pipe.args"
run "pipeline-vs-torchvision, bad PEER_DECODE" 2 env PEER_PYTHON="$t/bin/pipe-peer-python" \
  DATA="$t/pdata" PEER_DECODE=half bash "$bench/pipeline-vs-torchvision.sh" "$t/build"
[ ! -e "$t/pipe.args" ] || fail "pipeline-vs-torchvision: a bad PEER_DECODE measured dlgauge first"
run "lineproto-rate, no influxdb" 2 env PEER_PYTHON="$t/bin/no-python" bash "$bench/lineproto-rate.sh"
grep -q 'peer missing' "$t/out" || fail "lineproto-rate: no influxdb, and it does not say so"
# lineproto-rate.sh measures the formatter the build ships: the driver
# linked against the build's libdlg_lineproto.a and libdlg_sinkutil.a by
# the build's compiler with the target's flags (a fake cc "builds" a driver
# formatting 2000 points/s; the peer 1000: 2.0x); no library, no figure.
mkdir -p "$t/lpbuild/sinks/influx/CMakeFiles/dlg_lineproto.dir" "$t/lpbuild/sinks/common"
printf '#!/usr/bin/env bash\n[ "$1" = -c ] && exit 0\necho "1000 1.0"\n' >"$t/bin/lp-peer-python"
cat >"$t/bin/fake-cc" <<EOF
#!/usr/bin/env bash
echo "\$*" >"$t/cc.args"
while [ "\$1" != -o ]; do shift; done
printf '#!/bin/sh\\necho "2000 2.0"\\n' >"\$2"
chmod +x "\$2"
EOF
chmod +x "$t/bin/lp-peer-python" "$t/bin/fake-cc"
echo "CMAKE_C_COMPILER:FILEPATH=$t/bin/fake-cc" >"$t/lpbuild/CMakeCache.txt"
printf 'C_DEFINES = -DFAKE_DEF\n\nC_FLAGS = -O2 -fake-flag\n' >"$t/lpbuild/sinks/influx/CMakeFiles/dlg_lineproto.dir/flags.make"
run "lineproto-rate, no library" 1 env PEER_PYTHON="$t/bin/lp-peer-python" bash "$bench/lineproto-rate.sh" "$t/lpbuild"
grep -q 'libdlg_lineproto.a' "$t/out" || fail "lineproto-rate: a build without the formatter's library is not named"
touch "$t/lpbuild/sinks/influx/libdlg_lineproto.a" "$t/lpbuild/sinks/common/libdlg_sinkutil.a"
run "lineproto-rate, fake build" 0 env PEER_PYTHON="$t/bin/lp-peer-python" bash "$bench/lineproto-rate.sh" "$t/lpbuild"
for want in "-DFAKE_DEF -O2 -fake-flag " "$t/lpbuild/sinks/influx/libdlg_lineproto.a $t/lpbuild/sinks/common/libdlg_sinkutil.a"; do
  grep -q -- "$want" "$t/cc.args" || fail "lineproto-rate: the driver is not built with '$want': $(cat "$t/cc.args")"
done
grep -q -- 'with: -DFAKE_DEF -O2 -fake-flag' "$t/out" || fail "lineproto-rate: the build's flags are not printed"
grep -q 'ratio dlgauge/python *2.0x' "$t/out" || fail "lineproto-rate: ratio not 2000 / 1000"
# decode-vs-tjbench.sh: 6 images make a data set (fewer classes than the
# default 8), and the SIMD line says what it is from: libjpeg-turbo reports
# none, so the variables set and the CPU's flags, named as such
cat >"$t/bin/tjbench" <<'EOF'
#!/bin/sh
echo "RGB  (TD)  YCbCr  4:2:0    100    100     N/A     N/A     10.00"
EOF
cat >"$t/build/bin/pipe_bench" <<'EOF'
#!/bin/sh
printf 'full_mpix_per_s 20.0\nfull_images_per_s 2000.0\nhalf_images_per_s 3000.0\n'
EOF
chmod +x "$t/bin/tjbench" "$t/build/bin/pipe_bench"
run "decode-vs-tjbench, 6 images" 0 env IMAGES=6 DATA="$t/ddata" BENCHTIME=0.01 REPEATS=1 \
  bash "$bench/decode-vs-tjbench.sh" "$t/build"
[ "$(grep -c . "$t/ddata/train.txt")" = 6 ] || fail "decode-vs-tjbench: no 6-image data set: $(cat "$t/mkdata.args")"
grep -q '^full size, Mpixels/s (median) *20.00 *10.00 *2.00x' "$t/out" || fail "decode-vs-tjbench: ratio not 20 / 10"
grep -q '^SIMD: not reported by libjpeg-turbo.*JSIMD_\* set: none.*CPU flags' "$t/out" ||
  fail "decode-vs-tjbench: the SIMD line does not say where it is from"
echo "ok: pipeline-vs-torchvision.sh, lineproto-rate.sh, decode-vs-tjbench.sh"

# augment-vs-opencv.sh: no cv2 stops it before anything runs; bad numbers
# too; with fakes, dlgauge's aug_bench and the peer get the same image,
# folder and reps, and the ratio is OpenCV's time over dlgauge's (warp
# 200 / 100 us: 2.00x; hls 25 / 50 us: 0.50x; area2x 90 / 30 us: 3.00x).
run "augment-vs-opencv, no cv2" 2 env PEER_PYTHON="$t/bin/no-python" \
  bash "$bench/augment-vs-opencv.sh" "$t/build"
grep -q 'python3-opencv' "$t/out" || fail "augment-vs-opencv: no cv2, and it does not say which package"
cat >"$t/build/bin/aug_bench" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$t/aug.args"
printf 'isa_cpu avx2\nisa_hls fake\nisa_warp fake\nisa_area fake-area\nwarp_us 100.0\nhls_us 50.0\nhalf_us 30.0\n'
EOF
cat >"$t/bin/aug-peer-python" <<EOF
#!/usr/bin/env bash
[ "\$1" = -c ] && exit 0
echo "\${*:2}" >>"$t/augpeer.args"
case " \$* " in
*" --about "*) echo "opencv fake" ;;
*) printf 'warp_us 200.0\nhls_us 25.0\nshift_us 1.0\nwarp_diff 0 0\nhls_diff 0 0\nhalf_us 90.0\n' ;;
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
[ "$(row area2x 4)" = 3.00x ] || fail "augment-vs-opencv: area2x ratio $(row area2x 4), want 3.00x"
read -r img dir reps side crop <"$t/aug.args"
[ "$img $reps $side $crop" = "$t/pdata/train/n0/a.JPEG 7 300 200" ] ||
  fail "augment-vs-opencv: aug_bench got $(cat "$t/aug.args")"
grep -qx -- "$dir 7" "$t/augpeer.args" || fail "augment-vs-opencv: the peer did not get aug_bench's folder and reps: $(cat "$t/augpeer.args")"
grep -q '^dlgauge: .*area2x *fake-area' "$t/out" || fail "augment-vs-opencv: area2x's kernel is not printed"
# The peer's colour jitter times what aug_bench times: the jitter, not the
# copy of the crop before it (here a copy takes 50 ms, the jitter nothing;
# cv2 stubbed out; numpy needed, in the peers' python, bench_lib.sh's)
peerpy=$(unset PEER_PYTHON; . "$bench/bench_lib.sh"; echo "$PEER_PYTHON")
if "$peerpy" -c 'import numpy' 2>/dev/null; then
  "$peerpy" - "$bench" <<'PY' || fail "augment-vs-opencv: the peer's colour time holds the copy of the crop"
import sys, time, types
import numpy as np
sys.modules["cv2"] = cv2 = types.ModuleType("cv2")
for f in ("convertScaleAbs", "cvtColor", "addWeighted"):
    setattr(cv2, f, lambda *a, **k: None)
cv2.mean, cv2.COLOR_RGB2GRAY, cv2.COLOR_GRAY2BGR = (lambda *a: (0.0,)), 0, 0
sys.path.insert(0, sys.argv[1])
import augment_peer


class SlowCopy:
    def __getattr__(self, k):
        return getattr(np, k)

    @staticmethod
    def copyto(*a, **k):
        time.sleep(0.05)
        return np.copyto(*a, **k)


augment_peer.np = SlowCopy()
us, _ = augment_peer.colour(np.zeros((4, 4, 3), np.uint8), ["1.3", "0.7", "1.35", "0", "1", "2"], 3)
sys.exit(f"colour_us {us:.0f} holds the 50 ms copy" if us > 25000 else 0)
PY
else
  echo "skip: the peer's colour timing (no numpy)"
fi
echo "ok: augment-vs-opencv.sh"

# allreduce-vs-mpi.sh: dlgauge and the bare MPI loop get the same bytes, op
# count, ops per timing window (OPS) and warm-up, both under mpirun on
# loopback; the busbw ratio is dlgauge's over the peer's (2 / 1 GB/s), the
# p50 ratio the peer's median op time over dlgauge's (18 / 9 us); a row
# from fewer ranks than asked for stops it; a bad OPS is refused.
# same_work OPS WINDOWS WARMUP: both sides' runs of 4 KiB in the last run
same_work() {
  for op in allreduce sendrecv; do
    grep -qx "$op 4096 float32 $2 $3 $1" "$t/mpipeer.args" ||
      fail "allreduce-vs-mpi: no $op peer run at 4096 B, $2 windows of $1 ops, $3 warm-up: $(cat "$t/mpipeer.args")"
  done
  for job in allreduce_4KiB p2p_4KiB; do
    python3 - "$t/dlg.ini" "$job" "$@" <<'PY' || fail "allreduce-vs-mpi: dlgauge's $job is not the peer's work"
import re, sys
ops, windows, warm = sys.argv[3:6]
job = re.search(r"\[job %s\]\n(.*?)(?=\n\[|\Z)" % sys.argv[2], open(sys.argv[1]).read(), re.S).group(1)
for want in ("bytes = 4096", f"iterations = {windows}", f"warmup = {warm}", "type = float32", f"ops_per_step = {ops}"):
    if want not in job.splitlines():
        sys.exit(f"{sys.argv[2]}: no '{want}'")
PY
  done
}
rm -f "$t/dlg.ini" "$t/mpirun.args" "$t/mpipeer.args"
run "allreduce-vs-mpi, fakes" 0 env SIZES=4KiB NP=2 bash "$bench/allreduce-vs-mpi.sh" "$t/build"
[ "$(row allreduce 5)" = 2.00 ] || fail "allreduce-vs-mpi: busbw ratio $(row allreduce 5), want 2.00"
[ "$(row p2p 10)" = 2.00 ] || fail "allreduce-vs-mpi: p50 ratio $(row p2p 10), want 2.00"
same_work 1 2000 200
grep -q '1 op(s) per timing window on both sides' "$t/out" || fail "allreduce-vs-mpi: OPS not printed"
grep -q 'isolation = none' "$t/dlg.ini" || fail "allreduce-vs-mpi: dlgauge's ranks in child processes"
[ "$(grep -c . "$t/mpirun.args")" -ge 4 ] || fail "allreduce-vs-mpi: dlgauge or the peer not under mpirun"
! grep -v -e '--mca oob_tcp_if_include lo --mca btl_tcp_if_include lo' "$t/mpirun.args" ||
  fail "allreduce-vs-mpi: an mpirun line off loopback"
grep -q '^MPI: Fake MPI 9.9' "$t/out" || fail "allreduce-vs-mpi: the MPI library is not printed"
rm -f "$t/dlg.ini" "$t/mpipeer.args"
run "allreduce-vs-mpi, OPS=20" 0 env SIZES=4KiB NP=2 OPS=20 bash "$bench/allreduce-vs-mpi.sh" "$t/build"
same_work 20 100 10
grep -q '20 op(s) per timing window on both sides' "$t/out" || fail "allreduce-vs-mpi: OPS=20 not printed"
run "allreduce-vs-mpi, OPS=0" 2 env SIZES=4KiB NP=2 OPS=0 bash "$bench/allreduce-vs-mpi.sh" "$t/build"
run "allreduce-vs-mpi, too few ranks" 1 env SIZES=4KiB NP=2 FAKE_RANKS=1 bash "$bench/allreduce-vs-mpi.sh" "$t/build"
grep -q '1 ranks (want 2)' "$t/out" || fail "allreduce-vs-mpi: a 1-rank row taken for 2 ranks"
echo "ok: allreduce-vs-mpi.sh"

# dp-vs-pytorch.sh: no PyTorch, or no gloo in it, stops it before anything
# runs; with fakes, dlgauge (10 img/s alone, 18 as 2 ranks) and PyTorch
# (nchw 5 and 7 img/s, channels_last 4 and 8) train the same model at the
# same per-rank batch, one bound core a rank; the best format counts per
# rank count: ratios 10/5 and 18/8, efficiencies 18/20 and 8/10.
cat >"$t/bin/dp-peer-python" <<EOF
#!/usr/bin/env bash
[ "\$1" = -c ] && exit 0
echo "\${*:2}" >>"$t/dppeer.args"
[ -n "\${FAKE_PEER_FAIL:-}" ] && exit 1
case "\$4 \$6" in "1 nchw") r=5 ;; "1 cl") r=4 ;; "2 nchw") r=7 ;; "2 cl") r=8 ;; *) exit 1 ;; esac
echo "{\"images_per_s\": \$r, \"openblas_core\": \"fake\"}"
EOF
printf '#!/bin/sh\n[ "$1" = -c ] && case "$2" in *gloo*) exit 1 ;; esac\nexit 0\n' >"$t/bin/no-gloo-python"
chmod +x "$t/bin/dp-peer-python" "$t/bin/no-gloo-python"
rm -f "$t/dlg.ini" "$t/mpirun.args"
run "dp-vs-pytorch, no PyTorch" 2 env PEER_PYTHON="$t/bin/no-python" bash "$bench/dp-vs-pytorch.sh" "$t/build"
grep -q 'peer missing' "$t/out" || fail "dp-vs-pytorch: no PyTorch, and it does not say so"
run "dp-vs-pytorch, no gloo" 2 env PEER_PYTHON="$t/bin/no-gloo-python" bash "$bench/dp-vs-pytorch.sh" "$t/build"
grep -q 'no gloo' "$t/out" || fail "dp-vs-pytorch: no gloo, and it does not say so"
[ ! -f "$t/dlg.ini" ] || fail "dp-vs-pytorch: measured dlgauge with no peer to compare"
run "dp-vs-pytorch, unknown case" 2 env PEER_PYTHON="$t/bin/dp-peer-python" CASES=alexnet-b9 \
  bash "$bench/dp-vs-pytorch.sh" "$t/build"
grep -q "no case 'alexnet-b9'" "$t/out" || fail "dp-vs-pytorch: an unknown case is not named"
run "dp-vs-pytorch, fakes" 0 env PEER_PYTHON="$t/bin/dp-peer-python" CASES=alexnet-b8 STEPS=3 \
  bash "$bench/dp-vs-pytorch.sh" "$t/build"
got=$(awk '$1 == "alexnet-b8" && $2 ~ /^[0-9]/ {print $2, $3, $4, $5, $6, $7, $8, $9, $10}' "$t/out")
[ "$got" = "10.00 18.00 5.00 8.00 2.00 2.25 0.90 0.80 nchw/cl" ] ||
  fail "dp-vs-pytorch: row '$got', want '10.00 18.00 5.00 8.00 2.00 2.25 0.90 0.80 nchw/cl'"
for np in 1 2; do
  grep -q -- "--bind-to core .*--mca oob_tcp_if_include lo --mca btl_tcp_if_include lo -np $np .*dlgauge -q run" "$t/mpirun.args" ||
    fail "dp-vs-pytorch: dlgauge not at $np rank(s) bound to cores on loopback: $(cat "$t/mpirun.args")"
  for f in nchw cl; do
    grep -qx "alexnet 8 $np 3 $f" "$t/dppeer.args" || fail "dp-vs-pytorch: no PyTorch $f run of alexnet at batch 8, $np process(es): $(cat "$t/dppeer.args")"
  done
done
for want in "isolation = none" "workload = alexnet" "mode = train" "batch = 8" "cpus = 1" "iterations = 3"; do
  grep -qx "$want" "$t/dlg.ini" || fail "dp-vs-pytorch: dlgauge's job has no '$want'"
done
grep -q '^MPI: Fake MPI 9.9' "$t/out" || fail "dp-vs-pytorch: the MPI library is not printed"
grep -q '^PyTorch BLAS kernel: fake' "$t/out" || fail "dp-vs-pytorch: PyTorch's BLAS kernel is not printed"
# a peer failing everywhere leaves no ratio and a non-zero exit; a dlgauge
# row from fewer ranks than asked for stops it
run "dp-vs-pytorch, failing peer" 1 env PEER_PYTHON="$t/bin/dp-peer-python" FAKE_PEER_FAIL=1 \
  CASES=alexnet-b8 bash "$bench/dp-vs-pytorch.sh" "$t/build"
grep -q 'no PyTorch figure .*alexnet-b8' "$t/out" || fail "dp-vs-pytorch: a case without a PyTorch figure is not named"
run "dp-vs-pytorch, too few ranks" 1 env PEER_PYTHON="$t/bin/dp-peer-python" FAKE_RANKS=1 \
  CASES=alexnet-b8 bash "$bench/dp-vs-pytorch.sh" "$t/build"
grep -q '1 ranks (want 2)' "$t/out" || fail "dp-vs-pytorch: a 1-rank row taken for 2 ranks"
echo "ok: dp-vs-pytorch.sh"

# winograd-vs-onednn.sh, strided-vs-onednn.sh: each row names the oneDNN
# kernel and layout its direct side ran; where oneDNN keeps another layout
# than the engine kernels' nChw8c (AVX-512), the row is marked and a note
# says that a plan never runs the engine's kernel there
for s in winograd-vs-onednn:2:64:14 strided-vs-onednn:2:64:14:64:1; do
  run "${s%%:*}, AVX2 layouts" 0 env SHAPES="${s#*:}" STEPS=1 bash "$bench/${s%%:*}.sh" "$t/build" 2
  grep -q '^ *2 .* jit:avx2 aBcd8b$' "$t/out" || fail "${s%%:*}: the direct side's kernel and layout are not printed"
  if grep -q '^NOTE' "$t/out"; then fail "${s%%:*}: a note on nChw8c layouts"; fi
  run "${s%%:*}, AVX-512 layouts" 0 env SHAPES="${s#*:}" STEPS=1 FAKE_IMPL=brgconv:avx512_core FAKE_LAYOUT=acdb \
    bash "$bench/${s%%:*}.sh" "$t/build" 2
  grep -q '^ *2 .*\* brgconv:avx512_core acdb$' "$t/out" || fail "${s%%:*}: an acdb row is not marked"
  grep -q '^NOTE: .*keep acdb, not nChw8c' "$t/out" || fail "${s%%:*}: no note that the engine kernel does not run here"
done
echo "ok: winograd-vs-onednn.sh, strided-vs-onednn.sh"
