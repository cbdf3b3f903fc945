#!/bin/bash
# Two ranks on one node read through one throttled disk (throttle_shm.c):
# together they get its bandwidth, not each all of it (the job's rate was
# 2 x the emulated disk's before), and the shared segment's name is gone
# once the run ends.
# Arguments as ranks.sh: DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK MPIEXEC.
source "$(dirname "$0")/ranks_lib.sh"

head -c $((16 << 20)) /dev/zero >data.bin
shm_names() { ls /dev/shm 2>/dev/null | grep -c "^dlgauge-disk-$(id -u)-" || true; }
before=$(shm_names)
ini disk.ini <<EOF2
[global]
isolation = none
[storage disk]
type = throttle
bandwidth = 20MB
latency = 0
[job read]
workload = io
storage = disk
data = raw:$WORK/data.bin
block = 256KiB
depth = 4
iterations = 0
duration = 1500ms
warmup = 1
[sink csv]
path = $WORK/disk.csv
EOF2
run_np disk -q run disk.ini
expect_rc disk 0
# the job's rate (both ranks' bytes) stays at the disk's 20 MB/s; the
# lower bound leaves room for a loaded machine
rows_csv "$WORK/disk.csv" '
r = rows[0]
assert r["status"] == "ok" and r["ranks"] == "2", "two ranks, ok"
t = float(r["throughput"])
assert 8e6 < t < 23e6, "job rate %.1f MB/s, not the disk'"'"'s 20" % (t / 1e6)
' "status ranks throughput storage_read_bytes"
[ "$(shm_names)" = "$before" ] || fail "a /dev/shm/dlgauge-disk-* name left: $(ls /dev/shm)"
finish
