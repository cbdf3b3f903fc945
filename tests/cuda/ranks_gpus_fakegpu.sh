#!/usr/bin/env bash
# One GPU per rank, end to end, on a stand-in machine with two GPUs
# (FAKEGPU_DEVICES=2: the fake cudart and the fake NVML): `mpirun -np 2
# dlgauge run` (loopback only) of a tiny alexnet train job with device =
# auto, and of the allreduce workload with device = cuda.  Rank 0 must
# work on GPU 0 and rank 1 on GPU 1 (local rank mod GPUs), read from the
# fake cudart's FAKEGPU_TRACE_DEVICE lines (the devices each rank set,
# allocated on and made streams on); the rows ok with ranks = 2, and the
# training row's GPU stats from rank 0's GPU (the fake NVML's GPU 0).
# usage: ranks_gpus_fakegpu.sh DLGAUGE PLUGIN_DIR FAKE_MODULE_DIR FAKE_NCCL FAKE_NVML MPIEXEC WORK_DIR
set -euo pipefail
dlg=$1 plugins=$2 fake=$3 nccl=$4 nvml=$5 mpiexec=$6 work=$7
rm -rf "$work"
mkdir -p "$work"
source "$(dirname "$0")/../support/mpi_env.sh" "$mpiexec"
unset DLGAUGE_PLUGIN_PATH
export DLGAUGE_NN_MODULE_DIR=$fake DLGAUGE_NCCL_LIB=$nccl FAKEGPU_DEVICES=2
cd "$work"
# the fake NVML for the runner's GPU stats, as for sysinfo
export DLGAUGE_NVML_LIB=$nvml
"$dlg" --plugin-dir "$plugins" mkdata images --out d --classes 2 --images 4 >/dev/null
cat >train.ini <<'EOF'
[sink csv]
path = train.csv
[job cnn]
workload = alexnet
mode = train
device = auto
batch = 2
crop = 67
classes = 2
lr = 0.01
data = files:d/train.txt
isolation = none
warmup = 0
iterations = 2
EOF
cat >ar.ini <<'EOF'
[sink csv]
path = ar.csv
[job ar]
workload = allreduce
device = cuda
bytes = 64KiB
type = float32
isolation = none
iterations = 4
warmup = 1
EOF

# run NAME: the 2-rank run of NAME.ini, its devices in NAME.trace
run() {
  if ! FAKEGPU_TRACE_DEVICE=$PWD/$1.trace timeout 240 "${MPIRUN[@]}" -np 2 \
      "$dlg" -v --plugin-dir "$plugins" run "$1.ini" >"$1.log" 2>&1; then
    echo "FAIL: the 2-rank $1 run failed:"; cat "$1.log"; exit 1
  fi
}
run train
run ar

python3 - <<'EOF2'
import csv, sys
bad = []
def check(name, row_checks):
    rows = list(csv.DictReader(open(name + ".csv")))
    if len(rows) != 1:
        bad.append(f"{name}: {len(rows)} rows, want 1")
        return
    r = rows[0]
    if r["status"] != "ok":
        bad.append(f"{name}: status {r['status']}: {r['error']}")
    if r["ranks"] != "2":
        bad.append(f"{name}: ranks {r['ranks']}, want 2")
    for field, want in row_checks:
        if r.get(field) != want:
            bad.append(f"{name}: {field} {r.get(field)!r}, want {want!r}")
    # "RANK PID WHAT DEVICE": every device a rank touched is its own
    seen = {}
    for line in open(name + ".trace"):
        rank, _pid, what, dev = line.split()
        seen.setdefault(rank, set()).add((what, int(dev)))
    for rank in ("0", "1"):
        want = {(w, int(rank)) for w in ("set", "malloc", "stream")}
        if seen.get(rank) != want:
            bad.append(f"{name}: rank {rank} used {sorted(seen.get(rank, ()))}, want {sorted(want)}")
    if set(seen) != {"0", "1"}:
        bad.append(f"{name}: trace from ranks {sorted(seen)}, want 0 and 1")
# rank 0's row: its backend cuda:0 and its GPU's stats (the fake NVML's
# GPU 1 has another name and 70% utilisation)
check("train", [("backend", "cuda:0"), ("gpu_name", "NVIDIA H200 (fake)")])
check("ar", [("device", "cuda:0")])
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF2
# rank 0's note (rank 1's notes are not printed): the two GPUs were seen
grep -q "device = auto: rank 0 on its node: cuda:0 (local rank mod 2 GPUs)" train.log ||
  { echo "FAIL: no note of 2 GPUs:"; cat train.log; exit 1; }
echo "ok: 2 ranks on 2 GPUs: rank 0 on GPU 0, rank 1 on GPU 1 (alexnet, device = auto; allreduce, device = cuda)"
