# Shared helpers of the end-to-end tests; sourced by each script, which
# ctest runs as: bash SCRIPT DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK_DIR
set -u
DLG=$1
PLUGDIR=$2
TPLUG=$3
WORK=$4
E2E=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$E2E/../.." && pwd)
# the system python starts in 0.1 s; version-manager shims can take 0.5 s
if [ -n "${PYTHON3:-}" ]; then PY=$PYTHON3; elif [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
# only the build's plugins, never a developer's environment
unset DLGAUGE_PLUGIN_PATH
# In -DDLG_SANITIZE builds, LeakSanitizer on glibc >= 2.25 can misread the
# dynamic TLS of dlopen'ed plugins and crash at exit ("Tracer caught signal
# 11", google/sanitizers#1322); heap leak checking is unaffected by this.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}intercept_tls_get_addr=0"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
# the tuning record (core/nn/tune.h): ctest's (the build's), else the
# script's own; never the user's ~/.cache/dlgauge one
export DLGAUGE_TUNE="${DLGAUGE_TUNE:-$WORK/tune.txt}"
FAILS=0

fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}

# run_cli NAME ARGS...: dlgauge ARGS with stdout in NAME.out, stderr in NAME.err, status in RC
run_cli() {
    local name=$1
    shift
    "$DLG" --plugin-dir "$PLUGDIR" "$@" >"$name.out" 2>"$name.err"
    RC=$?
}

# expect_rc NAME WANT: the last run_cli NAME exited with WANT
expect_rc() {
    if [ "$RC" != "$2" ]; then
        fail "$1: exit status $RC, expected $2; stderr:"
        sed 's/^/    /' "$1.err" >&2
    fi
}

# expect_one_error NAME RC PATTERN...: exit status RC and exactly one line on
# stderr that starts with "dlgauge: " and matches every (extended) PATTERN
expect_one_error() {
    local name=$1 want=$2
    shift 2
    expect_rc "$name" "$want"
    local lines
    lines=$(wc -l <"$name.err")
    if [ "$lines" != 1 ]; then
        fail "$name: $lines lines on stderr, expected exactly one:"
        sed 's/^/    /' "$name.err" >&2
        return
    fi
    grep -q '^dlgauge: ' "$name.err" || fail "$name: stderr does not start with 'dlgauge: ': $(cat "$name.err")"
    local pat
    for pat in "$@"; do
        grep -Eq -- "$pat" "$name.err" || fail "$name: stderr lacks /$pat/: $(cat "$name.err")"
    done
}

# ini FILE: writes stdin to FILE (for readability of the cases)
ini() { cat >"$1"; }

# rows_csv CSV PYTHON FIELDS: PYTHON's asserts on `rows`, the rows of CSV,
# each printed first with FIELDS (space-separated)
rows_csv() {
    "$PY" - "$1" "$2" "$3" <<'PY' || fail "$1: rows above"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print({k: r.get(k) for k in sys.argv[3].split()})
exec(sys.argv[2])
PY
}

# side_by_side CASE...: each function CASE in a subshell of its own, all at
# once (for cases that mostly wait: on signals, sleeps, a file to appear;
# each writing its own files); a failed check of any counts in FAILS
side_by_side() {
    local c p pids=()
    for c in "$@"; do
        (FAILS=0; "$c"; exit $((FAILS < 255 ? FAILS : 255))) &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p"
        FAILS=$((FAILS + $?))
    done
}

# The out-of-memory sweeps' trials (oom_sweep.sh, oom_sweep_ranks.sh):
# sweep_points N FIRST SPREAD: allocations 1..FIRST, then SPREAD more
# evenly up to N; with OOM_SWEEP_STRIDE=k every k-th from
# OOM_SWEEP_START (default 1) instead
sweep_points() {
    local n=$1 first=$2 spread=$3
    if [ -n "${OOM_SWEEP_STRIDE:-}" ]; then
        seq "${OOM_SWEEP_START:-1}" "$OOM_SWEEP_STRIDE" "$n"
        return
    fi
    seq 1 $((first < n ? first : n))
    [ "$n" -gt "$first" ] && awk -v n="$n" -v f="$first" -v s="$spread" \
        'BEGIN { for (i = 1; i <= s; i++) print f + int(i * (n - f) / s) }'
}

finish() {
    if [ "$FAILS" -gt 0 ]; then
        echo "$FAILS check(s) failed (outputs kept in $WORK)" >&2
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
