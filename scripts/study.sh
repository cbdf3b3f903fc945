#!/usr/bin/env bash
# Reproduces the published cloud study's matrix on this machine:
#   bash scripts/study.sh [--dry-run] [SUITE...]   (default: every conf/study suite)
# Generates the datasets once (data/study/), caps the vCPU axis at this
# machine, runs each suite, then writes one report over all results.
# --dry-run: generate the data, then only check each suite's plan
# (`dlgauge run --dry-run`: options, data paths, sinks); exit 1 if one fails.
# Sizes: DLG_STUDY_IMAGES (default 20000 training images, 100 classes),
# DLG_STUDY_WORDS (default 1000000, PTB's size).  DLG_STUDY_WORKDIR (default
# the repository) holds data/ and results/; conf/ is linked there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dry=0
if [ "${1:-}" = --dry-run ]; then dry=1; shift; fi
dlg=${DLGAUGE:-$top/build/bin/dlgauge}
[ -x "$dlg" ] || bash "$top/scripts/build.sh" "$top/build"
work=${DLG_STUDY_WORKDIR:-$top}
mkdir -p "$work"
[ -e "$work/conf" ] || ln -s "$top/conf" "$work/conf"
cd "$work"
words=${DLG_STUDY_WORDS:-1000000}
images=${DLG_STUDY_IMAGES:-20000}
export DLG_STUDY_IMAGES=$images
# the suites' nets have classes = 100: every split needs every class
if ! [ "$images" -ge 100 ] 2>/dev/null; then
  echo "study: DLG_STUDY_IMAGES=$images: need at least 100 (one image per class)" >&2
  exit 2
fi
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

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  # these first, in this order; then any other suite in conf/study (common.ini
  # is included by the others, not a suite)
  suites=(preprocess caffe-train caffe-infer caffe-disk mxnet)
  for f in conf/study/*.ini; do
    s=$(basename "$f" .ini)
    [[ $s == common || " ${suites[*]} " == *" $s "* ]] || suites+=("$s")
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
