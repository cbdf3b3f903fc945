#!/usr/bin/env bash
# One GPU per rank, end to end, on a stand-in machine with two GPUs
# (FAKEGPU_DEVICES=2: the fake cudart and the fake NVML): `mpirun -np 2
# dlgauge run` (loopback only) of a tiny alexnet train job with device =
# auto, and of the allreduce workload with device = cuda.  Rank 0 must
# work on GPU 0 and rank 1 on GPU 1 (local rank mod GPUs), read from the
# fake cudart's FAKEGPU_TRACE_DEVICE lines (the devices each rank set,
# allocated on and made streams on); the rows ok with ranks = 2.  The
# training row's GPU stats are the job's: both GPUs' (gpus = 2, energy
# summed, utilisation and power the mean per GPU), its gpu_name rank 0's;
# on a stand-in with one GPU (both ranks on GPU 0) that GPU once.
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
# both ranks on the one GPU of a stand-in with one (device = auto)
sed 's/^path = train.csv$/path = train1.csv/' train.ini >train1.ini
FAKEGPU_DEVICES=1 run train1

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
# The job's GPU stats: the fake NVML's GPU i draws 250 W at 80 - 10 i %,
# its energy counter 250 J a second; each rank samples its GPU over its
# timed steps and the readings around them, which the slowest rank's
# timed wall (wall_s) is about: energy ~ gpus x 250 W x wall_s.
def gpu_stats(name, gpus, util_lo, util_hi):
    r = list(csv.DictReader(open(name + ".csv")))[0]
    print(name, {k: r.get(k) for k in ("ranks", "nodes", "gpus", "gpu_util", "power_avg_w", "energy_j", "wall_s")})
    if r.get("gpus") != str(gpus) or r.get("nodes") != "1":
        bad.append(f"{name}: gpus {r.get('gpus')!r}, nodes {r.get('nodes')!r}, want {gpus} and 1")
        return
    util, power = float(r["gpu_util"]), float(r["power_avg_w"])
    if not util_lo <= util <= util_hi:
        bad.append(f"{name}: gpu_util {util}, want {util_lo}..{util_hi}")
    if abs(power - 250) > 0.5:
        bad.append(f"{name}: power_avg_w {power}, want 250 (the mean per GPU)")
    ratio = float(r["energy_j"]) / (gpus * 250 * float(r["wall_s"]))
    if not 0.85 <= ratio <= 1.25:
        bad.append(f"{name}: energy_j {r['energy_j']} is {ratio:.3f} x {gpus} x 250 W x wall_s {r['wall_s']}")
    per_item = float(r["energy_j"]) / int(r["items"])
    if abs(float(r["energy_per_item_j"]) - per_item) > 1e-6 * per_item:
        bad.append(f"{name}: energy_per_item_j {r['energy_per_item_j']}, want energy_j / items {per_item}")
gpu_stats("train", 2, 70.5, 79.5)  # GPU 0 at 80 and GPU 1 at 70
gpu_stats("train1", 1, 79.99, 80.01)  # both ranks on GPU 0: counted once
rows1 = list(csv.DictReader(open("train1.csv")))
if [r["status"] for r in rows1] != ["ok"]:
    bad.append(f"train1: {[(r['status'], r['error']) for r in rows1]}")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF2
# rank 0's note (rank 1's notes are not printed): the two GPUs were seen
grep -q "device = auto: rank 0 on its node: cuda:0 (local rank mod 2 GPUs)" train.log ||
  { echo "FAIL: no note of 2 GPUs:"; cat train.log; exit 1; }
echo "ok: 2 ranks on 2 GPUs: rank 0 on GPU 0, rank 1 on GPU 1 (alexnet, device = auto; allreduce, device = cuda); the row's GPU stats both GPUs', or the one GPU's once"
