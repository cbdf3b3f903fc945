#!/bin/bash
# Out of memory in one rank of `mpirun -np 2 dlgauge run`.  The preloaded
# allocator (oom_at.c, DLG_OOM_RANK) fails the n-th allocation of rank 0 or
# of rank 1 once, n spread over that rank's whole count (the first ones
# all, then evenly; OOM_SWEEP_STRIDE=1 tries every one); Open MPI's own
# allocations are left alone (oom_at.c says why).  First, without a
# stride, three failures placed by function on rank 1 (placed below),
# the same on every machine where the sampled points differ.  The run: a ranked job
# whose steps allreduce, a noop job, and a data-parallel LSTM language
# model (lstm-ptb: the ranks share its vocabulary and average its
# gradients each step), isolation = none as ranks need.  Each time:
#  - nothing hangs: every rank ends within 60 s (a rank left waiting in a
#    collective for one that gave up would not), and no rank dies of a
#    signal or a library's abort (mpirun names such a rank);
#  - every line on stderr is dlgauge's own ("dlgauge: ", or "rank N: "
#    before it) or mpirun's (its dashed boxes: the MPI_Abort and non-zero
#    exit notices; its own log lines), and a run that failed says out of
#    memory;
#  - nothing measured is lost: the run again with memory back (--resume
#    when the journal was begun) ends with exactly one row per job; ok,
#    unless the trial said that job failed (rank 0 keeps a cell that a rank
#    failed to set up as an error row, done for --resume).
# TEST_PLUGIN_DIR holds ranks_wl.so; the fifth argument is mpiexec, the
# sixth oom_at.so.  A trial takes mpirun's start, some 3 s, mostly waiting:
# OOM_SWEEP_ONLY=0|1 sweeps one rank, OOM_SWEEP_START=k starts a stride at
# k, so that several sweeps can share the work.
source "$(dirname "$0")/ranks_lib.sh"
PRELOAD=$6
STRIDE=${OOM_SWEEP_STRIDE:-}
ONLY=${OOM_SWEEP_ONLY:-}

make_ini() { # make_ini DIR: DIR/s.ini, its journal and sinks in DIR
    {
        printf '[global]\nisolation = none\njournal = s.journal\nsinks = csv, jsonl\n'
        printf '[sink csv]\npath = s.csv\n[sink jsonl]\ntype = json\npath = s.jsonl\n'
        job r iterations=6 allreduce=true
        printf '[job n]\nworkload = noop\niterations = 20\nwarmup = 1\n'
        printf '[job lm]\nworkload = lstm-ptb\ndata = text:%s/ptb.txt\nhidden = 16\nvocab = 200\n' "$WORK"
        printf 'bptt = 5\nbatch = 2\niterations = 3\nwarmup = 0\n'
    } >"$1/s.ini"
}
JOBS="r n lm"
"$DLG" --plugin-dir "$PLUGDIR" -q mkdata text --out ptb.txt --words 3000 --vocab 200 >/dev/null || fail "mkdata text"

# np DIR [ENV...]: mpirun -np 2 dlgauge -q run s.ini "${AGAIN[@]}" in DIR,
# each ENV exported to the ranks alone (mpirun's own arguments name "run" too)
np() {
    local d=$1 x=() e
    shift
    for e in "$@"; do x+=(-x "$e"); done
    (cd "$d" && timeout -k 5 60 "${MPIRUN[@]}" "${x[@]}" -np 2 "$DLG" --plugin-dir "$PLUGDIR" -q run s.ini "${AGAIN[@]}")
}

# count RANK: the allocations rank RANK's run makes
count() {
    local d=count.$1
    mkdir -p "$d" && make_ini "$d"
    AGAIN=()
    np "$d" "LD_PRELOAD=$PRELOAD" DLG_OOM_IN=run "DLG_OOM_RANK=$1" DLG_OOM_TALLY=tally >"$d/out" 2>"$d/err"
    local rc=$?
    [ "$rc" = 0 ] || fail "rank $1: without a failed allocation, exit status $rc: $(cat "$d/err")"
    head -n 1 "$d/tally" 2>/dev/null
}

# placed FN AT: rank 1's AT-th allocation inside FN (DLG_OOM_FROM: counted
# there alone, whatever came before) fails, in f.FN.AT; status in RC.
# Where the full sweep found the ranks falling out of step.
placed() {
    local d=f.$1.$2
    mkdir -p "$d" && make_ini "$d"
    AGAIN=()
    np "$d" "LD_PRELOAD=$PRELOAD" DLG_OOM_IN=run DLG_OOM_RANK=1 "DLG_OOM_FROM=$1" "DLG_OOM_AT=$2" \
        DLG_OOM_TALLY=tally >"$d/out" 2>"$d/err"
    RC=$?
}
if [ -z "$STRIDE" ]; then
    # Each rank plans every cell three times, alike (dlg_plan_cell): to
    # check the file, for the ranks' check that they planned the same
    # cells, and to run it.  Counted: 3 x the allocations of one pass.
    placed dlg_plan_cell 0
    n=$(head -n 1 f.dlg_plan_cell.0/tally 2>/dev/null)
    [ "$RC" = 0 ] && [ -n "$n" ] && [ $((n % 3)) = 0 ] && [ "$n" -gt 0 ] ||
        fail "dlg_plan_cell: exit status $RC, $n allocations (not 3 passes alike)"
    pass=$((${n:-3} / 3))
    # the ranks' check: rank 1 cannot plan a cell; it says so and every
    # rank ends before the first cell (was: the cell left out of its
    # plan's shape, "this rank planned ..., rank 0 ...", exit 2)
    placed dlg_plan_cell $((pass + 1))
    d=f.dlg_plan_cell.$((pass + 1))
    [ "$RC" = 1 ] || fail "plan check: exit status $RC, expected 1: $(cat "$d/err")"
    grep -q '^rank 1: dlgauge: checking that every rank planned the same cells: \[job r\] cell 0: out of memory$' \
        "$d/err" || fail "plan check: $(cat "$d/err")"
    [ "$(cat "$d/s.csv" 2>/dev/null | wc -l)" -le 1 ] || fail "plan check: rows were written: $(cat "$d/s.csv")"
    # rank 1 cannot plan its first cell to run it, or make its result: the
    # cell fails on every rank, rank 1's line and status (oom) in rank 0's
    # row, and the next cells run (was: rank 1 skipped the CPU-set exchange,
    # and its next collective met rank 0's: MPI_ERR_TRUNCATE)
    for at in "dlg_plan_cell $((2 * pass + 1)) cell 0: out of memory" \
        "dlg_cell_result_init 1 out of memory for the cell's result"; do
        set -- $at
        placed "$1" "$2"
        d=f.$1.$2
        shift 2
        [ "$RC" = 1 ] || fail "$d: exit status $RC, expected 1: $(cat "$d/err")"
        WANT="$*" rows_csv "$d/s.csv" '
import os
assert [(r["job"], r["status"], r["ranks"]) for r in rows] == [("r", "oom", "2"), ("n", "ok", "2"), ("lm", "ok", "2")], "rows"
assert rows[0]["error"].startswith("rank 1: s.ini:") and rows[0]["error"].endswith(os.environ["WANT"]), rows[0]["error"]
assert rows[0]["time"] > "2000", "the time of its row"
' "job status ranks time error"
    done
fi

for rank in 0 1; do
    [ -z "$ONLY" ] || [ "$ONLY" = "$rank" ] || continue
    n=$(count $rank)
    [ -n "$n" ] && [ "$n" -gt 100 ] || { fail "rank $rank: the allocator counted '${n}' allocations: is it preloaded?"; continue; }
    echo "rank $rank: $n allocations; failing $(sweep_points "$n" 3 9 | wc -l) of them in turn"
    for at in $(sweep_points "$n" 3 9); do
        d=t.$rank.$at
        mkdir -p "$d" && make_ini "$d"
        AGAIN=()
        np "$d" "LD_PRELOAD=$PRELOAD" DLG_OOM_IN=run "DLG_OOM_RANK=$rank" "DLG_OOM_AT=$at" \
            DLG_OOM_TRACE=trace >"$d/out" 2>"$d/err"
        echo $? >"$d/rc"
        [ -f "$d/s.journal" ] && AGAIN=(--resume)
        np "$d" >"$d/out2" 2>"$d/err2"
        echo $? >"$d/rc2"
    done
done

JOBS=$JOBS SRC="$SRC" "$PY" - <<'PY' || fail "the trials above"
import os, re, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "support"))
from oom_trial import Problems, after_again, said_problems, trials, verdict
jobs = os.environ["JOBS"].split()
say = Problems(8)
def lines(d, name):
    """dlgauge's lines (a rank's prefix dropped) and mpirun's: its boxes,
    and its own log lines (process [[JOB,0],0] is mpirun; ranks are
    [[JOB,1],N]), such as a notice it could not unpack as the ranks died"""
    own, boxed, inside = [], [], False
    for l in open(os.path.join(d, name), errors="replace").read().splitlines():
        if re.fullmatch(r"-{20,}", l):
            inside = not inside
        elif inside or re.match(r"\[[^]]+\] \[\[\d+,0\],0\] ", l):
            boxed.append(l)
        else:
            own.append(re.sub(r"^rank \d+: (?=dlgauge: )", "", l))
    return own, boxed
done = trials()
ok = failed = 0
for d, rc in done:
    own, boxed = lines(d, "err")
    if rc in (124, 137):
        say(d, "still running after 60 s: a rank hung")
        continue
    died = [l for l in boxed if re.search(r"on signal|Segmentation|Abort(ed)? \(|core dumped", l)]
    if died:
        say(d, f"a rank died: {died[0].strip()!r}")
    for what in said_problems(own, rc, r"out of (\w+ )?memory|Cannot allocate memory",
                              "neither dlgauge's nor mpirun's box"):
        say(d, what)
    failed += rc != 0
    ok += rc == 0
    for what in after_again(d, jobs, own, rc, "2"):
        say(d, what)
verdict(len(done), ok, failed, say)
PY
finish
