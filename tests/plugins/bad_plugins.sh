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
# a relative one is from the current directory, not the INI's: said, with
# the absolute path looked for
mkdir -p sub
bad relmissing $'[job a]\nplugin = sub/rel.so\nworkload = x' \
    "^dlgauge: relmissing\.ini:2: .*plugin file 'sub/rel\.so' does not exist \(looked for $WORK/sub/rel\.so: a relative path is from the current directory, not the INI file's\)$"
# each says what is wrong: these said "malformed plugin info (struct_size
# 32, expected 32)", "missing kind, name, version, summary or ops" and
# "ops table lacks file_size" (it was set, to 4)
bad nullitems $'[job a]\nplugin = '"$T/null_items.so"$'\nworkload = x' \
    "^dlgauge: nullitems\.ini:2: .*null_items\.so: plugin info has no descriptor list \(items is NULL\)"
bad badkind $'[job a]\nplugin = '"$T/bad_kind.so"$'\nworkload = kind9' \
    "^dlgauge: badkind\.ini:2: .*bad_kind\.so: descriptor #0 'kind9': unknown kind 9 \(DLG_KIND_WORKLOAD, DLG_KIND_STORAGE or DLG_KIND_SINK\)"
bad fsize $'[job a]\nworkload = sleep\nstorage = tiny\n[storage tiny]\nplugin = '"$T/small_file_size.so" \
    "^dlgauge: fsize\.ini:5: \[storage tiny\] plugin: .*small_file_size\.so: storage 'tiny': ops table's file_size 4 is smaller than a dlg_file \([0-9]+ bytes\)"
# a metric name ending in a backslash: the influx sink cut it, storing
# 'lat\' over 'lat' (exit 0)
bad bslash $'[job a]\nplugin = '"$T/bad_metric_name.so"$'\nworkload = bslash' \
    "^dlgauge: bslash\.ini:2: .*bad_metric_name\.so: bslash: metric 'lat\\\\' ends in a backslash, which InfluxDB's line protocol cannot carry in a name"
echo "plain text" >text.so
bad text $'[job a]\nplugin = '"$WORK/text.so"$'\nworkload = x' \
    "^dlgauge: text\.ini:2: .*text\.so: not a shared object \(ELF\) file \(.*; it starts with \"plain text\"\)"
# the right plugin, the wrong name: the error lists what that file has
bad wrongname $'[job a]\nplugin = '"$T/testwl.so"$'\nworkload = cont' \
    "^dlgauge: wrongname\.ini:3: \[job a\] workload: unknown workload 'cont'" "did you mean 'count'" "available: needs fail_setup"
# the right name, a file without that kind: what the file provides (it
# said "available: none")
bad nokind $'[sink rowfile]\nplugin = '"$T/testwl.so"$'\n[job a]\nworkload = sleep' \
    "^dlgauge: nokind\.ini:1: \[sink rowfile\] no 'type' key, so the section's name is the type: unknown sink 'rowfile'; .*/testwl\.so provides workload 'needs', workload 'fail_setup', .*workload 'count'.*, no sink$"
bad nokindwl $'[job a]\nplugin = '"$T/silent_sink.so"$'\nworkload = dot' \
    "^dlgauge: nokindwl\.ini:3: \[job a\] workload: unknown workload 'dot'; .*/silent_sink\.so provides sink 'silent', no workload$"
bad nokindst $'[job a]\nworkload = sleep\nstorage = s\n[storage s]\ntype = x\nplugin = '"$T/timedwl.so" \
    "^dlgauge: nokindst\.ini:5: \[storage s\] type: unknown storage 'x'; .*/timedwl\.so provides workload '[a-z_0-9]+'(, workload '[a-z_0-9]+')*, no storage$"
bad required $'[job a]\nplugin = '"$T/testwl.so"$'\nworkload = needs' \
    "^dlgauge: required\.ini:1: \[job a\] workload needs needs 'size' \(bytes per step \(required\)\)"

# Control: the working test plugin runs through the same path.
printf '[sink csv]\npath = %s/good.csv\n[job a]\nplugin = %s\nworkload = needs\nsize = 4KiB\niterations = 5\nwarmup = 0\n' \
    "$WORK" "$T/testwl.so" >good.ini
run_cli good run good.ini
expect_rc good 0
[ "$("$PY" "$E2E/e2e_check.py" get good.csv 0 items)" = 20480 ] || fail "good: items is not 5 x 4096"

# A field reported with the wrong call: warned once a cell and field (it
# was once a repetition: 6 lines for these 3), the right values stand.
printf '[sink csv]\npath = %s/once.csv\n[job a]\nplugin = %s\nworkload = count\niterations = 2\nwarmup = 0\nrepeat = 3\nseed = 100\n' \
    "$WORK" "$T/testwl.so" >once.ini
run_cli once -q run once.ini
expect_rc once 0
[ "$(grep -c "reported field 'seed_seen' is declared a number but reported with add_string; dropped" once.err)" = 1 ] ||
    fail "once: seed_seen's warning is not said once: $(cat once.err)"
[ "$(grep -c "reported field 'flavour' is declared a string but reported with add_int/add_double; dropped" once.err)" = 1 ] ||
    fail "once: flavour's warning is not said once: $(cat once.err)"
[ "$(wc -l <once.err)" = 2 ] || fail "once: more than the two warnings: $(cat once.err)"
{ read -r seed; read -r flavour; } < <("$PY" "$E2E/e2e_check.py" get once.csv 0 seed_seen flavour)
[ "$seed" = 101 ] || fail "once: seed_seen $seed, expected 101 (the mean of 100, 101, 102)"
[ "$flavour" = 'a "quoted", comma string' ] || fail "once: flavour '$flavour'"

# Scanning a folder full of broken plugins: each is reported, the good one
# is listed, nothing crashes, exit 1.
run_cli scan --plugin-dir "$T" list
expect_rc scan 1
for f in abi_major2 abi_minor_newer not_a_plugin null_entry bad_options bad_default missing_ops undef_symbol \
         null_items bad_kind small_file_size; do
    [ "$(grep -c "^dlgauge: .*/$f\.so: " scan.err)" = 1 ] || fail "list: no single error line for $f.so: $(cat scan.err)"
done
grep -Eq "^workload +count .*testwl\.so" scan.out || fail "list: the good test plugin is missing"
grep -Eq "^workload +sleep " scan.out || fail "list: the built-in plugins are missing"

# help for a name whose plugin file failed to load leads with that file,
# not with "no ... is called 'nope'" (undef_symbol.so provides workload nope)
run_cli helpnope --plugin-dir "$T" help nope
expect_rc helpnope 2
grep -Eq "^dlgauge: plugin file .*/undef_symbol\.so, which names 'nope', could not be loaded: .*dlgt_symbol_nobody_defines" \
    helpnope.err || fail "help nope did not name the file that failed: $(cat helpnope.err)"
[ "$(wc -l <helpnope.err)" = 1 ] || fail "help nope said more than one line: $(cat helpnope.err)"
finish
