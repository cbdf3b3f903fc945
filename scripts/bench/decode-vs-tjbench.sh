#!/usr/bin/env bash
# Side-by-side JPEG decode rate per core: dlgauge's decoder (core/data/jpeg.c,
# through pipe_bench built in tests/pipeline) against libjpeg-turbo's own
# tjbench, on the same files, in the same run, to RGB, one thread each.
# Reports the median over REPEATS rounds of aggregate Mpixels/s (total
# pixels / total time over the image set), the ratio dlgauge/tjbench, and
# the gain of DCT-domain 1/2 scaled decoding (images/s, half vs full).
#
#   scripts/bench/decode-vs-tjbench.sh [BUILD_DIR]
#   env: IMAGES (files to use, default 24), REPEATS (3), BENCHTIME (0.2 s
#        per image per tjbench run), DATA (folder made by dlgauge mkdata:
#        IMAGES images in up to 8 classes)
# SIMD: libjpeg-turbo reports no choice of its own (neither its API nor
# tjbench's output); it takes the best its CPUID check allows unless a
# JSIMD_FORCE* variable narrows it, so the script prints the variables set,
# the ones the library reads (its strings) and the CPU's flags, as such.
set -euo pipefail

BUILD=${1:-build-pipe}
BENCH=$BUILD/bin/pipe_bench
DLG=$BUILD/bin/dlgauge
IMAGES=${IMAGES:-24}
REPEATS=${REPEATS:-3}
BENCHTIME=${BENCHTIME:-0.2}
DATA=${DATA:-$BUILD/bench/decode-data}

command -v tjbench >/dev/null || { echo "tjbench not found: apt-get install libjpeg-turbo-progs" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
[ -x "$BENCH" ] || { echo "$BENCH not built: ninja -C $BUILD pipe_bench" >&2; exit 1; }
[[ $IMAGES =~ ^[1-9][0-9]*$ ]] || { echo "IMAGES: '$IMAGES' is no positive whole number; nothing measured" >&2; exit 2; }
if [ ! -f "$DATA/train.txt" ]; then
    # mkdata wants an image a class at least
    "$DLG" mkdata images --out "$DATA" --classes $((IMAGES < 8 ? IMAGES : 8)) --images "$IMAGES" --seed 1 >/dev/null
fi
mapfile -t files < <(head -n "$IMAGES" "$DATA/train.txt" | sed 's/ [0-9]*$//')
list=$DATA/bench-list.txt
head -n "$IMAGES" "$DATA/train.txt" > "$list"

# tjbench prints one row per test in -quiet mode; the last column is the
# decompression rate in Mpixels/s.  Aggregate as total pixels / total time.
tj_round() { # $1: extra tjbench args
    local tot_px=0 tot_s=0
    for f in "${files[@]}"; do
        local out w h mp
        out=$(cd "$DATA" && tjbench "$f" -rgb -quiet -nowrite -benchtime "$BENCHTIME" -warmup 0.05 $1 2>&1 | grep -E '^RGB' | tail -1)
        w=$(awk '{print $5}' <<<"$out"); h=$(awk '{print $6}' <<<"$out"); mp=$(awk '{print $NF}' <<<"$out")
        tot_px=$(awk -v a="$tot_px" -v w="$w" -v h="$h" 'BEGIN{print a + w*h}')
        tot_s=$(awk -v a="$tot_s" -v w="$w" -v h="$h" -v m="$mp" 'BEGIN{print a + w*h/(m*1e6)}')
    done
    awk -v p="$tot_px" -v s="$tot_s" -v n="${#files[@]}" 'BEGIN{printf "%.2f %.1f\n", p/s/1e6, n/s}'
}

reps=$(( $(awk -v b="$BENCHTIME" 'BEGIN{print int(b*60)}') + 1 ))
echo "images: ${#files[@]} from $DATA (mean $(du -cb $(sed "s|^|$DATA/|" <<<"$(printf '%s\n' "${files[@]}")") | tail -1 | awk -v n=${#files[@]} '{printf "%.0f", $1/n/1000}') KB), $REPEATS rounds, 1 thread, to RGB"
# Which decoder runs: both sides call TurboJPEG with the same flags (accurate
# DCT, fancy upsampling: tjbench's -fastdct/-fastupsample would be other
# work); libjpeg-turbo picks its SIMD at run time from the CPU unless a
# JSIMD_FORCE* variable says otherwise, and tells nobody which it took.
tjlib=$(ldd "$(command -v tjbench)" 2>/dev/null | awk '/libturbojpeg/{print $3}') || true
jsimd=$(env | { grep '^JSIMD_' || true; } | tr '\n' ' ')
reads=$( { grep -a -o -E 'JSIMD_[A-Z0-9]+' "$tjlib" 2>/dev/null || true; } | sort -u | tr '\n' ' ')
flags=$( { grep -m1 '^flags' /proc/cpuinfo || true; } | grep -o -w -E 'sse2|avx2' | sort -u | tr '\n' ' ')
echo "libjpeg-turbo: dlgauge $(ldd "$BENCH" | awk '/libturbojpeg/{print $3}'), tjbench $tjlib ($(dpkg-query -W -f='${Version}' libturbojpeg0 2>/dev/null || echo 'version ?'))"
echo "SIMD: not reported by libjpeg-turbo (it picks from CPUID); JSIMD_* set: ${jsimd:-none}; the library reads: ${reads:-none found}; CPU flags: ${flags:-none of sse2 avx2}"
echo "load average: $(loadavg)"
declare -a tj_full tj_half d_full d_half d_hi d_fi
for r in $(seq "$REPEATS"); do
    read -r mp ips < <(tj_round ""); tj_full+=("$mp")
    read -r mp ips < <(tj_round "-scale 1/2"); tj_half+=("$ips")
    out=$("$BENCH" decode "$list" "$reps")
    d_full+=("$(awk '/^full_mpix_per_s/{print $2}' <<<"$out")")
    d_fi+=("$(awk '/^full_images_per_s/{print $2}' <<<"$out")")
    d_hi+=("$(awk '/^half_images_per_s/{print $2}' <<<"$out")")
done
tjf=$(printf '%s\n' "${tj_full[@]}" | median)
tjh=$(printf '%s\n' "${tj_half[@]}" | median)
df=$(printf '%s\n' "${d_full[@]}" | median)
dfi=$(printf '%s\n' "${d_fi[@]}" | median)
dhi=$(printf '%s\n' "${d_hi[@]}" | median)
printf '%-34s %10s %10s %8s\n' "decode to RGB, 1 core" dlgauge tjbench ratio
printf '%-34s %10.2f %10.2f %7.2fx\n' "full size, Mpixels/s (median)" "$df" "$tjf" "$(awk -v a="$df" -v b="$tjf" 'BEGIN{print a/b}')"
printf '%-34s %10.1f %10s\n' "full size, images/s" "$dfi" "-"
printf '%-34s %10.1f %10.1f %7.2fx\n' "1/2 DCT-scaled, images/s" "$dhi" "$tjh" "$(awk -v a="$dhi" -v b="$tjh" 'BEGIN{print a/b}')"
printf 'gain from 1/2 scaled decoding (dlgauge): %.2fx images/s\n' "$(awk -v a="$dhi" -v b="$dfi" 'BEGIN{print a/b}')"
echo "load average at the end: $(loadavg)"
