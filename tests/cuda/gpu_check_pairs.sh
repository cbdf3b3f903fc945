#!/bin/bash
# scripts/gpu-check.sh's benchmark loop with stand-ins for cuda_check and
# PyTorch (gpucheck_stub/): each case runs on dlgauge, then on PyTorch, so
# every dlgauge row of the table has its PyTorch figure -- when all cases
# run, when --budget cuts the rest, and when PyTorch dies on the way (the
# script then goes on with dlgauge rows, and still exits 0).
# usage: gpu_check_pairs.sh ROOT WORKDIR
set -u
ROOT=$1 W=$2 STUB=$ROOT/tests/cuda/gpucheck_stub
rm -rf "$W" && mkdir -p "$W/build" || exit 1
cp "$STUB/cuda_check" "$W/build/cuda_check" || exit 1
fails=0
# run NAME BUDGET [ENV=VAL ...]: the script's output in $W/NAME.log
run() {
  local name=$1 budget=$2
  shift 2
  env "$@" BUILD="$W/build" OUT="$W/$name" GPU_CHECK_PY="$STUB/python" PATH="$STUB:$PATH" \
    bash "$ROOT/scripts/gpu-check.sh" --no-build --no-extras --budget "$budget" \
    --models "resnet50 alexnet lstm-ptb" --precisions "fp32 bf16" --lm-batches 20 --lm-precisions fp32 \
    > "$W/$name.log" 2>&1
  echo $?
}
# rows: the table's lines with a dlgauge figure; bad: those without PyTorch's
rows() { awk '$2 ~ /^(train|infer)$/ && $5 != "-"' "$W/$1/table.txt" | wc -l; }
bad() { awk '$2 ~ /^(train|infer)$/ && $5 != "-" && $6 == "-"' "$W/$1/table.txt"; }
check() { # NAME RC WANT_RC ROWS_TEST WHAT
  if [ "$2" != "$3" ] || ! [ "$(rows "$1")" $4 ] || [ -n "$(bad "$1")" ]; then
    echo "FAIL $1 ($5): rc $2, $(rows "$1") rows, without PyTorch:"; bad "$1"
    cat "$W/$1.log"
    fails=$((fails + 1))
  else
    echo "ok   $1: $(rows "$1") rows, each with its PyTorch figure"
  fi
}
rc=$(run all 300)
check all "$rc" 0 "-eq 9" "all cases" # lstm-ptb + 2 models x 2 modes x 2 precisions
# about 0.4 s a pair, 30 s kept back: a 31 s budget cuts within 2 s
rc=$(run cut 31 STUB_DLG_S=0.2 STUB_TORCH_S=0.2)
check cut "$rc" 0 "-lt 9" "budget cut"
grep -q 'budget: skipping' "$W/cut.log" && [ "$(rows cut)" -ge 1 ] ||
  { echo "FAIL cut: nothing skipped, or nothing run"; fails=$((fails + 1)); }
# PyTorch exits at its third case: dlgauge rows go on, without a PyTorch column
rc=$(run died 300 STUB_TORCH_DIE=3)
if [ "$rc" != 0 ] || ! grep -q 'PyTorch stopped answering at resnet50:infer:fp32' "$W/died.log" ||
   [ "$(awk '$2 ~ /^(train|infer)$/ && $5 != "-"' "$W/died/table.txt" | wc -l)" != 9 ]; then
  echo "FAIL died: rc $rc"; cat "$W/died.log"; fails=$((fails + 1))
else
  echo "ok   died: PyTorch's death noted, all 9 dlgauge rows kept"
fi
# the device call returns at most 8 files from $OUT: the script writes no more
n=$(find "$W/all" -type f | wc -l)
[ "$n" -le 8 ] || { echo "FAIL all: $n files in OUT, 8 come back"; fails=$((fails + 1)); }
# a layer-check process that dies on cuda-tf32:0 (a segfault, a sticky CUDA
# error) costs that backend's checks only: the later backends still run,
# the failure names the backend, and the benchmark rows still come
rc=$(run crash 300 STUB_LAYERS_CRASH=cuda-tf32:0)
if [ "$rc" != 1 ] || ! grep -q '^backend cuda-fp16:0' "$W/crash/layers.txt" ||
   ! grep -q '^backend cuda-bf16:0/nchw' "$W/crash/layers.txt" ||
   ! grep -q 'LAYER CHECKS FAILED on cuda-tf32:0: exit 139, signal 11' "$W/crash.log" ||
   grep -q 'LAYER CHECKS FAILED on cuda:0' "$W/crash.log" || [ "$(rows crash)" != 9 ]; then
  echo "FAIL crash: rc $rc"; cat "$W/crash.log"; fails=$((fails + 1))
else
  echo "ok   crash: the other backends' layer checks ran, 9 rows"
fi
# a dlgauge row that hangs near the end of the budget is stopped so that the
# run ends by BUDGET + PAIR_MIN with its table (here 2 + 1 s; it used to
# wait out the row's own 90 s limit, past the device call's timeout)
t0=$(date +%s)
rc=$(run hang 2 GPU_CHECK_PAIR_MIN=1 STUB_DLG_HANG=resnet50)
dt=$(($(date +%s) - t0))
if [ "$rc" != 0 ] || [ "$dt" -gt 10 ] || ! grep -q 'dlgauge resnet50 train fp32 stopped by its' "$W/hang.log" ||
   ! grep -q '^lstm-ptb   train fp32' "$W/hang/table.txt"; then
  echo "FAIL hang: rc $rc after $dt s"; cat "$W/hang.log"; fails=$((fails + 1))
else
  echo "ok   hang: stopped after $dt s, the table written"
fi
exit $((fails > 0))
