# allreduce and p2p under mpirun (2 and 3 ranks, loopback only), through
# the real CLI: rank 0 writes one row per cell, and the row reads back as
# nccl-tests defines it: ranks, busbw = algbw x 2(n-1)/n (p2p: x 1), items
# = the bytes of rank 0's ops, a plausible rate, the check passed (ok).
# With ops_per_step = 8 a step is 8 ops timed together: items 8 messages
# a step, op_time_us an eighth of a step (the runner's step latency).  A
# bad ops_per_step ends the run in one line naming the key.
#   bash comm_mpi.sh DLGAUGE PLUGIN_DIR WORK_DIR [MPIRUN]
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
WORK=$(realpath -m "$3")
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
unset DLGAUGE_PLUGIN_PATH
MPIEXEC=${4:-mpirun}
command -v "$MPIEXEC" >/dev/null || { echo "SKIP: no $MPIEXEC (scripts/deps/mpi.txt)"; exit 77; }
source "$(dirname "$0")/../support/mpi_env.sh" "$MPIEXEC"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# isolation = none: a cell's own process would not be a rank
cat > comm.ini <<INI
[global]
isolation = none
[sink csv]
path = $WORK/comm.csv
[job ar]
workload = allreduce
bytes = 1MiB, 4000
type = float32, int64
iterations = 30
warmup = 3
[job p]
workload = p2p
bytes = 1MiB
type = float64
iterations = 30
warmup = 3
[job ops]
workload = allreduce
bytes = 256KiB
type = float64
ops_per_step = 8
iterations = 40
warmup = 3
[job pops]
workload = p2p
bytes = 256KiB
type = int64
ops_per_step = 8
iterations = 40
warmup = 3
INI

for n in 2 3; do
    rm -f comm.csv
    timeout 120 "${MPIRUN[@]}" -np $n "$DLG" -q --plugin-dir "$PLUGDIR" run comm.ini >run$n.out 2>run$n.err
    rc=$?
    [ $rc -eq 0 ] || { fail "np $n: exit $rc: $(grep -m2 '^dlgauge' run$n.err || tail -3 run$n.err)"; continue; }
    "$PY" - "$n" comm.csv <<'PY' || fail "np $n: the rows (above)"
import csv, sys
n, rows = int(sys.argv[1]), list(csv.DictReader(open(sys.argv[2])))
bad = []
def want(c, what):
    if not c:
        bad.append(what)
if len(rows) != 7:  # 5 allreduce cells, 2 p2p: once each, from rank 0
    sys.exit(f"{len(rows)} rows, want 7 (one per cell, rank 0's)")
OPS = {"ops": 8, "pops": 8}  # ops_per_step by job (a fixed option is no column)
for r in rows:
    who = f"{r['job']} bytes={r['message_bytes']} ({r['status']} {r['error'][:200]})"
    want(r["status"] == "ok", f"{who}: status")
    if r["status"] != "ok":
        continue
    ranks, alg, bus = int(r["ranks"]), float(r["algbw_bytes_per_s"]), float(r["busbw_bytes_per_s"])
    factor = 2 * (n - 1) / n if r["workload"] == "allreduce" else 1.0
    want(ranks == n, f"{who}: ranks {ranks}, want {n}")
    want(float(r["busbw_factor"]) == factor, f"{who}: busbw_factor {r['busbw_factor']}, want {factor}")
    want(abs(bus - alg * factor) <= 1e-12 * bus, f"{who}: busbw {bus} != algbw {alg} x {factor}")
    want(1e5 < alg < 1e12, f"{who}: algbw {alg} bytes/s is implausible")
    # the runner sums the ranks' items; only rank 0 counts its bytes, of
    # every op
    ops = OPS.get(r["job"], 1)
    want(int(r["items"]) == ops * int(r["message_bytes"]) * int(r["steps"]),
         f"{who}: items {r['items']}, want {ops} x {r['message_bytes']} x {r['steps']} steps")
    us = float(r["op_time_us"])
    want(abs(alg - int(r["message_bytes"]) / (us / 1e6)) <= 1e-9 * alg, f"{who}: algbw != bytes / op_time_us")
    # a step's time / its ops, averaged over the ranks, which wait for each
    # other every op: within a loose band round rank 0's mean step latency
    # (which adds the runner's own time) / ops
    lat = float(r["latency_mean_us"])
    if ops > 1:
        want(0.3 * lat / ops <= us <= 1.5 * lat / ops,
             f"{who}: op_time_us {us}, a step's mean {lat} us / {ops} ops is {lat / ops}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
done
# a bad ops_per_step: one line naming the file, line and key, nothing run
for v in 0 -1 x 10001; do
    printf '[global]\nisolation = none\n[sink csv]\npath = %s\n[job bad]\nworkload = p2p\nops_per_step = %s\n' \
        "$WORK/bad.csv" "$v" > bad.ini
    rm -f bad.csv
    "$DLG" -q --plugin-dir "$PLUGDIR" run bad.ini >bad.out 2>bad.err
    rc=$?
    case $v in
    x) why="'x' is not an integer" ;;
    10001) why="10001 is above the maximum 10000" ;;
    *) why="$v is below the minimum 1" ;;
    esac
    [ $rc -ne 0 ] || fail "ops_per_step = $v: exit 0"
    [ "$(wc -l <bad.err)" = 1 ] && grep -qF "bad.ini:7: [job bad] ops_per_step: $why" bad.err ||
        fail "ops_per_step = $v: not one line naming it: $(head -c 400 bad.err)"
    [ ! -s bad.csv ] || fail "ops_per_step = $v: a row was written"
done
[ $FAILS -eq 0 ] && echo "comm_mpi: all passed"
exit $((FAILS > 0))
