#!/bin/bash
# storage_files_bytes: the distinct files a cell opened to read through
# its storage, each once at its size - what its disk must hold.  A raw
# file read over and over counts once (through posix and a throttle); an
# image list counts its images and the list (read through storage
# too); a workload that reads no file leaves the field out.
source "$(dirname "$0")/lib.sh"

head -c $((3 << 20)) /dev/urandom >data.bin
run_cli mk mkdata images --out d --classes 3 --images 12 --seed 3
expect_rc mk 0
ini files.ini <<EOF2
[global]
isolation = none
[storage slow]
type = throttle
bandwidth = 400MB
latency = 0
[job raw]
workload = io
data = raw:$WORK/data.bin
block = 256KiB
warmup = 0
iterations = 40
repeat = 2
[job raw_throttled]
workload = io
storage = slow
data = raw:$WORK/data.bin
block = 256KiB
warmup = 0
iterations = 20
[job images]
workload = io-pipeline
data = files:$WORK/d/train.lst
batch = 4
threads = 1
crop = 32
iterations = 3
warmup = 0
[job none]
workload = sleep
iterations = 2
warmup = 0
[sink csv]
path = $WORK/files.csv
EOF2
run_cli files -q run files.ini
expect_rc files 0
rows_csv "$WORK/files.csv" '
import os
r = {x["job"]: x for x in rows}
assert all(x["status"] == "ok" for x in rows), "all ok"
file = 3 << 20
for j in ("raw", "raw_throttled"):
    assert int(r[j]["storage_read_bytes"]) > file, j + ": the file was read more than once"
    assert int(r[j]["storage_files_bytes"]) == file, j + ": the file once"
d = os.path.join(os.path.dirname(sys.argv[1]), "d")
imgs = set()
for line in open(os.path.join(d, "train.lst")):
    imgs.add(os.path.join(d, line.rstrip("\n").split("\t")[-1]))
want = sum(os.path.getsize(p) for p in imgs) + os.path.getsize(os.path.join(d, "train.lst"))
assert len(imgs) == 12 and int(r["images"]["storage_files_bytes"]) == want, "the 12 images and the list: %d" % want
assert r["none"]["storage_files_bytes"] == "", "no file read, no field"
' "job status storage_read_bytes storage_files_bytes"
finish
