#!/bin/bash
# scripts/gpu-check.sh's own build (gcc + nvcc, no CMake), as the GPU
# machine runs it, into a temporary directory: every object it builds must
# link completely (ldd -r: no undefined symbol, no missing library), and
# the comm step's comm_gpu_run must load the script's comm.so and run
# allreduce and p2p on cuda:0 through the CPU stand-in GPU and NCCL
# (tests/cuda/fakegpu).  A source that CMake compiles into comm.so but the
# script did not (core/runtime/phys_fit.c, 06789ed) failed every GPU run's
# comm step with "undefined symbol" at dlopen.  Exit 77 without nvcc or
# cuDNN (the script cannot build there).
# usage: gpu_check_build.sh ROOT WORKDIR FAKEGPU_MODULE_DIR FAKE_NCCL_LIB
set -u
ROOT=$1 W=$2 FAKE=$3 NCCL=$4
CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -x "$CUDA/bin/nvcc" ] || { echo "SKIP: no $CUDA/bin/nvcc"; exit 77; }
rm -rf "$W" && mkdir -p "$W" || exit 1
out=$(BUILD="$W/build" OUT="$W/out" GPU_CHECK_PY=python3 bash "$ROOT/scripts/gpu-check.sh" --build-only 2>&1)
rc=$?
echo "$out"
if echo "$out" | grep -q '^gpu-check: no cuDNN to build with'; then echo "SKIP: no cuDNN"; exit 77; fi
if [ $rc != 0 ]; then
  echo "FAIL: gpu-check.sh --build-only exit $rc; build.log:"; tail -40 "$W/out/build.log"; exit 1
fi
fails=0
for f in cuda_check comm_gpu_run backends/cuda.so backends/cuda-probe.so plugins/comm.so; do
  if [ ! -e "$W/build/$f" ]; then
    echo "FAIL: the script did not build $f"; fails=$((fails + 1)); continue
  fi
  bad=$(ldd -r "$W/build/$f" 2>&1 | grep -E 'undefined symbol|not found')
  if [ -n "$bad" ]; then
    echo "FAIL: $f does not link completely:"; echo "$bad"; fails=$((fails + 1))
  else
    echo "ok   $f links completely"
  fi
done
# the comm step as the GPU run takes it, on the stand-in: every element checked
for spec in "allreduce bytes=4KiB" "p2p bytes=64KiB"; do
  read -r -a w <<<"$spec"
  got=$(DLGAUGE_PLUGIN_PATH="$W/build/plugins" DLGAUGE_NN_MODULE_DIR="$FAKE" DLGAUGE_NCCL_LIB="$NCCL" \
    FAKEGPU_LEAKS=fail timeout 60 "$W/build/comm_gpu_run" "${w[0]}" 3 device=cuda:0 type=float32 "${w[1]}" 2>&1)
  rc=$?
  if [ $rc != 0 ] || ! echo "$got" | grep -q "^comm ${w[0]} .*: checked, 3 timed steps;.* device=cuda:0"; then
    echo "FAIL: comm_gpu_run $spec (exit $rc):"; echo "$got"; fails=$((fails + 1))
  else
    echo "ok   comm_gpu_run $spec on the stand-in: $got"
  fi
done
exit $((fails > 0))
