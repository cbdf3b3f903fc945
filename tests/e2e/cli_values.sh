#!/bin/bash
# dlgauge's own options (-v, -q), and -h, given as the value of a command's
# option are that value, as getopt has it (the hint "is an option of dlgauge
# itself" took them for misplaced options); given as an option they still
# get the hint.
source "$(dirname "$0")/lib.sh"

printf '[sink csv]\npath = r.csv\n[job a]\nworkload = noop\niterations = 3\n' >r.ini
run_cli mk run r.ini
expect_rc mk 0

hinted() { grep -q "is an option of dlgauge itself" "$1.err"; }

# report --markdown FILE: the file is called -q
run_cli mdq report r.csv --markdown -q
expect_rc mdq 0
hinted mdq && fail "report --markdown -q: $(cat mdq.err)"
grep -q '^#' ./-q || fail "report --markdown -q wrote no markdown to ./-q: $(ls)"
# run's --job and --set: run judges the value
run_cli jobv run r.ini --job -v
expect_rc jobv 2
grep -q "no \[job -v\]" jobv.err || fail "run --job -v: $(cat jobv.err)"
run_cli setq run r.ini --set -q
expect_rc setq 2
grep -q -- "--set -q: expected SECTION.key=value" setq.err || fail "run --set -q: $(cat setq.err)"
# compare's --latency, after its "--"
run_cli latv compare r.csv -- r.csv --latency -v
expect_rc latv 2
grep -q -- "--latency '-v': p50" latv.err || fail "compare --latency -v: $(cat latv.err)"
# mkdata's --out
run_cli outq mkdata text --out -q.txt --words 50
expect_rc outq 0
hinted outq && fail "mkdata --out -q.txt: $(cat outq.err)"

# -h as a value is that value too (it showed the command's help instead)
run_cli htmlh report r.csv --html -h
expect_rc htmlh 0
grep -q '^usage:' htmlh.out && fail "report --html -h showed help: $(head -2 htmlh.out)"
grep -q '^<!DOCTYPE html>' ./-h || fail "report --html -h wrote no HTML to ./-h: $(ls)"
run_cli outh mkdata text --out -h --words 50
expect_rc outh 0
[ "$(wc -w <./-h)" -ge 50 ] || fail "mkdata text --out -h wrote no corpus to ./-h: $(cat outh.err)"
run_cli jobh run r.ini --job -h
expect_rc jobh 2
grep -q "no \[job -h\]" jobh.err || fail "run --job -h: $(cat jobh.err)"
# ... and help where it is no value
run_cli helpafter report r.csv --html h.html -h
expect_rc helpafter 0
grep -q '^usage: dlgauge report' helpafter.out || fail "report --html h.html -h: $(head -2 helpafter.out helpafter.err)"
[ ! -e h.html ] || fail "report --html h.html -h wrote h.html"

# still hinted: after a flag, after a value, and where the next argument
# is another option (the command says the first needs a value)
run_cli flagv run r.ini --dry-run -v
expect_rc flagv 2
hinted flagv || fail "run --dry-run -v: $(cat flagv.err)"
run_cli afterq report r.csv --markdown out.md -q
expect_rc afterq 2
hinted afterq || fail "report --markdown out.md -q: $(cat afterq.err)"
run_cli twoopt report r.csv --html --markdown -q
expect_rc twoopt 2
grep -qx "dlgauge report: --html needs a value" twoopt.err || fail "report --html --markdown -q: $(cat twoopt.err)"
finish
