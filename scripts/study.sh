#!/usr/bin/env bash
# Reproduces the published cloud study's matrix on this machine:
#   bash scripts/study.sh [--dry-run] [SUITE...]   (default: every conf/study suite)
# Generates the datasets once (data/study/), caps the vCPU axis at this
# machine, runs each suite, then writes one report over all results.
# --dry-run (anywhere among the arguments): generate the data, then only
# check each suite's plan (`dlgauge run --dry-run`: options, data paths,
# sinks); exit 1 if one fails.  An unknown option or suite is refused
# (exit 2) before anything is built or generated.
# Sizes: DLG_STUDY_IMAGES (default 20000 training images, 100 classes),
# DLG_STUDY_WORDS (default 1000000, PTB's size).  DLG_STUDY_WORKDIR holds
# data/ and results/ (default: the repository, or the current folder for
# an installed copy); conf/ is linked there.  Installed, as
# PREFIX/share/dlgauge/scripts/study.sh, it runs PREFIX/bin/dlgauge (else
# the dlgauge on PATH) on the install's conf/ (PREFIX/share/dlgauge/conf).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: study.sh [--dry-run] [SUITE...]"
dry=0
suites=()
for a in "$@"; do
  case $a in
    --dry-run) dry=1 ;;
    -h | --help) echo "$usage"; exit 0 ;;
    -*) echo "study: unknown option '$a' ($usage)" >&2; exit 2 ;;
    *) suites+=("$a") ;;
  esac
done
# a checkout (scripts/ beside CMakeLists.txt) or an install (share/dlgauge)
checkout=0
[ -f "$top/CMakeLists.txt" ] && checkout=1
if [ $checkout = 1 ]; then work=${DLG_STUDY_WORKDIR:-$top}; else work=${DLG_STUDY_WORKDIR:-$PWD}; fi
conf=$top/conf
[ -d "$work/conf" ] && conf=$work/conf # the one the suites will run from

# ---- the suites asked for exist (common.ini is included by the others, not a suite)
known=()
for f in "$conf"/study/*.ini; do
  s=$(basename "$f" .ini)
  [ "$s" = common ] || known+=("$s")
done
for s in "${suites[@]}"; do
  [[ $s != common && " ${known[*]} " == *" $s "* ]] ||
    { echo "study: unknown suite '$s' (suites in $conf/study: ${known[*]})" >&2; exit 2; }
done
images=${DLG_STUDY_IMAGES:-20000}
# the suites' nets have classes = 100: every split needs every class
if ! [ "$images" -ge 100 ] 2>/dev/null; then
  echo "study: DLG_STUDY_IMAGES=$images: need at least 100 (one image per class)" >&2
  exit 2
fi

if [ $checkout = 1 ]; then
  dlg=${DLGAUGE:-$top/build/bin/dlgauge}
  [ -x "$dlg" ] || bash "$top/scripts/build.sh" "$top/build"
else
  dlg=${DLGAUGE:-$top/../../bin/dlgauge}
  [ -x "$dlg" ] || dlg=$(command -v dlgauge) ||
    { echo "study: no dlgauge in $top/../../bin nor on PATH: set DLGAUGE=PATH" >&2; exit 2; }
fi
mkdir -p "$work"
[ -e "$work/conf" ] || ln -s "$top/conf" "$work/conf"
cd "$work"
words=${DLG_STUDY_WORDS:-1000000}
export DLG_STUDY_IMAGES=$images
val_images=$((images / 10 > 100 ? images / 10 : 100))

# ---- data, generated once
mkdir -p data/study results/study
# another size than the data on disk was made with: make it again
if [ -f data/study/train.lst ] && [ "$(cat data/study/images 2>/dev/null)" != "$images" ]; then
  echo "study: data/study was generated with $(cat data/study/images 2>/dev/null || echo another number of) images; regenerating with $images"
  rm -rf data/study && mkdir -p data/study
fi
if [ ! -f data/study/train.lst ]; then
  "$dlg" mkdata images --out data/study --classes 100 --images "$images" --seed 1
  "$dlg" mkdata images --out data/study --classes 100 --images "$val_images" --seed 2 --split val
  echo "$images" >data/study/images
fi
# the text's size is its own: a re-run with another DLG_STUDY_WORDS makes it again
if [ ! -f data/study/ptb.train.txt ] || [ "$(cat data/study/words 2>/dev/null)" != "$words" ]; then
  rm -f data/study/words
  "$dlg" mkdata text --out data/study/ptb --words "$words" --splits --seed 1
  echo "$words" >data/study/words
fi
# 256 for the Caffe nets' 227/224 crops; Inception-v3's 299 crop needs
# 342 (299 x 256/224), as MXNet's ImageRecordIter refuses smaller images.
# The LMDB follows BVLC's ImageNet recipe (create_imagenet.sh: every image
# 256 x 256; make_imagenet_mean.sh: its mean image for the nets' mean_file).
if [ ! -f data/study/train.rec ] || [ ! -f data/study/train_mean.binaryproto ] || [ ! -f data/study/train-342.rec ]; then
  cat > data/study/convert.ini <<INI
[sink csv]
path = data/study/convert.csv
[job rec]
workload   = preprocess
input      = data/study/train.lst
root       = data/study
output     = recordio:data/study/train.rec
resize     = 256
iterations = $images
warmup     = 0
[job lmdb]
workload   = preprocess
input      = data/study/train.lst
root       = data/study
output     = lmdb:data/study/train_lmdb
resize_width  = 256
resize_height = 256
mean_output   = data/study/train_mean.binaryproto
iterations = $images
warmup     = 0
[job rec342]
workload   = preprocess
input      = data/study/train.lst
root       = data/study
output     = recordio:data/study/train-342.rec
resize     = 342
iterations = $images
warmup     = 0
INI
  rm -f data/study/convert.csv # this conversion's rows only (a new version may add columns)
  "$dlg" run data/study/convert.ini
fi

# ---- the vCPU and memory axes, capped at this machine
n=$(nproc)
cpus=""
for c in 1 2 4 8; do [ "$c" -le "$n" ] && cpus="${cpus:+$cpus, }$c"; done
export DLG_STUDY_CPUS=${DLG_STUDY_CPUS:-$cpus}
mem_gib=$(awk '/MemTotal/ {print int($2 / 1048576)}' /proc/meminfo)
mem=""
for m in 8 16 30; do [ "$m" -lt "$mem_gib" ] && mem="${mem:+$mem, }${m}G"; done
export DLG_STUDY_MEMORY=${DLG_STUDY_MEMORY:-${mem:-4G}}
echo "study: cpus = $DLG_STUDY_CPUS; memory = $DLG_STUDY_MEMORY; $images training images"

if [ ${#suites[@]} -eq 0 ]; then
  # these first, in this order; then any other suite in conf/study
  for s in preprocess caffe-train caffe-infer caffe-disk mxnet; do
    if [[ " ${known[*]} " == *" $s "* ]]; then suites+=("$s"); fi
  done
  for s in "${known[@]}"; do
    [[ " ${suites[*]} " == *" $s "* ]] || suites+=("$s")
  done
fi
if [ $dry = 1 ]; then
  bad=0
  for s in "${suites[@]}"; do
    "$dlg" run "conf/study/$s.ini" --dry-run >/dev/null || { echo "study: $s: the plan check failed" >&2; bad=1; }
  done
  exit $bad
fi
results=()
for s in "${suites[@]}"; do
  "$dlg" run "conf/study/$s.ini" || echo "study: $s finished with failed cells (see its rows)"
  results+=("results/study/$s.csv")
done
"$dlg" report "${results[@]}" --catalog conf/instances/alibaba.ini --html results/study/report.html \
  --markdown results/study/report.md
