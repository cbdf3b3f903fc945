#!/bin/bash
# A [storage] section that only its creation finds wrong stops the run
# before any cell with one line: at the line of the key its message names
# ("inner = x: ..."), as a workload's or sink's message is placed, else at
# the section's; the location is said once.
source "$(dirname "$0")/lib.sh"

printf '[job a]\nworkload = sleep\nstorage = slow\n\n[storage slow]\ntype = throttle\ninner = nosuch\n' >inner.ini
run_cli inner run inner.ini
expect_one_error inner 2 \
    "^dlgauge: inner\.ini:7: \[storage slow\] throttle: inner = nosuch: no \[storage nosuch\] section"

printf 'no_such_key = 1\n' >disk.ini
printf '[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = throttle\nprofile = disk.ini\n' >prof.ini
run_cli prof run prof.ini
expect_one_error prof 2 "^dlgauge: prof\.ini:4: \[storage slow\] throttle: " "no_such_key"
grep -Eq 'prof\.ini:[0-9]+: .*prof\.ini:[0-9]+:' prof.err && fail "prof: the location twice: $(cat prof.err)"
finish
