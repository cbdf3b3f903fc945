#!/usr/bin/env bash
# Side-by-side input-pipeline throughput: dlgauge's loader (pipe_bench, built
# in tests/pipeline: read through the posix storage plugin, decode, random
# resized crop 224, flip, normalise to fp32 NCHW batches of 32) against PIL +
# torchvision transforms in a torch DataLoader doing the same, on the same
# files (page cache warm for both), with 1 and 2 workers.  Prints medians of
# REPEATS runs and the ratio dlgauge/torchvision.
#
#   scripts/bench/pipeline-vs-torchvision.sh [BUILD_DIR]
#   env: IMAGES (dataset size, 1000), BATCHES (timed batches of 32, 25),
#        REPEATS (3), DATA (folder made by dlgauge mkdata), PEER_PYTHON
#        (the python3 with torchvision and PIL; /usr/bin/python3)
set -euo pipefail

BUILD=${1:-build-pipe}
BENCH=$BUILD/bin/pipe_bench
DLG=$BUILD/bin/dlgauge
IMAGES=${IMAGES:-1000}
BATCHES=${BATCHES:-25}
REPEATS=${REPEATS:-3}
DATA=${DATA:-$BUILD/bench/pipeline-data}
here=$(cd "$(dirname "$0")" && pwd)
export DLGAUGE_PLUGIN_PATH=$BUILD/lib/dlgauge

. "$here/bench_lib.sh"
need_peer_modules torchvision PIL
[ -x "$BENCH" ] || { echo "$BENCH not built: ninja -C $BUILD pipe_bench" >&2; exit 1; }
if [ ! -f "$DATA/train.txt" ]; then
    "$DLG" mkdata images --out "$DATA" --classes 10 --images "$IMAGES" --seed 1 >/dev/null
fi
cat "$DATA"/train/*/* > /dev/null # warm the page cache for both tools

echo "dataset: $(wc -l < "$DATA/train.txt") mkdata images in $DATA ($(du -sh "$DATA/train" | cut -f1)), $BATCHES timed batches of 32, $REPEATS runs"
echo "torchvision $("$PEER_PYTHON" -c 'import torchvision; print(torchvision.__version__)'), PIL $("$PEER_PYTHON" -c 'import PIL; print(PIL.__version__)')"
# the JPEG decoder each side runs (libjpeg-turbo picks its SIMD from the CPU
# unless a JSIMD_* variable forces it)
echo "decoders: dlgauge $(ldd "$BENCH" | awk '/libturbojpeg/{print $3}'), PIL $("$PEER_PYTHON" -c 'import PIL.Image as I; from PIL import features as f; print(I.core.__file__, "libjpeg", f.version("jpg"), "turbo" if f.check_feature("libjpeg_turbo") else "")') ($(dpkg-query -W -f='${Version}' libturbojpeg0 2>/dev/null || echo 'version ?')); JSIMD: $(env | { grep '^JSIMD_' || true; } | tr '\n' ' ')"
printf '%-10s %14s %14s %8s\n' workers "dlgauge img/s" "torchvision" ratio
for t in 1 2; do
    d=(); p=()
    for r in $(seq "$REPEATS"); do
        d+=("$("$BENCH" loader "files:$DATA/train.txt" "$t" "$BATCHES" 32 224 | awk '/images_per_s/{print $2}')")
        p+=("$("$PEER_PYTHON" "$here/pipeline_peer.py" "$DATA" "$DATA/train.txt" "$t" "$BATCHES" | awk '/images_per_s/{print $2}')")
    done
    dm=$(printf '%s\n' "${d[@]}" | median)
    pm=$(printf '%s\n' "${p[@]}" | median)
    printf '%-10s %14.1f %14.1f %7.2fx\n' "$t" "$dm" "$pm" "$(awk -v a="$dm" -v b="$pm" 'BEGIN{print a/b}')"
done
