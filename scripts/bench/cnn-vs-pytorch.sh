#!/usr/bin/env bash
# dlgauge's caffe workloads vs PyTorch (Debian python3-torch/torchvision) on
# the same CPU and thread count: ResNet-50 and AlexNet, train and infer at
# batch 16, infer at batch 1 (latency); GoogLeNet train and infer at batch
# 16; VGG16 train and infer at batch 4 (15.5 GMACs an image: a batch-16
# training step takes PyTorch ~18 s here); 224x224 synthetic input, median step
# time over STEPS timed steps after 2 warm-up steps (dlgauge: the runner's
# step-latency p50; PyTorch: statistics.median).  PyTorch runs NCHW and
# channels_last, and for inference also scripted + optimize_for_inference
# ("frozen": batch norm folded, as dlgauge folds it); the best counts.  Each case runs in a fresh process, so
# peak RSS is per case.  Ratio = dlgauge images/s / PyTorch images/s; the
# ratio range pairs each round's dlgauge run with PyTorch's run of the same
# round (best format by median).  RSS in MiB.  The *-bf16 cases run in
# bfloat16 on both sides (dlgauge precision = bf16, the cpu-bf16 backend;
# PyTorch's model and input in bf16 as nchw, channels_last or frozen, or
# autocast on the fp32 model, "amp" (channels_last) or "ampn" (nchw);
# training only as autocast, fp32 master weights on both sides); they
# need AVX-512.  Both sides run under each OpenMP wait policy of
# WAIT_POLICIES (bench_lib.sh: libgomp's default spin, PASSIVE) and each
# side's best by median counts; the table names the policy that won per
# side, and the load average is printed before, between and after the
# cases.  GFLOP/s, %peak, isa and winograd_layers (convolutions on a
# Winograd kernel, the engine's or oneDNN's: rows that differ in it ran
# different kernels) are those of dlgauge's median round under its best
# policy, the run its img/s comes from.
#
# usage: scripts/bench/cnn-vs-pytorch.sh [BUILD_DIR] [THREADS]
#   env STEPS_TRAIN (5), STEPS_INFER (10), STEPS_B1 (30), ROUNDS (3),
#   CASES (names to run, e.g. "resnet50-infer-b1 alexnet-train-b16"; all),
#   WAIT_POLICIES (OMP_WAIT_POLICY values each side runs under: "default
#   PASSIVE"; default = unset),
#   PEER_PYTHON (the python3 with torch and torchvision; /usr/bin/python3)
# Exits 2 before measuring when PyTorch cannot be imported or CASES or
# WAIT_POLICIES names no case or policy, and 1 after the table when a
# case has no PyTorch figure.
# Note: AlexNet and GoogLeNet are BVLC's on both sides at crop 224
# (bvlc_alexnet.py, bvlc_googlenet.py: torchvision's AlexNet has no LRN or
# groups, its GoogLeNet batch norm and 3x3 "5x5" branches; the AlexNet rows
# before 2026-11-30's tenth session used torchvision's); VGG16 and
# ResNet-50 are the same network on both.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
threads=${2:-$(nproc)}
st=${STEPS_TRAIN:-5} si=${STEPS_INFER:-10} s1=${STEPS_B1:-30} rounds=${ROUNDS:-3}
dlg=$build/bin/dlgauge
[ -x "$dlg" ] || { echo "no $dlg: build first" >&2; exit 1; }
. "$src/scripts/bench/bench_lib.sh"
need_peer_modules torch torchvision
work=$(mktemp -d)
keep=
trap '[ -n "$keep" ] || rm -rf "$work"' EXIT

# PyTorch's environment, in its own commands only: one OpenBLAS thread (the
# OpenMP team does the parallel work), glibc malloc tuned as PyTorch's own
# benchmarks recommend (big blocks stay mapped: no page faults per step).
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=17179869184 MALLOC_TOP_PAD_=1073741824)

cases=( # name model mode batch steps [precision]
  "resnet50-train-b16 resnet50 train 16 $st"
  "resnet50-infer-b16 resnet50 infer 16 $si"
  "resnet50-infer-b1 resnet50 infer 1 $s1"
  "alexnet-train-b16 alexnet train 16 $st"
  "alexnet-infer-b16 alexnet infer 16 $si"
  "alexnet-infer-b1 alexnet infer 1 $s1"
  "googlenet-train-b16 googlenet train 16 $st"
  "googlenet-infer-b16 googlenet infer 16 $si"
  "vgg16-train-b4 vgg16 train 4 $st"
  "vgg16-infer-b4 vgg16 infer 4 $si"
  "resnet50-infer-b16-bf16 resnet50 infer 16 $si bf16"
  "resnet50-infer-b1-bf16 resnet50 infer 1 $s1 bf16"
  "alexnet-infer-b16-bf16 alexnet infer 16 $si bf16"
  "googlenet-infer-b16-bf16 googlenet infer 16 $si bf16"
  "vgg16-infer-b4-bf16 vgg16 infer 4 $si bf16"
  "resnet50-train-b16-bf16 resnet50 train 16 $st bf16"
  "alexnet-train-b16-bf16 alexnet train 16 $st bf16"
  "googlenet-train-b16-bf16 googlenet train 16 $st bf16"
  "vgg16-train-b4-bf16 vgg16 train 4 $st bf16"
)

check_cases $(printf '%s\n' "${cases[@]}" | cut -d' ' -f1)
policies=$(wait_policies)

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $threads threads, load average $(loadavg)"
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

# Interleaved per case and round, so that a machine whose load changes
# during the script treats both sides alike; each side's figure is the
# median over ROUNDS runs of its per-run median step time, per wait policy.
echo "== runs: $rounds round(s) of dlgauge, then PyTorch nchw, channels_last (and frozen for inference), per case, each under OMP_WAIT_POLICY $policies"
for c in "${cases[@]}"; do
  read -r name model mode batch steps prec <<<"$c"
  prec=${prec:-fp32}
  case " ${CASES:-$name} " in *" $name "*) ;; *) continue ;; esac
  for r in $(seq 1 "$rounds"); do
    for pol in $policies; do
      printf '[sink csv]\npath = %s\n[job %s]\nworkload = %s\nmode = %s\nbatch = %s\ncrop = 224\ncpus = %s\nwarmup = 2\niterations = %s\nprecision = %s\n' \
        "$work/dlg-$name-$pol-$r.csv" "$name" "$model" "$mode" "$batch" "$threads" "$steps" "$prec" >"$work/$name.ini"
      (cd "$work" && with_wait "$pol" "$dlg" run "$work/$name.ini" >"$work/dlg.log" 2>&1) || { cat "$work/dlg.log"; exit 1; }
      fmts="nchw cl"
      [ "$mode" = infer ] && fmts="nchw cl frozen"
      [ "$prec" = bf16 ] && fmts="nchw cl frozen amp"
      [ "$prec" = bf16 ] && [ "$mode" = train ] && fmts="amp ampn"
      for fmt in $fmts; do
        with_wait "$pol" "${torch_env[@]}" "$PEER_PYTHON" "$src/scripts/bench/cnn_peer.py" \
          "$model" "$mode" "$batch" "$threads" "$steps" "$fmt" "$prec" >"$work/torch-$name-$fmt-$pol-$r.json" ||
          { echo "   PyTorch $fmt ($pol) failed for $name; left out" >&2; rm -f "$work/torch-$name-$fmt-$pol-$r.json"; }
      done
    done
  done
  echo "   done: $name (load average $(loadavg))"
done
# the isa line is oneDNN's third info line: -m2 stopped before it
"${torch_env[@]}" ONEDNN_VERBOSE=1 "$PEER_PYTHON" "$src/scripts/bench/cnn_peer.py" \
  alexnet infer 1 "$threads" 1 nchw 2>&1 | grep -m3 '^onednn_verbose,info' | sed 's/^/PyTorch /' || true

rc=0
python3 - "$src/scripts/bench" "$work" "$rounds" "$policies" "${cases[@]}" <<'PY' || rc=$?
import csv, glob, json, re, statistics, sys
bench, work, rounds, policies = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
cases = [c.split() for c in sys.argv[5:]]
sys.path.insert(0, bench)
from rounds import median_round
# by policy: "dlg-resnet50-infer-b16-*" would also match the -bf16 case's files
cases = [c for c in cases if any(glob.glob(f"{work}/dlg-{c[0]}-{pol}-[0-9]*.csv") for pol in policies)]


def by_round(pattern):
    """{round: path}, by the round number in the name (a sorted glob puts 10 before 2)."""
    return {int(re.search(r"-(\d+)\.\w+$", f).group(1)): f for f in glob.glob(pattern)}


print(f"medians over {rounds} round(s); ratio = dlgauge img/s / PyTorch's best format img/s, each side "
      f"under its best OMP_WAIT_POLICY of: {' '.join(policies)}; ratio range: per round, dlgauge / that "
      "format in the same round")
print(f"{'case':20} {'dlgauge img/s':>13} {'torch img/s':>11} {'fmt':>6} {'ratio':>6} "
      f"{'dlg p50 ms':>10} {'torch ms':>9} {'dlg RSS MiB':>11} {'torch RSS MiB':>13} {'dlg %peak':>9} "
      f"{'dlg wait':>8} {'torch wait':>10}")
blas, peaks, missing = "none", [], []
for name, model, mode, batch, steps, *prec in cases:
    dlg = {}  # policy: {round: row}
    for pol in policies:
        rs = {r: next(csv.DictReader(open(f))) for r, f in sorted(by_round(f"{work}/dlg-{name}-{pol}-[0-9]*.csv").items())}
        if rs:
            dlg[pol] = rs
    bad = [x for rs in dlg.values() for x in rs.values() if x["status"] != "ok"]
    if bad:
        print(f"{name:20} dlgauge failed: {bad[0].get('error', '')}")
        missing.append(name)
        continue
    p50s = {pol: {r: float(x["latency_p50_us"]) / 1e6 for r, x in rs.items()} for pol, rs in dlg.items()}
    dpol = min(p50s, key=lambda pol: statistics.median(p50s[pol].values()))
    runs, p50r = dlg[dpol], p50s[dpol]
    p50 = statistics.median(p50r.values())
    mid = runs[median_round(p50r)]  # GFLOP/s, %peak, isa: the run the median is from
    if mid["peak_source"] not in peaks:  # fp32 and bf16 cases have different peaks
        peaks.append(mid["peak_source"])
    dips = int(batch) / p50
    t = {}
    for f in ("nchw", "cl", "frozen", "amp", "ampn"):
        for pol in policies:
            js = {r: json.load(open(x)) for r, x in sorted(by_round(f"{work}/torch-{name}-{f}-{pol}-*.json").items())}
            if js:
                med = statistics.median(j["median_s"] for j in js.values())
                t[f, pol] = {"median_s": med, "images_per_s": int(batch) / med,
                             "rss_peak_bytes": max(j["rss_peak_bytes"] for j in js.values()),
                             "mid": js[median_round({r: j["median_s"] for r, j in js.items()})],
                             "round_s": {r: j["median_s"] for r, j in js.items()}}
    if not t:
        print(f"{name:20} PyTorch failed in every format: no ratio")
        missing.append(name)
        continue
    best = max(t, key=lambda k: t[k]["images_per_s"])
    tb = t[best]
    blas = tb["mid"].get("openblas_core") or ",".join(tb["mid"].get("blas_libs", [])) or "none"
    # pair each dlgauge round with the same round's PyTorch run (interleaved)
    ratios = [tb["round_s"][r] / p50r[r] for r in sorted(p50r) if r in tb["round_s"]] or [float("nan")]
    print(f"{name:20} {dips:13.2f} {tb['images_per_s']:11.2f} {best[0]:>6} {dips / tb['images_per_s']:6.2f} "
          f"{p50 * 1e3:10.1f} {tb['median_s'] * 1e3:9.1f} "
          f"{max(int(x['rss_peak_bytes']) for x in runs.values()) / 2**20:11.0f} "
          f"{tb['rss_peak_bytes'] / 2**20:13.0f} {float(mid.get('pct_peak') or 0):9.1f} {dpol:>8} {best[1]:>10}")
    others = ", ".join(f"{f}/{pol} {v['images_per_s']:.2f}" for (f, pol), v in t.items())
    dothers = ", ".join(f"{pol} {int(batch) / statistics.median(v.values()):.2f}" for pol, v in p50s.items())
    print(f"{'':20} (torch {others} img/s; dlgauge {dothers} img/s, per round under {dpol} "
          f"{', '.join(f'{int(batch) / p50r[r]:.2f}' for r in sorted(p50r))}, ratio range "
          f"{min(ratios):.2f}-{max(ratios):.2f}; median round: {float(mid['gflops']):.1f} GFLOP/s, "
          f"isa {mid['dnnl_isa']}, winograd_layers {mid.get('winograd_layers') or '-'})")
for p in peaks:
    print(f"peak: {p}")
print(f"PyTorch BLAS kernel: {blas}")
if missing:
    sys.exit(f"no ratio for {', '.join(missing)}")
PY
# a table that could not be made keeps the runs' files for a second look
[ "$rc" -eq 0 ] || { keep=1; echo "== the runs' files are kept in $work" >&2; }
echo "== load average at the end: $(loadavg)"
exit "$rc"
