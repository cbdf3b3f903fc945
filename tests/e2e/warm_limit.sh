#!/bin/bash
# cache = warm under a memory limit smaller than the file: the cgroup is
# charged the page cache, so the pre-read keeps only what fits and the
# timed reads go to the disk.  The row used to say cache_method = read with
# no warning (memory = 64MiB, 256 MiB: 22% stayed, 58 MB read from disk);
# now mincore counts what stayed, and the row and one warning say the
# share.  A job without the limit keeps it all: "read", no warning.
# Skips (77) where the cell cannot get a memory cgroup, or where the work
# folder is a tmpfs (its pages cannot leave memory).
source "$(dirname "$0")/lib.sh"

[ "$(stat -f -c %T "$WORK")" = tmpfs ] && { echo "SKIP: $WORK is a tmpfs"; exit 77; }
head -c $((96 << 20)) /dev/zero >data.bin
# evicted first: pages cached before the cell stay charged elsewhere
"$PY" -c "import os; fd = os.open('data.bin', os.O_RDONLY); os.fdatasync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)"
ini warm.ini <<EOF2
[job limited]
workload = io
data = raw:$WORK/data.bin
block = 1MiB
cache = warm
memory = 32MiB
warmup = 0
iterations = 5
[job free]
workload = io
data = raw:$WORK/data.bin
block = 1MiB
cache = warm
warmup = 0
iterations = 5
[sink csv]
path = $WORK/warm.csv
EOF2
run_cli warm -q run warm.ini
if [ "$RC" != 0 ] && grep -qi "cgroup" warm.err; then
    echo "SKIP: no memory cgroup for the cell:"; cat warm.err
    exit 77
fi
expect_rc warm 0
rows_csv "$WORK/warm.csv" '
import re
r = {x["job"]: x for x in rows}
assert all(x["status"] == "ok" for x in rows), "all ok"
m = re.fullmatch(r"read \((\d+|<1)% stayed cached\)", r["limited"]["cache_method"])
assert m and (m.group(1) == "<1" or int(m.group(1)) < 60), "limited: the share that stayed"
assert r["free"]["cache_method"] == "read", "free: all of it stayed"
' "job status cache_method disk_read_bytes"
[ "$(grep -c 'cache = warm: only [0-9]*% of .*data.bin (.* MiB of 96.0 MiB) stayed in the page cache after the pre-read: .*the timed reads will go to the disk' warm.err)" = 1 ] ||
    fail "one warning for the limited job, none for the free one: $(cat warm.err)"
finish
