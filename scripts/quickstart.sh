#!/usr/bin/env bash
# The README's first command: set up, build, generate a small dataset, run
# the quick-start suite (conf/quickstart.ini) and report on it.  Results
# land in results/quickstart.{csv,jsonl}; the HTML report in results/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
bash scripts/build.sh build
dlg=./build/bin/dlgauge
$dlg sysinfo
if [ ! -f data/quickstart/train.lst ]; then
  $dlg mkdata images --out data/quickstart --classes 10 --images 300 --seed 1
  $dlg mkdata text --out data/quickstart/ptb --words 200000 --splits --seed 1
fi
rm -f results/quickstart.csv results/quickstart.jsonl
$dlg run conf/quickstart.ini "$@"
$dlg report results/quickstart.csv --html results/quickstart.html
echo "quickstart: results/quickstart.csv, results/quickstart.jsonl, results/quickstart.html"
