#!/usr/bin/env bash
# dlgauge's allreduce and p2p (comm.so, through the host's collectives)
# versus a bare C loop of MPI_Allreduce / MPI_Sendrecv (mpi_allreduce_peer.c)
# under the same mpirun line: same sizes, same float32 buffers first-touched
# with the same pattern, same warm-up and op count, OPS ops back to back
# per timing window on both sides (dlgauge's ops_per_step; nccl-tests
# times a loop of 20), timed as nccl-tests times (a window's time / OPS,
# the mean over the windows, averaged over the ranks).  Prints, per size,
# the medians over ROUNDS rounds of both sides' busbw, mean and median op
# time, and the busbw ratio dlgauge / peer (1.00: no overhead), then OPS
# and the MPI library.
# usage: allreduce-vs-mpi.sh [BUILD]    env: NP (2), ROUNDS (5), OPS (1),
#        SIZES ("4KiB 1MiB 32MiB"), CASES ("allreduce p2p")
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
np=${NP:-2} rounds=${ROUNDS:-5} ops=${OPS:-1}
[[ $ops =~ ^[1-9][0-9]*$ ]] && ((ops <= 10000)) || { echo "OPS=$ops: want 1 to 10000 ops per window" >&2; exit 2; }
sizes=${SIZES:-4KiB 1MiB 32MiB}
. "$top/scripts/bench/bench_lib.sh"
CASES=${CASES:-allreduce p2p}
check_cases allreduce p2p
for c in mpirun mpicc; do
  command -v $c >/dev/null || { echo "peer missing: no $c (apt-get install $(grep -v '^#' "$top/scripts/deps/mpi.txt" | tr '\n' ' ')); nothing measured" >&2; exit 2; }
done
[ -x "$build/bin/dlgauge" ] || { echo "no $build/bin/dlgauge: build first" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$work/peer" "$top/scripts/bench/mpi_allreduce_peer.c"
# root may run mpirun here; every byte stays on loopback
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np "$np" --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)

bytes_of() { # 4KiB -> 4096
  local n=${1%[KMG]iB} u=${1#"${1%[KMG]iB}"}
  case $u in KiB) echo $((n << 10)) ;; MiB) echo $((n << 20)) ;; GiB) echo $((n << 30)) ;; *) echo "$1" ;; esac
}
# ops per size: ~256 MiB moved, between 20 and 2000, in windows of OPS
# ops (at least 10 windows); a tenth of the windows (at least 2) as warm-up
iters_of() {
  local i=$((268435456 / $1)); ((i > 2000)) && i=2000; ((i < 20)) && i=20
  i=$((i / ops)); ((i < 10)) && i=10; echo $i
}
warm_of() { echo $(($1 / 10 > 2 ? $1 / 10 : 2)); }

# isolation = none: a cell's own process would not be a rank
printf '[global]\nisolation = none\n[sink csv]\npath = %s\n' "$work/dlg.csv" >"$work/comm.ini"
for op in $CASES; do
  for s in $sizes; do
    b=$(bytes_of "$s") i=$(iters_of "$(bytes_of "$s")")
    printf '[job %s_%s]\nworkload = %s\nbytes = %s\ntype = float32\nops_per_step = %s\niterations = %s\nwarmup = %s\n' \
      "$op" "$s" "$op" "$b" "$ops" "$i" "$(warm_of "$i")" >>"$work/comm.ini"
  done
done

# dlg_round R / peer_round R: one side's runs of round R, kept per case
dlg_round() {
  rm -f "$work/dlg.csv"
  "${mpi[@]}" "$build/bin/dlgauge" -q run "$work/comm.ini" >"$work/dlg.out" 2>&1 ||
    { cat "$work/dlg.out" >&2; echo "dlgauge failed (round $1)" >&2; exit 1; }
  python3 - "$work/dlg.csv" "$np" "$work" <<'PY'
import csv, sys
path, np, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for row in csv.DictReader(open(path)):
    if row["status"] != "ok" or int(row["ranks"]) != np:
        sys.exit(f"dlgauge {row['job']}: {row['status']}, {row['ranks']} ranks (want {np}): {row['error']}")
    with open(f"{work}/dlg.{row['job']}", "a") as f:
        print(row["busbw_bytes_per_s"], row["op_time_us"], row["op_median_us"], file=f)
PY
}
peer_round() {
  local op s b i pop
  for op in $CASES; do
    for s in $sizes; do
      b=$(bytes_of "$s") i=$(iters_of "$(bytes_of "$s")")
      [ "$op" = p2p ] && pop=sendrecv || pop=allreduce
      "${mpi[@]}" "$work/peer" "$pop" "$b" float32 "$i" "$(warm_of "$i")" "$ops" |
        awk '{print $1, $3, $4}' >>"$work/peer.${op}_$s" || { echo "peer failed (round $1)" >&2; exit 1; }
    done
  done
}
# the sides take turns at going first: the load of a shared machine drifts
for r in $(seq "$rounds"); do
  if ((r % 2)); then dlg_round "$r"; peer_round "$r"; else peer_round "$r"; dlg_round "$r"; fi
done

printf '%-10s %-6s %12s %12s %6s %12s %12s %11s %11s %9s\n' case size "dlgauge GB/s" "MPI GB/s" ratio \
  "dlg mean us" "MPI mean us" "dlg p50 us" "MPI p50 us" "p50 ratio"
for op in $CASES; do
  for s in $sizes; do
    col() { cut -d' ' -f"$2" "$work/$1.${op}_$s" | median; }
    python3 -c 'import sys; o,s,d,p,dm,pm,d5,p5=sys.argv[1:]; d,p=float(d),float(p)
d5,p5=float(d5),float(p5)
print(f"{o:<10} {s:<6} {d/1e9:12.3f} {p/1e9:12.3f} {d/p if p else 0:6.2f} {float(dm):12.2f} {float(pm):12.2f} {d5:11.2f} {p5:11.2f} {p5/d5 if d5 else 0:9.2f}")' \
      "$op" "$s" "$(col dlg 1)" "$(col peer 1)" "$(col dlg 2)" "$(col peer 2)" "$(col dlg 3)" "$(col peer 3)"
  done
done
echo "busbw (nccl-tests): allreduce algbw x 2(n-1)/n, p2p algbw, algbw = bytes / mean op time;"
echo "ratio = dlgauge busbw / MPI busbw; p50 = median op time, p50 ratio = MPI's / dlgauge's (1.00: no"
echo "overhead); medians of $rounds rounds, $np ranks, float32, $ops op(s) per timing window on both sides"
echo "(dlgauge's ops_per_step, the peer's loop; nccl-tests times 20)"
echo "MPI: $("${mpi[@]:0:2}" 1 "${mpi[@]:3}" "$work/peer" --version)"
