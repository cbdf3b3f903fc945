#!/bin/bash
# A throttle storage tells the row what reached its emulated disk
# (emulated_disk_read_bytes/_ios): with page_cache = model, a 16 MiB file
# read over and over for 0.6 s from a cold cache costs the disk the file
# once per repetition (and what was evicted meanwhile), however many
# passes the page cache served; with
# the default (ignore) every read is the disk's; a storage that is no
# throttle leaves the fields out.
source "$(dirname "$0")/lib.sh"

head -c $((16 << 20)) /dev/urandom >data.bin
ini charged.ini <<EOF2
[global]
isolation = none
[storage model]
type = throttle
bandwidth = 200MB
latency = 0
page_cache = model
[storage ignore]
type = throttle
bandwidth = 200MB
latency = 0
[job cold]
workload = io
storage = model
data = raw:$WORK/data.bin
block = 1MiB
cache = cold
warmup = 0
iterations = 0
duration = 600ms
repeat = 2
[job every]
workload = io
storage = ignore
data = raw:$WORK/data.bin
block = 1MiB
warmup = 0
iterations = 0
duration = 300ms
[job plain]
workload = io
data = raw:$WORK/data.bin
block = 1MiB
warmup = 0
iterations = 20
[sink csv]
path = $WORK/charged.csv
EOF2
run_cli charged -q run charged.ini
expect_rc charged 0
rows_csv "$WORK/charged.csv" '
r = {x["job"]: x for x in rows}
cold, every, plain = r["cold"], r["every"], r["plain"]
assert all(x["status"] == "ok" for x in rows), "all ok"
file = 16 << 20
sread, dread = int(cold["storage_read_bytes"]), int(cold["emulated_disk_read_bytes"])
assert sread >= 4 * file, "the page cache served passes after the first (%d bytes read)" % sread
# the disk read the file once per repetition (exactly, on a quiet machine:
# 33554432); pages that memory reclaim or a drop_caches by another test
# evicts meanwhile are read again, and charged again, so not more than a
# quarter of what was read.  Eviction by fadvise can leave pages where the
# kernel keeps them: then less.
low = 2 * file if "stayed cached" not in cold["cache_method"] else 1
assert low <= dread <= sread / 4, "%d bytes from the disk, not the file once per repetition" % dread
# a miss is one I/O, readahead pages their share of 128 KiB ones
ios = float(cold["emulated_disk_read_ios"])
assert dread / (1 << 20) <= ios <= dread / (128 << 10) + 2, "%.1f I/Os for %d bytes" % (ios, dread)
assert every["emulated_disk_read_bytes"] == every["storage_read_bytes"], "ignore: every read charged"
assert float(every["emulated_disk_read_ios"]) == float(every["storage_ios"]), "ignore: every read one I/O"
assert plain["emulated_disk_read_bytes"] == "" and plain["emulated_disk_read_ios"] == "", "no throttle, no fields"
' "job status storage_read_bytes storage_ios emulated_disk_read_bytes emulated_disk_read_ios cache_method"
finish
