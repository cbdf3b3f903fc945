#!/usr/bin/env bash
# dlgauge's im2col + sgemm backward filter for strided convolutions
# (core/nn/cpu/cpu_gemm_conv.c) against oneDNN's direct kernel (the peer:
# what dlgauge runs with `winograd = false`, and what PyTorch runs on this
# CPU), one layer at a time through the `conv` workload.  The sgemm side
# runs in nChw8c activations and 8i8o-blocked weights, the direct side in
# the layouts oneDNN picks, the same on AVX2; on AVX-512 oneDNN keeps
# others, a plan never hands a layer to the sgemm path (it needs nChw8c),
# and each row's printed oneDNN implementation and layout (one untimed
# ONEDNN_VERBOSE step), its * and the note under the table say so.
# The shapes are ResNet-50's stride-2 3x3 layers (v1.5 strides there) at
# batch 16 and at small batches, where the engine stops taking them (fewer
# than 256 output pixels), and Inception-v3's stride-2 3x3 layers (pad 0).
# Pass bwd_filter only (the engine runs forward and backward data by oneDNN).
# Rounds alternate the two; figures are medians of the per-run median step
# time; ratio = sgemm's speed over direct's.
#
# usage: scripts/bench/strided-vs-onednn.sh [BUILD_DIR] [THREADS]
#   env ROUNDS (3), STEPS (10), SHAPES ("N:C:HW:K:PAD[:R] ..." stride 2,
#   R x R filters, R defaulting to 3)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
threads=${2:-$(nproc)}
rounds=${ROUNDS:-3} steps=${STEPS:-10}
dlg=$build/bin/dlgauge
[ -x "$dlg" ] || { echo "no $dlg: build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shapes=(${SHAPES:-16:128:56:128:1 16:256:28:256:1 16:512:14:512:1 1:128:56:128:1 1:512:14:512:1
  4:512:14:512:1 16:288:35:384:0 16:192:17:320:0})

. "$src/scripts/bench/conv_jobs.sh"
conv_isa

for sh in "${shapes[@]}"; do
  IFS=: read -r n ch hw k pad r <<<"$sh"
  r=${r:-3}
  for pass in bwd_filter; do
    conv_impl "n${n}-c${ch}-k${k}-${hw}-p${pad}-r${r}-${pass}-direct" n="$n" c="$ch" k="$k" h="$hw" w="$hw" \
      r="$r" s="$r" stride=2 pad="$pad" pass="$pass" algo=direct
    for round in $(seq 1 "$rounds"); do
      for algo in direct gemm; do
        name="n${n}-c${ch}-k${k}-${hw}-p${pad}-r${r}-${pass}-${algo}"
        conv_job "$name" "$round" n="$n" c="$ch" k="$k" h="$hw" w="$hw" r="$r" s="$r" stride=2 \
          pad="$pad" pass="$pass" algo="$algo"
      done
    done
  done
  echo "   $sh done"
done

python3 - "$src/scripts/bench" "$work" "$rounds" "${shapes[@]}" <<'PY'
import statistics, sys
bench, work, rounds, shapes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
sys.path.insert(0, bench)
from conv_medians import engine_note, impl, med_ms
print(f"medians over {rounds} round(s); ratio = direct ms / sgemm ms (> 1: sgemm faster); "
      "direct impl: oneDNN's kernel and layout on the direct side")
layouts = []
print(f"{'batch':>5} {'ch':>4} {'k':>4} {'size':>4} {'pad':>3} {'r':>2} {'pixels':>6} {'pass':>10} "
      f"{'direct ms':>9} {'sgemm ms':>8} {'ratio':>6} {'per round':>16}  direct impl")
for sh in shapes:
    f = [int(x) for x in sh.split(":")]
    n, ch, hw, k, pad = f[:5]
    fr = f[5] if len(f) > 5 else 3
    pixels = n * ((hw + 2 * pad - fr) // 2 + 1) ** 2
    for p in ("bwd_filter",):
        d = med_ms(work, f"n{n}-c{ch}-k{k}-{hw}-p{pad}-r{fr}-{p}-direct")
        g = med_ms(work, f"n{n}-c{ch}-k{k}-{hw}-p{pad}-r{fr}-{p}-gemm")
        per = [a / b for a, b in zip(d, g)]
        r = statistics.median(d) / statistics.median(g)
        kern, lay = impl(work, f"n{n}-c{ch}-k{k}-{hw}-p{pad}-r{fr}-{p}-direct")
        layouts.append(lay)
        mark = "*" if lay != "aBcd8b" else " "
        print(f"{n:>5} {ch:>4} {k:>4} {hw:>4} {pad:>3} {fr:>2} {pixels:>6} {p:>10} {statistics.median(d):>9.2f} "
              f"{statistics.median(g):>8.2f} {r:>6.2f} {min(per):>7.2f}-{max(per):<7.2f}{mark} {kern} {lay}")
for line in engine_note("the im2col + sgemm path", layouts):
    print(line)
PY
