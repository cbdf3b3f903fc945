#!/usr/bin/env bash
# gpu-check.sh — the one prepared script for the lent GPU machine.
#
# It builds on that machine only what the check needs: the nn engine
# (core/nn: ref backend, models), the CUDA backend modules it loads
# (backends/cuda.so, backends/cuda-probe.so), the NVML probe and the check
# driver tests/cuda/cuda_check.c, with gcc and nvcc directly (no CMake, so
# none of inih/cmocka/libcurl/oneDNN/lmdb/turbojpeg is needed).  Libraries:
#   cuDNN   the PyTorch wheel's (site-packages/nvidia/cudnn: libcudnn.so.9,
#           linked by full path, its directory put on LD_LIBRARY_PATH so
#           cuDNN finds libcudnn_cnn.so.9 etc.), else /usr/local/cuda's, else
#           the system's (/usr/include + /usr/lib[/x86_64-linux-gnu]: apt's);
#           none: one line saying where it looked, exit 1 before building
#   cuBLAS, cudart   /usr/local/cuda/lib64 (CUDA 13)
#   NVML    dlopen("libnvidia-ml.so.1") at run time, nothing linked
# Then: (1) layer checks against the CPU reference (fp32 rel err < 1e-4,
# tf32 < 5e-3, bf16 and fp16 < 2e-2; fp16 also the loss-scaling case) on
# fresh random inputs with NaN-poisoned outputs; (2)
# training/inference img/s of resnet50 alexnet vgg16 googlenet inception-v3
# (299 crop; added after the 2026-11-29 run, not yet run on a GPU) beside
# PyTorch+torchvision on the same GPU (scripts/gpu-bench-torch.py; its
# GoogLeNet is BVLC's as dlgauge runs it, scripts/bench/bvlc_googlenet.py,
# since 2026-11-30: the 2026-11-29 rows used torchvision's; its AlexNet
# likewise, bvlc_alexnet.py, since the tenth session, and at dlgauge's 227
# crop since the eleventh: 224 gave PyTorch 4% less conv1 work); (3) one
# table (scripts/gpu_table.py).  dlgauge's rows are timed by CUDA events
# around the timed steps (as PyTorch's), with the steps replayed as CUDA
# graphs after 2 eager warm-up steps; one extra row, ResNet-50 training
# with graphs=off, shows what the graphs bring.  The layer checks include
# an eager-vs-graphs training case and the input-path case (training fed by
# dlg_net_write_async from pinned memory = dlg_net_write, bitwise); an extra
# ResNet-50 training row with input=async (extras.txt, run before the pairs
# so a cut budget does not drop it) reports the data wait (not run on a GPU
# yet).  Each backend's layer checks run in a process of their own, so a
# crash or a sticky CUDA error stops only that backend's; the table is
# rewritten after every pair.  Model lstm-ptb (PTB medium: 2 x 650
# LSTM, bptt 35, vocabulary 10000; cuDNN's RNN API, not run on a GPU yet)
# gives training tokens/s at --lm-batches (20, PTB medium's batch; add 64
# when the budget allows) and --lm-precisions
# (fp32 fp16: fp16 is cuDNN's fp16 LSTM with fp32 master weights and loss
# scaling, beside PyTorch under torch.autocast("cuda") + GradScaler): the
# lstm-ptb workload's step beside PyTorch's word language model with
# nn.LSTM, run before the CNN rows (estimated 30 s in all: the fp32 pairs
# at batches 20 and 64 took about 30 s; the fp16 ones, not yet timed,
# should take less).
# After the layer checks, the comm workloads (allreduce, p2p) on cuda:0
# with one rank at 64 MiB: NCCL's path (the module dlopens libnccl.so.2:
# PyTorch's site-packages/nvidia/nccl/lib, else the toolkit's or the
# system's, put on LD_LIBRARY_PATH), every element checked (extras.txt,
# lines "comm ...": a file of its own would be one more than come back).
# After the input-path row, step "profile" (an extra, before the pairs, so
# that a cut budget does not drop it): where ResNet-50 training's step goes,
# on both sides, at the first of bf16 and fp32 in --precisions -- dlgauge
# per layer and layer kind (events between the layers, eager steps:
# `cuda_check bench ... profile=on`, with cuDNN's algorithms and the
# batch-norm path named) and PyTorch per operator and kernel
# (torch.profiler, scripts/gpu_torch_profile.py), in extras.txt ("profile",
# "torch-profile" lines; not yet run on a GPU).
# Everything also goes to $OUT.
# First of the benchmark steps, dlgauge itself (step "run"; not yet run on
# a GPU): `dlgauge sysinfo` and `dlgauge run scripts/gpu-check-run.ini` on
# generated data -- ResNet-50 bf16 with device=auto, AlexNet training from
# JPEGs through the input pipeline, the JPEGs to RecordIO and Inception-v3
# training from it, PTB-medium lstm-ptb -- with its CSV
# rows read back by scripts/gpu_run_check.py (on the GPU, GPU name, util,
# memory, power, energy per item, % of peak), from the dlgauge build this
# machine cannot make: pack it here with `bash scripts/gpu-bundle.sh`
# (build-gpubundle/dlgauge-bundle.tar.gz, about 18 MiB: the install plus
# oneDNN, inih, libjpeg-turbo and the other Debian libraries), and name
# build-gpubundle in the device call's carry.  Without it the step says
# "not run" in the last line; lines "sysinfo: ", "run-log: ", "run-csv: "
# and "run ..." in extras.txt.
#
# Each benchmark case runs dlgauge's row, then at once PyTorch's (one
# Python process, started before the layer checks, answers case by case:
# gpu-bench-torch.py --serve), so whatever --budget cuts, it cuts whole
# pairs: no dlgauge row is left without its PyTorch figure.  Each figure is
# one window of --iters timed steps on each side (the table's first line
# says so): repeats would cost rows that were never measured.  The last
# line names every step that failed (layer checks per backend, comm).
#
# Usage: bash scripts/gpu-check.sh [--dry-run] [--build-only] [--no-build] [--budget S]
#          [--batch N] [--models "a b"] [--iters N] [--precisions "bf16 fp16 fp32"]
#          [--lm-batches "20"] [--lm-precisions "fp32 fp16"] [--no-extras] [--no-comm]
#          [--no-run|--only-run]
#   --dry-run     print the plan and render the table from canned input
#                 (CI runs this; no GPU, no compiler needed)
#   --build-only  build and run the no-GPU checks, then stop
#   --no-build    use the build already in $BUILD (a rerun on the same machine)
#   --budget S    seconds for the run (default 360): a benchmark pair starts
#                 only with 30 s left (the algorithm-cache extra 100 s, the
#                 deterministic one 60 s); every step's time limit is cut
#                 so the run ends by S + 30 s, its table included (give the
#                 device call S + 90 s); a step that ignores its SIGTERM is
#                 killed 10 s later (timeout -k), so one hung in a CUDA call
#                 costs 10 s more, not the rest of the call
#   --no-run      skip step "run" (dlgauge sysinfo and dlgauge run from the bundle)
#   --no-comm     skip step 1b (NCCL's allreduce and p2p; never run on a GPU yet)
#   --only-run    step "run" alone: no build, layer checks, comm or PyTorch (a
#                 rerun of that step; exit 1 when it did not run)
#   --no-extras   skip the input-path row (run before the pairs), the
#                 ResNet-50 training profile and the algorithm-cache and
#                 deterministic-mode reruns
#   --precisions  benchmark rows (fp32 tf32 bf16 fp16), in this order but
#                 fp32 last, after the extras (--dry-run prints the order);
#                 default "bf16 fp16 fp32": what was never timed on a GPU
#                 first, since --budget cuts the end (tf32 is still
#                 layer-checked; add it to benchmark it)
#   --lm-batches, --lm-precisions  the lstm-ptb rows (tokens/s); leave
#                 lstm-ptb out of --models to skip them
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-gpucheck/out}
BUILD=${BUILD:-$ROOT/build-gpucheck}
DRY=0 BUILD_ONLY=0 NO_BUILD=0 COMM_BUILT=1 COMM_WANTED=1 EXTRAS=1 RUN=1 ONLY_RUN=0 BUDGET=360 BATCH=64 ITERS=20 WARMUP=5
MODELS="resnet50 alexnet vgg16 googlenet inception-v3 lstm-ptb"
LM_BATCHES="20" LM_PRECS="fp32 fp16"
PRECS="bf16 fp16 fp32"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --build-only) BUILD_ONLY=1 ;;
    --no-build) NO_BUILD=1 ;;
    --no-extras) EXTRAS=0 ;;
    --no-run) RUN=0 ;;
    --no-comm) COMM_WANTED=0 ;;
    --only-run) ONLY_RUN=1 ;;
    --budget) BUDGET=${2:?--budget needs seconds}; shift ;;
    --batch) BATCH=${2:?--batch needs a number}; shift ;;
    --iters) ITERS=${2:?--iters needs a number}; shift ;;
    --models) MODELS=${2:?--models needs names}; shift ;;
    --precisions) PRECS=${2:?--precisions needs names}; shift ;;
    --lm-batches) LM_BATCHES=${2:?--lm-batches needs numbers}; shift ;;
    --lm-precisions) LM_PRECS=${2:?--lm-precisions needs names}; shift ;;
    -h|--help) awk 'NR > 1 && /^set -u/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ $ONLY_RUN = 1 ] && { [ $RUN = 0 ] || [ $BUILD_ONLY = 1 ]; }; then
  echo "gpu-check: --only-run goes with neither --no-run nor --build-only" >&2; exit 2
fi
case "$BATCH$ITERS$BUDGET" in *[!0-9]*) echo "gpu-check: --batch/--iters/--budget take whole numbers" >&2; exit 2 ;; esac
case "${LM_BATCHES// /}" in ''|*[!0-9]*) echo "gpu-check: --lm-batches takes whole numbers" >&2; exit 2 ;; esac
# dlgauge precision -> backend
backend_of() { case "$1" in fp32) echo cuda:0 ;; tf32) echo cuda-tf32:0 ;; bf16) echo cuda-bf16:0 ;;
  fp16) echo cuda-fp16:0 ;; *) echo - ;; esac; }
# a misspelt precision would drop its rows without a word (no backend runs it)
for opt in "precisions:$PRECS" "lm-precisions:$LM_PRECS"; do for p in ${opt#*:}; do
  [ "$(backend_of "$p")" = - ] || continue
  echo "gpu-check: --${opt%%:*}: unknown precision '$p' (fp32 tf32 bf16 fp16, space-separated)" >&2
  exit 2
done; done
# lstm-ptb has rows of its own (training, LM_BATCHES x LM_PRECS, tokens/s)
LM=0 CNNS=""
for m in $MODELS; do if [ "$m" = lstm-ptb ]; then LM=1; else CNNS="$CNNS $m"; fi; done
mkdir -p "$OUT" "$BUILD"
PY=python3
[ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
PY=${GPU_CHECK_PY:-$PY} # another Python (the CI test's stand-in)
# step "run": the bundle, the data it generates there, and --set words that
# shrink the jobs (the CI test's, on the stand-in GPU)
BUNDLE=${GPU_CHECK_BUNDLE:-$ROOT/build-gpubundle/dlgauge-bundle.tar.gz}
RUN_IMAGES=${GPU_CHECK_RUN_IMAGES:-2048} RUN_CLASSES=${GPU_CHECK_RUN_CLASSES:-100}
RUN_WORDS=${GPU_CHECK_RUN_WORDS:-1000000}
RUN_SET=${GPU_CHECK_RUN_SET:-}
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# a pair needs about 10-20 s; below this much left, the rest are skipped
PAIR_MIN=${GPU_CHECK_PAIR_MIN:-30} # (the CI test's stand-ins take a second)
# limit SECONDS CMD...: every step on the GPU runs under this; one deaf to
# its SIGTERM (hung in a CUDA call, or dlgauge finishing its step first)
# gets SIGKILL KILL_AFTER s later, rather than hold the run to the end of
# the device call
KILL_AFTER=${GPU_CHECK_KILL_AFTER:-10}
limit() { timeout -k "$KILL_AFTER" "$@"; }
# a step's time limit, cut so that nothing runs past BUDGET + PAIR_MIN: the
# device call's timeout_s (budget + 90 s) must not kill the run before its
# table; at least 2 s (timeout 0 and read -t 0 would not wait at all)
cap() {
  local t=$(($(left) + PAIR_MIN))
  [ "$t" -gt "$1" ] && t=$1
  echo $((t < 2 ? 2 : t))
}
log() { echo "$*" | tee -a "$OUT/gpu-check.log"; }

# the order of 4-d activations (cuda_check bench prints it as layout=)
layout_of() { case "$1" in bf16|fp16) echo nhwc ;; *) echo nchw ;; esac; }

# ResNet-50 training's extra rows (when resnet50 is benchmarked): graphs=off
# at the first of bf16, fp32; input=async at that, else fp32
G=$(for p in $PRECS; do case $p in bf16|fp32) echo $p ;; esac; done | head -1)
RN50=0
case " $CNNS " in *" resnet50 "*) RN50=1 ;; esac

# The benchmark steps in the order they run, one a line ("lm PREC BATCH",
# "async PREC", "profile PREC", "pair MODEL MODE PREC", "graphs-off PREC",
# "algo-cache", "deterministic"): the dry run prints this list and the run
# runs it, so the two cannot differ.  What has never been timed on a GPU
# first, as a budget cut drops the end: lstm-ptb, the input path, the
# profile, the pairs of every precision but fp32 (--precisions order), the
# other extras, then the fp32 pairs (timed on a GPU twice already,
# 2026-11-29).
plan() {
  local p b
  [ $RUN = 1 ] && echo "run"
  [ $ONLY_RUN = 1 ] && return 0
  [ $LM = 1 ] && for p in $LM_PRECS; do for b in $LM_BATCHES; do echo "lm $p $b"; done; done
  [ $EXTRAS = 1 ] && [ $RN50 = 1 ] && echo "async ${G:-fp32}"
  [ $EXTRAS = 1 ] && [ $RN50 = 1 ] && echo "profile ${G:-fp32}"
  for p in $PRECS; do [ "$p" = fp32 ] || plan_pairs "$p"; done
  [ $RN50 = 1 ] && [ -n "$G" ] && echo "graphs-off $G"
  [ $EXTRAS = 1 ] && echo algo-cache && echo deterministic
  for p in $PRECS; do [ "$p" = fp32 ] && plan_pairs "$p"; done
  return 0
}
plan_pairs() { local m mode; for m in $CNNS; do for mode in train infer; do echo "pair $m $mode $1"; done; done; }
# a plan step as the dry run says it
describe() { # KIND ARGS...
  case $1 in
    run) echo "dlgauge sysinfo, then dlgauge run scripts/gpu-check-run.ini (resnet50 bf16 device=auto," \
      "alexnet from JPEGs, inception-v3 from RecordIO, lstm-ptb medium) from the carried bundle," \
      "rows read back (extras.txt)" ;;
    lm) echo "case lstm-ptb train $2 batch $3 dlgauge backend $(backend_of $2) (tokens/s)" ;;
    async) echo "input=async resnet50 train $2 batch $BATCH (extras.txt)" ;;
    pair) echo "case $2 $3 $4 batch $BATCH dlgauge backend $(backend_of $4) layout $(layout_of $4)" ;;
    graphs-off) echo "case resnet50 train $2 batch $BATCH graphs=off" ;;
    profile) echo "profile: resnet50 train $2 batch $BATCH per layer (dlgauge) and per operator and kernel (PyTorch) (extras.txt)" ;;
    algo-cache) echo "algo-cache: resnet50 train fp32 planned twice through one on-disk cache (extras.txt)" ;;
    deterministic) echo "deterministic: layer checks on cuda:0, deterministic algorithms only (extras.txt)" ;;
  esac
}

if [ $DRY = 1 ]; then
  echo "gpu-check (dry run): models [$MODELS] precisions [$PRECS] batch $BATCH iters $ITERS budget ${BUDGET}s"
  [ $ONLY_RUN = 1 ] || echo "  layer checks on cuda:0 cuda-tf32:0 cuda-bf16:0 cuda-fp16:0 cuda-bf16:0/nchw"
  [ $ONLY_RUN = 1 ] || [ $COMM_WANTED = 0 ] ||
    echo "  comm allreduce and p2p on cuda:0, 1 rank, 64 MiB float32 (NCCL; extras.txt)"
  [ $RUN = 1 ] && [ ! -f "$BUNDLE" ] &&
    echo "  (no bundle $BUNDLE: step run will say not run; make it with bash scripts/gpu-bundle.sh)"
  echo "  then, in this order, while --budget lasts:"
  plan | while read -r -a w; do echo "  $(describe "${w[@]}")"; done
  exec $PY "$ROOT/scripts/gpu_table.py" --dlgauge "$ROOT/tests/cuda/canned/dlgauge.txt" \
    --torch "$ROOT/tests/cuda/canned/torch.txt" --gpu "NVIDIA H200" --warmup $WARMUP --iters $ITERS
fi

# ---- build ------------------------------------------------------------------
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
SP=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || true)
# cuDNN: PyTorch's wheel, else the toolkit's, else the system's (apt: the
# GPU machine has one there too); headers and library from the same place
CUDNN_INC= CUDNN_LIB=
for d in "${SP:+$SP/nvidia/cudnn/include:$SP/nvidia/cudnn/lib}" "$CUDA/include:$CUDA/lib64" \
         /usr/include/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu /usr/include:/usr/lib; do
  [ -n "$d" ] && [ -f "${d%%:*}/cudnn.h" ] || continue
  CUDNN_LIB=$(ls "${d#*:}"/libcudnn.so.9 "${d#*:}"/libcudnn.so 2>/dev/null | head -1)
  [ -n "$CUDNN_LIB" ] && { CUDNN_INC=${d%%:*}; break; }
done
if [ -z "$CUDNN_LIB" ] && [ $NO_BUILD = 0 ] && [ $ONLY_RUN = 0 ]; then
  log "gpu-check: no cuDNN to build with (cudnn.h and libcudnn.so.9 in PyTorch's" \
    "site-packages/nvidia/cudnn, $CUDA, /usr/include + /usr/lib[/x86_64-linux-gnu])"
  exit 1
fi
CUDNN_DIR=$(dirname "$CUDNN_LIB")
# only for our binary: PyTorch brings its own libraries
DLG_LD=$CUDNN_DIR:$CUDA/lib64:${LD_LIBRARY_PATH:-}
check() { LD_LIBRARY_PATH=$DLG_LD "$BUILD/cuda_check" "$@"; }
ARCH=${DLG_GPU_ARCH:-90}
log "gpu-check: cuDNN $CUDNN_LIB, nvcc $NVCC, arch sm_$ARCH, out $OUT"
# -Werror as in CI, unless DLG_WERROR= (set empty: the GPU run must not be
# lost to a warning that a newer gcc adds)
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
 -Wno-unused-parameter -Wno-format-truncation ${DLG_WERROR--Werror} -I$ROOT/include -I$ROOT/core/nn \
 -I$ROOT/core/runtime -I$CUDNN_INC -I$CUDA/include -DDLG_NN_HAVE_CUDA=1 \
 -DDLG_NN_MODULE_BUILD_DIR=\"$BUILD/backends\" -DDLG_NN_MODULE_INSTALL_DIR=\"$BUILD/backends\" \
 -DDLG_NN_MODULE_REL_DIR=\"lib/dlgauge/backends\""
# NCCL for the comm step: nccl.h to build the module's collectives with
# (core/nn/cuda/cuda.h looks for it), libnccl.so.2 for the module to dlopen
# at run time; PyTorch's wheel first, as cuDNN
NCCL_INC= NCCL_DIR=
for d in "${SP:+$SP/nvidia/nccl/include:$SP/nvidia/nccl/lib}" "$CUDA/include:$CUDA/lib64" \
         /usr/include:/usr/lib/x86_64-linux-gnu; do
  [ -n "$d" ] && [ -f "${d%%:*}/nccl.h" ] && [ -e "${d#*:}/libnccl.so.2" ] || continue
  NCCL_INC=${d%%:*} NCCL_DIR=${d#*:}
  break
done
[ -n "$NCCL_INC" ] && CFLAGS="$CFLAGS -I$NCCL_INC"
# comm.so's sources as plugins/workloads/comm/CMakeLists.txt lists them
# (dlg_add_plugin(comm SOURCES ... LIBS ...)): a file added there is built
# here too (06789ed added core/runtime/phys_fit.c there only, and every GPU
# run's comm step failed to load comm.so)
comm_sources() {
  local d=$ROOT/plugins/workloads/comm
  awk '/dlg_add_plugin\(comm/ { on = 1 } on' "$d/CMakeLists.txt" | tr -s ' \t()' '\n\n\n\n' |
    awk '$0 == "SOURCES" { on = 1; next } on && /^[A-Z_]+$/ { exit } on && NF' |
    sed "s|^\${CMAKE_SOURCE_DIR}/|$ROOT/|; s|^\${CMAKE_CURRENT_SOURCE_DIR}/|$d/|; \|^/|! s|^|$d/|"
}
# comm.so (plugins/workloads/comm) on the engine's objects (args: the
# objects, tests' drivers left out) and its one-rank driver
# tests/comm/comm_gpu_run.c on the mock host, for the comm step.  Every
# shared object links with --no-undefined, as CMake links plugins: a
# missing source fails here, not at the dlopen on the GPU machine.
build_comm() {
  local f o comm=() driver=() fail=0 srcs
  mkdir -p "$BUILD/plugins"
  srcs=$(comm_sources)
  [ -n "$srcs" ] || { echo "gpu-check: no SOURCES in plugins/workloads/comm/CMakeLists.txt"; return 1; }
  for f in $srcs "$ROOT/tests/comm/comm_gpu_run.c" \
           "$ROOT/tests/support/mock_host.c" "$ROOT/tests/support/workload_run.c"; do
    [ -f "$f" ] || { echo "gpu-check: comm source $f (plugins/workloads/comm/CMakeLists.txt) not found"; return 1; }
    o=$BUILD/$(echo "${f#$ROOT/}" | tr / _).o
    gcc $CFLAGS -I"$ROOT/tests/support" -fPIC -fvisibility=hidden -c "$f" -o "$o" || fail=1
    case "$f" in "$ROOT"/tests/*) driver+=("$o") ;; *) comm+=("$o") ;; esac
  done
  [ $fail = 0 ] || return 1
  for o in "$@"; do case "$o" in */tests_*) ;; *) comm+=("$o") ;; esac; done
  gcc -shared -Wl,--no-undefined -o "$BUILD/plugins/comm.so" "${comm[@]}" -lm -ldl -lpthread || return 1
  gcc -o "$BUILD/comm_gpu_run" "${driver[@]}" -lm -ldl
}
# set -e does not work under `if`, so every step is checked by hand.
# As in the CMake build: cuda_check links the engine (no CUDA library), and
# the engine dlopens $BUILD/backends/cuda-probe.so (cudart) and cuda.so
# (cudart, cuBLAS, cuDNN; core/nn/cuda/cuda_module.h), found through the
# build directory compiled into the loader.
build() {
  local f o fail=0 cu nvflags
  local engine=() module=() probe=() shared=()
  mkdir -p "$BUILD/backends"
  nvflags="-std=c++17 -O3 -gencode arch=compute_$ARCH,code=sm_$ARCH -I$ROOT/include -Xcompiler -Wall,-Wextra,-fPIC,-fno-threadsafe-statics,-fvisibility=hidden"
  for cu in cuda_kernels cuda_seq_kernels cuda_nhwc_kernels; do
    $NVCC $nvflags -c "$ROOT/core/nn/cuda/$cu.cu" -o "$BUILD/$cu.o" || return 1
    module+=("$BUILD/$cu.o")
  done
  for f in "$ROOT"/core/nn/*.c "$ROOT"/core/nn/ref/*.c "$ROOT"/core/nn/models/*.c \
           "$ROOT"/core/nn/cuda/*.c "$ROOT/core/runtime/gpu_nvml.c" "$ROOT/tests/cuda/cuda_check.c" "$ROOT/tests/cuda/cuda_check_seq.c" \
           "$ROOT/tests/cuda/cuda_check_scale.c" "$ROOT/tests/cuda/cuda_check_graphs.c" \
           "$ROOT/tests/cuda/cuda_check_input.c" "$ROOT/tests/cuda/cuda_check_net.c" "$ROOT/core/runtime/gpu_peak.c"; do
    o=$BUILD/$(echo "${f#$ROOT/}" | tr / _).o
    gcc $CFLAGS -fPIC -fvisibility=hidden -c "$f" -o "$o" &
    case "${f#$ROOT/core/nn/cuda/}" in
      cuda_select.c|cuda_algo_cache.c|cuda_graph_sm.c|cuda_half_cvt.c|cuda_nhwc.c) shared+=("$o") ;;
      cuda_loader.c) engine+=("$o") ;;
      cuda_probe.c) probe+=("$o") ;;
      cuda_device.c) module+=("$o"); probe+=("$o") ;;
      cuda_*.c) module+=("$o") ;;
      *) engine+=("$o") ;;
    esac
  done
  for f in $(jobs -p); do wait "$f" || fail=1; done
  [ $fail = 0 ] || return 1
  rm -f "$BUILD/cuda_check" "$BUILD/backends/cuda.so" "$BUILD/backends/cuda-probe.so"
  gcc -shared -Wl,--no-undefined -o "$BUILD/backends/cuda.so" "${module[@]}" "${shared[@]}" -L$CUDA/lib64 -lcudart -lcublas \
    "$CUDNN_LIB" -Wl,-rpath,$CUDNN_DIR:$CUDA/lib64 -lm || return 1
  gcc -shared -Wl,--no-undefined -o "$BUILD/backends/cuda-probe.so" "${probe[@]}" -L$CUDA/lib64 -lcudart \
    -Wl,-rpath,$CUDA/lib64 || return 1
  gcc -o "$BUILD/cuda_check" "${engine[@]}" "${shared[@]}" -lm -ldl -lpthread || return 1
  # comm's failure costs the comm step (reported as failed), not the run
  rm -f "$BUILD/comm_gpu_run" "$BUILD/plugins/comm.so"
  build_comm "${engine[@]}" "${shared[@]}" ||
    { rm -f "$BUILD/comm_gpu_run" "$BUILD/plugins/comm.so"; echo "gpu-check: COMM NOT BUILT"; }
  return 0
}
if [ $ONLY_RUN = 1 ]; then
  log "gpu-check: --only-run: step run alone, nothing to build"
elif [ $NO_BUILD = 1 ]; then
  [ -x "$BUILD/cuda_check" ] || { log "gpu-check: --no-build: no $BUILD/cuda_check"; exit 1; }
  log "gpu-check: using the build in $BUILD"
elif ! (build) > "$OUT/build.log" 2>&1; then
  log "gpu-check: BUILD FAILED"; tail -40 "$OUT/build.log"; exit 1
else
  log "gpu-check: built $BUILD/cuda_check in $(( $(date +%s) - T0 )) s"
  [ -x "$BUILD/comm_gpu_run" ] || { COMM_BUILT=0
    log "gpu-check: COMM NOT BUILT (see $OUT/build.log): the comm step fails, the rest runs"; }
fi
if [ $BUILD_ONLY = 1 ]; then
  check nodevice; rc=$?
  [ $rc = 77 ] && rc=0
  [ $COMM_BUILT = 0 ] && rc=1
  exit $rc
fi

# ---- PyTorch, case by case (started now: its import overlaps the layer checks) ----
: > "$OUT/torch.txt"
TORCH_OK=1 TORCH_PY=
if [ $ONLY_RUN = 1 ]; then
  TORCH_OK=0
else
  coproc TORCH { WARMUP=$WARMUP TIMED=$ITERS PYTHONUNBUFFERED=1 \
    exec $PY "$ROOT/scripts/gpu-bench-torch.py" --serve "$BATCH" 2>&1; }
  # copies of its pipes: bash closes a coproc's own when it exits, and what
  # a PyTorch that died said last should still be read
  TORCH_PY=${TORCH_PID:-} # bash unsets TORCH_PID (and TORCH) when it exits
  if [ -n "${TORCH[1]:-}" ] && [ -n "${TORCH[0]:-}" ]; then
    exec {TORCH_IN}>&"${TORCH[1]}" {TORCH_OUT}<&"${TORCH[0]}"
  else
    TORCH_OK=0
    log "gpu-check: PyTorch ($PY) did not start: dlgauge rows only"
  fi
fi
# PyTorch's lines into torch.txt (or FILE) up to its '# done', within
# SECONDS in all (one deadline for the case, not a limit per line: a
# PyTorch that prints and then hangs must not hold the run past its
# budget); 1 if not
torch_read() { # SECONDS [FILE]
  local line t end=$(($(date +%s) + $1)) to=${2:-$OUT/torch.txt}
  while t=$((end - $(date +%s))); [ "$t" -gt 0 ] && IFS= read -r -t "$t" -u "$TORCH_OUT" line; do
    [ "$line" = "# done" ] && return 0
    echo "$line" | tee -a "$to"
  done
  return 1
}
TORCH_UP=0
# one line to PyTorch; a PyTorch that died gives an error, not SIGPIPE (which
# would end this script)
torch_send() {
  local rc
  trap '' PIPE
  echo "$1" 2>/dev/null >&"$TORCH_IN"
  rc=$?
  trap - PIPE
  return $rc
}
# PyTorch's figure for one case (MODEL:MODE:PREC[:BATCH[:profile]]) right
# after dlgauge's, its lines into FILE (default torch.txt, the table's)
torch_case() { # CASE [FILE]
  [ $TORCH_OK = 1 ] || return 1
  if [ $TORCH_UP = 0 ]; then
    torch_read "$(cap 300)" && TORCH_UP=1
  fi
  if [ $TORCH_UP = 1 ] && torch_send "$1" && torch_read "$(cap 240)" "${2:-}"; then return 0; fi
  TORCH_OK=0
  log "gpu-check: PyTorch stopped answering at $1; no PyTorch figures from here on"
  torch_stop
  return 1
}
# it waits for the next case (all it said is read) or hangs: stop it
torch_stop() { kill "$TORCH_PY" 2>/dev/null; }

# ---- 1. layer checks ------------------------------------------------------------
FAILED=() # the steps that failed, for the last line
# (a driver that does not answer must not hold the run either)
limit 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
GPU=$(head -1 "$OUT/gpu.txt" | cut -d, -f1)
case "$GPU" in *NVIDIA*|*Tesla*|*GeForce*|*RTX*) ;; *) GPU=$(limit 60 $PY -c 'import torch; print(torch.cuda.get_device_name(0))' 2>/dev/null) ;; esac
log "gpu-check: GPU $GPU"
# how a cuda_check run ended, from its exit status
ended() { case "$1" in 0) echo passed ;; 124) echo "stopped by its $2 s time limit" ;;
  137) echo "killed by SIGKILL: deaf to SIGTERM at its $2 s time limit (killed $KILL_AFTER s later), or out of memory" ;;
  1) echo failed ;; *) echo "exit $1$([ "$1" -gt 128 ] && echo ", signal $(($1 - 128))")" ;; esac; }
# bf16 and fp16 keep 4-d activations channels-last (NHWC, the default);
# cuda-bf16:0/nchw runs the layer cases once more with them in NCHW order.
# One process per backend: a crash, a hang or a sticky CUDA error (an
# illegal address poisons the process's context) costs that backend's
# checks, not the later backends' too.  All five share 150 s (the limit the
# checks had in one process), at most 60 s each: hangs in several cannot
# eat the benchmark pairs' budget.
: > "$OUT/layers.txt"
LAYERS_END=$(( $(date +%s) + 150 ))
BACKENDS="cuda:0 cuda-tf32:0 cuda-bf16:0 cuda-fp16:0 cuda-bf16:0/nchw"
[ $ONLY_RUN = 1 ] && BACKENDS=
for bk in $BACKENDS; do
  t=$(cap 60)
  rest=$(( LAYERS_END - $(date +%s) ))
  [ "$t" -gt "$rest" ] && t=$(( rest < 2 ? 2 : rest ))
  limit "$t" env LD_LIBRARY_PATH=$DLG_LD "$BUILD/cuda_check" layers "$bk" 2>&1 | tee -a "$OUT/layers.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || { FAILED+=("layer checks on $bk"); log "gpu-check: LAYER CHECKS FAILED on $bk: $(ended "$rc" "$t")"; }
done

# ---- 1b. the comm workloads on cuda:0 through NCCL, one rank, 64 MiB ----------------
# (a copy on one rank, nccl-tests' np 1; busbw 0 for allreduce): that
# NCCL loads, its communicator opens, the ops run, every element checks;
# then 4 KiB one op a step and 20 a step (nccl-tests' loop), whose ratio
# is the launch and wait a lone small op pays
COMM=passed
if [ $ONLY_RUN = 1 ] || [ $COMM_WANTED = 0 ]; then
  COMM="not run"
elif [ $COMM_BUILT = 0 ]; then
  FAILED+=("comm (not built)")
elif [ ! -x "$BUILD/comm_gpu_run" ]; then
  COMM="not run"
  log "gpu-check: comm: no $BUILD/comm_gpu_run (--no-build of a build without it): not run"
elif [ -z "$NCCL_DIR" ]; then
  COMM="not run"
  log "gpu-check: comm: no NCCL (nccl.h + libnccl.so.2 in PyTorch's site-packages/nvidia/nccl, $CUDA, /usr)"
else
  for spec in "allreduce bytes=64MiB" "p2p bytes=64MiB" "allreduce bytes=4KiB" \
              "allreduce bytes=4KiB ops_per_step=20"; do
    t=$(cap 45)
    read -r -a words <<<"$spec" # the workload, then key=value words
    LD_LIBRARY_PATH=$NCCL_DIR:$DLG_LD DLGAUGE_PLUGIN_PATH=$BUILD/plugins limit "$t" "$BUILD/comm_gpu_run" \
      "${words[0]}" 50 device=cuda:0 type=float32 "${words[@]:1}" 2>&1 | tee -a "$OUT/extras.txt"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || { FAILED+=("comm $spec"); log "gpu-check: COMM $spec on cuda:0 $(ended "$rc" "$t") (NCCL from $NCCL_DIR)"; }
  done
fi

# ---- 2. benchmarks: each case on dlgauge, then on PyTorch -----------------------------
: > "$OUT/dlgauge.txt"
# the table of the rows so far, rewritten after each pair: a run stopped from
# outside (the device call's timeout) still leaves it in $OUT
table() {
  $PY "$ROOT/scripts/gpu_table.py" --dlgauge "$OUT/dlgauge.txt" --torch "$OUT/torch.txt" \
    --gpu "$GPU" --warmup $WARMUP --iters $ITERS > "$OUT/table.txt"
}
# dlgauge's row (bench args after MODEL MODE: BACKEND BATCH ...), its lines
# prefixed with the precision
dlg_row() {
  local m=$1 mode=$2 p=$3 t=$4
  shift 4
  echo "# $m $mode $p" >> "$OUT/dlgauge.txt"
  t=$(cap "$t")
  LD_LIBRARY_PATH=$DLG_LD limit "$t" "$BUILD/cuda_check" bench "$m" "$mode" "$@" 2>&1 \
    | sed "s/^bench /bench $p /; s/^energy /energy $p /" | tee -a "$OUT/dlgauge.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || log "gpu-check: dlgauge $m $mode $p $(ended "$rc" "$t")"
}
# the rows and extras in the order plan() gives
run_lm() { # PREC BATCH
  dlg_row lstm-ptb train "$1" 60 "$(backend_of $1)" "$2" $WARMUP $ITERS
  torch_case "lstm-ptb:train:$1:$2"
  table
}
# the input path: inputs as the caffe workload feeds a loader's batches:
# pinned, copied on a second stream while the previous step runs (img/s
# should match ResNet-50 training's row; data_wait_ms: the compute stream's
# wait per step for the copy)
run_async() { # PREC
  local t rc
  t=$(cap 60)
  LD_LIBRARY_PATH=$DLG_LD limit "$t" "$BUILD/cuda_check" bench resnet50 train $(backend_of $1) \
    $BATCH $WARMUP $ITERS input=async 2>&1 | sed "s/^/input-async: /" | tee -a "$OUT/extras.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || log "gpu-check: input=async row $(ended "$rc" "$t")"
}
run_pair() { # MODEL MODE PREC
  dlg_row "$1" "$2" "$3" 90 "$(backend_of $3)" $BATCH $WARMUP $ITERS
  torch_case "$1:$2:$3"
  table
}
# the on-disk algorithm cache: the second plan reads what the first wrote
run_algo_cache() {
  local i
  rm -f "$BUILD/algo.cache"
  for i in 1 2; do
    LD_LIBRARY_PATH=$DLG_LD limit "$(cap 40)" "$BUILD/cuda_check" bench resnet50 train cuda:0 $BATCH 1 3 \
      algo_cache=$BUILD/algo.cache 2>&1 | sed "s/^/algo-cache run $i: /" | tee -a "$OUT/extras.txt"
  done
  [ -f "$BUILD/algo.cache" ] && echo "algo-cache entries: $(($(wc -l < "$BUILD/algo.cache") - 1))" | tee -a "$OUT/extras.txt"
}
# where ResNet-50 training's step goes, layer by layer on dlgauge (eager,
# 5 timed steps) and operator by operator on PyTorch; not in the table
run_profile() { # PREC
  local t rc
  t=$(cap 90)
  LD_LIBRARY_PATH=$DLG_LD limit "$t" "$BUILD/cuda_check" bench resnet50 train $(backend_of $1) \
    $BATCH $WARMUP 5 profile=on 2>&1 | sed "s/^bench /profile-bench $1 /" | tee -a "$OUT/extras.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || log "gpu-check: profile $(ended "$rc" "$t")"
  torch_case "resnet50:train:$1:$BATCH:profile" "$OUT/extras.txt"
}
run_deterministic() {
  LD_LIBRARY_PATH=$DLG_LD limit "$(cap 50)" "$BUILD/cuda_check" layers --deterministic cuda:0 2>&1 \
    | sed "s/^/deterministic: /" | tee -a "$OUT/extras.txt"
}
# dlgauge itself on the GPU, from the bundle scripts/gpu-bundle.sh packed
# here (the GPU machine has none of dlgauge's Debian libraries): sysinfo's
# GPU listing, then `dlgauge run` of scripts/gpu-check-run.ini on data
# generated there (mkdata), its CSV read back by scripts/gpu_run_check.py.
# The bundle's CUDA backend module loads the GPU machine's cuDNN and CUDA
# (DLG_LD).  Everything goes to extras.txt ("sysinfo: ", "run: " lines):
# the device call brings back 8 files, and the script writes 8.
RUN_STATUS="not run"
run_dlgauge() {
  local dir=$BUILD/run ld dlg t rc bad=()
  if [ ! -f "$BUNDLE" ]; then
    log "gpu-check: dlgauge run: no bundle $BUNDLE (here: bash scripts/gpu-bundle.sh, then carry build-gpubundle): not run"
    return
  fi
  rm -rf "$dir" && mkdir -p "$dir/bundle" && tar -C "$dir/bundle" -xzf "$BUNDLE" ||
    { RUN_STATUS=failed; FAILED+=("dlgauge run (bundle $BUNDLE does not unpack)"); return; }
  dlg=$dir/bundle/bin/dlgauge ld=$dir/bundle/lib/deps:$dir/bundle/lib:$DLG_LD
  # packed from these sources?  The step still runs (its figures stand for
  # the sources it names), but the last line counts it failed: a "passed"
  # must speak for the sources carried
  local packed here
  packed=$(cat "$dir/bundle/share/dlgauge/bundle-sources" 2>/dev/null)
  here=$(bash "$ROOT/scripts/gpu-sources-hash.sh" "$ROOT" 2>/dev/null)
  if [ "$packed" != "$here" ]; then
    log "gpu-check: dlgauge run: the bundle was packed from other sources (${packed:-unknown}) than these ($here): rerun bash scripts/gpu-bundle.sh before the call"
    FAILED+=("dlgauge run from a bundle of other sources (${packed:-unknown}, not $here)")
  else
    log "gpu-check: dlgauge run: bundle packed from these sources ($here)"
  fi
  t=$(cap 30)
  LD_LIBRARY_PATH=$ld limit "$t" "$dlg" sysinfo > "$dir/sysinfo.txt" 2>&1
  rc=$?
  sed 's/^/sysinfo: /' "$dir/sysinfo.txt" | tee -a "$OUT/extras.txt"
  # the GPU listed, with its peak rates (% of peak) and the CUDA libraries
  [ $rc = 0 ] || bad+=("sysinfo $(ended "$rc" "$t")")
  grep -Eq '^gpus: +[1-9]' "$dir/sysinfo.txt" || bad+=("sysinfo lists no GPU")
  grep -Eq '^    peak: +fp32 [0-9]' "$dir/sysinfo.txt" || bad+=("sysinfo has no peak rates for this GPU")
  grep -Eq '^cuda: +CUDA runtime' "$dir/sysinfo.txt" || bad+=("sysinfo names no CUDA libraries")
  t=$(cap 60) # a hang here must not hold the run past its budget either
  (cd "$dir" && export LD_LIBRARY_PATH=$ld &&
     limit "$t" "$dlg" mkdata images --out data --classes "$RUN_CLASSES" --images "$RUN_IMAGES" \
       --threads "$(nproc)" && limit "$t" "$dlg" mkdata text --out corpus.txt --words "$RUN_WORDS") \
    > "$dir/mkdata.log" 2>&1 || { rc=$?; bad+=("mkdata $(ended "$rc" "$t"): $(tail -1 "$dir/mkdata.log")"); }
  t=$(cap 180)
  # the conversion is one pass of the images generated, whatever RUN_SET
  # says of every job: set after it
  # shellcheck disable=SC2086 # RUN_SET: --set words, split on purpose
  (cd "$dir" && LD_LIBRARY_PATH=$ld limit "$t" "$dlg" run "$ROOT/scripts/gpu-check-run.ini" $RUN_SET \
     --set preprocess-rec.warmup=0 --set preprocess-rec.iterations="$RUN_IMAGES") 2>&1 |
    sed 's/^/run-log: /' | tee -a "$OUT/extras.txt"
  rc=${PIPESTATUS[0]}
  [ $rc = 0 ] || bad+=("dlgauge run $(ended "$rc" "$t")")
  [ -f "$dir/run.csv" ] && sed 's/^/run-csv: /' "$dir/run.csv" >> "$OUT/extras.txt"
  $PY "$ROOT/scripts/gpu_run_check.py" "$dir/run.csv" --gpu "$GPU" 2>&1 | tee -a "$OUT/extras.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || bad+=("its rows (gpu_run_check.py)")
  if [ ${#bad[@]} = 0 ]; then RUN_STATUS=passed; return; fi
  RUN_STATUS=failed
  FAILED+=("dlgauge run: $(printf '%s, ' "${bad[@]}" | sed 's/, $//')")
}
# one step of the plan, if the budget leaves it the time it needs
run_step() { # KIND ARGS...
  local need=$PAIR_MIN
  case $1 in async|profile) need=$((PAIR_MIN + 30)) ;; algo-cache) need=100 ;; deterministic) need=60 ;; run) need=110 ;; esac
  if [ "$(left)" -lt "$need" ]; then log "gpu-check: budget: skipping $*"; return; fi
  case $1 in
    run) run_dlgauge ;;
    lm) run_lm "$2" "$3" ;;
    async) run_async "$2" ;;
    pair) run_pair "$2" "$3" "$4" ;;
    graphs-off) dlg_row resnet50 train "$2" 90 "$(backend_of $2)" $BATCH $WARMUP $ITERS graphs=off; table ;;
    profile) run_profile "$2" ;;
    algo-cache) run_algo_cache ;;
    deterministic) run_deterministic ;;
  esac
}
mapfile -t STEPS < <(plan)
for st in "${STEPS[@]}"; do
  read -r -a words <<<"$st"
  run_step "${words[@]}"
done
[ $TORCH_OK = 1 ] && torch_stop

# ---- 3. the table ------------------------------------------------------------------
# --only-run asked for step run alone: not running it is a failure
[ $ONLY_RUN = 1 ] && [ "$RUN_STATUS" = "not run" ] && FAILED+=("dlgauge run not run")
table
cat "$OUT/table.txt"
# which steps failed, by name (a comm failure is not a layer check's)
if [ ${#FAILED[@]} = 0 ]; then
  log "gpu-check: done in $(( $(date +%s) - T0 )) s, layer checks $([ $ONLY_RUN = 1 ] && echo not run || echo passed)," \
    "comm $COMM, dlgauge run $RUN_STATUS"
  exit 0
fi
log "gpu-check: done in $(( $(date +%s) - T0 )) s, FAILED: $(printf '%s; ' "${FAILED[@]}" | sed 's/; $//')"
exit 1
