#!/usr/bin/env bash
# The shipped suites stay runnable: conf/quickstart.ini and every conf/study
# suite must pass `dlgauge run --dry-run` (options, data paths, disk
# profiles, sinks) on small generated data in a scratch dir, as a real run
# checks before its first cell.  The study's data comes from
# scripts/study.sh --dry-run itself, so its conversions are checked too.
# usage: conf_plan.sh DLGAUGE PLUGIN_DIR WORK_DIR
set -euo pipefail
dlg=$1 plugins=$2 work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
export DLGAUGE_PLUGIN_PATH=$plugins
rm -rf "$work" && mkdir -p "$work/study" "$work/quick"
cp -r "$src/conf" "$work/study/conf" # a copy: a suite is added to it below
log=$work/log
fail() { echo "conf_plan: $*"; cat "$log"; exit 1; }

DLGAUGE=$dlg DLG_STUDY_WORKDIR=$work/study DLG_STUDY_IMAGES=100 DLG_STUDY_WORDS=20000 \
  bash "$src/scripts/study.sh" --dry-run >"$log" 2>&1 || fail "scripts/study.sh --dry-run failed"
for f in train.rec train.idx train-342.rec train_lmdb/data.mdb train_mean.binaryproto ptb.train.txt; do
  [ -s "$work/study/data/study/$f" ] || fail "study: data/study/$f missing or empty"
done

# a re-run with another size regenerates what that size is for (the PTB
# text once stayed at the first run's size: a dry run's small data was
# measured by the real study after it)
words() { wc -w <"$work/study/data/study/ptb.train.txt"; }
w1=$(words)
DLGAUGE=$dlg DLG_STUDY_WORKDIR=$work/study DLG_STUDY_IMAGES=100 DLG_STUDY_WORDS=40000 \
  bash "$src/scripts/study.sh" --dry-run >"$log" 2>&1 || fail "scripts/study.sh --dry-run (re-run) failed"
w2=$(words)
[ "$w2" -gt "$((w1 * 3 / 2))" ] || fail "study: DLG_STUDY_WORDS 20000 then 40000: ptb.train.txt has $w1 then $w2 words"

# a suite added to conf/study is planned (and run) with the others: the
# study's list was fixed, so a new suite was never even checked
printf '[job x]\nworkload = no-such-workload\n' >"$work/study/conf/study/extra.ini"
if DLGAUGE=$dlg DLG_STUDY_WORKDIR=$work/study DLG_STUDY_IMAGES=100 DLG_STUDY_WORDS=40000 \
  bash "$src/scripts/study.sh" --dry-run >"$log" 2>&1; then
  fail "study: a broken conf/study/extra.ini passed scripts/study.sh --dry-run"
fi
grep -q "study: extra: the plan check failed" "$log" || fail "study: extra.ini was not checked"
rm "$work/study/conf/study/extra.ini"

# quickstart.sh's data, smaller; the suite's own preprocess job writes the rest
cd "$work/quick" && ln -s "$src/conf" conf
{ "$dlg" mkdata images --out data/quickstart --classes 10 --images 20 --seed 1 &&
  "$dlg" mkdata text --out data/quickstart/ptb --words 20000 --splits --seed 1 &&
  "$dlg" run conf/quickstart.ini --dry-run; } >"$log" 2>&1 || fail "conf/quickstart.ini does not plan"
echo "conf_plan: conf/quickstart.ini and every conf/study suite plan on generated data"
