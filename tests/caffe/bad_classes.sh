#!/usr/bin/env bash
# A classes count that disagrees with the dataset's labels is one clear
# error line naming both counts (issue 4, bad input): 3 generated classes,
# classes = 10 in the job.  usage: bad_classes.sh BUILD_DIR
set -euo pipefail
build=$1
dlg=$build/bin/dlgauge
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$dlg" mkdata images --out "$work/d" --classes 3 --images 6 >/dev/null
cat >"$work/j.ini" <<EOF2
[sink csv]
path = $work/out.csv
[job bc]
workload = alexnet
mode = train
batch = 2
crop = 67
classes = 10
data = files:$work/d/train.txt
warmup = 0
iterations = 1
EOF2
if (cd "$work" && "$dlg" run --set job.isolation=none "$work/j.ini" >"$work/log" 2>&1); then
  echo "FAIL: the run succeeded"; cat "$work/log"; exit 1
fi
want="classes = 10 but data = files:$work/d/train.txt has 3 classes (labels 0..2): set classes = 3"
n=$(grep -cF "$want" "$work/log" || true)
[ "$n" -ge 1 ] || { echo "FAIL: no line '$want' in:"; cat "$work/log"; exit 1; }
grep -q ',error,alexnet,' "$work/out.csv" || { echo "FAIL: result not an error"; exit 1; }
echo "ok: $want"
