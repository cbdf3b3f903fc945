#!/usr/bin/env bash
# dlgauge's data-parallel training (mpirun, the caffe workloads on the cpu
# backend, gradients averaged by an allreduce) vs PyTorch's
# DistributedDataParallel (gloo on 127.0.0.1, dp_peer.py), at 1 and 2
# ranks, the same per-rank batch of synthetic 224x224 images, one thread
# and one bound CPU per rank on both sides.  dlgauge: mpirun -np N
# --bind-to core on loopback, isolation = none, cpus = 1; its rate is the
# row's throughput (items summed over the ranks / the slowest rank's wall
# time).  PyTorch: N processes of torch.multiprocessing, each bound to its
# own CPU, counted the same way; at 1 rank the bare model (no DDP, as
# dlgauge's single rank does no allreduce).  Both: 2 warm-up steps, then
# STEPS timed steps, SGD momentum 0.9, weight decay 5e-4.  PyTorch runs in
# nchw and channels_last with cnn-vs-pytorch.sh's environment (glibc malloc
# tuned, one OpenBLAS thread); its best format by median counts, per rank
# count.  Rounds interleave the sides and alternate which goes first.
# Prints per case the medians over ROUNDS rounds: images/s of each side at
# 1 and 2 ranks, the ratio dlgauge / PyTorch at each, and each side's
# scaling efficiency rate(2) / (2 x rate(1)); then the MPI library, the
# isa and the BLAS kernel.  No OpenMP wait-policy search (cnn-vs-pytorch.sh
# has one): each rank runs one OpenMP thread on both sides (cpus = 1,
# OMP_NUM_THREADS=1), so no team waits at a barrier and the policy does
# not enter; the load average is printed before, between and after.
#
# usage: scripts/bench/dp-vs-pytorch.sh [BUILD_DIR]
#   env ROUNDS (3), STEPS (5), CASES (names; "alexnet-b8 resnet50-b4"),
#   FORMATS (PyTorch's; "nchw cl"), RUN_LIMIT (seconds a run may take, 600:
#   a hung run is killed, as a failure), PEER_PYTHON (/usr/bin/python3)
# Exits 2 before measuring when PyTorch, gloo or mpirun is missing or CASES
# names no case, and 1 when a side fails (after the table when PyTorch did).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
rounds=${ROUNDS:-3} steps=${STEPS:-5} formats=${FORMATS:-nchw cl} limit=${RUN_LIMIT:-600}
dlg=$build/bin/dlgauge
. "$src/scripts/bench/bench_lib.sh"
cases=( # name model batch-per-rank
  "alexnet-b8 alexnet 8"
  "googlenet-b8 googlenet 8"
  "resnet50-b4 resnet50 4"
)
CASES=${CASES:-alexnet-b8 resnet50-b4}
check_cases $(printf '%s\n' "${cases[@]}" | cut -d' ' -f1)
need_peer_modules torch torchvision
"$PEER_PYTHON" -c 'import torch.distributed as d, sys; sys.exit(not d.is_gloo_available())' 2>/dev/null ||
  { echo "peer missing: $PEER_PYTHON's torch.distributed has no gloo backend; nothing measured" >&2; exit 2; }
command -v mpirun >/dev/null ||
  { echo "peer missing: no mpirun (apt-get install $(grep -v '^#' "$src/scripts/deps/mpi.txt" | tr '\n' ' ')); nothing measured" >&2; exit 2; }
[ -x "$dlg" ] || { echo "no $dlg: build first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# root may run mpirun here; every byte stays on loopback; one core a rank
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to core --mca btl self,vader --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)
# PyTorch's environment, as cnn-vs-pytorch.sh's, and one OpenMP thread
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
  GLOO_SOCKET_IFNAME=lo MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=17179869184
  MALLOC_TOP_PAD_=1073741824)

# dlg_run NAME MODEL BATCH NP ROUND: one dlgauge run; "ROUND rate isa" in dlg-NAME-NP
dlg_run() {
  local ini=$work/$1-$4.ini
  printf '[global]\nisolation = none\n[sink csv]\npath = %s\n[job %s]\nworkload = %s\nmode = train\nbatch = %s\ncrop = 224\ncpus = 1\nwarmup = 2\niterations = %s\n' \
    "$work/dlg.csv" "$1" "$2" "$3" "$steps" >"$ini"
  rm -f "$work/dlg.csv"
  (cd "$work" && timeout "$limit" "${mpi[@]}" -np "$4" "$dlg" -q run "$ini" >"$work/dlg.log" 2>&1) ||
    { cat "$work/dlg.log" >&2; echo "dlgauge failed: $1 at $4 rank(s), round $5" >&2; exit 1; }
  python3 - "$work/dlg.csv" "$4" "$5" >>"$work/dlg-$1-$4" <<'PY'
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if row["status"] != "ok" or row["ranks"] != sys.argv[2]:
        sys.exit(f"dlgauge {row['job']}: {row['status']}, {row['ranks']} ranks "
                 f"(want {sys.argv[2]}): {row.get('error', '')}")
    print(sys.argv[3], row["throughput"], row.get("dnnl_isa", ""))
PY
}
# peer_run NAME MODEL BATCH NP ROUND: PyTorch in each format; "ROUND json"
# in torch-NAME-NP-FORMAT (a failed format is left out)
peer_run() {
  local f
  for f in $formats; do
    timeout "$limit" "${torch_env[@]}" "$PEER_PYTHON" "$src/scripts/bench/dp_peer.py" "$2" "$3" "$4" "$steps" "$f" \
      >"$work/peer.out" 2>"$work/peer.err" && grep '^{' "$work/peer.out" | sed "s/^/$5 /" >>"$work/torch-$1-$4-$f" ||
      { tail -3 "$work/peer.err" >&2; echo "   PyTorch $f failed: $1 at $4 process(es), round $5; left out" >&2; }
  done
}

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs, load average $(loadavg)"
echo "== OMP_WAIT_POLICY: ${OMP_WAIT_POLICY:-unset} on both sides, not searched: one OpenMP thread a rank"
echo "== runs: $rounds round(s) of dlgauge and PyTorch ($formats) at 1 and 2 ranks, $steps timed steps"
for c in "${cases[@]}"; do
  read -r name model batch <<<"$c"
  case " $CASES " in *" $name "*) ;; *) continue ;; esac
  for r in $(seq "$rounds"); do
    for np in 1 2; do
      if (((r + np) % 2)); then
        dlg_run "$name" "$model" "$batch" "$np" "$r"; peer_run "$name" "$model" "$batch" "$np" "$r"
      else
        peer_run "$name" "$model" "$batch" "$np" "$r"; dlg_run "$name" "$model" "$batch" "$np" "$r"
      fi
    done
  done
  echo "   done: $name (load average $(loadavg))"
done

rc=0
python3 - "$work" "$rounds" "$CASES" <<'PY' || rc=$?
import glob, json, statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
med = statistics.median


def per_round(path, rate):
    """{round: images/s} of one side's file of "ROUND ..." lines."""
    out = {}
    for ln in open(path):
        r, rest = ln.split(" ", 1)
        out[int(r)] = rate(rest)
    return out


def span(xs):
    return f"{min(xs):.2f}-{max(xs):.2f}" if xs else "-"


print(f"medians over {rounds} round(s), images/s summed over the ranks; ratio = dlgauge / PyTorch's best "
      "format; eff = rate(2) / (2 x rate(1)); ranges: per round, same round's runs")
print(f"{'case':14} {'dlg 1r':>8} {'dlg 2r':>8} {'torch 1r':>8} {'torch 2r':>8} {'ratio 1r':>8} "
      f"{'ratio 2r':>8} {'dlg eff':>7} {'torch eff':>9} {'fmt 1r/2r':>9}")
isa, blas, missing = "", "none", []
for name in names:
    dlg, torch, fmt, best_r, notes = {}, {}, {}, {}, []
    for np in (1, 2):
        path = f"{work}/dlg-{name}-{np}"
        dlg_r = per_round(path, lambda rest: float(rest.split()[0]))
        dlg[np] = (med(dlg_r.values()), dlg_r)
        isa = open(path).read().split()[-1] if len(open(path).readline().split()) > 2 else isa
        notes.append(f"dlgauge {np}r " + ", ".join(f"{v:.2f}" for _, v in sorted(dlg_r.items())))
        best = None
        for p in sorted(glob.glob(f"{work}/torch-{name}-{np}-*")):
            js = {r: json.loads(rest) for r, rest in (ln.split(" ", 1) for ln in open(p))}
            t_r = {int(r): j["images_per_s"] for r, j in js.items()}
            f = p.rsplit("-", 1)[1]
            notes.append(f"torch {f} {np}r " + ", ".join(f"{v:.2f}" for _, v in sorted(t_r.items())))
            if best is None or med(t_r.values()) > best[0]:
                best = (med(t_r.values()), f, t_r, js[max(js)])
        if best:
            torch[np], fmt[np], best_r[np] = best[0], best[1], best[2]
            blas = best[3].get("openblas_core") or ",".join(best[3].get("blas_libs", [])) or "none"
    if len(torch) < 2:
        missing.append(name)
    t = lambda np: f"{torch[np]:8.2f}" if np in torch else f"{'-':>8}"
    r = lambda np: f"{dlg[np][0] / torch[np]:8.2f}" if np in torch else f"{'-':>8}"
    te = f"{torch[2] / (2 * torch[1]):9.2f}" if len(torch) == 2 else f"{'-':>9}"
    print(f"{name:14} {dlg[1][0]:8.2f} {dlg[2][0]:8.2f} {t(1)} {t(2)} {r(1)} {r(2)} "
          f"{dlg[2][0] / (2 * dlg[1][0]):7.2f} {te} {fmt.get(1, '-') + '/' + fmt.get(2, '-'):>9}")
    ranges = []
    for np in (1, 2):
        rr = [dlg[np][1][k] / v for k, v in best_r.get(np, {}).items() if k in dlg[np][1]]
        ranges.append(f"ratio {np}r {span(rr)}")
    ranges.append("dlgauge eff " + span([dlg[2][1][k] / (2 * v) for k, v in dlg[1][1].items() if k in dlg[2][1]]))
    if len(best_r) == 2:
        ranges.append("torch eff " + span([best_r[2][k] / (2 * v) for k, v in best_r[1].items() if k in best_r[2]]))
    print(f"{'':14} ({'; '.join(ranges)})")
    print(f"{'':14} (per round: {'; '.join(notes)})")
print(f"dlgauge isa: {isa or 'unknown'}")
print(f"PyTorch BLAS kernel: {blas}")
if missing:
    sys.exit(f"no PyTorch figure at every rank count for {', '.join(missing)}")
PY
echo "MPI: $("$dlg" sysinfo 2>/dev/null | sed -n 's/^ranks:.* with //p')"
# PyTorch's oneDNN isa: its third info line (one nchw AlexNet step at 1 process)
"${torch_env[@]}" ONEDNN_VERBOSE=1 "$PEER_PYTHON" "$src/scripts/bench/dp_peer.py" alexnet 1 1 1 nchw 2>&1 |
  grep -m3 '^onednn_verbose,info' | sed 's/^/PyTorch /' || true
echo "== load average at the end: $(loadavg)"
exit "$rc"
