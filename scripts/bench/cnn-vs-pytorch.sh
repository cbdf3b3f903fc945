#!/usr/bin/env bash
# dlgauge's caffe workloads vs PyTorch (Debian python3-torch/torchvision) on
# the same CPU and thread count: ResNet-50 and AlexNet, train and infer at
# batch 16, infer at batch 1 (latency), 224x224 synthetic input, median step
# time over STEPS timed steps after 2 warm-up steps (dlgauge: the runner's
# step-latency p50; PyTorch: statistics.median).  PyTorch runs NCHW and
# channels_last, and for inference also scripted + optimize_for_inference
# ("frozen": batch norm folded, as dlgauge folds it); the best counts.  Each case runs in a fresh process, so
# peak RSS is per case.  Ratio = dlgauge images/s / PyTorch images/s.
#
# usage: scripts/bench/cnn-vs-pytorch.sh [BUILD_DIR] [THREADS]
#   env STEPS_TRAIN (5), STEPS_INFER (10), STEPS_B1 (30)
# Note: AlexNet here is Caffe's (groups, LRN) at crop 224 for dlgauge and
# torchvision's (no groups, no LRN) for PyTorch: 0.72 vs 0.71 GMACs/image.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
threads=${2:-$(nproc)}
st=${STEPS_TRAIN:-5} si=${STEPS_INFER:-10} s1=${STEPS_B1:-30}
dlg=$build/bin/dlgauge
[ -x "$dlg" ] || { echo "no $dlg: build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# PyTorch's environment, in its own commands only: one OpenBLAS thread (the
# OpenMP team does the parallel work), glibc malloc tuned as PyTorch's own
# benchmarks recommend (big blocks stay mapped: no page faults per step).
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=17179869184 MALLOC_TOP_PAD_=1073741824)

cases=( # name model mode batch steps
  "resnet50-train-b16 resnet50 train 16 $st"
  "resnet50-infer-b16 resnet50 infer 16 $si"
  "resnet50-infer-b1 resnet50 infer 1 $s1"
  "alexnet-train-b16 alexnet train 16 $st"
  "alexnet-infer-b16 alexnet infer 16 $si"
  "alexnet-infer-b1 alexnet infer 1 $s1"
)

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $threads threads"
echo "== oneDNN (ONEDNN_VERBOSE=1, first lines of a dlgauge run):"
cat >"$work/isa.ini" <<EOF2
[sink csv]
path = $work/isa.csv
[job isa]
workload = alexnet
mode = infer
batch = 1
crop = 67
classes = 10
warmup = 0
iterations = 1
EOF2
(cd "$work" && ONEDNN_VERBOSE=1 "$dlg" run --set job.isolation=none "$work/isa.ini" 2>&1 |
  grep -m4 '^onednn_verbose,info') || true

# Interleaved per case, so that a machine whose load changes during the
# script treats both sides alike.
echo "== runs (dlgauge, then PyTorch NCHW and channels_last, per case)"
for c in "${cases[@]}"; do
  read -r name model mode batch steps <<<"$c"
  printf '[sink csv]\npath = %s\n[job %s]\nworkload = %s\nmode = %s\nbatch = %s\ncrop = 224\ncpus = %s\nwarmup = 2\niterations = %s\n' \
    "$work/dlg-$name.csv" "$name" "$model" "$mode" "$batch" "$threads" "$steps" >"$work/$name.ini"
  (cd "$work" && "$dlg" run "$work/$name.ini" >"$work/dlg.log" 2>&1) || { cat "$work/dlg.log"; exit 1; }
  fmts="nchw cl"
  [ "$mode" = infer ] && fmts="nchw cl frozen"
  for fmt in $fmts; do
    "${torch_env[@]}" /usr/bin/python3 "$src/scripts/bench/cnn_peer.py" \
      "$model" "$mode" "$batch" "$threads" "$steps" "$fmt" >"$work/torch-$name-$fmt.json" ||
      { echo "   PyTorch $fmt failed for $name; left out" >&2; rm -f "$work/torch-$name-$fmt.json"; }
  done
  echo "   $name done"
done
"${torch_env[@]}" ONEDNN_VERBOSE=1 /usr/bin/python3 "$src/scripts/bench/cnn_peer.py" \
  alexnet infer 1 "$threads" 1 nchw 2>&1 | grep -m2 '^onednn_verbose,info' | sed 's/^/PyTorch /' || true

python3 - "$work" "${cases[@]}" <<'PY'
import csv, json, os, sys
work, cases = sys.argv[1], [c.split() for c in sys.argv[2:]]
rows = {c[0]: next(csv.DictReader(open(f"{work}/dlg-{c[0]}.csv"))) for c in cases}
blas = None
print(f"{'case':20} {'dlgauge img/s':>13} {'torch img/s':>11} {'fmt':>4} {'ratio':>6} "
      f"{'dlg p50 ms':>10} {'torch ms':>9} {'dlg RSS MB':>10} {'torch RSS MB':>12} {'dlg %peak':>9}")
for name, model, mode, batch, steps in cases:
    r = rows[name]
    if r["status"] != "ok":
        print(f"{name:20} dlgauge failed: {r.get('error', '')}")
        continue
    p50 = float(r["latency_p50_us"]) / 1e6
    dips = int(batch) / p50
    t = {f: json.load(open(f"{work}/torch-{name}-{f}.json")) for f in ("nchw", "cl", "frozen")
         if os.path.exists(f"{work}/torch-{name}-{f}.json")}
    best = max(t, key=lambda f: t[f]["images_per_s"])
    tb = t[best]
    blas = tb.get("openblas_core") or ",".join(tb.get("blas_libs", [])) or "none"
    print(f"{name:20} {dips:13.2f} {tb['images_per_s']:11.2f} {best:>4} {dips / tb['images_per_s']:6.2f} "
          f"{p50 * 1e3:10.1f} {tb['median_s'] * 1e3:9.1f} {int(r['rss_peak_bytes']) / 2**20:10.0f} "
          f"{tb['rss_peak_bytes'] / 2**20:12.0f} {float(r.get('pct_peak') or 0):9.1f}")
    frozen = f", frozen {t['frozen']['images_per_s']:.2f}" if "frozen" in t else ""
    print(f"{'':20} (torch nchw {t['nchw']['images_per_s']:.2f}, channels_last {t['cl']['images_per_s']:.2f}{frozen} img/s; "
          f"dlgauge {float(r['gflops']):.1f} GFLOP/s, isa {r['dnnl_isa']})")
print(f"peak: {rows[cases[0][0]]['peak_source']}")
print(f"PyTorch BLAS kernel: {blas}")
PY
