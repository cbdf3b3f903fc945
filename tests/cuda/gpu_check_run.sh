#!/bin/bash
# scripts/gpu-check.sh's step "run" as the GPU machine takes it, on the CPU
# stand-in GPU (tests/cuda/fakegpu) and a fake NVML: scripts/gpu-bundle.sh
# packs this build; the script unpacks it, runs its dlgauge sysinfo, mkdata
# and `dlgauge run scripts/gpu-check-run.ini` (shrunk with --set: one
# timed step after one warm-up (the first step after setup never counts
# towards % of peak), the ResNet-50 and Inception-v3 jobs' nets swapped
# for AlexNet at crop 67 --
# ResNet-50 takes 6 s a step on the stand-in even at crop 32 -- the JPEG
# job at crop 67, the RecordIO one pass of 24 images, a 32-unit LSTM), and
# scripts/gpu_run_check.py reads the rows back.  The bundle's programs
# resolve their libraries inside it (gpu-bundle.sh checks that before it
# packs); the run's dlgauge runs with only the bundle's folders, the stand-in's
# and the fake NVML's on LD_LIBRARY_PATH.  Then the checker against rows it
# must refuse (device = auto that fell back to the CPU, a missing NVML
# field), a bundle packed from other sources (run, but failed), and the
# script without a bundle ("not run", exit 0; with --only-run, exit 1).
# usage: gpu_check_run.sh ROOT BUILD_DIR WORKDIR FAKEGPU_MODULE_DIR FAKE_NVML
set -u
ROOT=$1 BUILD=$2 W=$3 FAKE=$4 NVML=$5 STUB=$ROOT/tests/cuda/gpucheck_stub
rm -rf "$W" && mkdir -p "$W/build" "$W/nvml" || exit 1
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
bash "$ROOT/scripts/gpu-bundle.sh" --no-build "$BUILD" "$W/bundle" || { echo "FAIL gpu-bundle.sh"; exit 1; }
cp "$STUB/cuda_check" "$W/build/cuda_check" && ln -s "$NVML" "$W/nvml/libnvidia-ml.so.1" || exit 1
shrink="--set job.warmup=1 --set job.iterations=1 --set job.duration=0
  --set resnet50-auto.workload=alexnet --set resnet50-auto.batch=1 --set resnet50-auto.crop=67
  --set alexnet-jpeg.batch=2 --set alexnet-jpeg.crop=67 --set alexnet-jpeg.classes=4
  --set inception-rec.workload=alexnet --set inception-rec.batch=2 --set inception-rec.crop=67
  --set inception-rec.classes=4
  --set lstm-medium.hidden=32 --set lstm-medium.bptt=8 --set lstm-medium.batch=4 --set lstm-medium.vocab=500"
# gpu-check.sh NAME BUNDLE [ARGS]: one CNN pair besides (the stubs'), the
# step first
gpu_check() {
  local name=$1 bundle=$2
  shift 2
  timeout 240 env GPU_CHECK_BUNDLE="$bundle" GPU_CHECK_RUN_IMAGES=24 GPU_CHECK_RUN_CLASSES=4 GPU_CHECK_RUN_WORDS=20000 \
    GPU_CHECK_RUN_SET="$shrink" DLGAUGE_NN_MODULE_DIR="$FAKE" LD_LIBRARY_PATH="$W/nvml" FAKEGPU_LEAKS=fail \
    BUILD="$W/build" OUT="$W/$name" GPU_CHECK_PY="$STUB/python" PATH="$STUB:$PATH" \
    bash "$ROOT/scripts/gpu-check.sh" --no-build --no-extras --budget 300 --models alexnet --precisions fp32 "$@" \
    > "$W/$name.log" 2>&1
  echo $?
}
rc=$(gpu_check ok "$W/bundle/dlgauge-bundle.tar.gz")
x=$W/ok/extras.txt
if [ "$rc" != 0 ] || ! tail -1 "$W/ok.log" | grep -q 'dlgauge run passed$' ||
   ! grep -q '^run: 5 jobs checked$' "$x" || ! grep -q '^run resnet50-auto: cuda-bf16:0 ' "$x" ||
   ! grep -q '^run inception-rec: cuda-bf16:0 ' "$x" || ! grep -q '^run preprocess-rec: ' "$x" ||
   ! grep -q '^run alexnet-jpeg: cuda:0 ' "$x" || ! grep -q '^run lstm-medium: cuda:0 .* tokens/s' "$x" ||
   ! grep -q '^sysinfo: gpus: *1 (driver' "$x" || ! grep -q '^run-csv: ' "$x" ||
   ! grep -q 'dlgauge run: bundle packed from these sources' "$W/ok.log"; then
  fail "ok: rc $rc"; cat "$W/ok.log"
else
  echo "ok   ok: $(tail -1 "$W/ok.log")"
  grep '^run ' "$x"
fi
# the device call brings back 8 files of $OUT: the step adds none
n=$(find "$W/ok" -type f | wc -l)
[ "$n" -le 8 ] || fail "ok: $n files in OUT, 8 come back"
# the checker refuses what a GPU row must not be: device = auto on the CPU,
# no NVML utilisation, a job without its row, a conversion never finished
csv=$W/build/run/run.csv
python3 - "$csv" "$W/bad.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    if r["job"] == "resnet50-auto":
        r["backend"] = "cpu"
    if r["job"] == "alexnet-jpeg":
        r["gpu_util"] = ""
    if r["job"] == "preprocess-rec":
        r["passes"] = "0"
rows = [r for r in rows if r["job"] != "lstm-medium"]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]))
w.writeheader()
w.writerows(rows)
PY
got=$(python3 "$ROOT/scripts/gpu_run_check.py" "$W/bad.csv" --gpu "NVIDIA H200 (fake)")
rc=$?
if [ $rc != 1 ] || ! echo "$got" | grep -q "resnet50-auto: ran on 'cpu', not cuda-bf16:0" ||
   ! echo "$got" | grep -q "alexnet-jpeg: gpu_util ''" || ! echo "$got" | grep -q 'lstm-medium: no row' ||
   ! echo "$got" | grep -q "preprocess-rec: passes '0': no whole pass"; then
  fail "checker: rc $rc"; echo "$got"
else
  echo "ok   checker: $(echo "$got" | tail -1)"
fi
got=$(python3 "$ROOT/scripts/gpu_run_check.py" "$csv" --gpu "NVIDIA A100-SXM4-80GB")
[ $? = 1 ] && echo "$got" | grep -q "gpu_name 'NVIDIA H200 (fake)', nvidia-smi says 'NVIDIA A100-SXM4-80GB'" ||
  { fail "checker: another GPU's name passed"; echo "$got"; }
# a bundle packed from other sources: the step runs, and the last line
# counts it failed (a "passed" speaks for the sources carried)
mkdir -p "$W/stale" && tar -C "$W/stale" -xzf "$W/bundle/dlgauge-bundle.tar.gz" &&
  echo 0123456789abcdef > "$W/stale/share/dlgauge/bundle-sources" &&
  tar -C "$W/stale" -czf "$W/stale.tar.gz" . || exit 1
rc=$(gpu_check stale "$W/stale.tar.gz" --only-run)
if [ "$rc" != 1 ] ||
   ! tail -1 "$W/stale.log" | grep -q 'FAILED: dlgauge run from a bundle of other sources (0123456789abcdef, not [0-9a-f]*)$' ||
   ! grep -q '^run: 5 jobs checked$' "$W/stale/extras.txt"; then
  fail "stale: rc $rc"; cat "$W/stale.log"
else
  echo "ok   stale: $(tail -1 "$W/stale.log")"
fi
# no bundle carried: the step says so, and the run goes on to exit 0
rc=$(gpu_check none "$W/none.tar.gz")
if [ "$rc" != 0 ] || ! tail -1 "$W/none.log" | grep -q 'dlgauge run not run$' ||
   ! grep -q 'dlgauge run: no bundle .*none.tar.gz (here: bash scripts/gpu-bundle.sh' "$W/none.log"; then
  fail "none: rc $rc"; cat "$W/none.log"
else
  echo "ok   none: $(tail -1 "$W/none.log")"
fi
# --only-run (a rerun of the step alone): no layer checks, pairs or
# PyTorch; without a bundle that is a failure, exit 1
rc=$(gpu_check only "$W/none.tar.gz" --only-run)
if [ "$rc" != 1 ] || ! tail -1 "$W/only.log" | grep -q 'FAILED: dlgauge run not run$' ||
   grep -q '^backend \|^bench \|^torch ' "$W/only.log"; then
  fail "only: rc $rc"; cat "$W/only.log"
else
  echo "ok   only: $(tail -1 "$W/only.log")"
fi
exit $((fails > 0))
