#!/bin/bash
# Ranks that mpirun did not bind (--bind-to none) all start on the same
# CPUs: each takes its own slice of them (cpus = 1 on 2 ranks: one CPU
# each, so the node's cpus_used, the union of the ranks' sets, is 2, not
# the 1 CPU both once pinned), and where the slices cannot be disjoint
# (2 x cpus more than the CPUs) the first rank says so once, at the cpus
# line.  The progress points' items_per_s is the job's rate, as the row's
# items are: the ranked workload does rank + 1 items a step, so 2 ranks do
# 3 per step, 3 x rank 0's step_rate (its warm-up's items tell the share;
# without warm-up the ranks count stands for it: 2 x).
# Arguments as ranks.sh: DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK MPIEXEC.
source "$(dirname "$0")/ranks_lib.sh"

ini() { # NAME CPUS KEY=VALUE...: a ranked job (line 6: cpus) with a csv and an influx file sink
    local name=$1 cpus=$2
    shift 2
    printf '[global]\nisolation = none\n[job %s]\nplugin = %s\nworkload = ranked\ncpus = %s\n' \
        "$name" "$TPLUG/ranks_wl.so" "$cpus"
    printf '%s\n' "$@"
    printf '[sink csv]\npath = %s\n[sink influx]\npath = %s\n' "$WORK/$name.csv" "$WORK/$name.lp"
}

NCPU=$("$PY" -c 'import os; print(len(os.sched_getaffinity(0)))')

# 1. cpus = 1 on two unbound ranks: two CPUs, no warning
if [ "$NCPU" -ge 2 ]; then
    ini one 1 iterations=50 warmup=1 >one.ini
    run_mpi one --bind-to none -np 2 "$DLG" --plugin-dir "$PLUGDIR" -q run one.ini
    expect_rc one 0
    "$PY" - "$WORK/one.csv" <<'PY' || fail "one: the row above"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print({k: r[k] for k in ("status", "ranks", "cpus_used", "cpu_list")})
assert r["status"] == "ok" and r["ranks"] == "2", "2 ranks"
assert r["cpus_used"] == "2", "the ranks pinned the same CPU"
PY
    grep -q 'warning' one.err && fail "one: a warning: $(cat one.err)"

    # 2. 2 x (NCPU/2 + 1) CPUs cannot be disjoint: one warning, rank 0's
    half=$((NCPU / 2 + 1))
    ini two "$half" iterations=20 warmup=1 >two.ini
    run_mpi two --bind-to none -np 2 "$DLG" --plugin-dir "$PLUGDIR" -q run two.ini
    expect_rc two 0
    want="^dlgauge: two.ini:6: \\[job two\\] warning: 2 ranks on this node share its $NCPU CPUs \\(mpirun did not bind them\\): 2 x $half CPUs do not fit"
    [ "$(grep -Ec "$want" two.err)" = 1 ] || fail "two: not one line /$want/: $(cat two.err)"
else
    echo "1 CPU here: the slices' cases are left out"
fi

# 3. progress: items_per_s = 3 x step_rate with warm-up, 2 x without
for case in "warm 3 warmup=1" "cold 2 warmup=0"; do
    set -- $case
    ini "$1" 0 iterations=0 duration=2500ms "$3" >"$1.ini"
    run_mpi "$1" -np 2 "$DLG" --plugin-dir "$PLUGDIR" -q run "$1.ini"
    expect_rc "$1" 0
    "$PY" - "$WORK/$1.lp" "$2" <<'PY' || fail "$1: the progress points above"
import sys
want, n = float(sys.argv[2]), 0
for line in open(sys.argv[1]):
    if not line.startswith("dlgauge_progress,"):
        continue
    f = dict(kv.split("=", 1) for kv in line.split(" ")[1].split(","))
    rate, items = float(f["step_rate"]), float(f["items_per_s"])
    print(f"step_rate {rate:.1f} items_per_s {items:.1f}")
    assert rate > 0 and abs(items - want * rate) <= 1e-9 * items, f"items_per_s is not {want} x step_rate"
    n += 1
assert n >= 1, "no progress point"
PY
done

finish
