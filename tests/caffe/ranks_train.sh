#!/usr/bin/env bash
# Data-parallel training end to end: `mpirun -np 2 dlgauge run` (loopback
# only) of a tiny alexnet train job on generated images.  Each rank reads
# its own shard, the gradients are averaged over the ranks every step, and
# the ranks' weights must still be identical at the end (the workload's
# check, else a "ranks' weights diverged" error and an error row); the row
# counts both ranks' images.  usage: ranks_train.sh BUILD_DIR MPIEXEC
set -euo pipefail
build=$1
mpiexec=$2
dlg=$build/bin/dlgauge
plugins=$build/lib/dlgauge
work=$(mktemp -d)
source "$(dirname "$0")/../support/mpi_env.sh" "$mpiexec"
trap 'rm -rf "$work" "$_dlg_mpi_tmp"' EXIT
unset DLGAUGE_PLUGIN_PATH
"$dlg" --plugin-dir "$plugins" mkdata images --out "$work/d" --classes 3 --images 12 >/dev/null
cat >"$work/j.ini" <<EOF2
[sink csv]
path = $work/out.csv
[job dp]
workload = alexnet
mode = train
batch = 2
crop = 67
classes = 3
lr = 0.01
data = files:$work/d/train.txt
threads = 1
isolation = none
warmup = 1
iterations = 3
repeat = 2
EOF2
if ! (cd "$work" && timeout 240 "${MPIRUN[@]}" -np 2 \
        "$dlg" -v --plugin-dir "$plugins" run "$work/j.ini" >"$work/log" 2>&1); then
  echo "FAIL: the 2-rank run failed:"; cat "$work/log"; exit 1
fi
if grep -q "diverged" "$work/log"; then
  echo "FAIL: the ranks' weights diverged:"; cat "$work/log"; exit 1
fi
grep -q "data-parallel training: rank 0 of 2" "$work/log" ||
  { echo "FAIL: no gradient reduce was installed:"; cat "$work/log"; exit 1; }
python3 - "$work/out.csv" <<'EOF2'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
assert r["status"] == "ok", (r["status"], r["error"])
assert r["ranks"] == "2", r["ranks"]
# 2 repetitions x 3 timed steps x batch 2, on each of the 2 ranks
assert int(r["items"]) == 2 * 3 * 2 * 2, r["items"]
print("ok: 2 ranks, items", r["items"], "loss", r["loss"])
EOF2

# One rank's setup fails before the gradient reduce is in place (its
# device, through the environment of its part of an MPMD launch: cuda:0,
# which this machine lacks or whose backend refuses the reduce) while the
# other's succeeds: the cell ends with rank 1's line and nothing waits in
# a collective (the start check once ran in setup, where rank 0 waited for
# rank 1 forever).
sed 's/^mode = train$/&\ndevice = ${DLG_T_DEVICE}/' "$work/j.ini" >"$work/apart.ini"
rc=0
(cd "$work" && timeout 120 "${MPIRUN[@]}" -np 1 -x DLG_T_DEVICE=cpu "$dlg" --plugin-dir "$plugins" run "$work/apart.ini" \
   : -np 1 -x DLG_T_DEVICE=cuda:0 "$dlg" --plugin-dir "$plugins" run "$work/apart.ini" >"$work/apart.log" 2>&1) || rc=$?
[ "$rc" != 124 ] && [ "$rc" != 137 ] || { echo "FAIL: a rank hung after the other's setup failed"; cat "$work/apart.log"; exit 1; }
[ "$rc" != 0 ] || { echo "FAIL: exit 0 with a rank that could not set up"; cat "$work/apart.log"; exit 1; }
grep -q "rank 1: .*cuda" "$work/apart.log" ||
  { echo "FAIL: rank 1's setup line is not said:"; cat "$work/apart.log"; exit 1; }
echo "ok: one rank's failed setup ends the cell (exit $rc)"
