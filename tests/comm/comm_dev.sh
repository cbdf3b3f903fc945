# allreduce and p2p with device = cuda:0 on the CPU stand-in GPU
# (tests/cuda/fakegpu: the cuda module, a fake NCCL): two ranks under
# mpirun (loopback only) and one alone, through the real CLI, the rows
# read back from the CSV: the check of every element passed (ok), ranks,
# device, busbw = algbw x factor, items; with ops_per_step = 4 the fake
# NCCL's count of the collectives each rank ran (FAKE_NCCL_COUNTS) is 4 a
# step.  Two ranks where rank 1 cannot load NCCL: refused in setup, in one
# line naming rank 1, long before the fake NCCL's 60 s wait for a peer.
# Then device = cuda:0 without the stand-in, on a machine without a GPU:
# refused in one line.
#   bash comm_dev.sh DLGAUGE PLUGIN_DIR FAKE_MODULE_DIR FAKE_NCCL WORK_DIR [MPIRUN]
# Without the stand-in (a build without CUDA) only the refusal runs.
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
FAKE=${3:+$(realpath "$3")}
NCCL=${4:+$(realpath "$4")}
WORK=$(realpath -m "$5")
MPIEXEC=${6:-mpirun}
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
unset DLGAUGE_PLUGIN_PATH DLGAUGE_NN_MODULE_DIR DLGAUGE_NCCL_LIB
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# DEVICE is cuda:0 or cuda (a rank's local rank mod the stand-in's 1 GPU)
ini() {
    cat <<INI
[global]
isolation = none
[sink csv]
path = $WORK/$1.csv
[job ar]
workload = allreduce
device = $2
bytes = 256KiB, 4000
type = float32, int64
iterations = 8
warmup = 2
[job p]
workload = p2p
device = $2
bytes = 64KiB
type = float64
ops_per_step = 4
iterations = 8
warmup = 0
[job ar4]
workload = allreduce
device = $2
bytes = 96KiB
type = float64
ops_per_step = 4
iterations = 8
warmup = 2
INI
}

# check_rows CSV RANKS COUNTS: 6 rows (4 allreduce cells, 1 p2p, 1
# allreduce of 4 ops a step), each ok on cuda:0; COUNTS has a line per
# rank and cell, "rank nranks allreduces sends", from the fake NCCL
check_rows() {
    "$PY" - "$1" "$2" "$3" <<'PY'
import csv, sys
rows, n = list(csv.DictReader(open(sys.argv[1]))), int(sys.argv[2])
OPS = {"p": 4, "ar4": 4}  # ops_per_step by job (a fixed option is no column)
bad = []
def want(c, what):
    if not c:
        bad.append(what)
if len(rows) != 6:
    sys.exit(f"{len(rows)} rows, want 6 (one per cell, rank 0's)")
# each rank's communicators in cell order: the warm-up steps, begin_timed's
# checked step and the timed steps, each of ops_per_step collectives
runs = {}
for line in open(sys.argv[3]):
    rank, nranks, ars, sends = map(int, line.split())
    want(nranks == n, f"a communicator of {nranks} ranks, want {n}")
    runs.setdefault(rank, []).append((ars, sends))
expect = []
for r in rows:
    ops = OPS.get(r["job"], 1) * (int(r["warmup_steps"]) + 1 + int(r["steps"]))
    expect.append((ops, 0) if r["workload"] == "allreduce" else (0, ops))
for k in range(n):
    want(runs.get(k) == expect, f"rank {k}: the fake NCCL ran (allreduces, sends) {runs.get(k)}, want {expect}")
for r in rows:
    who = f"{r['job']} {r.get('type', '')} bytes={r['message_bytes']} ({r['status']} {r['error'][:300]})"
    want(r["status"] == "ok", f"{who}: status (the check of every element)")
    if r["status"] != "ok":
        continue
    want(r["device"] == "cuda:0", f"{who}: device {r['device']!r}, want cuda:0")
    want(int(r["ranks"]) == n, f"{who}: ranks {r['ranks']}, want {n}")
    alg, bus, us = float(r["algbw_bytes_per_s"]), float(r["busbw_bytes_per_s"]), float(r["op_time_us"])
    # nothing crosses a link on one rank: 0 for both there
    factor = (2 * (n - 1) / n if r["workload"] == "allreduce" else 1.0) if n > 1 else 0.0
    want(float(r["busbw_factor"]) == factor, f"{who}: busbw_factor {r['busbw_factor']}, want {factor}")
    want(alg > 0 and us > 0, f"{who}: algbw {alg}, op_time_us {us}")
    want(abs(bus - alg * factor) <= 1e-12 * alg, f"{who}: busbw {bus} != algbw {alg} x {factor}")
    want(factor == 0 or bus > 0, f"{who}: busbw {bus}")
    want(abs(alg - int(r["message_bytes"]) / (us / 1e6)) <= 1e-9 * alg, f"{who}: algbw != bytes / op_time_us")
    ops = OPS.get(r["job"], 1)
    want(int(r["items"]) == ops * int(r["message_bytes"]) * int(r["steps"]),
         f"{who}: items {r['items']}, want {ops} x {r['message_bytes']} x {r['steps']} steps (rank 0's bytes)")
    # the step's latency is its ops' device time, which rank 0's share of
    # op_time_us divides: on one rank the same, on two the ranks' mean
    lat = float(r["latency_mean_us"])
    if n == 1:
        want(abs(us * ops - lat) <= 1e-3 * lat, f"{who}: op_time_us {us} x {ops} != the mean step latency {lat} us")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

fake() { env DLGAUGE_NN_MODULE_DIR="$FAKE" DLGAUGE_NCCL_LIB="$NCCL" FAKEGPU_LEAKS=fail "$@"; }

# one rank, no launcher: bare "cuda" is GPU 0
one_rank() {
    ini one cuda > one.ini
    if fake FAKE_NCCL_COUNTS="$WORK/one.counts" timeout 120 "$DLG" -q --plugin-dir "$PLUGDIR" run one.ini \
        >one.out 2>one.err; then
        check_rows one.csv 1 one.counts || fail "one rank: the rows (above)"
    else
        fail "one rank: exit $?: $(head -c 600 one.err)"
    fi
}

# two ranks on the one stand-in GPU
two_ranks() {
    command -v "$MPIEXEC" >/dev/null || { echo "no $MPIEXEC: two ranks not run"; return; }
    source "$(dirname "$0")/../support/mpi_env.sh" "$MPIEXEC"
    ini two cuda:0 > two.ini
    if fake FAKE_NCCL_COUNTS="$WORK/two.counts" timeout 180 "${MPIRUN[@]}" -np 2 -x DLGAUGE_NN_MODULE_DIR \
        -x DLGAUGE_NCCL_LIB -x FAKEGPU_LEAKS -x FAKE_NCCL_COUNTS \
        "$DLG" -q --plugin-dir "$PLUGDIR" run two.ini >two.out 2>two.err; then
        check_rows two.csv 2 two.counts || fail "two ranks: the rows (above)"
    else
        fail "two ranks: exit $?: $(head -c 600 two.err)"
    fi
    no_nccl
}

# rank 1's NCCL does not load: its setup says so, the runner's agreement
# after setup ends the cell on both ranks in one line naming rank 1, where
# a join at the first step would leave rank 0 in the fake NCCL's init for
# its 60 s
no_nccl() {
    printf '[global]\nisolation = none\n[sink csv]\npath = %s\n[job nonccl]\nworkload = allreduce\n%s\n' \
        "$WORK/nonccl.csv" 'device = cuda:0' > nonccl.ini
    local t0=$SECONDS rc=0
    fake timeout 100 "${MPIRUN[@]}" -np 1 -x DLGAUGE_NN_MODULE_DIR -x DLGAUGE_NCCL_LIB -x FAKEGPU_LEAKS \
        "$DLG" -q --plugin-dir "$PLUGDIR" run nonccl.ini : -np 1 -x DLGAUGE_NN_MODULE_DIR \
        -x DLGAUGE_NCCL_LIB=/nonexistent/libnccl.so.2 -x FAKEGPU_LEAKS \
        "$DLG" -q --plugin-dir "$PLUGDIR" run nonccl.ini >nonccl.out 2>nonccl.err || rc=$?
    local took=$((SECONDS - t0))
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "rank 1 without NCCL: exit $rc (124: it hung)"
    [ $took -lt 30 ] || fail "rank 1 without NCCL: took ${took} s, as long as a wait in NCCL's init"
    # one line on rank 0's stderr and the row's error: rank 1's own line
    "$PY" - nonccl.err nonccl.csv <<'PY' || fail "rank 1 without NCCL: the line (above)"
import csv, sys
why = ("allreduce: loading NCCL for the ranks' communicator on cuda:0: dlg_dev_coll_probe on cuda:0: "
       "collectives on cuda:0 need NCCL: dlopen /nonexistent/libnccl.so.2: ")
lines = [l for l in open(sys.argv[1]) if "NCCL" in l]
rows = list(csv.DictReader(open(sys.argv[2])))
ok = (len(lines) == 1 and lines[0].startswith("dlgauge: rank 1: nonccl.ini:5: [job nonccl] ") and why in lines[0]
      and len(rows) == 1 and rows[0]["status"] == "error" and rows[0]["error"].startswith("rank 1: ")
      and why in rows[0]["error"])
print("" if ok else f"stderr: {lines}\nrows: {[(r['status'], r['error'][:300]) for r in rows]}")
sys.exit(0 if ok else 1)
PY
}

if [ -z "$FAKE" ] || [ -z "$NCCL" ]; then
    echo "no CPU stand-in GPU or fake NCCL in this build: the device runs not run"
else
    one_rank
    two_ranks
fi

# no stand-in: this machine's own CUDA (none here) refuses the cell in one line
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "a GPU is present: the refusal without one not run"
else
    cat > none.ini <<INI
[global]
isolation = none
[sink csv]
path = $WORK/none.csv
[job ar]
workload = allreduce
device = cuda:0
bytes = 4KiB
INI
    "$DLG" -q --plugin-dir "$PLUGDIR" run none.ini >none.out 2>none.err
    rc=$?
    [ $rc -ne 0 ] || fail "no GPU: exit 0"
    lines=$(grep -c 'device = cuda:0' none.err)
    [ "$lines" = 1 ] && grep -q 'device = cuda:0: no CUDA backend can run here: no CUDA device' none.err ||
        fail "no GPU: not one clear line ($lines): $(head -c 600 none.err)"
    grep -qi 'abort\|sanitizer\|core dumped' none.err && fail "no GPU: crashed: $(head -c 600 none.err)"
    "$PY" - none.csv <<'PY' || fail "no GPU: the row (above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = len(rows) == 1 and rows[0]["status"] == "error" and "device = cuda:0: no CUDA" in rows[0]["error"]
print("" if ok else f"rows: {[(r['status'], r['error'][:200]) for r in rows]}")
sys.exit(0 if ok else 1)
PY
fi
[ $FAILS -eq 0 ] && echo "comm_dev: all passed"
exit $((FAILS > 0))
