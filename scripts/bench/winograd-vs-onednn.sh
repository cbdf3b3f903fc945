#!/usr/bin/env bash
# dlgauge's Winograd convolutions (F(4x4,3x3), F(2x2,5x5); F(3,7), F(4,3)
# along one axis) against oneDNN's direct kernels
# (the peer: what dlgauge runs with `winograd = false`, and what PyTorch
# runs on this CPU), one layer at a time through the `conv` workload.  The
# Winograd side runs in nChw8c activations and 8i8o-blocked weights; the
# direct side in the layouts oneDNN picks for the shape, which on AVX2
# are the same.  On AVX-512 oneDNN keeps other layouts (nChw16c, NHWC for
# brgconv), so a plan never hands a layer to these kernels (they need
# nChw8c) and the ratio is against a kernel they do not replace there:
# each row prints the oneDNN implementation and layout that ran on the
# direct side (one untimed ONEDNN_VERBOSE step), marks such rows with *
# and says so under the table.  The shapes are ResNet-50's 3x3 stride-1 layers and
# Inception-v3's unpadded stem layers (2a, 4a) and factorised 1x7, 7x1,
# 1x3, 3x1 layers, AlexNet's conv2 (5x5, one group of it: 48 -> 128) and
# GoogLeNet's inception_3b and 5b 5x5 layers, each pass (fwd, bwd_data,
# bwd_filter), at batch 16 and
# at a batch small enough to show where the
# transformed filter no longer pays (the engine takes Winograd only with
# >= 32 output tiles: core/nn/cpu/cpu_winograd.c).
# Rounds alternate the two algorithms; figures are medians of the per-run
# median step time; ratio = Winograd's speed over direct's.
#
# usage: scripts/bench/winograd-vs-onednn.sh [BUILD_DIR] [THREADS]
#   env ROUNDS (3), STEPS (10), SHAPES ("N:C:HW[:K[:PAD or RxS]] ..." to
#   override the list; K defaults to C; PAD (3x3) to 1; RxS a 1 x r or
#   r x 1 filter padded to keep the size along it, or 5x5 padded 2 alike),
#   KEPT (1: forward only, 3x3 and 5x5 only, Winograd with its filter
#   transformed once at setup, as
#   inference plans do below 64 tiles)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
threads=${2:-$(nproc)}
rounds=${ROUNDS:-3} steps=${STEPS:-10} kept=${KEPT:-0}
passes="fwd bwd_data bwd_filter"
[ "$kept" = 1 ] && passes=fwd
dlg=$build/bin/dlgauge
[ -x "$dlg" ] || { echo "no $dlg: build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# batch:channels:size[:out channels[:pad]]; tiles = batch x ceil(out size/4)^2
shapes=(${SHAPES:-16:64:56 16:128:28 16:256:14 16:512:7 1:128:28 1:256:14 2:256:14 1:512:7 8:512:7
  16:32:149:32:0 16:80:73:192:0 16:192:17:192:1x7 16:192:17:192:7x1 16:128:17:128:1x7
  16:384:8:384:1x3 16:448:8:384:3x1 16:48:27:128:5x5 16:32:28:96:5x5 16:48:7:128:5x5})

. "$src/scripts/bench/conv_jobs.sh"
conv_isa

for sh in "${shapes[@]}"; do
  IFS=: read -r n ch hw k pad <<<"$sh"
  k=${k:-$ch} pad=${pad:-1} r=3 s=3 ph=-1 pw=-1 tag=${pad:-1}
  case $pad in
  5x5) r=5 s=5 pad=2 ;; # square, padded alike to keep the size
  *x*) # a 1-d filter, padded along it only
    r=${pad%x*} s=${pad#*x} ph=$(((r - 1) / 2)) pw=$(((s - 1) / 2)) pad=0 ;;
  esac
  for pass in $passes; do
    conv_impl "n${n}-c${ch}-k${k}-${hw}-p${tag}-${pass}-direct" n="$n" c="$ch" k="$k" h="$hw" w="$hw" r="$r" \
      s="$s" pad="$pad" pad_h="$ph" pad_w="$pw" pass="$pass" algo=direct
    for round in $(seq 1 "$rounds"); do
      for algo in direct winograd; do
        name="n${n}-c${ch}-k${k}-${hw}-p${tag}-${pass}-${algo}"
        extra=()
        [ "$kept" = 1 ] && [ "$algo" = winograd ] && extra=(kept_filter=true)
        conv_job "$name" "$round" n="$n" c="$ch" k="$k" h="$hw" w="$hw" r="$r" s="$s" pad="$pad" \
          pad_h="$ph" pad_w="$pw" pass="$pass" algo="$algo" "${extra[@]}"
      done
    done
  done
  echo "   $sh done"
done

python3 - "$src/scripts/bench" "$work" "$rounds" "$passes" "${shapes[@]}" <<'PY'
import math, statistics, sys
bench, work, rounds, passes, shapes = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                       sys.argv[4].split(), sys.argv[5:])
sys.path.insert(0, bench)
from conv_medians import engine_note, impl, med_ms
print(f"medians over {rounds} round(s); ratio = direct ms / winograd ms (> 1: Winograd faster); "
      "direct impl: oneDNN's kernel and layout on the direct side")
print("tiles: 4x4 output tiles (3x3), 2x2 (5x5), or output strips of 3 (r = 7) / 4 (r = 3) along the filter")
print(f"{'batch':>5} {'ch':>4} {'k':>4} {'size':>4} {'pad':>3} {'tiles':>5} {'pass':>10} "
      f"{'direct ms':>9} {'wino ms':>8} {'ratio':>6} {'per round':>16}  direct impl")
ratios, layouts = [], []
for sh in shapes:
    f = sh.split(":")
    n, ch, hw = (int(x) for x in f[:3])
    k = int(f[3]) if len(f) > 3 else ch
    tag = f[4] if len(f) > 4 else "1"
    if tag == "5x5":  # 2x2 tiles, the size kept
        tiles = n * math.ceil(hw / 2) ** 2
    elif "x" in tag:  # 1 x r or r x 1, the size kept along the filter
        m = 3 if "7" in tag else 4
        tiles = n * hw * math.ceil(hw / m)
    else:
        tiles = n * math.ceil((hw + 2 * int(tag) - 2) / 4) ** 2
    for p in passes:
        d = med_ms(work, f"n{n}-c{ch}-k{k}-{hw}-p{tag}-{p}-direct")
        w = med_ms(work, f"n{n}-c{ch}-k{k}-{hw}-p{tag}-{p}-winograd")
        per = [a / b for a, b in zip(d, w)]
        r = statistics.median(d) / statistics.median(w)
        ratios.append((tiles, r))
        kern, lay = impl(work, f"n{n}-c{ch}-k{k}-{hw}-p{tag}-{p}-direct")
        layouts.append(lay)
        mark = "*" if lay != "aBcd8b" else " "
        print(f"{n:>5} {ch:>4} {k:>4} {hw:>4} {tag:>3} {tiles:>5} {p:>10} {statistics.median(d):>9.2f} "
              f"{statistics.median(w):>8.2f} {r:>6.2f} {min(per):>7.2f}-{max(per):<7.2f}{mark} {kern} {lay}")
for lo, hi in ((0, 31), (32, 63), (64, 1 << 30)):
    rs = [r for t, r in ratios if lo <= t <= hi]
    if rs:
        print(f"tiles {lo}-{hi if hi < 1 << 30 else 'up'}: median ratio {statistics.median(rs):.2f} "
              f"over {len(rs)} case(s)")
for line in engine_note("the engine's Winograd", layouts,
                        " (on AVX-512 also oneDNN's own Winograd where it times faster: cpu_conv_algo.c, "
                        "counted in the caffe rows' winograd_layers)"):
    print(line)
PY
