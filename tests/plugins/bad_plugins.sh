#!/bin/bash
# Each broken plugin, loaded with `plugin = FILE` in a job or a [storage]
# section, gives exactly one error line naming the config line, the file and
# what is wrong, exit status 2, and no crash.
source "$(dirname "$0")/../e2e/lib.sh"

# bad NAME SECTION-TEXT PATTERN...
bad() {
    local name=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$name.ini"
    run_cli "$name" run "$name.ini"
    expect_one_error "$name" 2 "$@"
}
T=$TPLUG
bad major $'[job a]\nworkload = anything\nplugin = '"$T/abi_major2.so" \
    "^dlgauge: major\.ini:3: \[job a\] plugin: .*abi_major2\.so: " "built for plugin ABI 2\.3" \
    "this dlgauge speaks ABI 1\.[0-9]+" "rebuild"
bad minor $'[job a]\nworkload = anything\nplugin = '"$T/abi_minor_newer.so" \
    "^dlgauge: minor\.ini:3: .*abi_minor_newer\.so: built for plugin ABI 1\.[0-9]+, newer than" "upgrade dlgauge"
bad notplugin $'[job a]\nplugin = '"$T/not_a_plugin.so"$'\nworkload = x' \
    "^dlgauge: notplugin\.ini:2: .*not_a_plugin\.so: not a dlgauge plugin \(no dlgauge_plugin_entry symbol\)"
bad nullentry $'[job a]\nplugin = '"$T/null_entry.so"$'\nworkload = x' \
    "^dlgauge: nullentry\.ini:2: .*null_entry\.so: not a dlgauge plugin \(its dlgauge_plugin_entry returned NULL\)"
bad dupopt $'[job a]\nplugin = '"$T/bad_options.so"$'\nworkload = dupopt' \
    "^dlgauge: dupopt\.ini:2: .*bad_options\.so: workload 'dupopt': malformed option table: option 'batch' is declared twice"
bad baddef $'[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = baddefault\nplugin = '"$T/bad_default.so" \
    "^dlgauge: baddef\.ini:6: \[storage slow\] plugin: .*bad_default\.so: storage 'baddefault': malformed option table: " \
    "option 'depth' has a bad default: 2000 is above the maximum 1024"
bad noops $'[job a]\nplugin = '"$T/missing_ops.so"$'\nworkload = nostep' \
    "^dlgauge: noops\.ini:2: .*missing_ops\.so: workload 'nostep': ops table lacks step"
bad undef $'[job a]\nplugin = '"$T/undef_symbol.so"$'\nworkload = nope' \
    "^dlgauge: undef\.ini:2: .*undef_symbol\.so: .*undefined symbol: dlgt_symbol_nobody_defines" "ldd .*undef_symbol\.so"
bad missing $'[job a]\nplugin = '"$T/no_such_plugin.so"$'\nworkload = x' \
    "^dlgauge: missing\.ini:2: .*plugin file '.*no_such_plugin\.so' does not exist"
echo "plain text" >text.so
bad text $'[job a]\nplugin = '"$WORK/text.so"$'\nworkload = x' \
    "^dlgauge: text\.ini:2: .*text\.so: not a shared object \(ELF\) file \(.*; it starts with \"plain text\"\)"
# the right plugin, the wrong name: the error lists what that file has
bad wrongname $'[job a]\nplugin = '"$T/testwl.so"$'\nworkload = cont' \
    "^dlgauge: wrongname\.ini:3: \[job a\] workload: unknown workload 'cont'" "did you mean 'count'" "available: needs fail_setup"
bad required $'[job a]\nplugin = '"$T/testwl.so"$'\nworkload = needs' \
    "^dlgauge: required\.ini:1: \[job a\] workload needs needs 'size' \(bytes per step \(required\)\)"

# Control: the working test plugin runs through the same path.
printf '[sink csv]\npath = %s/good.csv\n[job a]\nplugin = %s\nworkload = needs\nsize = 4KiB\niterations = 5\nwarmup = 0\n' \
    "$WORK" "$T/testwl.so" >good.ini
run_cli good run good.ini
expect_rc good 0
[ "$("$PY" "$E2E/e2e_check.py" get good.csv 0 items)" = 20480 ] || fail "good: items is not 5 x 4096"

# Scanning a folder full of broken plugins: each is reported, the good one
# is listed, nothing crashes, exit 1.
run_cli scan --plugin-dir "$T" list
expect_rc scan 1
for f in abi_major2 abi_minor_newer not_a_plugin null_entry bad_options bad_default missing_ops undef_symbol; do
    [ "$(grep -c "^dlgauge: .*/$f\.so: " scan.err)" = 1 ] || fail "list: no single error line for $f.so: $(cat scan.err)"
done
grep -Eq "^workload +count .*testwl\.so" scan.out || fail "list: the good test plugin is missing"
grep -Eq "^workload +sleep " scan.out || fail "list: the built-in plugins are missing"
finish
