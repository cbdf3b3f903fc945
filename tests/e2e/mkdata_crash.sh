#!/bin/bash
# mkdata's generator runs in a child process.  When that child crashes,
# nobody asked mkdata to stop: the line says the generator crashed (it said
# "stopped by signal 11 (Segmentation fault)", exit 139), the .part output
# is removed, nothing looks whole, and mkdata exits 1 (failed).
# Usage: mkdata_crash.sh DLGAUGE PLUGIN_DIR HELPER_DIR WORK_DIR
source "$(dirname "$0")/lib.sh"
SHIM=$TPLUG/mkdata_crash.so
[ -f "$SHIM" ] || { echo "no $SHIM"; exit 1; }
ulimit -c 0 # no core file for the crash this test asks for

# crash NAME ARGS...: mkdata ARGS with the generator crashing at its rename
crash() {
    local name=$1
    shift
    # LD_PRELOAD of a library without ASan into an ASan build needs this
    ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" LD_PRELOAD="$SHIM" run_cli "$name" mkdata "$@"
    expect_rc "$name" 1
    [ "$(cat "$name.err")" = "dlgauge mkdata: the generator crashed (signal 11, Segmentation fault): its unfinished .part output was removed" ] ||
        fail "$name: stderr: $(cat "$name.err")"
}

crash text text --out corpus.txt --words 2000
ls corpus.txt* >/dev/null 2>&1 && fail "text: output left: $(ls corpus.txt*)"
mkdir imgs
crash images images --out imgs --classes 2 --images 4
[ -z "$(ls -A imgs)" ] || fail "images: left in imgs: $(ls -A imgs)"
finish
