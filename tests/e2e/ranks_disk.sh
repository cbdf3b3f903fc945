#!/bin/bash
# Two ranks on one node read through one throttled disk (throttle_shm.c):
# together they get its bandwidth, not each all of it (the job's rate was
# 2 x the emulated disk's before), and the shared segment's name is gone
# once the run ends.  The io row is the job's: both ranks' reads and
# bytes (what reached the emulated disk too), each rank reading its own
# part of the file, the file counted once in what the disk must hold.
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
# the io fields count both ranks (rank 0'"'"'s own were half): within the
# 2 x 4 reads a window can leave in flight at its edges
b, s = int(r["io_bytes"]), int(r["storage_read_bytes"])
assert abs(b - s) <= 8 * 256 * 1024, "io_bytes %d, storage read %d" % (b, s)
assert int(r["ios"]) * 256 * 1024 == b, "ios x block"
# what reached the emulated disk: every read of both ranks, counted at
# completion as storage_read_bytes is
assert int(r["emulated_disk_read_bytes"]) == s, "the disk counted both ranks"
assert abs(float(r["iops"]) * 256 * 1024 / t - 1) < 0.15, "iops x block against the job rate"
# both ranks read the one file: what the disk must hold is it once, not twice
assert int(r["storage_files_bytes"]) == 16 << 20, "the file once"
' "status ranks throughput storage_read_bytes emulated_disk_read_bytes storage_files_bytes io_bytes ios iops io_lat_p50_us"

# each rank reads its own part: 8 blocks of 4 KiB, each of its own bytes;
# 2 steps of 1 read each: rank 0 reads blocks 0 and 1, rank 1 blocks 4
# and 5 (it read rank 0's), and crc_sum sums all four
"$PY" -c 'import sys; sys.stdout.buffer.write(b"".join(bytes([i + 1]) * 4096 for i in range(8)))' >parts.bin
ini parts.ini <<EOF2
[global]
isolation = none
[job parts]
workload = io
data = raw:$WORK/parts.bin
block = 4KiB
depth = 1
step_ios = 1
checksum = true
warmup = 0
iterations = 2
[sink csv]
path = $WORK/parts.csv
EOF2
run_np parts -q run parts.ini
expect_rc parts 0
rows_csv "$WORK/parts.csv" '
import zlib
r = rows[0]
want = sum(zlib.crc32(bytes([i + 1]) * 4096) for i in (0, 1, 4, 5)) % 2**64
assert r["status"] == "ok" and r["ios"] == "4" and r["io_bytes"] == "16384", "both ranks counted"
assert int(r["crc_sum"], 16) == want, "crc_sum %s, blocks 0 1 4 5 give %016x" % (r["crc_sum"], want)
' "status ranks ios io_bytes crc_sum"
[ "$(shm_names)" = "$before" ] || fail "a /dev/shm/dlgauge-disk-* name left: $(ls /dev/shm)"
finish
