#!/bin/bash
# Out of memory anywhere in a run.  A preloaded allocator (oom_at.c) fails
# the n-th allocation once, in the run's own process or in a cell's, for n
# spread over the whole count of that process: the first ones all, then
# evenly.  Each time:
#  - dlgauge ends with exit status 0, 1 or 2: not by a signal, nor by a
#    library's abort (terminate, glibc's malloc checks), and no cell's
#    process dies of one either (its row would say "crashed");
#  - everything on stderr is dlgauge's own "dlgauge: " lines, and a run
#    that failed says why on one of them: out of memory;
#  - nothing measured is lost: `run --resume` with memory back (or the run
#    again, when it stopped before its journal) ends with exactly one row
#    per job, none missing and none twice; ok, unless the trial said that
#    job's cell failed (the journal keeps a failed cell done, so --resume
#    does not measure it again), and then it exits 1, else 0;
#  - a failed cell's row has status oom, a memory need, not error (also
#    where the cell's process failed its first allocation, in main, and
#    could send nothing: its exit code says so, DLG_CELL_EXIT_NOMEM).
# The processes: the run of two jobs into three sinks and a journal; and a
# cell of each workload kind the suites lean on: preprocess (JPEG folder
# to RecordIO), io-pipeline over a throttled disk, a ResNet-50 training
# step from that RecordIO, and the LSTM language model on a text corpus.
# OOM_SWEEP_STRIDE=1 tries every allocation (some 20,000 runs, an hour on
# 2 cores); OOM_SWEEP_ONLY=run|prep|pipe|net|lm sweeps one process.
source "$(dirname "$0")/lib.sh"
PRELOAD=$5
ONLY=${OOM_SWEEP_ONLY:-}

dlg() { "$DLG" --plugin-dir "$PLUGDIR" -q "$@"; }

dlg mkdata images --out img --classes 4 --images 16 --seed 3 >/dev/null || fail "mkdata images"
dlg mkdata text --out ptb.txt --words 3000 --vocab 200 >/dev/null || fail "mkdata text"

jobs_ini() { # NAME: the [job NAME] sections of the sweep
    case $1 in
    a) printf '[job a]\nworkload = noop\niterations = 20\nwarmup = 1\n' ;;
    b) printf '[job b]\nworkload = sleep\nsleep = 1ms\niterations = 3\nwarmup = 0\n' ;;
    prep) printf '[job prep]\nworkload = preprocess\ninput = %s/img/train.lst\nroot = %s/img\noutput = recordio:out.rec\niterations = 16\nwarmup = 0\n' "$WORK" "$WORK" ;;
    pipe) printf '[storage slow]\ntype = throttle\nbandwidth = 200MiB\n[job pipe]\nworkload = io-pipeline\ndata = recordio:%s/sw.rec\nstorage = slow\nbatch = 4\ncrop = 32\ncompute = 1ms\niterations = 4\nwarmup = 1\n' "$WORK" ;;
    net) printf '[job net]\nworkload = resnet50\nmode = train\ndata = recordio:%s/sw.rec\nclasses = 4\ncrop = 32\nbatch = 2\niterations = 2\nwarmup = 0\n' "$WORK" ;;
    lm) printf '[job lm]\nworkload = lstm-ptb\ndata = text:%s/ptb.txt\nhidden = 16\nvocab = 200\nbptt = 5\nbatch = 2\niterations = 3\nwarmup = 0\n' "$WORK" ;;
    esac
}

# make_ini DIR JOB...: DIR/s.ini, its journal and sinks in DIR
make_ini() {
    local d=$1
    shift
    {
        printf '[global]\njournal = s.journal\nsinks = csv, jsonl, lp\n'
        printf '[sink csv]\npath = s.csv\n[sink jsonl]\ntype = json\npath = s.jsonl\n[sink lp]\ntype = influx\npath = s.lp\n'
        for j in "$@"; do jobs_ini "$j"; done
    } >"$d/s.ini"
}

# the RecordIO the pipeline and the network read
mkdir -p rec && make_ini rec prep && (cd rec && dlg run s.ini >/dev/null 2>&1) && mv rec/out.rec sw.rec && mv rec/out.idx sw.idx ||
    fail "preprocess for the sweep's RecordIO: $(cat rec/*.err 2>/dev/null)"

# count NAME ROLE JOB...: allocations the ROLE process (run, __cell) makes
count() {
    local name=$1 role=$2
    shift 2
    mkdir -p "count.$name" && make_ini "count.$name" "$@"
    (cd "count.$name" && DLG_OOM_IN=$role DLG_OOM_TALLY=tally LD_PRELOAD=$PRELOAD "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini >out 2>err)
    local rc=$?
    [ "$rc" = 0 ] || fail "$name: without a failed allocation, exit status $rc: $(cat "count.$name/err")"
    head -n 1 "count.$name/tally" 2>/dev/null
}

# sweep NAME ROLE FIRST SPREAD JOB...
sweep() {
    local name=$1 role=$2 first=$3 spread=$4
    shift 4
    [ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || return 0
    local n
    n=$(count "$name" "$role" "$@")
    [ -n "$n" ] && [ "$n" -gt 100 ] || { fail "$name: the allocator counted '${n}' allocations: is it preloaded?"; return; }
    echo "$name: $n allocations in the $role process; failing $(sweep_points "$n" "$first" "$spread" | wc -l) of them in turn"
    local at
    for at in $(sweep_points "$n" "$first" "$spread"); do
        local d="t.$name.$at"
        mkdir -p "$d" && make_ini "$d" "$@"
        (cd "$d" && DLG_OOM_IN=$role DLG_OOM_AT=$at DLG_OOM_TRACE=trace LD_PRELOAD=$PRELOAD \
            timeout 120 "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini >out 2>err
         echo $? >rc
         if [ -f s.journal ]; then again=(--resume); else again=(); fi
         "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini "${again[@]}" >out2 2>err2
         echo $? >rc2)
        echo "$*" >"$d/jobs"
    done
}

sweep run run 12 60 a b
sweep prep __cell 5 20 prep
sweep pipe __cell 5 20 pipe
sweep lm __cell 5 20 lm
sweep net __cell 3 6 net

SRC="$SRC" "$PY" - <<'PY' || fail "the trials above"
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "support"))
from oom_trial import Problems, after_again, said_problems, trials, verdict
say = Problems(6)
done = trials()
ok = failed = 0
for d, rc in done:
    err = open(os.path.join(d, "err"), errors="replace").read().splitlines()
    if rc not in (0, 1, 2):
        say(d, f"exit status {rc} (a signal, a library's abort, or a timeout)")
        continue
    # dlgauge's words, strerror(ENOMEM)'s, libjpeg's and TurboJPEG's
    said = r"out of (\w+ )?memory|Cannot allocate memory|Insufficient memory|Memory allocation failure"
    for what in said_problems(err, rc, said):
        say(d, what)
    failed += rc != 0
    ok += rc == 0
    if any("died of signal" in l for l in err):
        say(d, "a cell's process died of a signal")
    for what in after_again(d, open(os.path.join(d, "jobs")).read().split(), err, rc, "1"):
        say(d, what)
verdict(len(done), ok, failed, say)
PY
finish
