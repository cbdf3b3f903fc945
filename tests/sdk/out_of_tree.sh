#!/usr/bin/env bash
# The path a team takes to add its own workload: install dlgauge's SDK,
# build a plugin with find_package(dlgauge), run it, check the result.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# A one-source plugin project: DIR LANGUAGE TARGET SOURCE, built in DIR/b.
plugin_project() {
  mkdir -p "$1"
  cp "$4" "$1/"
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(%s %s)\nfind_package(dlgauge REQUIRED)\ndlg_add_plugin(%s SOURCES %s)\n' \
    "$3" "$2" "$3" "$(basename "$4")" > "$1/CMakeLists.txt"
  cmake -S "$1" -B "$1/b" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  cmake --build "$1/b" >/dev/null
}
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
# A file longer than the timed steps read (20 steps of 4 KiB, warm-up
# included, of 300 KB): still the whole file's sum (it used to be 0, as
# no pass had ended)
head -c 300000 /dev/urandom > "$work/long.bin"
long=$(python3 -c 'import sys,zlib; print(zlib.adler32(open(sys.argv[1],"rb").read()))' "$work/long.bin")
"$work/prefix/bin/dlgauge" --plugin-dir "$(dirname "$so")" \
  run "$src/examples/hello-workload/hello.ini" --set job.path="$work/long.bin" --set csv.path=results/long.csv >/dev/null
python3 - "$work/results/long.csv" "$long" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 and all(r["status"] == "ok" for r in rows), rows
for r in rows:
    assert int(r["items"]) < 300000, r
    assert r["adler32"] == sys.argv[2], (r["storage"], r["adler32"], sys.argv[2])
print("ok: adler32 of a file longer than the timed steps read", sys.argv[2])
PY

# The author's own unit test of that plugin, through the mock host the
# install ships (share/doc/dlgauge/testing): no dlgauge runtime involved.
testing="$work/prefix/share/doc/dlgauge/testing"
cc -std=c11 -Wall -Wextra -Werror -I"$work/prefix/include" -I"$testing" -o "$work/mock_unit" \
  "$src/tests/sdk/mock_unit.c" "$testing/mock_host.c" -ldl
DLGAUGE_PLUGIN_PATH="$(dirname "$so")" "$work/mock_unit" "$work/data.bin" "$expected" ||
  { echo "FAIL: the unit test through the installed mock host"; exit 1; }

# The other two kinds, as a team writes them: examples/storage-backend and
# examples/result-sink built with find_package(dlgauge), then one run where
# all three are out of tree: the workload reads through the backend and the
# sink writes the rows.
for ex in storage-backend result-sink; do # as installed beside docs/plugins.md
  cmake -S "$work/prefix/share/doc/dlgauge/examples/$ex" -B "$work/$ex" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
  cmake --build "$work/$ex" >/dev/null
done
mkdir -p "$work/kinds" "$work/root/sub"
cp "$so" "$work/storage-backend/rootfs.so" "$work/result-sink/tsv.so" "$work/kinds/"
cp "$work/data.bin" "$work/root/sub/data.bin"
cat > "$work/kinds.ini" <<EOF
[storage below]
type = rootfs
root = $work/root

[sink tsv]
path = results/kinds.tsv

[job sum]
workload   = checksum
path       = sub/data.bin
storage    = below
block      = 4KiB, 64KiB
iterations = 50
EOF
"$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$work/kinds.ini" >/dev/null 2>"$work/kinds.err" ||
  { echo "FAIL: the three out-of-tree kinds: $(cat "$work/kinds.err")"; exit 1; }
python3 - "$work" "$expected" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/results/kinds.tsv"), delimiter="\t"))
assert len(rows) == 2, f"expected 2 rows (block 4KiB, 64KiB), got {len(rows)}"
assert sorted(r["block"] for r in rows) == ["4KiB", "64KiB"], rows
for r in rows:
    assert r["status"] == "ok" and r["workload"] == "checksum", r
    assert r["adler32"] == sys.argv[2], (r["block"], r["adler32"], sys.argv[2])
    assert int(r["storage_read_bytes"]) >= 100000, r
    assert r["storage_config"] == f"type=rootfs root={sys.argv[1]}/root", r
print("ok: adler32", sys.argv[2], "through rootfs into tsv, blocks", ", ".join(r["block"] for r in rows))
PY
# Each example's own INI, as docs/plugins.md runs them.
ROOTFS_ROOT="$work/root" ROOTFS_FILE=sub/data.bin "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" \
  run "$src/examples/storage-backend/rootfs.ini" --set job.iterations=3 >/dev/null 2>&1 &&
  "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$src/examples/result-sink/tsv.ini" \
    --set job.iterations=100 >/dev/null 2>&1 ||
  { echo "FAIL: rootfs.ini or tsv.ini does not run"; exit 1; }
python3 - "$work/results" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/rootfs.csv")))
assert [r["status"] for r in rows] == ["ok"] and int(rows[0]["io_bytes"]) > 0, rows
rows = list(csv.DictReader(open(sys.argv[1] + "/noop.tsv"), delimiter="\t"))
assert [(r["cpus"], r["status"]) for r in rows] == [("1", "ok"), ("2", "ok")], rows
PY
# The tsv sink appends (open runs again for --resume, whose earlier rows
# are in the file): a second run adds its rows under the one header, and
# a run of other columns is refused rather than written under them.
"$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$src/examples/result-sink/tsv.ini" \
  --set job.iterations=100 >/dev/null 2>&1 || { echo "FAIL: tsv.ini does not run twice"; exit 1; }
python3 - "$work/results" <<'PY'
import sys
lines = open(sys.argv[1] + "/noop.tsv").read().splitlines()
assert len(lines) == 5 and lines[0].startswith("cpus\t") and not any(l.startswith("cpus\t") for l in lines[1:]), lines
PY
if "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$src/examples/result-sink/tsv.ini" \
     --set job.cpus=1 >/dev/null 2>"$work/tsv.err"; then
  echo "FAIL: tsv appends rows of other columns"; exit 1
fi
grep -qF "path = results/noop.tsv: its header is not this run's columns" "$work/tsv.err" ||
  { echo "FAIL: tsv header mismatch: $(cat "$work/tsv.err")"; exit 1; }
# A backend's error names its section; the sink's check() runs in --dry-run.
if "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$work/kinds.ini" --set below.root=/nonexistent \
     >/dev/null 2>"$work/kinds.err"; then
  echo "FAIL: a missing root runs"; exit 1
fi
grep -qF "[storage below] rootfs: root = /nonexistent: No such file or directory" "$work/kinds.err" ||
  { echo "FAIL: missing root: $(cat "$work/kinds.err")"; exit 1; }
# A path whose ".." climbs above root is refused, not read from beside it
# (sub/../.. is $work itself, where data.bin lies).
if "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$work/kinds.ini" --set sum.path=sub/../../data.bin \
     --set sum.block=4KiB --set tsv.path=results/climb.tsv >/dev/null 2>"$work/kinds.err"; then
  echo "FAIL: rootfs reads sub/../../data.bin outside root"; exit 1
fi
grep -qF "sub/../../data.bin: climbs out of root = $work/root" "$work/kinds.err" ||
  { echo "FAIL: path out of root: $(cat "$work/kinds.err")"; exit 1; }
if "$work/prefix/bin/dlgauge" --plugin-dir "$work/kinds" run "$work/kinds.ini" --dry-run \
     --set tsv.path=results/ >/dev/null 2>"$work/kinds.err"; then
  echo "FAIL: --dry-run accepts a sink path naming a folder"; exit 1
fi
grep -qF "path = results/: names a folder, not a file" "$work/kinds.err" ||
  { echo "FAIL: sink check: $(cat "$work/kinds.err")"; exit 1; }

# A project that forgets include(GNUInstallDirs) still installs its plugin
# below its prefix (it went to /dlgauge).
plugin_project "$work/nogid" C hello "$src/examples/hello-workload/checksum.c"
cmake --install "$work/nogid/b" --prefix "$work/nogid/p" >"$work/nogid/log" 2>&1 || true
installed=$(find "$work/nogid/p" -name hello.so 2>/dev/null || true)
[ -n "$installed" ] && [ "$(basename "$(dirname "$installed")")" = dlgauge ] ||
  { echo "FAIL: plugin not installed below the prefix: $(cat "$work/nogid/log")"; exit 1; }

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

# A plugin written in C++: DLG_PLUGIN exports the entry under its C name;
# one whose entry has the C++ name (an older plugin.h) is told so at load.
if command -v c++ >/dev/null; then
  mkdir -p "$work/cxx" "$work/cxxold"
  c++ -std=c++17 -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror $(pkg-config --cflags dlgauge) \
    "$src/tests/sdk/cxx_workload.cc" -Wl,--no-undefined -o "$work/cxx/cxxsum.so"
  c++ -std=c++17 -shared -fPIC -fvisibility=hidden -DOLD_ENTRY $(pkg-config --cflags dlgauge) \
    "$src/tests/sdk/cxx_workload.cc" -o "$work/cxxold/cxxsum.so"
  printf '[sink csv]\npath = results/cxx.csv\n[job s]\nworkload = cxxsum\nwarmup = 0\niterations = 4\n' \
    > "$work/cxx.ini"
  "$work/prefix/bin/dlgauge" --plugin-dir "$work/cxx" run "$work/cxx.ini" >/dev/null 2>"$work/cxx.err" ||
    { echo "FAIL: a C++ plugin: $(cat "$work/cxx.err")"; exit 1; }
  python3 - "$work/results/cxx.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["status"], r["sum_total"]) for r in rows] == [("ok", "12000")], rows
PY
  if "$work/prefix/bin/dlgauge" --plugin-dir "$work/cxxold" list >/dev/null 2>"$work/cxx.err"; then
    echo "FAIL: list exits 0 with a C++-named entry"; exit 1
  fi
  grep -qF "$work/cxxold/cxxsum.so: not a dlgauge plugin: its entry has a C++ name (_Z20dlgauge_plugin_entryv)" \
    "$work/cxx.err" || { echo "FAIL: C++-named entry: $(cat "$work/cxx.err")"; exit 1; }
  # dlg_add_plugin in a C++ project: only the entry is exported, as in C
  plugin_project "$work/cxxcm" CXX cxxsum "$src/tests/sdk/cxx_workload.cc"
  syms=$(nm -D --defined-only "$work/cxxcm/b/cxxsum.so" | awk '{print $3}')
  [ "$syms" = dlgauge_plugin_entry ] || { echo "FAIL: C++ plugin exports: $(echo $syms | head -c 300)"; exit 1; }
  echo "ok: a C++ plugin loads and runs; a C++-named entry is named; CMake exports only the entry"
fi

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
# `host`, or an option `throughput`, would give results two columns of one
# name).
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
reserved 's/"block"/"throughput"/' "workload 'checksum': option 'throughput' is named like a core result field or tag (dlgauge help metrics)"
echo "ok: pkg-config builds, shadowed copies in help, undefined symbols, reserved names"
