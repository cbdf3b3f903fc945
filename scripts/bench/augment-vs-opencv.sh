#!/usr/bin/env bash
# Side-by-side cost of the two stages of MXNet's default augmenter that
# OpenCV runs for it, one thread each, on the same bytes: dlgauge's
# transform = mxnet code (core/data/loader_affine.c, loader_hls.c, through
# aug_bench built in tests/pipeline) against cv2 (python3-opencv).
#   warp: the affine warp of the whole image (shorter side SIDE, shear 0.1,
#         10 degrees: cv2.warpAffine, INTER_LINEAR, BORDER_CONSTANT)
#   hls:  the HLS jitter round trip of the centre CROP x CROP (cv2.cvtColor
#         RGB2HLS then HLS2RGB, uint8; dlgauge's time also holds MXNet's
#         shift and clamp and the bytes-to-float store, OpenCV's does not)
#   color: the colour jitter of that crop (contrast 0.7, saturation 1.35,
#         brightness 1.3: convertTo, cvtColor RGB2GRAY + mean, addWeighted,
#         as MXNet's brightness/contrast/saturation call them), in place on
#         a fresh copy of the crop that neither side times
#   interp: inter_method 0..4 (nearest, bilinear, cubic, area, lanczos4):
#         cv2.resize of the decoded image to shorter side SIDE, and
#         cv2.warpAffine of the resized image (the warp's matrix), per method
#   area2x: INTER_AREA's exact 2 x 2 shrink (OpenCV's half-up integer
#         mean) to the resized size from twice it (684x912 -> 342x456 for
#         a 4:3 image at SIDE 342)
# Each side takes the median over REPS runs per image; the table shows the
# median of those over IMAGES images and ROUNDS interleaved rounds, and the
# ratio OpenCV time / dlgauge time (above 1: dlgauge is faster).  It also
# prints which ISA each side ran (dlgauge: per stage, area2x's kernel too)
# and whether dlgauge's bytes are OpenCV's.
#
#   scripts/bench/augment-vs-opencv.sh [BUILD_DIR]
#   env: IMAGES (4), REPS (30), ROUNDS (3), SIDE (342), CROP (299),
#        DATA (folder made by dlgauge mkdata), PEER_PYTHON (/usr/bin/python3),
#        AUG_BENCH_SCALAR (1: dlgauge's warp and area kernels run their
#        scalar loops, as on a CPU without AVX2; aug_bench.c)
set -euo pipefail

BUILD=${1:-build-pipe}
BENCH=$BUILD/bin/aug_bench
DLG=$BUILD/bin/dlgauge
IMAGES=${IMAGES:-4}
REPS=${REPS:-30}
ROUNDS=${ROUNDS:-3}
SIDE=${SIDE:-342}
CROP=${CROP:-299}
DATA=${DATA:-$BUILD/bench/augment-data}
here=$(cd "$(dirname "$0")" && pwd)

. "$here/bench_lib.sh"
"$PEER_PYTHON" -c "import cv2, numpy" 2>/dev/null ||
  { echo "peer missing: $PEER_PYTHON cannot import cv2 (Debian: apt-get install python3-opencv); nothing measured" >&2; exit 2; }
for v in IMAGES REPS ROUNDS SIDE CROP; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$v: '${!v}' is no positive whole number; nothing measured" >&2; exit 2; }
done
[ "$CROP" -le "$SIDE" ] || { echo "CROP ($CROP) is larger than SIDE ($SIDE); nothing measured" >&2; exit 2; }
[ -x "$BENCH" ] || { echo "$BENCH not built: cmake --build $BUILD --target aug_bench" >&2; exit 1; }
if [ ! -f "$DATA/train.txt" ]; then
  "$DLG" mkdata images --out "$DATA" --classes 1 --images "$IMAGES" --seed 1 >/dev/null
fi
mapfile -t files < <(head -n "$IMAGES" "$DATA/train.txt" | sed 's/ [0-9]*$//')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
peer=("$PEER_PYTHON" "$here/augment_peer.py")

echo "images: ${#files[@]} from $DATA, shorter side $SIDE, crop $CROP, $REPS runs each, $ROUNDS rounds, 1 thread; load average $(loadavg)"
"${peer[@]}" --about
declare -a dw dh dc d2 pw ph pc ps p2
declare -A di pi # interp: "r<method>" resize, "w<method>" warp -> times
diffs=""
for r in $(seq "$ROUNDS"); do
  for f in "${files[@]}"; do
    out=$("$BENCH" "$DATA/$f" "$work" "$REPS" "$SIDE" "$CROP")
    [ "$r" = 1 ] && [ "$f" = "${files[0]}" ] &&
      echo "dlgauge: hls $(awk '/^isa_hls/{$1=""; print}' <<<"$out"), warp $(awk '/^isa_warp/{$1=""; print}' <<<"$out"), color $(awk '/^isa_color/{$1=""; print}' <<<"$out"), area2x $(awk '/^isa_area/{$1=""; print}' <<<"$out"); CPU $(awk '/^isa_cpu/{print $2}' <<<"$out")${AUG_BENCH_SCALAR:+ (AUG_BENCH_SCALAR=$AUG_BENCH_SCALAR)}"
    dw+=("$(awk '/^warp_us/{print $2}' <<<"$out")")
    dh+=("$(awk '/^hls_us/{print $2}' <<<"$out")")
    dc+=("$(awk '/^color_us/{print $2}' <<<"$out")")
    d2+=("$(awk '/^half_us/{print $2}' <<<"$out")")
    for k in 0 1 2 3 4; do
      di[r$k]+=" $(awk -v k="resize_us_$k" '$1 == k {print $2}' <<<"$out")"
      di[w$k]+=" $(awk -v k="warp_us_$k" '$1 == k {print $2}' <<<"$out")"
    done
    out=$("${peer[@]}" "$work" "$REPS")
    pw+=("$(awk '/^warp_us/{print $2}' <<<"$out")")
    ph+=("$(awk '/^hls_us/{print $2}' <<<"$out")")
    pc+=("$(awk '/^color_us/{print $2}' <<<"$out")")
    p2+=("$(awk '/^half_us/{print $2}' <<<"$out")")
    ps+=("$(awk '/^shift_us/{print $2}' <<<"$out")")
    for k in 0 1 2 3 4; do
      pi[r$k]+=" $(awk -v k="resize_us_$k" '$1 == k {print $2}' <<<"$out")"
      pi[w$k]+=" $(awk -v k="warp_us_$k" '$1 == k {print $2}' <<<"$out")"
    done
    [ "$r" = 1 ] && diffs+="$f: $(awk '/_diff/{printf "%s max %s (%s values)  ", $1, $2, $3}' <<<"$out")"$'\n'
  done
done
med() { printf '%s\n' "$@" | median; }
row() { # NAME DLGAUGE_US OPENCV_US
  printf '%-6s %12.1f %12.1f %8.2fx\n' "$1" "$2" "$3" "$(awk -v d="$2" -v p="$3" 'BEGIN{print p/d}')"
}
printf '%-6s %12s %12s %9s\n' stage "dlgauge us" "opencv us" ratio
row warp "$(med "${dw[@]}")" "$(med "${pw[@]}")"
row hls "$(med "${dh[@]}")" "$(med "${ph[@]}")"
row color "$(med "${dc[@]}")" "$(med "${pc[@]}")"
names=(nearest bilinear cubic area lanczos4)
for k in 0 1 2 3 4; do
  # shellcheck disable=SC2086 # the lists split on purpose
  row "rs-$k" "$(med ${di[r$k]})" "$(med ${pi[r$k]})"
done
for k in 0 1 2 3 4; do
  # shellcheck disable=SC2086
  row "wp-$k" "$(med ${di[w$k]})" "$(med ${pi[w$k]})"
done
row area2x "$(med "${d2[@]}")" "$(med "${p2[@]}")"
echo "(rs-M / wp-M: cv2.resize / cv2.warpAffine with inter_method M: $(for k in 0 1 2 3 4; do printf '%s %s ' "$k" "${names[$k]}"; done))"
echo "(ratio: OpenCV time / dlgauge time, medians; OpenCV's shift-and-clamp LUT, not in its hls: $(med "${ps[@]}") us)"
echo "outputs, dlgauge vs OpenCV (0 0: the same bytes):"
printf '%s' "$diffs"
echo "load average at the end: $(loadavg)"
