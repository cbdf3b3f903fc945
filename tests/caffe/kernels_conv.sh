#!/usr/bin/env bash
# The conv kernel workload: every pass runs by oneDNN's direct kernels and
# by the engine's Winograd kernels (algo = winograd: 3x3 padded 1 and 0, 5x5
# padded 2, and a 1x7 padded along the width), and the filter gradient of a stride-2 layer
# by im2col + sgemm (algo = gemm), and reports a rate; a shape Winograd
# cannot take, or a pass the gemm kernel does not run, is one clear error
# line naming the job and the option, with a non-zero exit (also
# kept_filter on a backward pass).  (The arithmetic itself is checked
# against direct convolution in test_nn_winograd, test_nn_wino1d,
# test_nn_gemm_conv.)
# usage: kernels_conv.sh BUILD_DIR
set -euo pipefail
# as tests/e2e/lib.sh: LeakSanitizer misreads the dlopen()ed plugins' TLS
# and crashes at exit (google/sanitizers#1322); sanitizer builds only
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}intercept_tls_get_addr=0"
dlg=$1/bin/dlgauge
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job() { # name pass algo r [pad]
  printf '[job %s]\nworkload = conv\nn = 2\nc = 16\nk = 24\nh = 10\nw = 9\nr = %s\ns = %s\npad = %s\npass = %s\nalgo = %s\nwarmup = 1\niterations = 2\n' \
    "$1" "$4" "$4" "${5:-1}" "$2" "$3"
}
{
  printf '[sink csv]\npath = %s/out.csv\n' "$work"
  for pass in fwd bwd_data bwd_filter; do
    for algo in direct winograd; do
      job "$pass-$algo" "$pass" "$algo" 3
      job "$pass-$algo-pad0" "$pass" "$algo" 3 0 # output 8x7
      job "$pass-$algo-5x5" "$pass" "$algo" 5 2 # F(2x2,5x5), 10x9 out
      # a 1x7 filter padded along the width only (Inception's), 10x9 out
      printf '[job %s]\nworkload = conv\nn = 2\nc = 16\nk = 24\nh = 10\nw = 9\nr = 1\ns = 7\npad_h = 0\npad_w = 3\npass = %s\nalgo = %s\nwarmup = 1\niterations = 2\n' \
        "$pass-$algo-1x7" "$pass" "$algo"
    done
  done
  # stride 2, pad 1: 5x5 out
  printf '[job %s]\nworkload = conv\nn = 2\nc = 16\nk = 24\nh = 10\nw = 9\nstride = 2\npass = bwd_filter\nalgo = %s\nwarmup = 1\niterations = 2\n' \
    bwd_filter-direct-s2 direct bwd_filter-gemm-s2 gemm
} >"$work/ok.ini"
(cd "$work" && "$dlg" run --set job.isolation=none "$work/ok.ini" >"$work/log" 2>&1) ||
  { echo "FAIL: the runs failed"; cat "$work/log"; exit 1; }
python3 - "$work/out.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 26, f"{len(rows)} results"
for r in rows:
    assert r["status"] == "ok", r
    out = 8 * 7 if r["job"].endswith("pad0") else 5 * 5 if r["job"].endswith("s2") else 10 * 9
    taps = 7 if r["job"].endswith("1x7") else 25 if r["job"].endswith("5x5") else 9
    assert float(r["gflops"]) > 0 and float(r["flops_per_item"]) == 2 * 2 * 24 * out * 16 * taps, r
print("ok: 3 passes x 2 algos x 3x3 pad 1, 3x3 pad 0, 5x5 pad 2, 1x7; stride-2 filter gradient x 2 algos; rates",
      ", ".join(f'{r["job"]} {float(r["gflops"]):.1f}' for r in rows))
PY
# options the workload refuses together stop the run before any cell, at
# the key's line (the workload's check, run by `dlgauge run` itself)
{ printf '[sink csv]\npath = %s/bad.csv\n' "$work"; job seven fwd winograd 7; } >"$work/bad.ini"
if (cd "$work" && "$dlg" run --set job.isolation=none "$work/bad.ini" >"$work/log" 2>&1); then
  echo "FAIL: a 7x7 filter ran by Winograd"; cat "$work/log"; exit 1
fi
want="bad.ini:14: [job seven] conv: algo = winograd: takes stride 1 and 3x3 or 5x5 filters padded alike (less than the filter) or 1 x r, r x 1 padded along the filter only (got r = 7, s = 7, stride 1, pad 1, 1)"
grep -qF "$want" "$work/log" || { echo "FAIL: no line '$want' in:"; cat "$work/log"; exit 1; }
echo "ok: $want"
{ printf '[sink csv]\npath = %s/bad.csv\n' "$work"; job fwd-gemm fwd gemm 3; } >"$work/bad.ini"
if (cd "$work" && "$dlg" run --set job.isolation=none "$work/bad.ini" >"$work/log" 2>&1); then
  echo "FAIL: a forward pass ran by algo = gemm"; cat "$work/log"; exit 1
fi
want="bad.ini:14: [job fwd-gemm] conv: algo = gemm runs pass = bwd_filter only (forward and backward data stay with oneDNN)"
grep -qF "$want" "$work/log" || { echo "FAIL: no line '$want' in:"; cat "$work/log"; exit 1; }
echo "ok: $want"
{ printf '[sink csv]\npath = %s/bad.csv\n' "$work"; job kept-bwd bwd_data winograd 3; printf 'kept_filter = true\n'; } >"$work/bad.ini"
if (cd "$work" && "$dlg" run --set job.isolation=none "$work/bad.ini" >"$work/log" 2>&1); then
  echo "FAIL: kept_filter ran a backward pass"; cat "$work/log"; exit 1
fi
want="bad.ini:17: [job kept-bwd] conv: kept_filter = true takes a 3x3 or 5x5 filter and pass = fwd"
grep -qF "$want" "$work/log" || { echo "FAIL: no line '$want' in:"; cat "$work/log"; exit 1; }
echo "ok: $want"
