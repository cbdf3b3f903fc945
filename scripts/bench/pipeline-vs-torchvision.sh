#!/usr/bin/env bash
# Side-by-side input-pipeline throughput: dlgauge's loader (pipe_bench, built
# in tests/pipeline: read through the posix storage plugin, decode, random
# resized crop 224, flip, normalise to fp32 NCHW batches of 32) against PIL +
# torchvision transforms in a torch DataLoader doing the same, on the same
# files (page cache warm for both), with as many DataLoader worker processes
# as loader threads (1 and 2).  Both sides decode at the DCT reduction the
# crop window allows (dlgauge's jpeg_scale = auto: 1/2, 3/8, 1/4 or 1/8;
# PIL's Image.draft: 1/2, 1/4 or 1/8), or with PEER_DECODE=full both at full
# size (dlgauge's jpeg_scale = full, stock torchvision), and resize with
# PIL-style antialiased bilinear; both build the batch in their workers.  Prints the peer's PIL and libjpeg, a check of the
# peer's reduced decodes against full ones (CHECK crops: the reductions taken
# and the mean pixel difference), then medians of REPEATS runs and the ratio
# dlgauge/torchvision.
#
#   scripts/bench/pipeline-vs-torchvision.sh [BUILD_DIR]
#   env: IMAGES (dataset size, 1000), BATCHES (timed batches of 32, 25),
#        REPEATS (3), DATA (folder made by dlgauge mkdata, or any folder with
#        a train.txt of "PATH LABEL" lines), PEER_PYTHON (the python3 with
#        torchvision and PIL; /usr/bin/python3), PEER_DECODE (draft: reduced
#        decodes, the default; full: stock torchvision, full-size decodes,
#        and dlgauge's jpeg_scale = full),
#        CHECK (crops the check decodes both ways, 32; 0: no check)
set -euo pipefail

BUILD=${1:-build-pipe}
BENCH=$BUILD/bin/pipe_bench
DLG=$BUILD/bin/dlgauge
IMAGES=${IMAGES:-1000}
BATCHES=${BATCHES:-25}
REPEATS=${REPEATS:-3}
PEER_DECODE=${PEER_DECODE:-draft}
CHECK=${CHECK:-32}
DLG_DECODE=auto # dlgauge's jpeg_scale: as the peer decodes
[ "$PEER_DECODE" = full ] && DLG_DECODE=full
CROP=224
BATCH=32
DATA=${DATA:-$BUILD/bench/pipeline-data}
here=$(cd "$(dirname "$0")" && pwd)
export DLGAUGE_PLUGIN_PATH=$BUILD/lib/dlgauge

. "$here/bench_lib.sh"
need_peer_modules torchvision PIL
case $PEER_DECODE in
draft | full) ;;
*) echo "PEER_DECODE: '$PEER_DECODE' is neither draft nor full; nothing measured" >&2; exit 2 ;;
esac
[ -x "$BENCH" ] || { echo "$BENCH not built: ninja -C $BUILD pipe_bench" >&2; exit 1; }
if [ ! -f "$DATA/train.txt" ]; then
    "$DLG" mkdata images --out "$DATA" --classes 10 --images "$IMAGES" --seed 1 >/dev/null
fi
# read every listed file once: the page cache is warm for both tools
bytes=$(cd "$DATA" && sed 's/ [0-9]*$//' train.txt | xargs -d '\n' cat | wc -c)

echo "dataset: $(wc -l < "$DATA/train.txt") images in $DATA ($((bytes >> 20)) MiB), $BATCHES timed batches of $BATCH, $REPEATS runs, peer decode $PEER_DECODE, dlgauge jpeg_scale $DLG_DECODE"
peer=("$PEER_PYTHON" "$here/pipeline_peer.py")
"${peer[@]}" --about
# the JPEG decoder each side runs (libjpeg-turbo picks its SIMD from the CPU
# unless a JSIMD_* variable forces it)
echo "decoders: dlgauge $(ldd "$BENCH" 2>/dev/null | awk '/libturbojpeg/{print $3}') ($(dpkg-query -W -f='${Version}' libturbojpeg0 2>/dev/null || echo 'version ?')), PIL libjpeg62-turbo $(dpkg-query -W -f='${Version}' libjpeg62-turbo 2>/dev/null || echo '?'); JSIMD: $(env | { grep '^JSIMD_' || true; } | tr '\n' ' ')"
if [ "$CHECK" -gt 0 ]; then
    "${peer[@]}" "$DATA" "$DATA/train.txt" --check "$CHECK" --crop "$CROP"
fi
printf '%-10s %14s %14s %8s\n' workers "dlgauge img/s" "torchvision" ratio
for t in 1 2; do
    d=(); p=()
    for r in $(seq "$REPEATS"); do
        d+=("$("$BENCH" loader "files:$DATA/train.txt" "$t" "$BATCHES" "$BATCH" "$CROP" "$DLG_DECODE" | awk '/images_per_s/{print $2}')")
        p+=("$("${peer[@]}" "$DATA" "$DATA/train.txt" "$t" "$BATCHES" --batch "$BATCH" --crop "$CROP" --decode "$PEER_DECODE" | awk '/images_per_s/{print $2}')")
    done
    dm=$(printf '%s\n' "${d[@]}" | median)
    pm=$(printf '%s\n' "${p[@]}" | median)
    printf '%-10s %14.1f %14.1f %7.2fx\n' "$t" "$dm" "$pm" "$(awk -v a="$dm" -v b="$pm" 'BEGIN{print a/b}')"
done
