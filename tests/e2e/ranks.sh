#!/bin/bash
# A run under mpirun: each rank runs every cell, rank 0 writes one row per
# cell with ranks = N, items summed over the ranks and each repetition's
# rate over the slowest rank's time; isolation = process is refused (a
# cell's child is no rank); a rank that fails its setup is named in rank
# 0's row and the run goes on; one that fails in a step while the other
# waits for it in an allreduce ends every rank (MPI_Abort), the rows of
# the cells before kept, and nothing hangs; a stop that reaches one rank
# stops every rank at one step, with the partial row kept; any command but
# run (report and compare aside: tests/e2e/ranks_refuse.sh) is rank 0's alone.
# Alone, ranks = 1.  The row describes the job:
# CPU time summed over the ranks, memory and CPUs over a node's ranks
# (CPUs that unbound ranks share counted once).
# TEST_PLUGIN_DIR is this folder of the build tree (ranks_wl.so); the
# fifth argument is mpiexec.
source "$(dirname "$0")/ranks_lib.sh"

# rows NAME PYTHON: PYTHON's asserts on rows, the rows of NAME.csv
rows() { rows_csv "$WORK/$1.csv" "$2" "job status ranks items steps repeats error"; }

# 1. alone: ranks = 1
{ printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/alone.csv"; job one iterations=10; } >alone.ini
run_cli alone -q run alone.ini
expect_rc alone 0
rows alone 'assert len(rows) == 1 and rows[0]["ranks"] == "1" and rows[0]["nodes"] == "1" and rows[0]["items"] == "10", "alone"'
run_cli sysinfo sysinfo
grep -Eq '^ranks: +1 \(no launcher\); mpirun -np N starts N with .*MPI' sysinfo.out || fail "sysinfo: $(grep ranks sysinfo.out)"
run_cli metrics help metrics
grep -q '^ *ranks ' metrics.out || fail "help metrics has no ranks: $(head -5 metrics.out)"

# 2. two ranks: noop (1 item a step) and ranked (rank + 1 a step), by
# iterations and by duration (where the ranks agree each step when to end)
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/two.csv"
    printf '[job noop]\nworkload = noop\niterations = 50\nrepeat = 2\n'
    job iter iterations=20 allreduce=true
    job dur duration=200ms allreduce=true
} >two.ini
run_np two -q run two.ini
expect_rc two 0
rows two '
assert len(rows) == 3, "one row per cell"
noop, it, dur = rows
assert all(r["status"] == "ok" and r["ranks"] == "2" for r in rows), "ranks = 2"
assert noop["items"] == "200" and noop["steps"] == "100", "noop: 2 ranks x 2 x 50 items, rank 0 steps"
assert it["items"] == "60" and it["steps"] == "20", "ranked: (1 + 2) x 20"
assert int(dur["steps"]) > 0 and int(dur["items"]) == 3 * int(dur["steps"]), "duration: the ranks end together"
'
# (an ASan build's LeakSanitizer adds its "Suppressions used" table)
grep -Eq '^(rank [0-9]+: |dlgauge: )' two.err && fail "two: a rank said something: $(cat two.err)"
grep -c '^\[1/3\]' two.out | grep -qx 1 || fail "two: rank 0 alone prints the summary: $(cat two.out)"

# 2b. the row is the job's, not rank 0's: rank r spins (r + 1) x 4 ms of
# its CPU time a step and holds (r + 1) x 64 MiB, on one CPU each.  The
# row's CPU time is rank 0's (rank_cpu_s, its own report: a window around
# the row's) and rank 1's 2 x 25 x 4 ms at least; rss_peak_bytes and
# cpus_used the node's two ranks summed; the step latencies are both
# ranks' steps (rank 1's 25 of at least 8 ms hold p90 = the 45th of 50
# there: rank 0's own put it near 4 ms)
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/job.csv"
    job hold iterations=25 cpus=1 spin_us=4000 hold_mib=64
} >job.ini
run_np job -q run job.ini
expect_rc job 0
rows job '
r = rows[0]
print({k: r[k] for k in ("nodes", "cpu_user_s", "cpu_sys_s", "rank_cpu_s", "rss_peak_bytes", "cpus_used",
                         "latency_min_us", "latency_p90_us")})
assert r["status"] == "ok" and r["ranks"] == "2" and r["nodes"] == "1", "2 ranks on 1 node"
cpu, rank0 = float(r["cpu_user_s"]) + float(r["cpu_sys_s"]), float(r["rank_cpu_s"])
assert cpu >= rank0 + 0.5 * 2 * 25 * 0.004, f"CPU time {cpu} s is not rank 0 ({rank0} s) and rank 1 (0.2 s at least)"
assert int(r["rss_peak_bytes"]) >= (1 + 2) * 64 << 20, "rss_peak_bytes is not the two ranks together"
assert r["cpus_used"] == "2", "cpus_used: 1 each"
lo, p90, hi = (float(r[k]) for k in ("latency_min_us", "latency_p90_us", "latency_max_us"))
assert lo >= 3980 and p90 >= 7960 and hi >= p90, f"latencies {lo} {p90} {hi} us: not both ranks'"'"' steps"
'

# 2c. two ranks that mpirun did not bind (--bind-to none), sharing all of
# this machine's CPUs (each takes a slice: cpu_share.c): the node's
# cpus_used counts CPUs once (the union of the ranks' sets), never more
# than the machine has; dlgauge report sizes an instance by it
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/unbound.csv"
    job shared iterations=20
} >unbound.ini
run_mpi unbound --bind-to none -np 2 "$DLG" --plugin-dir "$PLUGDIR" -q run unbound.ini
expect_rc unbound 0
rows unbound '
import os
r, ncpu = rows[0], len(os.sched_getaffinity(0))
print({k: r[k] for k in ("nodes", "cpus_used", "cpu_list")}, "CPUs here:", ncpu)
assert r["status"] == "ok" and r["ranks"] == "2" and r["nodes"] == "1", "2 ranks on 1 node"
used = int(r["cpus_used"])
assert 1 <= used <= ncpu, f"cpus_used {used} is more than the {ncpu} CPUs here: each rank counted them"
'

# 3. isolation = process: refused at its line, and the default said
{ printf '[job p]\nworkload = noop\niterations = 5\nisolation = process\n'; } >proc.ini
run_np proc run proc.ini
[ "$RC" = 2 ] || fail "proc: exit $RC, expected 2"
[ "$(grep -c '^dlgauge:' proc.err)" = 1 ] || fail "proc: not one line: $(cat proc.err)"
grep -q '^dlgauge: proc.ini:4: \[job p\] isolation = process: .*set isolation = none' proc.err ||
    fail "proc: $(cat proc.err)"
grep -q '^rank 1:' proc.err && fail "proc: rank 1 said rank 0's line again: $(cat proc.err)"
{ printf '[job d]\nworkload = noop\niterations = 5\n'; } >dflt.ini
run_np dflt run dflt.ini
[ "$RC" = 2 ] || fail "dflt: exit $RC, expected 2"
grep -q '^dlgauge: dflt.ini:1: \[job d\] runs under 2 MPI ranks.*set isolation = none' dflt.err ||
    fail "dflt: $(cat dflt.err)"

# 3b. ranks whose plans differ (another file on rank 1, or another count
# of steps) would fall out of step: refused before any cell, rank 1 saying why
printf '[global]\nisolation = none\n[job a]\nworkload = noop\niterations = 5\n' >shape0.ini
{ cat shape0.ini; printf '[job b]\nworkload = noop\niterations = 5\n'; } >shape1.ini
run_mpi shape -np 1 "$DLG" --plugin-dir "$PLUGDIR" -q run shape0.ini : -np 1 "$DLG" --plugin-dir "$PLUGDIR" -q run shape1.ini
[ "$RC" = 2 ] || fail "shape: exit $RC, expected 2"
grep -q '^rank 1: dlgauge: this rank planned 2 cells in 2 jobs (shape [0-9a-f]*), rank 0 1 cell in 1 job' shape.err ||
    fail "shape: $(cat shape.err)"
grep -q '^dlgauge: another rank could not start the run' shape.err || fail "shape: rank 0: $(cat shape.err)"
# the same jobs, but iterations from each rank's environment: one rank would
# leave its steps' allreduce while the other still waits in it
{ printf '[global]\nisolation = none\n'; job envit 'iterations = 1${OMPI_COMM_WORLD_RANK}000' allreduce=true; } >envit.ini
run_np envit -q run envit.ini
[ "$RC" = 2 ] || fail "envit: exit $RC, expected 2"
grep -q '^rank 1: dlgauge: this rank planned 1 cell in 1 job (shape [0-9a-f]*), rank 0 1 cell in 1 job (shape [0-9a-f]*): \[job envit\] cell 0: iterations = 11000 here, 10000 on rank 0: every rank must run' envit.err ||
    fail "envit: $(cat envit.err)"

# 4. rank 1 fails its setup: rank 0's row and line name it, the next cell runs
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/setup.csv"
    job bad iterations=5 fail_setup_rank=1
    job good iterations=5
} >setup.ini
run_np setup -q run setup.ini
[ "$RC" = 1 ] || fail "setup: exit $RC, expected 1"
rows setup '
assert [r["status"] for r in rows] == ["error", "ok"], "status"
assert rows[0]["error"].startswith("rank 1: setup.ini:10: [job bad] ranked: fail_setup_rank = 1: this rank"), "error"
assert rows[1]["items"] == "15", "the next cell"
'
grep -q '^dlgauge: rank 1: setup.ini:10: \[job bad\] ranked: fail_setup_rank = 1' setup.err || fail "setup: $(cat setup.err)"

# 5. rank 1 fails a step while rank 0 waits in the allreduce: both end,
# the first cell's row kept
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/step.csv"
    job first iterations=5
    job boom iterations=50 allreduce=true fail_step_rank=1
} >step.ini
run_np step -q run step.ini
[ "$RC" != 0 ] || fail "step: exit 0"
grep -q '^rank 1: dlgauge: step.ini:[0-9]*: \[job boom\] ranked: fail_step_rank = 1: .*MPI_Abort' step.err ||
    fail "step: $(cat step.err)"
rows step 'assert len(rows) == 1 and rows[0]["job"] == "first" and rows[0]["status"] == "ok", "the finished cell"'

# 5a. rank 0 itself fails a step: before MPI_Abort its sinks let go of
# what they held back (influx batches its points: here they are spooled,
# as nothing listens on port 1)
if [ -f "$PLUGDIR/influx.so" ]; then
    {
        printf '[sink influx]\nurl = http://127.0.0.1:1/write?db=x\nspool_dir = %s\nretries = 0\n' "$WORK/spool0"
        printf '[global]\nisolation = none\n'
        job first iterations=5
        job boom iterations=50 allreduce=true fail_step_rank=0
    } >step0.ini
    rm -rf "$WORK/spool0"
    run_np step0 -q run step0.ini
    [ "$RC" != 0 ] || fail "step0: exit 0"
    grep -q '^dlgauge: step0.ini:[0-9]*: \[job boom\] ranked: fail_step_rank = 0: .*MPI_Abort' step0.err ||
        fail "step0: $(cat step0.err)"
    grep -q '^dlgauge_result,.*job=first' "$WORK/spool0/influx.lp" ||
        fail "step0: the first cell's point was lost: $(cat "$WORK/spool0/influx.lp" 2>&1)"
fi

# 5b. a stop that reaches one rank alone (rank 1 sends itself SIGTERM in
# an iterations-bound cell whose steps allreduce, then in a warm-up): the
# ranks agree to stop at one step, rank 0 writes the partial row (CSV and
# JSONL) and says so, and every rank exits 143; nothing hangs
{
    printf '[sink csv]\npath = %s\n[sink json]\npath = %s\n' "$WORK/stop.csv" "$WORK/stop.jsonl"
    printf '[global]\nisolation = none\n'
    job first iterations=5
    job long iterations=10000000 allreduce=true stop_step_rank=1
    job after iterations=5
} >stop.ini
run_np stop -q run stop.ini
[ "$RC" = 143 ] || fail "stop: exit $RC, expected 143: $(cat stop.err)"
rows stop '
assert [(r["job"], r["status"], r["ranks"]) for r in rows] == [("first", "ok", "2"), ("long", "partial", "2")], "rows"
assert int(rows[1]["steps"]) >= 2 and int(rows[1]["items"]) == 3 * int(rows[1]["steps"]), "one step count"
'
"$PY" - "$WORK/stop.jsonl" <<'PY' || fail "stop: JSONL above"
import json, sys
res = [p for p in map(json.loads, open(sys.argv[1])) if p["measurement"] == "dlgauge_result"]
print([(p["tags"]["job"], p["tags"]["status"]) for p in res])
assert [(p["tags"]["job"], p["tags"]["status"]) for p in res] == [("first", "ok"), ("long", "partial")]
PY
grep -q '^dlgauge: interrupted: results so far were written' stop.err || fail "stop: rank 0's line: $(cat stop.err)"
{
    printf '[sink csv]\npath = %s\n[global]\nisolation = none\n' "$WORK/stopwu.csv"
    job wu iterations=100 allreduce=true stop_step_rank=1 | sed 's/^warmup = 1$/warmup = 5/'
} >stopwu.ini
run_np stopwu -q run stopwu.ini
[ "$RC" = 143 ] || fail "stopwu: exit $RC, expected 143: $(cat stopwu.err)"
rows stopwu 'assert [(r["status"], r["steps"]) for r in rows] == [("partial", "0")], "stopped in its warm-up"'

# 6. the comm plugin's allreduce and p2p (plugins/workloads/comm) on 2
# ranks: checked sums, and bytes counted on rank 0 only (plugin.h)
if [ -f "$PLUGDIR/comm.so" ]; then
    {
        printf '[sink csv]\npath = %s\n[global]\nisolation = none\nbytes = 4KiB\niterations = 20\n' "$WORK/comm.csv"
        printf '[job ar]\nworkload = allreduce\nrepeat = 2\n[job ring]\nworkload = p2p\n'
    } >comm.ini
    run_np comm -q run comm.ini
    expect_rc comm 0
    rows comm '
assert [r["status"] for r in rows] == ["ok", "ok"] and all(r["ranks"] == "2" for r in rows), "ok on 2 ranks"
assert rows[0]["items"] == str(4096 * 20 * 2) and rows[1]["items"] == str(4096 * 20), "rank 0 counts the bytes"
assert float(rows[0]["busbw_factor"]) == 1.0, "2(n-1)/n"
'
else
    echo "comm.so not built: its case is left out"
fi

# 7. any other command under mpirun is rank 0's alone: one mkdata writes
# the corpus (two would write the same files), one list prints
run_np mkdata mkdata text --out "$WORK/corpus.txt" --words 20000
expect_rc mkdata 0
[ "$(grep -Ec '^wrote [0-9]+ words' mkdata.out)" = 1 ] || fail "mkdata: not rank 0 alone: $(cat mkdata.out mkdata.err)"
run_np list list
expect_rc list 0
[ "$(grep -c '^workload *noop ' list.out)" = 1 ] || fail "list: printed $(grep -c '^workload *noop ' list.out) times"

finish
