#!/usr/bin/env bash
# Every SDK header compiles on its own, first in a file, in the C modes a
# plugin build may use (strict -std=c99/c11 with _DEFAULT_SOURCE, GNU
# modes without it) and as C++; iobuf.h and sigstack.h in strict mode
# without a feature macro stop at one line naming the macro, not at
# implicit declarations.
set -euo pipefail
inc=$1 cc=${CC:-cc} cxx=${CXX:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
try() { # HEADER FLAGS...
  local h=$1; shift
  printf '#include <dlgauge/%s>\n' "$h" > "$work/t.c"
  if ! "$cc" "$@" -Wall -Wextra -Werror -pedantic -Wstrict-prototypes -fsyntax-only -I"$inc" "$work/t.c" \
       2>"$work/err"; then
    echo "FAIL: dlgauge/$h with $*: $(head -3 "$work/err")"; fail=1
  fi
}
for h in plugin.h nn.h iobuf.h sigstack.h fnv1a.h splitmix.h; do
  try "$h" -std=c99 -D_DEFAULT_SOURCE
  try "$h" -std=c11 -D_DEFAULT_SOURCE
  try "$h" -std=gnu99
  try "$h" -std=gnu11
  command -v "$cxx" >/dev/null || continue # no C++ compiler here: C only
  printf '#include <dlgauge/%s>\n' "$h" > "$work/t.cc"
  "$cxx" -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$inc" "$work/t.cc" 2>"$work/err" ||
    { echo "FAIL: dlgauge/$h as C++: $(head -3 "$work/err")"; fail=1; }
done
for h in plugin.h nn.h fnv1a.h splitmix.h; do try "$h" -std=c11; done
for h in iobuf.h sigstack.h; do # POSIX/Linux extensions: strict C needs the macro
  printf '#include <dlgauge/%s>\n' "$h" > "$work/t.c"
  if "$cc" -std=c11 -fsyntax-only -I"$inc" "$work/t.c" 2>"$work/err"; then
    echo "FAIL: $h compiles under -std=c11 without a feature macro?"; fail=1
  elif [ "$(grep -c 'error:' "$work/err")" -ne 1 ] || ! grep -q '#define _GNU_SOURCE' "$work/err"; then
    echo "FAIL: $h under -std=c11 should stop at one error naming _GNU_SOURCE, got: $(cat "$work/err")"; fail=1
  fi
done
[ $fail = 0 ] && echo "ok: plugin.h, nn.h, iobuf.h, sigstack.h, fnv1a.h, splitmix.h self-contained (C99, C11, GNU, C++)"
exit $fail
