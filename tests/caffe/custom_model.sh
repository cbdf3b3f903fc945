#!/usr/bin/env bash
# A team's own model as a plugin: install dlgauge's SDK (headers, dlgauge::nn,
# package config), build examples/custom-model against it with
# find_package(dlgauge), run it through the installed dlgauge, check the row.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/dlgauge/nn.h" || { echo "FAIL: nn.h not installed"; exit 1; }
cmake -S "$src/examples/custom-model" -B "$work/b" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/b" >/dev/null
so=$(find "$work/b" -name tinycnn.so | head -1)
[ -n "$so" ] || { echo "FAIL: tinycnn.so not built"; exit 1; }
# the CUDA libraries stay out of every plugin: the engine dlopens its CUDA
# modules (installed beside the plugins) only for a cuda backend
for p in "$so" "$work/prefix/lib/dlgauge/caffe.so"; do
  if readelf -d "$p" | grep -E 'NEEDED.*(cudart|cublas|cudnn)'; then
    echo "FAIL: $p links a CUDA library"; exit 1
  fi
done
if [ -f "$build/lib/dlgauge/backends/cuda.so" ]; then
  for m in cuda.so cuda-probe.so; do
    test -f "$work/prefix/lib/dlgauge/backends/$m" || { echo "FAIL: backends/$m not installed"; exit 1; }
  done
  # the installed program finds its own install's modules, not the build tree's
  loads=$(LD_DEBUG=files "$work/prefix/bin/dlgauge" sysinfo 2>&1 >/dev/null)
  grep -q "file=$work/prefix/bin/../lib/dlgauge/backends/cuda.so " <<<"$loads" ||
    { echo "FAIL: installed dlgauge did not load its own backends/cuda.so"; exit 1; }
fi
cd "$work"
"$work/prefix/bin/dlgauge" --plugin-dir "$(dirname "$so")" \
  run "$src/examples/custom-model/tinycnn.ini" --set job.cpus=1 >/dev/null
python3 - "$work/results/tinycnn.csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
assert r["status"] == "ok", r
loss = float(r["loss"])
assert math.isfinite(loss), r["loss"]
assert float(r["throughput"]) > 0, r["throughput"]
# conv1 448 + conv2 4640 + fc 2048*10+10 parameters
assert int(r["params"]) == 448 + 4640 + 20490, r["params"]
# 60 SGD steps on a learnable pattern: well below ln(10) = 2.30
assert loss < 1.0, f"loss {loss} did not fall"
print(f"ok: tinycnn out of tree, loss {loss:.3f}, {float(r['throughput']):.0f} images/s")
PY
