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
# mkdata renames its outputs into place when complete: a file present is whole
if [ ! -f data/quickstart/train.lst ] || [ ! -f data/quickstart/ptb.test.txt ]; then
  $dlg mkdata images --out data/quickstart --classes 10 --images 300 --seed 1
  $dlg mkdata text --out data/quickstart/ptb --words 200000 --splits --seed 1
fi
rm -f results/quickstart.csv results/quickstart.jsonl
$dlg run conf/quickstart.ini "$@"
$dlg report results/quickstart.csv --html results/quickstart.html
# What the report is for: the cheapest instance whose vCPUs, memory and disks
# reach the input pipeline's best measured rate, judged from the
# input-pipeline cells (the CNNs above ran on this machine's CPUs, which says
# nothing about a GPU); whether that rate feeds the GPU is its AU (the
# report says so when no cell does).
echo
echo "== cheapest AWS instance reaching the input pipeline's best measured rate (conf/instances/aws.ini):"
$dlg report results/quickstart.csv --workload io-pipeline --catalog conf/instances/aws.ini | sed -n '/^recommended/,$p'
echo "quickstart: results/quickstart.csv, results/quickstart.jsonl, results/quickstart.html"
