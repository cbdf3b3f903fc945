#!/usr/bin/env bash
# dlgauge's mxnet workloads vs PyTorch (Debian python3-torch/torchvision) on
# the same CPU and thread count: Inception-v3 train and infer (299x299
# synthetic input, small batch to keep it short) and the PTB-medium LSTM
# language model (hidden 650, 2 layers, vocabulary 10000, bptt 35, batch 20;
# PyTorch's word_language_model loop with clip 0.25 and SGD lr 20).  Median
# step time over STEPS timed steps after 2 warm-up steps (dlgauge: the
# runner's step-latency p50; PyTorch: statistics.median).  PyTorch's
# Inception runs NCHW and channels_last, and for inference also scripted +
# optimize_for_inference ("frozen": batch norm folded, as dlgauge folds it);
# the best counts.  Ratio = dlgauge items/s / PyTorch items/s; the ratio
# per round pairs each round's dlgauge run with PyTorch's of the same round.
# RSS in MiB.  inception-infer-bN-bf16 infers in bfloat16 on both sides
# (dlgauge precision = bf16, the cpu-bf16 backend; PyTorch's model and
# input in bf16 as nchw, channels_last or frozen, or autocast, "amp"); it
# needs AVX-512.  inception-train-bN-bf16 trains in bfloat16 against
# autocast on channels_last ("amp") and NCHW ("ampn"), fp32 master
# weights on both sides.  lstm-medium-*-bf16 runs the language model in bfloat16
# (dlgauge: cpu-bf16, the LSTM and decoder on oneDNN's bf16 kernels, fp32
# master weights and weight gradients) against PyTorch's autocast ("amp",
# fp32 masters; PyTorch 1.13 keeps nn.LSTM fp32 under CPU autocast) and
# its model converted to bf16 ("bf16": bf16 LSTM, weights and SGD); the
# LSTM's dtype each ran is printed under the row.  Both sides run under
# each OpenMP wait policy of WAIT_POLICIES (bench_lib.sh: libgomp's default
# spin, PASSIVE) and each side's best by median counts; the table names the
# policy that won per side, and the load average is printed before, between
# and after the rounds.  %peak, isa and winograd_layers are those of
# dlgauge's median round under its best policy, the run its rate is from.
#
# usage: scripts/bench/mxnet-vs-pytorch.sh [BUILD_DIR] [THREADS]
#   env BATCH_IMG (4), STEPS_TRAIN (3), STEPS_INFER (5), STEPS_LM (4), ROUNDS (3),
#   CASES (names to run; all), WAIT_POLICIES (OMP_WAIT_POLICY values each
#   side runs under: "default PASSIVE"; default = unset),
#   PEER_PYTHON (the python3 with torch and torchvision; /usr/bin/python3)
# Exits 2 before measuring when PyTorch cannot be imported or CASES or
# WAIT_POLICIES names no case or policy, and 1 after the table when a
# case has no PyTorch figure.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
threads=${2:-$(nproc)}
bi=${BATCH_IMG:-4} st=${STEPS_TRAIN:-3} si=${STEPS_INFER:-5} sl=${STEPS_LM:-4} rounds=${ROUNDS:-3}
dlg=$build/bin/dlgauge
[ -x "$dlg" ] && [ -f "$build/lib/dlgauge/mxnet.so" ] ||
  { echo "build first: ninja -C $build dlgauge_cli mxnet csv" >&2; exit 1; }
. "$src/scripts/bench/bench_lib.sh"
need_peer_modules torch torchvision
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# PyTorch's environment, in its own commands only: one OpenBLAS thread (the
# OpenMP team does the parallel work), glibc malloc tuned as PyTorch's own
# benchmarks recommend (big blocks stay mapped: no page faults per step).
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=17179869184 MALLOC_TOP_PAD_=1073741824)

cases=( # name workload mode batch steps unit [precision]
  "inception-train-b$bi inception-v3 train $bi $st images"
  "inception-infer-b$bi inception-v3 infer $bi $si images"
  "inception-infer-b$bi-bf16 inception-v3 infer $bi $si images bf16"
  "inception-train-b$bi-bf16 inception-v3 train $bi $st images bf16"
  "lstm-medium-train lstm-ptb train 20 $sl tokens"
  "lstm-medium-infer lstm-ptb infer 20 $sl tokens"
  "lstm-medium-train-bf16 lstm-ptb train 20 $sl tokens bf16"
  "lstm-medium-infer-bf16 lstm-ptb infer 20 $sl tokens bf16"
)

check_cases $(printf '%s\n' "${cases[@]}" | cut -d' ' -f1)
policies=$(wait_policies)

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $threads threads, load average $(loadavg)"
# The kernels that run: oneDNN's ISA on both sides (PyTorch's convolutions
# are oneDNN's too); PyTorch's OpenBLAS core (its LSTM and FC GEMMs) is
# printed under the table.
printf '[sink csv]\npath = %s/isa.csv\n[job isa]\nworkload = inception-v3\nmode = infer\nbatch = 1\nwarmup = 0\niterations = 1\n' \
  "$work" >"$work/isa.ini"
(cd "$work" && ONEDNN_VERBOSE=1 "$dlg" run --set job.isolation=none "$work/isa.ini" 2>&1 |
  grep -m1 '^onednn_verbose,info,cpu,isa' | sed 's/^/dlgauge /') || true
"${torch_env[@]}" ONEDNN_VERBOSE=1 "$PEER_PYTHON" "$src/scripts/bench/mxnet_peer.py" \
  inception infer 1 "$threads" 1 nchw 2>&1 | grep -m1 '^onednn_verbose,info,cpu,isa' | sed 's/^/PyTorch /' || true
# Rounds: dlgauge (one run of every case), then PyTorch per case; each
# side's figure is the median over ROUNDS of its per-run median step time.
for r in $(seq 1 "$rounds"); do
  {
    echo "[sink csv]"; echo "path = $work/dlg-$r.csv"
    for c in "${cases[@]}"; do
      read -r name wl mode batch steps unit prec <<<"$c"
      case " ${CASES:-$name} " in *" $name "*) ;; *) continue ;; esac
      printf '[job %s]\nworkload = %s\nmode = %s\nbatch = %s\ncpus = %s\nwarmup = 2\niterations = %s\n' \
        "$name" "$wl" "$mode" "$batch" "$threads" "$steps"
      [ -n "$prec" ] && printf 'precision = %s\n' "$prec"
      [ "$wl" = lstm-ptb ] && printf 'size = medium\nbptt = 35\ndropout = 0.2\nvocab = 10000\ndata = synthetic\n'
    done
  } >"$work/mx.ini"
  for pol in $policies; do
    echo "== round $r: dlgauge, OMP_WAIT_POLICY $pol"
    sed "s|^path = .*|path = $work/dlg-$pol-$r.csv|" "$work/mx.ini" >"$work/mx-$pol.ini"
    (cd "$work" && with_wait "$pol" "$dlg" run "$work/mx-$pol.ini" >"$work/dlg.log" 2>&1) || { cat "$work/dlg.log"; exit 1; }
  done
  echo "== round $r: PyTorch (load average $(loadavg))"
  for c in "${cases[@]}"; do
    read -r name wl mode batch steps unit prec <<<"$c"
    prec=${prec:-fp32}
    case " ${CASES:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ "$wl" = inception-v3 ]; then
      fmts="nchw cl"
      [ "$mode" = infer ] && fmts="nchw cl frozen"
      [ "$prec" = bf16 ] && fmts="nchw cl frozen amp"
      [ "$prec" = bf16 ] && [ "$mode" = train ] && fmts="amp ampn"
      for fmt in $fmts; do
        for pol in $policies; do
          with_wait "$pol" "${torch_env[@]}" "$PEER_PYTHON" "$src/scripts/bench/mxnet_peer.py" \
            inception "$mode" "$batch" "$threads" "$steps" "$fmt" "$prec" >"$work/torch-$name-$fmt-$pol-$r.json" ||
            { echo "   PyTorch $fmt ($pol) failed for $name; left out" >&2; rm -f "$work/torch-$name-$fmt-$pol-$r.json"; }
        done
      done
    else
      fmts=fp32
      [ "$prec" = bf16 ] && fmts="amp bf16"
      for fmt in $fmts; do
        for pol in $policies; do
          with_wait "$pol" "${torch_env[@]}" "$PEER_PYTHON" "$src/scripts/bench/mxnet_peer.py" \
            lstm "$mode" "$batch" "$threads" "$steps" 650 10000 35 2 "$fmt" >"$work/torch-$name-$fmt-$pol-$r.json" ||
            { echo "   PyTorch $fmt ($pol) failed for $name; left out" >&2; rm -f "$work/torch-$name-$fmt-$pol-$r.json"; }
        done
      done
    fi
  done
done

rc=0
python3 - "$src/scripts/bench" "$work" "$rounds" "$policies" "${cases[@]}" <<'PY' || rc=$?
import csv, glob, json, re, statistics, sys
bench, work, rounds, policies = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
cases = [c.split() for c in sys.argv[5:]]
sys.path.insert(0, bench)
from rounds import median_round


def rnd(f):
    """The round number in a file name (a sorted glob puts 10 before 2)."""
    return int(re.search(r"-(\d+)\.\w+$", f).group(1))


runs = {}  # job: {policy: {round: row}}
for pol in policies:
    for f in sorted(glob.glob(f"{work}/dlg-{pol}-*.csv"), key=rnd):
        for r in csv.DictReader(open(f)):
            runs.setdefault(r["job"], {}).setdefault(pol, {})[rnd(f)] = r
print(f"medians over {rounds} round(s); ratio = dlgauge items/s / PyTorch's best format items/s, each side "
      f"under its best OMP_WAIT_POLICY of: {' '.join(policies)}; ratio per round: dlgauge / that format in "
      "the same round")
print(f"{'case':22} {'dlgauge/s':>10} {'torch/s':>9} {'fmt':>6} {'ratio':>6} {'unit':>7} "
      f"{'dlg p50 ms':>10} {'torch ms':>9} {'dlg RSS MiB':>11} {'torch RSS MiB':>13} {'dlg %peak':>9} "
      f"{'dlg wait':>8} {'torch wait':>10}")
tb, peaks, missing = None, [], []
for name, wl, mode, batch, steps, unit, *prec in cases:
    by_pol = runs.get(name)
    if not by_pol:
        continue
    bad = [r for rs in by_pol.values() for r in rs.values() if r["status"] != "ok"]
    if bad:
        print(f"{name:22} dlgauge failed: {bad[0].get('error', '')}")
        missing.append(name)
        continue
    items = int(batch) * (35 if wl == "lstm-ptb" else 1)
    p50s = {pol: {k: float(r["latency_p50_us"]) / 1e6 for k, r in rs.items()} for pol, rs in by_pol.items()}
    dpol = min(p50s, key=lambda pol: statistics.median(p50s[pol].values()))
    rs, p50r = by_pol[dpol], p50s[dpol]
    mid = rs[median_round(p50r)]  # %peak, isa: the run the median is from
    if mid.get("peak_source") and mid["peak_source"] not in peaks:  # fp32 and bf16 peaks differ
        peaks.append(mid["peak_source"])
    p50 = statistics.median(p50r.values())
    d = items / p50
    t = {}
    for f in ("nchw", "cl", "frozen", "amp", "ampn", "fp32", "bf16"):
        for pol in policies:
            # the round right after the policy: lstm-medium-train-bf16-amp is not lstm-medium-train's
            js = {rnd(x): json.load(open(x)) for x in glob.glob(f"{work}/torch-{name}-{f}-{pol}-[0-9]*.json")}
            if js:
                med = statistics.median(j["median_s"] for j in js.values())
                mid_js = js[median_round({k: j["median_s"] for k, j in js.items()})]
                t[f, pol] = {"median_s": med, "items_per_s": items / med, "torch": mid_js["torch"],
                             "blas": mid_js.get("openblas_core") or ",".join(mid_js.get("blas_libs", [])) or "none",
                             "round_s": {k: j["median_s"] for k, j in js.items()},
                             "lstm_dtype": mid_js.get("lstm_dtype"),
                             "rss_peak_bytes": max(j["rss_peak_bytes"] for j in js.values())}
    if not t:
        print(f"{name:22} PyTorch failed in every format: no ratio")
        missing.append(name)
        continue
    best = max(t, key=lambda k: t[k]["items_per_s"])
    tb = t[best]
    fmt = best[0] if wl != "lstm-ptb" or prec else "-"
    # pair each dlgauge round with the same round's PyTorch run
    ratios = [tb["round_s"][k] / p50r[k] for k in sorted(p50r) if k in tb["round_s"]]
    print(f"{name:22} {d:10.2f} {tb['items_per_s']:9.2f} {fmt:>6} {d / tb['items_per_s']:6.2f} {unit:>7} "
          f"{p50 * 1e3:10.1f} {tb['median_s'] * 1e3:9.1f} "
          f"{max(int(r['rss_peak_bytes']) for r in rs.values()) / 2**20:11.0f} "
          f"{tb['rss_peak_bytes'] / 2**20:13.0f} {float(mid.get('pct_peak') or 0):9.1f} {dpol:>8} {best[1]:>10}")
    others = ", ".join((f"{f}/{pol}" if wl != "lstm-ptb" or prec else pol) + f" {v['items_per_s']:.2f}"
                       + (f" (LSTM {v['lstm_dtype']})" if v["lstm_dtype"] else "") for (f, pol), v in t.items())
    dothers = ", ".join(f"{pol} {items / statistics.median(v.values()):.2f}" for pol, v in p50s.items())
    print(f"{'':22} (torch {others}; dlgauge {dothers}; ratio per round "
          f"{', '.join(f'{x:.2f}' for x in ratios)}; median round: isa {mid.get('dnnl_isa') or '-'}, "
          f"winograd_layers {mid.get('winograd_layers') or '-'})")
for p in peaks:
    print(f"peak: {p}")
if tb:
    print(f"torch {tb['torch']}")
    print(f"PyTorch BLAS kernel: {tb['blas']}")
if missing:
    sys.exit(f"no ratio for {', '.join(missing)}")
PY
echo "== load average at the end: $(loadavg)"
exit "$rc"
