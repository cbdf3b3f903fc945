#!/usr/bin/env bash
# The README's second command (and what CI runs): set up, build with
# warnings as errors, run every test; then the same under ASan+UBSan.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
# (ctest gives the tests a tuning record of the build's own, new each run:
# tests/CMakeLists.txt)

echo "== build (warnings are errors) and test"
bash scripts/build.sh build -DDLG_WERROR=ON
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 900

if [ "${DLG_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== ASan + UBSan build and test"
  # -O1, as ASan's documentation advises, and the CUDA kernels for one
  # architecture (the build above compiles all four with -Werror; no GPU
  # runs either build's): this build 217 -> 142 s in CI here (cpu_maxpool.c's
  # unrolled variants 20 -> 7 s, nvcc 10 -> 5 s a file), its tests within
  # the machine's noise (333 -> 352 s, one CI run each)
  o1="-O1 -g -DNDEBUG"
  bash scripts/build.sh build-asan -DDLG_WERROR=ON -DDLG_SANITIZE=ON -DDLG_CUDA_ARCHITECTURES=90 \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$o1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$o1"
  # intercept_tls_get_addr=0: LeakSanitizer misreads glibc's dynamic TLS
  # and crashes at exit ("Tracer caught signal 11", google/sanitizers#1322);
  # dlg_add_test sets it per test, this covers the shell-driven ones
  ASAN_OPTIONS=intercept_tls_get_addr=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 -LE "no-sanitize|fuzz"
fi
