#!/bin/bash
# The GPU running out of memory anywhere in a CUDA cell, on the CPU
# stand-in GPU (tests/cuda/fakegpu): its fake_faults.cc makes the n-th call
# of a cell that takes a device resource (device or pinned memory, a
# stream, an event, a graph, a cuBLAS or cuDNN handle or descriptor) fail
# as its library does when out of memory, for n over the cell's calls.
# Each time:
#  - dlgauge ends with exit status 0 or 1, not by a signal, an abort or a
#    timeout, and the cell's process does not die of one either;
#  - stderr holds only dlgauge's own lines: no "fakegpu: " line (a misuse
#    of the runtime after the failure: a free of something never taken, a
#    leak at exit under FAKEGPU_LEAKS=fail);
#  - a failed run says so in dlgauge's words on its error line: out of GPU
#    (or host) memory, not only a library's status name; and a run that
#    ended 0 did not quietly measure something else: no line of it names
#    the failed allocation;
#  - nothing measured is lost: the CPU job before it keeps its row, and
#    `run --resume` with memory back ends with one row per job, the
#    failed cell's with status oom (a batch too big for the GPU is a
#    memory need of the cell, not a fault).
# The cells: AlexNet training from RecordIO through the CUDA input path
# (eager steps, then a CUDA graph), bf16 AlexNet inference with the layers
# profiled by events, the fp16 LSTM language model (cuDNN RNN, loss
# scaling), and a bf16 ResNet-50 training step (batch norm's half tiers).
# By default each API's first and last call in each cell, and in the
# small cells a few more spread evenly; OOM_SWEEP_STRIDE=1 tries every
# call (OOM_SWEEP_START=k: every STRIDE-th from the k-th),
# OOM_SWEEP_ONLY=cnn|bf|lm|rn one cell.
# Usage: fakegpu_oom_sweep.sh DLGAUGE PLUGIN_DIR FAKE_MODULE_DIR WORK_DIR
source "$(dirname "$0")/../e2e/lib.sh"
FAKE=$3
STRIDE=${OOM_SWEEP_STRIDE:-}
ONLY=${OOM_SWEEP_ONLY:-}

dlg() { "$DLG" --plugin-dir "$PLUGDIR" -q "$@"; }
export DLGAUGE_NN_MODULE_DIR=$FAKE FAKEGPU_LEAKS=fail

dlg mkdata images --out img --classes 4 --images 8 --seed 3 >/dev/null || fail "mkdata images"
dlg mkdata text --out ptb.txt --words 3000 --vocab 100 >/dev/null || fail "mkdata text"
printf '[job prep]\nworkload = preprocess\ninput = img/train.lst\nroot = img\noutput = recordio:sw.rec\niterations = 8\nwarmup = 0\n' >prep.ini
dlg run prep.ini >/dev/null 2>prep.err || fail "preprocess for the sweep's RecordIO: $(cat prep.err)"

job_ini() { # NAME: its [job NAME] section
    case $1 in
    cpu) printf '[job cpu]\nworkload = noop\niterations = 5\nwarmup = 0\n' ;;
    cnn) printf '[job cnn]\nworkload = alexnet\ndevice = cuda:0\ndata = recordio:%s/sw.rec\nclasses = 4\ncrop = 67\nbatch = 1\niterations = 3\nwarmup = 0\n' "$WORK" ;;
    bf) printf '[job bf]\nworkload = alexnet\ndevice = cuda:0\nprecision = bf16\nmode = infer\ncrop = 67\nbatch = 1\niterations = 2\nwarmup = 0\nprofile = true\n' ;;
    rn) printf '[job rn]\nworkload = resnet50\ndevice = cuda:0\nprecision = bf16\ncrop = 32\nbatch = 1\nclasses = 4\niterations = 1\nwarmup = 0\n' ;;
    lm) printf '[job lm]\nworkload = lstm-ptb\ndevice = cuda:0\nprecision = fp16\ndata = text:%s/ptb.txt\nhidden = 16\nlayers = 2\nbptt = 4\nbatch = 2\nvocab = 100\niterations = 3\nwarmup = 0\n' "$WORK" ;;
    esac
}

# make_ini DIR JOB...: DIR/s.ini with its journal and CSV sink in DIR
make_ini() {
    local d=$1
    shift
    { printf '[global]\njournal = s.journal\nsinks = csv\n[sink csv]\npath = s.csv\n'; for j in "$@"; do job_ini "$j"; done; } >"$d/s.ini"
}

# points TALLY SPREAD: which calls to fail, from the counting run's "N API" lines
points() {
    if [ -n "$STRIDE" ]; then
        sweep_points "$(wc -l <"$1")" 0 0 # lib.sh: the stride's
        return
    fi
    awk -v s="$2" '{ if (!($2 in first)) first[$2] = $1; last[$2] = $1; n = $1 }
        END { for (a in first) { print first[a]; print last[a] }
              for (i = 1; i <= s; i++) print int(i * n / (s + 1)) }' "$1" | sort -n -u
}

sweep() { # JOB SPREAD: its cell's calls, then a trial at each point
    local job=$1 spread=$2
    [ -z "$ONLY" ] || [ "$ONLY" = "$job" ] || return 0
    mkdir -p "count.$job" && make_ini "count.$job" "$job"
    (cd "count.$job" && FAKEGPU_TALLY=tally "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini >out 2>err) ||
        { fail "$job: without a failure: $(cat "count.$job/err")"; return; }
    local n
    n=$(wc -l <"count.$job/tally")
    [ "$n" -gt 50 ] || { fail "$job: the fake GPU counted $n resource calls: is FAKEGPU_TALLY working?"; return; }
    echo "$job: $n resource calls in its cell; failing $(points "count.$job/tally" "$spread" | wc -l) of them in turn"
    local at
    for at in $(points "count.$job/tally" "$spread"); do
        local d="t.$job.$at"
        mkdir -p "$d" && make_ini "$d" cpu "$job"
        (cd "$d" && FAKEGPU_FAIL_AT=$at FAKEGPU_FAIL_TRACE=trace timeout 120 "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini >out 2>err
         echo $? >rc
         "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini --resume >out2 2>err2
         echo $? >rc2)
        echo "cpu $job" >"$d/jobs"
    done
}

sweep cnn 6
sweep bf 6
sweep lm 6
sweep rn 0

SRC="$SRC" "$PY" - <<'PY' || fail "the trials above"
import os, re, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "support"))
from oom_trial import Problems, after_again, said_problems, trials, verdict
say = Problems(6)
# what the libraries call it, which dlgauge's own words must not be left to
lib_words = re.compile(r"MemoryAllocation|ALLOCATION_FAILED|ALLOC_FAILED")
ours = re.compile(r"out of (GPU |device |host |cuda\S* )?memory")
done = trials()
ok = failed = 0
for d, rc in done:
    err = open(os.path.join(d, "err"), errors="replace").read().splitlines()
    if rc not in (0, 1):
        say(d, f"exit status {rc} (2: a usage error; else a signal, an abort, a timeout or a leak)")
        continue
    for what in said_problems(err, rc, ours):  # dlgauge's words, not a library's status name
        say(d, what)
    if any("died of signal" in l for l in err):
        say(d, "the cell's process died of a signal")
    if rc == 0 and any(lib_words.search(l) or ours.search(l) for l in err):
        say(d, "ended 0 after its allocation failed: it measured something other than asked")
    failed += rc != 0
    ok += rc == 0
    for what in after_again(d, open(os.path.join(d, "jobs")).read().split(), err, rc, "1"):
        say(d, what)
verdict(len(done), ok, failed, say)
PY
finish
