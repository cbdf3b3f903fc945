#!/bin/bash
# Each command's options that take a value are declared once, in the list
# its own parser goes by, and main.c reads that list to tell such a value
# ("-h", "-q") from an option.  Two checks:
# - every option a command's usage shows with a value (--html OUT.html) is
#   one of them: given "-h" or "-q" as its value, neither the help nor the
#   hint "is an option of dlgauge itself" comes (a list that drifted from
#   the usage fails here);
# - an option whose next argument is another valued option gets no value,
#   in the command's parser as in main.c: "--job --set -h" said
#   "unknown option '-h'", "mkdata text --out --classes -h" printed the help.
source "$(dirname "$0")/lib.sh"

# The options a usage shows with a value, "KIND OPTION" a line (KIND: the
# mkdata kind, else "-"): from the "usage:" line and its continuations
# (indented by more than the description's two spaces); "--base FILE..."
# names files, no value.
valued_in_usage() {
    "$PY" -c '
import re, sys
kind, block = "-", []
for line in sys.stdin.read().split("\n"):
    if line.startswith("usage:") or (block and re.match(r"   ", line)):
        block.append(line)
    elif block:
        break
for line in block:
    for tok in re.finditer(r"mkdata (images|text)|(--[a-z][a-z-]*) ([^\s\[\]|-][^\s\]]*)", line):
        if tok.group(1):
            kind = tok.group(1)
        elif not tok.group(3).rstrip(";,)").endswith("..."):
            print(kind, tok.group(2))
'
}

# said NAME PATTERN: exit status 2 and one line on stderr, matching PATTERN
said() {
    expect_rc "$1" 2
    [ "$(wc -l <"$1.err")" = 1 ] && grep -Eq -- "$2" "$1.err" || fail "$1: stderr: $(cat "$1.err")"
}

# check CMD BASE...: each option CMD's usage shows with a value, after BASE
# (files that do not exist: nothing is run or written)
check() {
    local cmd=$1 n=0 kind opt
    shift
    while read -r kind opt; do
        local args=("$@")
        [ "$kind" = - ] || args=("$kind")
        for v in -h -q; do
            local out=$cmd$n
            run_cli "$out" "$cmd" "${args[@]}" "$opt" "$v" </dev/null
            grep -q '^usage:' "$out.out" && fail "$cmd ${args[*]} $opt $v printed the help: $(head -1 "$out.out")"
            grep -q 'is an option of dlgauge itself' "$out.err" && fail "$cmd ${args[*]} $opt $v: $(cat "$out.err")"
            [ "$RC" = 0 ] && fail "$cmd ${args[*]} $opt $v: exit 0 (with no input)"
            n=$((n + 1))
        done
    done < <("$DLG" help "$cmd" | valued_in_usage)
    [ "$n" -gt 0 ] || fail "no option with a value found in $cmd's usage: $("$DLG" help "$cmd" | head -3)"
}
check run nothere.ini
check report nothere.csv
check compare nothere.csv -- nothere.csv
check mkdata

# an option followed by another valued option has no value: the first says so
run_cli jobset run nothere.ini --job --set -h
said jobset '^dlgauge run: --job needs a value \(--job NAME\)$'
run_cli setjob run nothere.ini --set --job x
said setjob '^dlgauge run: --set needs a value'
run_cli outcl mkdata text --out --classes -h
said outcl "^dlgauge mkdata: option '--out' needs a value$"
grep -q '^usage:' outcl.out && fail "mkdata text --out --classes -h printed the help"
run_cli outwords mkdata images --out --words 5
said outwords "^dlgauge mkdata: option '--out' needs a value$"
for f in -h -q; do
    [ ! -e "./$f" ] || fail "a check wrote a file '$f'"
done
finish
