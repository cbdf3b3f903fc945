#!/usr/bin/env bash
# cppcheck over the production sources (core/, plugins/, sinks/) with the
# build's own flags (compile_commands.json): its warning and error classes,
# what gcc's -Wall -Wextra does not see (a value read before it is set on
# some path, a NULL dereferenced after a check, a leak on an error path).
# The findings read and found wrong are in cppcheck.supp; an entry there
# that matches nothing any more fails too, so the list stays short.
# First it runs on planted.c, whose three known faults it must report:
# a cppcheck that finds nothing (a broken install, a filter that matches
# no file) would otherwise pass.
# usage: cppcheck.sh COMPILE_COMMANDS.json SOURCE_DIR
set -euo pipefail
db=$1 src=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fmt='{file}:{line}: {severity}: {id}: {message}'

cppcheck --quiet --enable=warning --template="$fmt" "$here/planted.c" 2> "$work/planted.txt" || true
for id in uninitvar nullPointer memleak; do
  if ! grep -q ": $id: " "$work/planted.txt"; then
    echo "cppcheck did not report the planted $id in tests/lint/planted.c:"
    cat "$work/planted.txt"
    exit 1
  fi
done

# the production files of the build, each once (a file in two targets is
# one file to read)
python3 - "$db" "$src" "$work/db.json" <<'EOF'
import json, os, shlex, sys
db, src, out = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
build = os.path.realpath(os.path.dirname(db))

def own_includes(command):
    # Only the project's own include folders: an SDK's headers (CUDA's
    # refuse with #error a compiler they do not know, and where the SDK
    # lives differs between machines) would stop cppcheck reading the file
    # at all; without them it reads the file with their names unknown.
    out, args = [], shlex.split(command)
    i = 0
    while i < len(args):
        a = args[i]
        d = a[2:] if a.startswith('-I') and len(a) > 2 else None
        if a in ('-I', '-isystem') and i + 1 < len(args):
            d = args[i + 1]
            i += 1
        elif a.startswith('-isystem') and len(a) > 8:
            d = a[8:]
        if d is None:
            out.append(a)
        elif any(os.path.realpath(d) == t or os.path.realpath(d).startswith(t + os.sep) for t in (src, build)):
            out.append('-I' + d)
        i += 1
    return shlex.join(out)

seen, keep = set(), []
for e in json.load(open(db)):
    f = os.path.realpath(os.path.join(e['directory'], e['file']))
    rel = os.path.relpath(f, src)
    if rel.split(os.sep)[0] in ('core', 'plugins', 'sinks') and f.endswith('.c') and f not in seen:
        seen.add(f)
        e['command'] = own_includes(e['command'])
        keep.append(e)
if len(keep) < 100:
    sys.exit(f"only {len(keep)} production files in {db}: is it this build's?")
json.dump(keep, open(out, 'w'))
print(f"cppcheck: {len(keep)} files")
EOF

jobs=$(nproc 2>/dev/null || echo 2)
# information: unmatchedSuppression (an entry whose finding is gone)
cppcheck --quiet --project="$work/db.json" -j "$jobs" --enable=warning,information \
  --suppressions-list="$here/cppcheck.supp" --template="$fmt" 2> "$work/found.txt" || true
if [ -s "$work/found.txt" ]; then
  echo "cppcheck found (fix the code; or, read and found wrong, add the id and file to tests/lint/cppcheck.supp):"
  sed "s#^$src/##" "$work/found.txt"
  exit 1
fi
echo "cppcheck: no findings"
