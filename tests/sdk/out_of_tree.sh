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

# The same plugin built without CMake, through pkg-config (docs/plugins.md,
# "Without CMake"), and the engine's link line through dlgauge-nn.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
mkdir -p "$work/pc" "$work/shadow" "$work/broken"
cc -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror $(pkg-config --cflags dlgauge) \
  "$src/examples/hello-workload/checksum.c" -Wl,--no-undefined -o "$work/pc/hello.so"
cc -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror $(pkg-config --cflags dlgauge-nn) \
  "$src/examples/custom-model/tinycnn.c" $(pkg-config --libs dlgauge-nn) -Wl,--no-undefined \
  -o "$work/pc/tinycnn.so"
[ "$(pkg-config --variable=pluginsdir dlgauge)" -ef "$work/prefix/lib/dlgauge" ] ||
  { echo "FAIL: pluginsdir is not the prefix's lib/dlgauge"; exit 1; }
"$work/prefix/bin/dlgauge" --plugin-dir "$work/pc" help tinycnn | grep -q 'workload tinycnn' ||
  { echo "FAIL: tinycnn built with pkg-config does not load"; exit 1; }

# Two copies of one workload: help, like list, says which one is used.
cp "$so" "$work/shadow/hello.so"
help=$(DLGAUGE_PLUGIN_PATH="$work/shadow" "$work/prefix/bin/dlgauge" --plugin-dir "$work/pc" help checksum)
grep -qx "  file: $work/pc/hello.so" <<<"$help" ||
  { echo "FAIL: help does not show the used copy plainly: $help"; exit 1; }
grep -qx "  file: $work/shadow/hello.so (shadowed by $work/pc/hello.so, not used)" <<<"$help" ||
  { echo "FAIL: help does not mark the shadowed copy: $help"; exit 1; }

# A plugin calling what nothing links: the load error names the symbol
# and the command that lists such symbols, not plain ldd.
printf '#include <dlgauge/plugin.h>\nint team_helper(void);\nint f(void);\nint f(void) { return team_helper(); }\n' \
  > "$work/broken/undef.c"
cc -shared -fPIC $(pkg-config --cflags dlgauge) "$work/broken/undef.c" -o "$work/broken/undef.so"
if "$work/prefix/bin/dlgauge" --plugin-dir "$work/broken" list >/dev/null 2>"$work/list.err"; then
  echo "FAIL: list exits 0 with a plugin that does not load"; exit 1
fi
grep -qF "$work/broken/undef.so: undefined symbol: team_helper (" "$work/list.err" &&
  grep -qF "ldd -r $work/broken/undef.so)" "$work/list.err" ||
  { echo "FAIL: undefined symbol message: $(cat "$work/list.err")"; exit 1; }
# Names the core owns, taken by the example: refused at load, naming them
# (a workload option `timeout` would also set the cell's timeout; a metric
# `host` would give results two columns called host).
mkdir -p "$work/reserved"
reserved() { # SED-EXPRESSION EXPECTED-MESSAGE
  sed "$1" "$src/examples/hello-workload/checksum.c" > "$work/reserved/checksum.c"
  cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags dlgauge) "$work/reserved/checksum.c" \
    -o "$work/reserved/hello.so"
  if "$work/prefix/bin/dlgauge" --plugin-dir "$work/reserved" list >/dev/null 2>"$work/list.err"; then
    echo "FAIL: a plugin using '$1' loads"; exit 1
  fi
  grep -qF "$work/reserved/hello.so: $2" "$work/list.err" ||
    { echo "FAIL: expected '$2', got: $(cat "$work/list.err")"; exit 1; }
}
reserved 's/"block"/"timeout"/' "workload 'checksum': option 'timeout' is a core key of every [job] (dlgauge help job)"
reserved 's/"adler32"/"host"/g' "workload 'checksum': metric 'host' is a core result field or tag (dlgauge help metrics)"
echo "ok: pkg-config builds, shadowed copies in help, undefined symbols, reserved names"
