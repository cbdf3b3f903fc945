#!/bin/bash
# isolation = none: a cell that dies of a fatal signal inside dlgauge's own
# process (a data file truncated under type = mmap storage: SIGBUS) ends
# the run with that signal, as it must, but says which cell and why in ONE
# line (it used to end with exit 135 and not a word: "Bus error" came from
# the shell), and the rows of the cells before it stay in the sink.
source "$(dirname "$0")/lib.sh"

head -c 8388608 /dev/zero >data.bin
ini crash.ini <<EOT
[global]
isolation = none
[sink csv]
path = $WORK/crash.csv
[storage mapped]
type = mmap
[job first]
workload = sleep
sleep    = 1ms
duration = 20ms
warmup   = 0
[job reader]
workload = io
data     = raw:$WORK/data.bin
storage  = mapped
block    = 64KiB
duration = 30s
warmup   = 0
EOT
"$DLG" --plugin-dir "$PLUGDIR" -q run crash.ini >crash.out 2>crash.err &
pid=$!
# shrink the file once the reader has mapped it (in dlgauge's own process:
# its maps list the file); shrunk before, the cell would fail to open it
for _ in $(seq 400); do grep -q "$WORK/data.bin" /proc/$pid/maps 2>/dev/null && break; sleep 0.05; done
grep -q "$WORK/data.bin" /proc/$pid/maps 2>/dev/null || fail "crash: the reader never mapped data.bin"
truncate -s 0 data.bin
wait $pid
RC=$?
# the workload and its plugin file, as a process-isolated cell's crash says them
expect_one_error crash 135 "^dlgauge: crash\\.ini:12: \\[job reader\\] workload io \\($PLUGDIR/tools\\.so\\): killed by SIGBUS" \
    'mapped file shrank' 'type = mmap' 'use isolation = process to survive it and keep the run going'
rows=$("$PY" "$E2E/e2e_check.py" count crash.csv)
[ "$rows" = 1 ] || fail "crash: $rows CSV rows, expected the first cell's 1"

finish
