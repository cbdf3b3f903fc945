#!/usr/bin/env bash
# The path a team takes to add its own workload: install dlgauge's SDK,
# build a plugin with find_package(dlgauge), run it, check the result.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/hello-workload" -B "$work/b" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/b" >/dev/null
so=$(find "$work/b" -name hello.so | head -1)
[ -n "$so" ] || { echo "FAIL: hello.so not built"; exit 1; }

head -c 100000 /dev/urandom > "$work/data.bin"
expected=$(python3 -c 'import sys,zlib; print(zlib.adler32(open(sys.argv[1],"rb").read()))' "$work/data.bin")
cd "$work"
HELLO_FILE="$work/data.bin" "$work/prefix/bin/dlgauge" --plugin-dir "$(dirname "$so")" \
  run "$src/examples/hello-workload/hello.ini" --set job.iterations=50 >/dev/null
python3 - "$work/results/hello.csv" "$expected" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, f"expected 2 rows (posix, mmap), got {len(rows)}"
for r in rows:
    assert r["status"] == "ok", r
    assert r["adler32"] == sys.argv[2], (r["storage"], r["adler32"], sys.argv[2])
    assert int(r["storage_read_bytes"]) > 0, r
print("ok: adler32", sys.argv[2], "through", ", ".join(r["storage"] for r in rows))
PY
