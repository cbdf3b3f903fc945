# allreduce and p2p with device = cuda:0 on the CPU stand-in GPU
# (tests/cuda/fakegpu: the cuda module, a fake NCCL): two ranks under
# mpirun (loopback only) and one alone, through the real CLI, the rows
# read back from the CSV: the check of every element passed (ok), ranks,
# device, busbw = algbw x factor, items.  Then device = cuda:0 without
# the stand-in, on a machine without a GPU: refused in one line.
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
iterations = 8
warmup = 0
INI
}

# rows.py CSV RANKS: 5 rows (4 allreduce cells, 1 p2p), each ok on cuda:0
check_rows() {
    "$PY" - "$1" "$2" <<'PY'
import csv, sys
rows, n = list(csv.DictReader(open(sys.argv[1]))), int(sys.argv[2])
bad = []
def want(c, what):
    if not c:
        bad.append(what)
if len(rows) != 5:
    sys.exit(f"{len(rows)} rows, want 5 (one per cell, rank 0's)")
for r in rows:
    who = f"{r['job']} {r.get('type', '')} bytes={r['message_bytes']} ({r['status']} {r['error'][:300]})"
    want(r["status"] == "ok", f"{who}: status (the check of every element)")
    if r["status"] != "ok":
        continue
    want(r["device"] == "cuda:0", f"{who}: device {r['device']!r}, want cuda:0")
    want(int(r["ranks"]) == n, f"{who}: ranks {r['ranks']}, want {n}")
    alg, bus, us = float(r["algbw_bytes_per_s"]), float(r["busbw_bytes_per_s"]), float(r["op_time_us"])
    factor = (2 * (n - 1) / n if n > 1 else 0.0) if r["workload"] == "allreduce" else 1.0
    want(float(r["busbw_factor"]) == factor, f"{who}: busbw_factor {r['busbw_factor']}, want {factor}")
    want(alg > 0 and us > 0, f"{who}: algbw {alg}, op_time_us {us}")
    want(abs(bus - alg * factor) <= 1e-12 * alg, f"{who}: busbw {bus} != algbw {alg} x {factor}")
    want(factor == 0 or bus > 0, f"{who}: busbw {bus}")
    want(abs(alg - int(r["message_bytes"]) / (us / 1e6)) <= 1e-9 * alg, f"{who}: algbw != bytes / op_time_us")
    want(int(r["items"]) == int(r["message_bytes"]) * int(r["steps"]),
         f"{who}: items {r['items']}, want {r['message_bytes']} x {r['steps']} steps (rank 0's bytes)")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

fake() { env DLGAUGE_NN_MODULE_DIR="$FAKE" DLGAUGE_NCCL_LIB="$NCCL" FAKEGPU_LEAKS=fail "$@"; }

# one rank, no launcher: bare "cuda" is GPU 0
one_rank() {
    ini one cuda > one.ini
    if fake timeout 120 "$DLG" -q --plugin-dir "$PLUGDIR" run one.ini >one.out 2>one.err; then
        check_rows one.csv 1 || fail "one rank: the rows (above)"
    else
        fail "one rank: exit $?: $(head -c 600 one.err)"
    fi
}

# two ranks on the one stand-in GPU
two_ranks() {
    command -v "$MPIEXEC" >/dev/null || { echo "no $MPIEXEC: two ranks not run"; return; }
    source "$(dirname "$0")/../support/mpi_env.sh" "$MPIEXEC"
    ini two cuda:0 > two.ini
    if fake timeout 180 "${MPIRUN[@]}" -np 2 -x DLGAUGE_NN_MODULE_DIR -x DLGAUGE_NCCL_LIB -x FAKEGPU_LEAKS \
        "$DLG" -q --plugin-dir "$PLUGDIR" run two.ini >two.out 2>two.err; then
        check_rows two.csv 2 || fail "two ranks: the rows (above)"
    else
        fail "two ranks: exit $?: $(head -c 600 two.err)"
    fi
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
