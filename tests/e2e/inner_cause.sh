#!/bin/bash
# A throttle whose inner storage exists but cannot be made says why that
# storage failed, at that storage's own key: it said "inner = fast: no
# [storage fast] section and no storage backend type 'fast'", which is
# false, for a nested throttle with a bad inner and for a throttle that
# wraps itself.  A name that is neither still gets that line.
source "$(dirname "$0")/lib.sh"

printf '[job a]\nworkload = sleep\nstorage = slow\n\n[storage slow]\ntype = throttle\ninner = fast\n\n[storage fast]\ntype = throttle\ninner = nosuch\n' >nested.ini
run_cli nested run nested.ini
expect_one_error nested 2 \
    "^dlgauge: nested\.ini:11: \[storage fast\] throttle: inner = nosuch: no \[storage nosuch\] section"

printf '[job a]\nworkload = sleep\nstorage = slow\n\n[storage slow]\ntype = throttle\ninner = slow\n' >self.ini
run_cli self run self.ini
expect_one_error self 2 "storage 'slow' wraps itself \(check its 'inner'\)"
grep -q "no \[storage slow\] section" self.err && fail "self: says there is no [storage slow] section"
finish
