#!/bin/bash
# storage_files_bytes: the distinct files a cell opened to read through
# its storage, each once at its size, and the outputs it kept - what its
# disk must hold.  A raw file read over and over counts once (through
# posix and a throttle); an image list counts its images and the list
# (read through storage too); preprocess counts the images and its
# outputs; a workload that reads no file leaves the field out; a report
# sizes the volume it names by it.
source "$(dirname "$0")/lib.sh"

head -c $((3 << 20)) /dev/urandom >data.bin
truncate -s 3G sparse.bin # what a disk must hold is its size, read or not
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
[job prep]
workload = preprocess
input = $WORK/d/train.lst
root = $WORK/d
output = recordio:$WORK/out.rec
iterations = 24
warmup = 0
[job prepdb]
workload = preprocess
input = $WORK/d/train.lst
root = $WORK/d
output = lmdb:$WORK/out.lmdb
iterations = 12
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
# preprocess: the images it read and the outputs it kept, each pass of
# the output once (renamed into place under one name), an LMDB folder
# as its files; its list is not read through storage
w = os.path.dirname(sys.argv[1])
images = sum(os.path.getsize(p) for p in imgs)
out = os.path.getsize(os.path.join(w, "out.rec")) + os.path.getsize(os.path.join(w, "out.idx"))
db = sum(os.path.getsize(os.path.join(w, "out.lmdb", f)) for f in os.listdir(os.path.join(w, "out.lmdb")))
assert int(r["prep"]["steps"]) == 24, "prep: two passes"
assert int(r["prep"]["storage_files_bytes"]) == images + out, "prep: %s, want %d" % (r["prep"]["storage_files_bytes"], images + out)
assert int(r["prepdb"]["storage_files_bytes"]) == images + db, "prepdb: %s, want %d" % (r["prepdb"]["storage_files_bytes"], images + db)
' "job status storage_read_bytes storage_files_bytes"

# the report sizes the EBS volume it names by them: 1.4 MB of images fit
# gp3's smallest (1 GiB), a job's sparse 3 GiB file (read through a 40 MB/s
# throttle) a 3 GiB one, the cheapest volume for an instance without
# instance store (p3); more bandwidth may be bought where the run read
# fast (" with ...")
run_cli rep report "$WORK/files.csv" --workload io-pipeline --catalog "$SRC/conf/instances/aws.ini"
expect_rc rep 0
grep -Eq '^ +[0-9]+ +p3\.2xlarge .*yes \(disk aws-gp3 of 1GiB' rep.out || fail "rep: p3.2xlarge not on a 1 GiB gp3: $(cat rep.out)"
ini sparse.ini <<EOF2
[global]
isolation = none
[storage disk]
type = throttle
bandwidth = 40MB
latency = 0
[job sparse]
workload = io
storage = disk
data = raw:$WORK/sparse.bin
block = 256KiB
warmup = 0
iterations = 4
[sink csv]
path = $WORK/sparse.csv
EOF2
run_cli sparse -q run sparse.ini
expect_rc sparse 0
rows_csv "$WORK/sparse.csv" '
assert rows[0]["status"] == "ok" and int(rows[0]["storage_files_bytes"]) == 3 << 30, "a sparse file: its size"
' "job status storage_read_bytes storage_files_bytes"
run_cli rep3 report "$WORK/sparse.csv" --catalog "$SRC/conf/instances/aws.ini"
expect_rc rep3 0
grep -Eq '^ +[0-9]+ +p3\.2xlarge .*yes \(disk aws-gp3 of 3GiB' rep3.out || fail "rep3: p3.2xlarge not on a 3 GiB gp3: $(cat rep3.out)"
finish
