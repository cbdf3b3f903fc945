#!/bin/bash
# A plugin that crashes while it loads (its entry faults, or the tables it
# returns point to nothing) is named in one line and not loaded; the other
# plugins of the run still load and run (it used to end every command of
# a run with a bare SIGSEGV, exit 139).  Plugins under $TPLUG/crash.
source "$(dirname "$0")/../e2e/lib.sh"
C=$TPLUG/crash

# list: one line for each, exit 1 (a file failed), the built-ins listed
run_cli list --plugin-dir "$C" list
expect_rc list 1
[ "$(wc -l <list.err)" = 4 ] || fail "list: not one line for each of the 4 files: $(cat list.err)"
grep -Eq "^dlgauge: $C/crash_entry\.so: crashed \(signal 11, SIGSEGV\) in its dlgauge_plugin_entry; not loaded$" list.err ||
    fail "list: crash_entry.so: $(cat list.err)"
grep -Eq "^dlgauge: $C/bad_info_ptr\.so: crashed \(signal 11, SIGSEGV\) reading the plugin info its dlgauge_plugin_entry returned \(a bad pointer\); not loaded$" list.err ||
    fail "list: bad_info_ptr.so: $(cat list.err)"
grep -Eq "^dlgauge: $C/bad_desc_ptr\.so: crashed \(signal 11, SIGSEGV\) reading descriptor #0 \(a bad pointer in its tables\); not loaded$" list.err ||
    fail "list: bad_desc_ptr.so: $(cat list.err)"
grep -Eq "^dlgauge: $C/bad_help_ptr\.so: crashed \(signal 11, SIGSEGV\) reading descriptor #0 \(a bad pointer in its tables\); not loaded$" list.err ||
    fail "list: bad_help_ptr.so: $(cat list.err)"
grep -Eq "^workload +sleep " list.out || fail "list: the built-in plugins are missing"

# run and --dry-run of built-in plugins beside them: as without them
printf '[sink csv]\npath = %s/ok.csv\n[job a]\nworkload = sleep\nsleep = 1ms\niterations = 2\nwarmup = 0\n' "$WORK" >ok.ini
run_cli dry --plugin-dir "$C" -q run --dry-run ok.ini
expect_rc dry 0
run_cli run --plugin-dir "$C" -q run ok.ini
expect_rc run 0
[ "$("$PY" "$E2E/e2e_check.py" get ok.csv 0 status)" = ok ] || fail "run: the sleep row is not ok"
[ -s run.err ] && fail "run: stderr is not empty: $(cat run.err)"

# plugin = one of them: one error line naming the key's line and the file, exit 2
printf '[job a]\nplugin = %s/crash_entry.so\nworkload = x\n' "$C" >named.ini
run_cli named run named.ini
expect_one_error named 2 "^dlgauge: named\.ini:2: \[job a\] plugin: .*/crash_entry\.so: crashed \(signal 11, SIGSEGV\) in its dlgauge_plugin_entry; not loaded$"

# an entry that faults inside libc (whose lock it may hold): no going on,
# one line naming the file, exit 2
run_cli libc --plugin-dir "$C/libc" list
expect_one_error libc 2 "^dlgauge: $C/libc/crash_in_libc\.so: crashed \(SIGSEGV\) in its dlgauge_plugin_entry, inside another library's code .*: dlgauge cannot go on safely; move the file out of the plugin folder$"

# an entry that calls abort() (a failed assert): inside libc too, and libc's
# abort may hold a lock of its own; said as such, exit 2, not a bare
# "Aborted" (exit 134) with no file named
run_cli abort --plugin-dir "$C/abort" list
expect_one_error abort 2 "^dlgauge: $C/abort/abort_entry\.so: called abort\(\) in its dlgauge_plugin_entry \(a failed assert\?\): dlgauge cannot go on safely; move the file out of the plugin folder$"

# a constructor that crashes or aborts inside dlopen, which cannot be left
# by a jump: one line naming the file, exit 2, in every command that loads
# plugins (it used to be a bare "Segmentation fault" naming nothing)
for p in ctor_segv:'crashed \(SIGSEGV\)' ctor_abort:'called abort\(\)'; do
    d=${p%%:*}
    for cmd in list "help sleep" "run --dry-run ok.ini"; do
        run_cli "$d" --plugin-dir "$C/$d" $cmd
        expect_one_error "$d" 2 "^dlgauge: $C/$d/$d\.so: ${p#*:} while being loaded \(a constructor in it or in a library it needs.*\); move the file out of the plugin folder$"
    done
done

# a constructor or an entry that never returns: every command used to hang;
# now, past DLGAUGE_PLUGIN_LOAD_TIMEOUT, one line naming the file, exit 2
for p in ctor_hang:'its constructors \(or those of a library it needs\)' entry_spin:'its dlgauge_plugin_entry'; do
    d=${p%%:*}
    for cmd in list "help sleep" "run --dry-run ok.ini"; do
        # bounded: a hang fails this test at once, not at ctest's timeout
        DLGAUGE_PLUGIN_LOAD_TIMEOUT=300ms timeout 20 "$DLG" --plugin-dir "$PLUGDIR" --plugin-dir "$C/$d" $cmd \
            >"$d.out" 2>"$d.err"
        RC=$?
        expect_one_error "$d" 2 "^dlgauge: $C/$d/$d\.so: ${p#*:} did not return within 300ms \(DLGAUGE_PLUGIN_LOAD_TIMEOUT raises the limit\); move the file out of the plugin folder$"
    done
done
# ... and the limit is the variable's: 0 is none (still loading after 2 s)
DLGAUGE_PLUGIN_LOAD_TIMEOUT=0 timeout 2 "$DLG" --plugin-dir "$C/entry_spin" list >nolimit.out 2>nolimit.err
RC=$?
expect_rc nolimit 124
# a value that is no duration: one line naming the variable, exit 2
DLGAUGE_PLUGIN_LOAD_TIMEOUT=soon run_cli badlimit list
expect_one_error badlimit 2 "^dlgauge: DLGAUGE_PLUGIN_LOAD_TIMEOUT: 'soon' is not a duration .*; 0 for no limit$"
finish
