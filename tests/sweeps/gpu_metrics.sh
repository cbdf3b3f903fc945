#!/usr/bin/env bash
# The runner samples NVML during timed steps of a cell whose workload runs on
# cuda:N and writes gpu_name, gpu_util, power_avg_w, energy_j and
# energy_per_item_j.  The fake driver draws 250 W at 80%: the energy over the
# timed wall time must match 250 W within 10%.
set -euo pipefail
dlgauge=$1 testwl=$2 fake=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ln -s "$fake" libnvidia-ml.so.1
cat > gpu.ini <<INI
[sink csv]
path = gpu.csv
[job g]
plugin     = $testwl
workload   = gpuish
device     = cuda:0
iterations = 40
[job cpu]
plugin     = $testwl
workload   = gpuish
device     = cpu
iterations = 5
INI
LD_LIBRARY_PATH="$work" "$dlgauge" -q run gpu.ini > /dev/null
python3 - gpu.csv <<'PY'
import csv, sys
rows = {r["job"]: r for r in csv.DictReader(open(sys.argv[1]))}
g, c = rows["g"], rows["cpu"]
assert g["gpu_name"] == "NVIDIA H200 (fake)", g["gpu_name"]
assert abs(float(g["gpu_util"]) - 80) < 1, g["gpu_util"]
assert abs(float(g["power_avg_w"]) - 250) < 1, g["power_avg_w"]
wall, energy = float(g["wall_s"]), float(g["energy_j"])
assert abs(energy / wall - 250) < 25, (energy, wall)
per = float(g["energy_per_item_j"])
assert abs(per - energy / int(g["items"])) < 1e-9, per
assert int(g["gpu_mem_peak_bytes"]) >= 1 << 30, g["gpu_mem_peak_bytes"]
assert c["gpu_name"] == "" and c["energy_j"] == "", "a CPU cell got GPU metrics"
print(f"ok: {energy:.2f} J over {wall:.3f} s = {energy / wall:.0f} W, {per:.3f} J/item")
PY
