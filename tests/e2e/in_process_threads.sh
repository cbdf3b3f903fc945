#!/bin/bash
# An in-process cell (isolation = none) of cpus = 1 runs one OpenMP thread
# whatever libgomp's default team (every CPU of the process when it was
# loaded, or OMP_NUM_THREADS): lstm-ptb's net and the conv kernel, run
# once under OMP_NUM_THREADS=1 and once under 4, peak at no more threads
# under 4 than under 1 (/proc/PID/task sampled every 20 ms).  They once made their
# oneDNN primitives under the default team, which then ran 4 threads on
# the cell's 1 CPU.
# Arguments as every e2e script: DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK.
source "$(dirname "$0")/lib.sh"

# peak NAME OMP INI: dlgauge -q run INI under OMP_NUM_THREADS=OMP; NAME.peak
# gets the most threads it had at once and the CPUs they were allowed then
peak() {
    OMP_NUM_THREADS=$2 "$DLG" --plugin-dir "$PLUGDIR" -q run "$3" >"$1.out" 2>"$1.err" &
    local pid=$!
    ("$PY" - "$pid" <<'PY'
import os, sys, time
pid, most, cpus = sys.argv[1], 0, set()
# from 0.4 s on: the cell's (1.5 s) threads, not the brief ones of the
# start (each plugin's load is watched by a thread of its own)
time.sleep(0.4)
while os.path.exists(f"/proc/{pid}/task"):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
        allowed = set()
        for t in tids:
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if line.startswith("Cpus_allowed_list:"):
                    allowed.add(line.split()[1])
    except OSError:
        break
    if len(tids) > most:
        most, cpus = len(tids), allowed
    time.sleep(0.02)
print(most, ",".join(sorted(cpus)))
PY
    ) >"$1.peak"
    wait "$pid"
    RC=$?
}

if [ ! -f "$PLUGDIR/mxnet.so" ] || [ ! -f "$PLUGDIR/kernels.so" ]; then
    echo "mxnet.so or kernels.so not built: nothing to check"
    finish
fi
hdr='[global]\nisolation = none\ncpus = 1\nwarmup = 2\niterations = 0\nduration = 1500ms\n'
printf "$hdr"'[job lm]\nworkload = lstm-ptb\ndata = synthetic:20000\nhidden = 32\nlayers = 1\nbptt = 10\nbatch = 4\nvocab = 200\n' >lm.ini
printf "$hdr"'[job conv]\nworkload = conv\nn = 2\nc = 16\nk = 32\nh = 28\nw = 28\nalgo = direct\npass = fwd\n' >conv.ini
for job in lm conv; do
    peak "$job-1" 1 "$job.ini"
    expect_rc "$job-1" 0
    peak "$job-4" 4 "$job.ini"
    expect_rc "$job-4" 0
    one=$(cat "$job-1.peak") four=$(cat "$job-4.peak")
    echo "$job: threads at most, CPUs allowed: OMP_NUM_THREADS=1: $one; 4: $four"
    # at most as many: sampling may miss a brief thread (a loaded machine
    # starts the sampler late), never invent one; the bug ran 4 for 1
    [ "${four%% *}" -le "${one%% *}" ] ||
        fail "$job: ${four%% *} threads under OMP_NUM_THREADS=4, ${one%% *} under 1: the cell's OpenMP team is not its cpus = 1"
done
finish
